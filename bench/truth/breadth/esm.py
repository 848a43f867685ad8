"""esm (fair-esm): ESM-2, ESM-1 / ESM-1b (`ProteinBertModel`) and the MSA Transformer with tiny
sizes, their options (contacts, head weights, representations, padding, token dropout), and the
layers they are made of. Inverse folding (biotite) and ESMFold (openfold) need packages the
corpus does not install; they are left out.

Inputs are token ids of the model's own alphabet: a batch of 2 sequences of 12 residues, the
second one padded, with the beginning/end tokens the alphabet prepends/appends.
"""
from __future__ import annotations

from argparse import Namespace

DIST = "fair-esm"
DIM, HEADS = 32, 4
SEQS = ["MKTAYIAKQRQI", "GSHMLEDK"]


def _tokens(alphabet, msa=False):
    """Tokens of SEQS (MSA: 3 aligned rows per batch element), padded to one length."""
    if msa:
        rows = [SEQS[0], SEQS[0][::-1], "MKTAYIAK" + "-" * 4]
        batch = [[(f"r{i}", row) for i, row in enumerate(rows)], [(f"r{i}", row[::-1]) for i, row in enumerate(rows)]]
        return alphabet.get_batch_converter()(batch)[2]
    return alphabet.get_batch_converter()([("a", SEQS[0]), ("b", SEQS[1])])[2]


def _args(**kw):
    base = dict(embed_dim=DIM, ffn_embed_dim=64, attention_heads=HEADS, layers=2, max_positions=64, dropout=0.1,
                attention_dropout=0.1, activation_dropout=0.1, max_tokens=2 ** 14, final_bias=True)
    return Namespace(**{**base, **kw})


