"""The 7 transformers 5.23 models that graph-break under torch 2.13, tiny and random (no downloads).

`compilelint verify --example bench/fix/models.py:targets` takes this factory as it is: each target
is `(model, args, kwargs)`. Weights come from `torch.manual_seed`, so every call of the factory
builds the same model; inputs are fixed token ids.
"""
import torch

SEED = 0
BATCH, SEQ = 2, 16


def _ids(vocab, seq=SEQ):
    g = torch.Generator().manual_seed(1)
    return torch.randint(3, vocab, (BATCH, seq), generator=g)


def longformer():
    from transformers import LongformerConfig, LongformerModel

    cfg = LongformerConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=37, attention_window=4, max_position_embeddings=64)
    return LongformerModel(cfg), (_ids(99),), {}


def led():
    from transformers import LEDConfig, LEDModel

    cfg = LEDConfig(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                    decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, attention_window=4,
                    max_encoder_position_embeddings=64, max_decoder_position_embeddings=64)
    return LEDModel(cfg), (_ids(99),), {"decoder_input_ids": _ids(99, 8)}


def big_bird():
    from transformers import BigBirdConfig, BigBirdModel

    cfg = BigBirdConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=37, attention_type="block_sparse", block_size=2, num_random_blocks=2,
                        max_position_embeddings=128)
    return BigBirdModel(cfg), (_ids(99, 32),), {}


def reformer():
    from transformers import ReformerConfig, ReformerModel

    cfg = ReformerConfig(vocab_size=99, hidden_size=32, num_attention_heads=2, attention_head_size=8,
                         attn_layers=["local", "lsh"], feed_forward_size=37, axial_pos_shape=[4, 4],
                         axial_pos_embds_dim=[16, 16], max_position_embeddings=16, local_attn_chunk_length=4,
                         lsh_attn_chunk_length=4, num_buckets=2, num_hashes=1, is_decoder=False)
    return ReformerModel(cfg), (_ids(99),), {}


def xlm():
    from transformers import XLMConfig, XLMModel

    cfg = XLMConfig(vocab_size=99, emb_dim=32, n_layers=2, n_heads=4, max_position_embeddings=64)
    return XLMModel(cfg), (_ids(99),), {}


def switch_transformers():
    from transformers import SwitchTransformersConfig, SwitchTransformersModel

    cfg = SwitchTransformersConfig(vocab_size=99, d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2,
                                   num_heads=4, num_experts=4, expert_capacity=64, encoder_sparse_step=1,
                                   decoder_sparse_step=1)
    return SwitchTransformersModel(cfg), (_ids(99),), {"decoder_input_ids": _ids(99, 8)}


def nllb_moe():
    from transformers import NllbMoeConfig, NllbMoeModel

    cfg = NllbMoeConfig(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, num_experts=4,
                        expert_capacity=64, encoder_sparse_step=1, decoder_sparse_step=1,
                        max_position_embeddings=64)
    return NllbMoeModel(cfg), (_ids(99),), {"decoder_input_ids": _ids(99, 8)}


MODELS = {f.__name__: f for f in (longformer, led, big_bird, reformer, xlm, switch_transformers, nllb_moe)}


def _build(make):
    torch.manual_seed(SEED)
    model, args, kwargs = make()
    return model.eval(), args, kwargs


def targets():
    """Every model, in eval mode."""
    return [_build(make) for make in MODELS.values()]


def target(name):
    return _build(MODELS[name])
