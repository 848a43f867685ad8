"""encodec: the codec (`EncodecModel`, built as `_get_model` builds the 24 kHz and 48 kHz models, but
small) and its parts run alone: the SEANet encoder and decoder, the residual vector quantizer
(k-means init and EMA updates in train), the entropy-coding language model and its streaming
transformer, the multi-scale STFT discriminator, and the streaming convolutions and LSTM. Random
weights, 800 samples of audio."""
from __future__ import annotations

DIST = "encodec"

SEANET = dict(dimension=16, n_filters=4, ratios=[4, 2], lstm=1)
SAMPLES = 800


def _codec(channels, causal, norm, normalize=False, segment=None):
    from encodec import model as em
    from encodec import modules as m
    from encodec import quantization as qt

    encoder = m.SEANetEncoder(channels=channels, norm=norm, causal=causal, **SEANET)
    decoder = m.SEANetDecoder(channels=channels, norm=norm, causal=causal, **SEANET)
    quantizer = qt.ResidualVectorQuantizer(dimension=16, n_q=4, bins=32)
    return em.EncodecModel(encoder, decoder, quantizer, target_bandwidths=[1.5, 3.0], sample_rate=8000,
                           channels=channels, normalize=normalize, segment=segment, name="small")


def _audio(channels=1, samples=SAMPLES):
    import torch

    return torch.randn(1, channels, samples, generator=torch.Generator().manual_seed(0))


# name -> factory of (model, inputs)
def _specs():
    import torch
    from encodec import model as em
    from encodec import modules as m
    from encodec import msstftd
    from encodec import quantization as qt

    g = torch.Generator().manual_seed(0)
    return {
        "encodec_24khz": lambda: (_codec(1, causal=True, norm="weight_norm"), {"x": _audio()}),
        "encodec_48khz": lambda: (_codec(2, causal=False, norm="time_group_norm", normalize=True, segment=0.05),
                                  {"x": _audio(2)}),
        "seanet_encoder": lambda: (m.SEANetEncoder(**SEANET, true_skip=True), {"x": _audio()}),
        "seanet_decoder": lambda: (m.SEANetDecoder(**SEANET, causal=True, trim_right_ratio=0.5), {"z": torch.randn(1, 16, 100, generator=g)}),
        "residual_vector_quantizer": lambda: (qt.ResidualVectorQuantizer(dimension=16, n_q=4, bins=32),
                                              {"x": torch.randn(1, 16, 100, generator=g), "sample_rate": 100, "bandwidth": 2.0}),
        "lm_model": lambda: (em.LMModel(n_q=2, card=32, dim=32, num_heads=2, num_layers=2, past_context=16),
                             {"indices": torch.randint(0, 33, (1, 2, 10), generator=g)}),
        "streaming_transformer": lambda: (m.StreamingTransformerEncoder(dim=32, num_heads=2, num_layers=2, past_context=8),
                                          {"x": torch.randn(1, 10, 32, generator=g)}),
        "msstft_discriminator": lambda: (msstftd.MultiScaleSTFTDiscriminator(filters=4, n_ffts=[64, 128], hop_lengths=[16, 32],
                                                                            win_lengths=[64, 128]),
                                         {"x": _audio()}),
        "sconv1d_causal": lambda: (m.SConv1d(1, 4, kernel_size=7, stride=2, causal=True, norm="weight_norm"), {"x": _audio()}),
        "sconv_transpose1d": lambda: (m.SConvTranspose1d(4, 1, kernel_size=8, stride=4, causal=True, trim_right_ratio=0.5),
                                      {"x": torch.randn(1, 4, 50, generator=g)}),
        "slstm": lambda: (m.SLSTM(16, num_layers=2), {"x": torch.randn(1, 16, 20, generator=g)}),
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


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS). The residual vector quantizer compiled as built
    (added 2026-11-28, run on torch 2.13 CPU): its codebooks' k-means init (`init_embed_`:
    `kmeans`, `bincount` per iteration) runs on the first call, which the default run makes eagerly."""
    return {"residual_vector_quantizer": {
        "fresh": Variant("compiled as built, with no eager call first: the codebooks' k-means init under Dynamo",
                         fresh=True)}}