def _specs():
    import torch
    from esm import axial_attention, modules, multihead_attention, rotary_embedding
    from esm.data import Alphabet
    from esm.model.esm1 import ProteinBertModel
    from esm.model.esm2 import ESM2
    from esm.model.msa_transformer import MSATransformer

    esm1b = Alphabet.from_architecture("ESM-1b")
    esm1 = Alphabet.from_architecture("ESM-1")
    msa = Alphabet.from_architecture("msa_transformer")
    x = lambda *shape: torch.randn(*shape, requires_grad=True)  # noqa: E731
    tokens = lambda alphabet=esm1b, **kw: lambda m: {"tokens": _tokens(alphabet), **kw}  # noqa: E731
    msa_tokens = lambda **kw: lambda m: {"tokens": _tokens(msa, msa=True), **kw}  # noqa: E731
    pad_mask = torch.tensor([[False] * 10, [False] * 6 + [True] * 4])
    return {
        "ESM2": (lambda: ESM2(2, DIM, HEADS), tokens()),
        "ESM2_contacts": (lambda: ESM2(2, DIM, HEADS), tokens(return_contacts=True)),
        "ESM2_repr_heads": (lambda: ESM2(3, DIM, HEADS), tokens(repr_layers=[0, 2, 3], need_head_weights=True)),
        "ESM2_no_token_dropout": (lambda: ESM2(2, DIM, HEADS, token_dropout=False), tokens()),
        "ESM2_masked": (lambda: ESM2(2, DIM, HEADS), lambda m: {"tokens": _masked(_tokens(esm1b), esm1b)}),
        "ESM1b": (lambda: ProteinBertModel(_args(arch="roberta_large"), esm1b), tokens()),
        "ESM1b_contacts": (lambda: ProteinBertModel(_args(arch="roberta_large", emb_layer_norm_before=True), esm1b),
                           tokens(return_contacts=True, repr_layers=[1])),
        "ESM1": (lambda: ProteinBertModel(_args(arch="protein_bert_base", final_bias=False), esm1), tokens(esm1)),
        "ESM1_heads": (lambda: ProteinBertModel(_args(arch="protein_bert_base"), esm1), tokens(esm1, need_head_weights=True)),
        "MSATransformer": (lambda: MSATransformer(_args(embed_positions_msa=False), msa), msa_tokens()),
        "MSATransformer_row_pos": (lambda: MSATransformer(_args(embed_positions_msa=True), msa), msa_tokens(return_contacts=True)),
        "MSATransformer_chunked": (lambda: MSATransformer(_args(embed_positions_msa=False, max_tokens_per_msa=8), msa),
                                   msa_tokens(repr_layers=[2], need_head_weights=True)),
        # layers
        "TransformerLayer_esm1": (lambda: modules.TransformerLayer(DIM, 64, HEADS), lambda m: {"x": x(10, 2, DIM)}),
        "TransformerLayer_esm1b": (lambda: modules.TransformerLayer(DIM, 64, HEADS, add_bias_kv=False, use_esm1b_layer_norm=True),
                                   lambda m: {"x": x(10, 2, DIM), "self_attn_padding_mask": pad_mask}),
        "TransformerLayer_rotary": (lambda: modules.TransformerLayer(DIM, 64, HEADS, add_bias_kv=False, use_esm1b_layer_norm=True,
                                                                    use_rotary_embeddings=True),
                                    lambda m: {"x": x(10, 2, DIM), "need_head_weights": True}),
        "AxialTransformerLayer": (lambda: modules.AxialTransformerLayer(DIM, 64, HEADS), lambda m: {"x": x(3, 10, 2, DIM)}),
        "AxialTransformerLayer_heads": (lambda: modules.AxialTransformerLayer(DIM, 64, HEADS, max_tokens_per_msa=8),
                                        lambda m: {"x": x(3, 10, 2, DIM), "need_head_weights": True}),
        "RowSelfAttention": (lambda: axial_attention.RowSelfAttention(DIM, HEADS), lambda m: {"x": x(3, 10, 2, DIM)}),
        "RowSelfAttention_chunked": (lambda: axial_attention.RowSelfAttention(DIM, HEADS, max_tokens_per_msa=8),
                                     lambda m: {"x": x(3, 10, 2, DIM)}),
        "ColumnSelfAttention": (lambda: axial_attention.ColumnSelfAttention(DIM, HEADS), lambda m: {"x": x(3, 10, 2, DIM)}),
        "ColumnSelfAttention_single_row": (lambda: axial_attention.ColumnSelfAttention(DIM, HEADS), lambda m: {"x": x(1, 10, 2, DIM)}),
        "MultiheadAttention": (lambda: multihead_attention.MultiheadAttention(DIM, HEADS, self_attention=True),
                               lambda m: (lambda q: {"query": q, "key": q, "value": q, "need_weights": False})(x(10, 2, DIM))),
        "MultiheadAttention_bias_kv": (lambda: multihead_attention.MultiheadAttention(DIM, HEADS, add_bias_kv=True, add_zero_attn=True),
                                       lambda m: (lambda q: {"query": q, "key": q, "value": q, "key_padding_mask": pad_mask})(x(10, 2, DIM))),
        "MultiheadAttention_rotary": (lambda: multihead_attention.MultiheadAttention(DIM, HEADS, use_rotary_embeddings=True),
                                      lambda m: (lambda q: {"query": q, "key": q, "value": q, "need_head_weights": True})(x(10, 2, DIM))),
        "MultiheadAttention_cross": (lambda: multihead_attention.MultiheadAttention(DIM, HEADS, kdim=16, vdim=16, encoder_decoder_attention=True),
                                     lambda m: (lambda kv: {"query": x(10, 2, DIM), "key": kv, "value": kv})(x(7, 2, 16))),
        "RotaryEmbedding": (lambda: rotary_embedding.RotaryEmbedding(8), lambda m: {"q": x(8, 10, 8), "k": x(8, 10, 8)}),
        "LearnedPositionalEmbedding": (lambda: modules.LearnedPositionalEmbedding(64, DIM, esm1b.padding_idx),
                                       lambda m: {"input": _tokens(esm1b)}),
        "SinusoidalPositionalEmbedding": (lambda: modules.SinusoidalPositionalEmbedding(DIM, esm1.padding_idx),
                                          lambda m: {"x": _tokens(esm1)}),
        "RobertaLMHead": (lambda: modules.RobertaLMHead(DIM, 33, torch.nn.Parameter(torch.randn(33, DIM))),
                          lambda m: {"features": x(2, 10, DIM)}),
        "ContactPredictionHead": (lambda: modules.ContactPredictionHead(2 * HEADS, esm1b.prepend_bos, esm1b.append_eos, eos_idx=esm1b.eos_idx),
                                  lambda m: {"tokens": _tokens(esm1b), "attentions": x(2, 2, HEADS, 14, 14)}),
        "NormalizedResidualBlock": (lambda: modules.NormalizedResidualBlock(modules.FeedForwardNetwork(DIM, 64), DIM),
                                    lambda m: {"x": x(3, 10, 2, DIM)}),
        "FeedForwardNetwork": (lambda: modules.FeedForwardNetwork(DIM, 64, activation_dropout=0.1, max_tokens_per_msa=8),
                               lambda m: {"x": x(3, 10, 2, DIM)}),
        "ESM1LayerNorm": (lambda: modules.ESM1LayerNorm(DIM), lambda m: {"x": x(2, 10, DIM)}),
        "ESM1LayerNorm_no_affine": (lambda: modules.ESM1LayerNorm(DIM, affine=False), lambda m: {"x": x(2, 10, DIM)}),
    }


