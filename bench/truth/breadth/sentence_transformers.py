"""sentence-transformers: SentenceTransformer / CrossEncoder / SparseEncoder / MultiVectorEncoder
pipelines from modules built here, and the modules alone.

The `Transformer` module loads from a folder: a tiny BERT / Llama / T5 model (random weights,
from a config) and a WordPiece tokenizer over a made-up vocabulary are saved to a temporary folder
first; nothing is downloaded. A pipeline's inputs are its own `preprocess` of a few sentences; a
module alone gets the features its predecessor would hand it.
"""
from __future__ import annotations

import functools
import os
import tempfile

DIST = "sentence-transformers"
WORDS = [f"w{i}" for i in range(100)]
TEXTS = ["w1 w2 w3 w4 w5", "w7 w8 w9", "w10 w11 w12 w13 w14 w15 w16", "w3"]
DIM = 32


@functools.lru_cache(maxsize=None)
def _folder(kind):
    """A folder holding a tiny `kind` model (bert, llama, t5, bert-mlm, bert-cls, llama-causal) and a tokenizer."""
    import torch
    import transformers as tf

    torch.manual_seed(0)
    path = tempfile.mkdtemp(prefix=f"st-{kind}-")
    vocab = os.path.join(path, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = tf.BertTokenizerFast(vocab_file=vocab)
    size = dict(vocab_size=128, max_position_embeddings=64)
    if kind.startswith("bert"):
        config = tf.BertConfig(hidden_size=DIM, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, **size)
        cls = {"bert": tf.BertModel, "bert-mlm": tf.BertForMaskedLM, "bert-cls": tf.BertForSequenceClassification}[kind]
    elif kind.startswith("llama"):
        config = tf.LlamaConfig(hidden_size=DIM, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                intermediate_size=64, pad_token_id=0, **size)
        cls = tf.LlamaForCausalLM if kind == "llama-causal" else tf.LlamaModel
    else:
        config = tf.T5Config(d_model=DIM, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=128)
        cls = tf.T5EncoderModel
    if kind == "bert-cls":
        config.num_labels = 1
    cls(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _specs():
    """name -> (pipeline class or None for a module alone, modules factory, inputs factory or None)."""
    import torch
    from sentence_transformers import CrossEncoder, MultiVectorEncoder, SentenceTransformer, SparseEncoder
    from sentence_transformers.cross_encoder import modules as cm
    from sentence_transformers.multi_vector_encoder import modules as mm
    from sentence_transformers.sentence_transformer import modules as m
    from sentence_transformers.sparse_encoder import modules as sm

    def tr(kind="bert", **kw):
        return m.Transformer(_folder(kind), **kw)

    def pool(mode="mean", **kw):
        return m.Pooling(DIM, pooling_mode=mode, **kw)

    def token_features(n=len(TEXTS), seq=8, dim=DIM, layers=None):
        mask = torch.ones(n, seq, dtype=torch.long)
        mask[1:, seq // 2:] = 0
        out = {"token_embeddings": torch.randn(n, seq, dim, requires_grad=True), "attention_mask": mask,
               "input_ids": torch.randint(5, 100, (n, seq)), "sentence_lengths": mask.sum(1)}
        if layers:
            out["all_layer_embeddings"] = [torch.randn(n, seq, dim, requires_grad=True) for _ in range(layers)]
        return out

    def sentence_features(dim=DIM):
        return {"sentence_embedding": torch.randn(len(TEXTS), dim, requires_grad=True)}

    tokens = lambda: token_features()  # noqa: E731
    sentences = lambda: sentence_features()  # noqa: E731
    ST, CE, SE, MV = SentenceTransformer, CrossEncoder, SparseEncoder, MultiVectorEncoder
    static = lambda: m.StaticEmbedding(_tokenizer(), embedding_dim=DIM)  # noqa: E731
    return {
        # SentenceTransformer pipelines
        "st_bert_mean": (ST, lambda: [tr(), pool()], None),
        "st_bert_cls": (ST, lambda: [tr(), pool("cls")], None),
        "st_bert_max": (ST, lambda: [tr(), pool("max")], None),
        "st_bert_sqrt_len": (ST, lambda: [tr(), pool("mean_sqrt_len_tokens")], None),
        "st_bert_weightedmean": (ST, lambda: [tr(), pool("weightedmean")], None),
        "st_bert_multi_pool": (ST, lambda: [tr(), pool(("cls", "max", "mean"))], None),
        "st_bert_no_prompt": (ST, lambda: [tr(), pool(include_prompt=False)], None),
        "st_llama_lasttoken": (ST, lambda: [tr("llama"), pool("lasttoken")], None),
        "st_t5_mean": (ST, lambda: [tr("t5"), pool()], None),
        "st_dense_normalize": (ST, lambda: [tr(), pool(), m.Dense(DIM, 16), m.Normalize()], None),
        "st_dense_residual": (ST, lambda: [tr(), pool(), m.Dense(DIM, DIM, use_residual=True, activation_function=None)], None),
        "st_layernorm_dropout": (ST, lambda: [tr(), pool(), m.LayerNorm(DIM), m.Dropout(0.1)], None),
        "st_weighted_layers": (ST, lambda: [tr(config_kwargs={"output_hidden_states": True}), m.WeightedLayerPooling(DIM, 2, 1), pool()], None),
        "st_cnn": (ST, lambda: [tr(), m.CNN(DIM, out_channels=16, kernel_sizes=[1, 3]), pool()], None),
        "st_static": (ST, lambda: [static()], None),
        "st_static_dense": (ST, lambda: [static(), m.Dense(DIM, 16), m.Normalize()], None),
        "st_router": (ST, lambda: [m.Router.for_query_document([tr(), pool()], [tr(), pool("cls")])], None),
        # the other pipelines
        "cross_encoder": (CE, lambda: [tr("bert-cls", transformer_task="sequence-classification")], None),
        "cross_encoder_logit_score": (CE, lambda: [tr("llama-causal", transformer_task="text-generation"),
                                                   cm.LogitScore(true_token_id=5, false_token_id=6)], None),
        "sparse_splade": (SE, lambda: [sm.MLMTransformer(_folder("bert-mlm")), sm.SpladePooling("max")], None),
        "sparse_splade_sum": (SE, lambda: [sm.MLMTransformer(_folder("bert-mlm")), sm.SpladePooling("sum", "log1p_relu", chunk_size=2)], None),
        "sparse_static": (SE, lambda: [sm.SparseStaticEmbedding(_tokenizer())], None),
        "sparse_autoencoder": (SE, lambda: [tr(), pool(), sm.SparseAutoEncoder(DIM, hidden_dim=64, k=4, k_aux=8)], None),
        "multi_vector": (MV, lambda: [tr(), m.Dense(DIM, 16, module_input_name="token_embeddings", activation_function=None)], None),
        "multi_vector_mask": (MV, lambda: [tr(), mm.MultiVectorMask(keep_only_token_ids=[5, 6, 7])], None),
        # modules alone: the features their predecessor hands them
        "Pooling": (None, lambda: pool(), tokens),
        "Pooling_lasttoken": (None, lambda: pool("lasttoken"), tokens),
        "Dense": (None, lambda: m.Dense(DIM, 16), sentences),
        "Normalize": (None, lambda: m.Normalize(), sentences),
        "LayerNorm": (None, lambda: m.LayerNorm(DIM), sentences),
        "CNN": (None, lambda: m.CNN(DIM, out_channels=16, kernel_sizes=[3, 5]), tokens),
        "LSTM": (None, lambda: m.LSTM(DIM, 16, num_layers=2), tokens),
        "WeightedLayerPooling": (None, lambda: m.WeightedLayerPooling(DIM, 3, 1), lambda: token_features(layers=4)),
        "SpladePooling": (None, lambda: sm.SpladePooling("max"), lambda: token_features(dim=128)),
        "SparseAutoEncoder": (None, lambda: sm.SparseAutoEncoder(DIM, hidden_dim=64, k=4, k_aux=8), sentences),
        "HierarchicalTokenPooling": (None, lambda: mm.HierarchicalTokenPooling(2.0), tokens),
    }


@functools.lru_cache(maxsize=None)
def _tokenizer():
    import transformers as tf

    return tf.BertTokenizerFast.from_pretrained(_folder("bert"))


def names():
    return sorted(_specs())


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS): the paths the modules alone take on features
    their default inputs leave out."""
    prompt = Variant("include_prompt=False and a `prompt_length` tensor in the features (training with a "
                     "Dataset): the prompt length read back, the prompt tokens masked out", prepare=_prompt)
    flat = Variant("include_prompt=False, a `prompt_length` tensor and the flat `(1, total_tokens, D)` features of "
                   "FA2 unpadding with `cu_seq_lens_q`: the scatter pooling over segments", prepare=_flat_prompt)
    fresh = Variant("compiled as built, with no eager call first: the embedding dimension set on the first call",
                    fresh=True)
    flat_fresh = Variant("the flat features of FA2 unpadding (`cu_seq_lens_q`), compiled as built with no eager "
                         "call first", prepare=_flat, fresh=True)
    return {"Pooling": {"prompt": prompt, "flat_prompt": flat},
            "Pooling_lasttoken": {"prompt": prompt, "flat_prompt": flat,
                                  "flat_prompt_with_mean": Variant(
                                      "pooling_mode ('lasttoken', 'mean') on the flat features with a prompt length: "
                                      "lasttoken together with a mode that pools by segment (the scatter path)",
                                      prepare=_with_mean(_flat_prompt))},
            "SpladePooling": {"fresh": fresh, "flat_fresh": flat_fresh}}


def _prompt(model, config, inputs):
    """The module with `include_prompt=False`, fed a per-row `prompt_length` tensor."""
    import torch

    model.include_prompt = False
    features = dict(inputs["features"], prompt_length=torch.full((len(TEXTS),), 2))
    return model, {"features": features}


def _flat(model, config, inputs):
    """The padded features flattened as FA2 unpadding hands them over: `(1, total_tokens, D)` and
    the cumulative sequence lengths `cu_seq_lens_q`."""
    import torch

    features = inputs["features"]
    mask = features["attention_mask"].bool()
    lengths = mask.sum(1)
    flat = features["token_embeddings"].detach()[mask].unsqueeze(0).requires_grad_()
    cu = torch.cat([torch.zeros(1, dtype=torch.int32), lengths.cumsum(0).to(torch.int32)])
    return model, {"features": {"token_embeddings": flat, "cu_seq_lens_q": cu}}


def _with_mean(prepare):
    """`prepare`, then the pooling modes `(<the model's mode>, "mean")`: what `Pooling(dim,
    pooling_mode=(mode, "mean"))` stores (its output dimension one embedding wider)."""

    def with_mean(model, config, inputs):
        model, inputs = prepare(model, config, inputs)
        model.pooling_mode = (model.pooling_mode, "mean")
        model.pooling_output_dimension = 2 * model.embedding_dimension
        return model, inputs

    return with_mean


def _flat_prompt(model, config, inputs):
    model, inputs = _prompt(model, config, inputs)
    prompt_length = inputs["features"]["prompt_length"]
    model, inputs = _flat(model, config, inputs)
    inputs["features"]["prompt_length"] = prompt_length
    return model, inputs


def build(name, variant=None):
    import torch

    pipeline, make, make_inputs = _specs()[name]
    torch.manual_seed(0)
    if pipeline is None:
        model = make()
        inputs = {"features": make_inputs()}
        if variant and variant.prepare:
            model, inputs = variant.prepare(model, None, inputs)
    else:
        model = pipeline(modules=make(), device="cpu")
        texts = [(t, t[::-1]) for t in TEXTS] if pipeline.__name__ == "CrossEncoder" else TEXTS
        inputs = {"input": dict(model.preprocess(texts))}
    model.register_forward_pre_hook(_fresh_features, with_kwargs=True)
    return model, inputs


def _fresh_features(module, args, kwargs):
    """Every module writes its outputs into the features dict it is given (`features.update(...)`):
    called again with the same dict, the model would see the keys of the last call and Dynamo would
    recompile on them. `encode()` builds a new dict per batch; so does this hook, per call."""
    return args, {key: dict(value) if isinstance(value, dict) else value for key, value in kwargs.items()}
