"""whisper (openai-whisper): the model from a tiny `ModelDimensions`, with and without its SDPA
attention path (a class attribute), its audio encoder and text decoder alone, the decoder with the
kv-cache hooks decoding uses (the cache grows by a token each call), and an attention block with
cross-attention. Random weights, 32 mel frames, nothing downloaded."""
from __future__ import annotations

DIST = "openai-whisper"

DIMS = dict(n_mels=80, n_audio_ctx=16, n_audio_state=32, n_audio_head=2, n_audio_layer=2,
            n_vocab=100, n_text_ctx=64, n_text_state=32, n_text_head=2, n_text_layer=2)


def _whisper():
    from whisper.model import ModelDimensions, Whisper

    return Whisper(ModelDimensions(**DIMS))


def _specs():
    import torch
    from whisper import model as wm

    g = torch.Generator().manual_seed(0)
    mel = lambda: torch.randn(1, DIMS["n_mels"], 2 * DIMS["n_audio_ctx"], generator=g)  # noqa: E731
    tokens = lambda n=8: torch.randint(0, DIMS["n_vocab"], (1, n), generator=g)  # noqa: E731
    features = lambda: torch.randn(1, DIMS["n_audio_ctx"], DIMS["n_audio_state"], generator=g)  # noqa: E731

    def cached_decoder():
        model = _whisper()
        cache, _ = model.install_kv_cache_hooks()
        return model.decoder, {"x": tokens(1), "xa": features(), "kv_cache": cache}

    def no_sdpa():
        wm.MultiHeadAttention.use_sdpa = False  # the class switch `disable_sdpa()` flips (one model per process)
        return _whisper(), {"mel": mel(), "tokens": tokens()}

    return {
        "whisper": lambda: (_whisper(), {"mel": mel(), "tokens": tokens()}),
        "whisper_no_sdpa": no_sdpa,
        "audio_encoder": lambda: (_whisper().encoder, {"x": mel()}),
        "text_decoder": lambda: (_whisper().decoder, {"x": tokens(), "xa": features()}),
        "text_decoder_kv_cache": cached_decoder,
        "cross_attention_block": lambda: (wm.ResidualAttentionBlock(32, 2, cross_attention=True),
                                          {"x": torch.randn(1, 8, 32, generator=g), "xa": features()}),
        "multi_head_attention": lambda: (wm.MultiHeadAttention(32, 2), {"x": torch.randn(1, 8, 32, generator=g)}),
    }


def names():
    return sorted(_specs())


def build(name, variant=None):
    import torch

    torch.manual_seed(0)
    model, inputs = _specs()[name]()
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