def _masked(tokens, alphabet):
    """Some residues replaced by the mask token: the token-dropout rescaling path."""
    tokens = tokens.clone()
    tokens[:, 2:4] = alphabet.mask_idx
    return tokens


def names():
    return sorted(_specs())


# The models whose attention applies rotary embeddings: their cos/sin tables are built on the
# first call and kept for that sequence length (`_update_cos_sin_tables`).
ROTARY_MODELS = ["ESM2", "ESM2_contacts", "ESM2_masked", "ESM2_no_token_dropout", "ESM2_repr_heads",
                 "MultiheadAttention_rotary", "RotaryEmbedding", "TransformerLayer_rotary"]


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS)."""
    fresh = Variant("compiled as built, with no eager call first: the rotary tables built under Dynamo", fresh=True)
    out = {name: {"fresh": fresh} for name in ROTARY_MODELS}
    rotary = Variant("use_rotary_embeddings=True, compiled as built with no eager call first: the rotary tables "
                     "built under Dynamo", prepare=_rotary, fresh=True)
    for name in NO_ROTARY_MODELS:
        out[name] = {"rotary_fresh": rotary}
    return out


# The attention models built without rotary embeddings (the default), whose class applies them when
# asked (added 2026-11-28, run on torch 2.13 CPU): `use_rotary_embeddings=True` only makes
# `MultiheadAttention.__init__` set `self.rot_emb = RotaryEmbedding(dim=self.head_dim)` (the layer
# passes the flag on to its attention), so the variant sets that on the built module.
# Not the cross attention: rotary embeddings need keys as long as the queries.
NO_ROTARY_MODELS = ["MultiheadAttention", "MultiheadAttention_bias_kv", "TransformerLayer_esm1", "TransformerLayer_esm1b"]


def _rotary(model, config, inputs):
    from esm.rotary_embedding import RotaryEmbedding

    attention = getattr(model, "self_attn", model)
    attention.rot_emb = RotaryEmbedding(dim=attention.head_dim)
    if attention is not model:
        model.use_rotary_embeddings = True
    return model, inputs


def build(name, variant=None):
    import torch

    make_model, make_inputs = _specs()[name]
    torch.manual_seed(0)
    model = make_model()
    inputs = make_inputs(model)
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
