"""speechbrain: the `lobes.models` classes (ASR encoders, speaker embeddings, separation,
enhancement, vocoders, TTS, language models), the `lobes.features` front ends and `nnet` layers,
with tiny sizes.

Inputs: 2 utterances of 0.5 s at 16 kHz (`wav`), or 2 x 50 frames of 20 features (`feats`), with
relative lengths (`lens`: the second one 80 % long) where a model takes them.
"""
from __future__ import annotations

DIST = "speechbrain"
B, T, F = 2, 50, 20


def _specs():
    import torch
    from speechbrain.lobes import features as ft
    from speechbrain.lobes.models import (CRDNN, ECAPA_TDNN, ESPnetVGG, EnhanceResnet, GatedNN, HifiGAN,
                                          MetricGAN, MetricGAN_U, ResNet, RNNLM, VanillaNN, Xvector, conv_tasnet,
                                          convolution, dual_path)
    from speechbrain.lobes.models import ContextNet as contextnet
    from speechbrain.lobes.models import Cnn14 as cnn14
    from speechbrain.lobes.models.transformer import Branchformer, Conformer, TransformerASR, TransformerLM, TransformerSE
    from speechbrain.nnet import RNN, pooling

    feats = lambda t=T, f=F: torch.randn(B, t, f, requires_grad=True)  # noqa: E731
    wav = lambda n=8000: torch.randn(B, n)  # noqa: E731
    lens = torch.tensor([1.0, 0.8])
    x = lambda **kw: lambda: {"x": feats(), **kw}  # noqa: E731
    small_rnn = dict(rnn_layers=1, rnn_neurons=16)
    intra = lambda: dual_path.SBTransformerBlock(1, 16, 2, d_ffn=32)  # noqa: E731
    hifi = dict(in_channels=F, out_channels=1, resblock_type="1", resblock_dilation_sizes=[[1, 3, 5]] * 2,
                resblock_kernel_sizes=[3, 5], upsample_kernel_sizes=[4, 4], upsample_initial_channel=16,
                upsample_factors=[2, 2])
    return {
        # ASR / classification encoders
        "CRDNN": (lambda: CRDNN.CRDNN(input_shape=(B, T, F), cnn_blocks=1, cnn_channels=[8], dnn_neurons=16, **small_rnn), x()),
        "CRDNN_lstm_pooling": (lambda: CRDNN.CRDNN(input_shape=(B, T, F), cnn_blocks=2, cnn_channels=[4, 8], time_pooling=True,
                                                   rnn_class=RNN.LSTM, using_2d_pooling=True, dnn_blocks=1, dnn_neurons=16, **small_rnn), x()),
        "ContextNet": (lambda: contextnet.ContextNet((B, T, F), out_channels=16, conv_channels=[16, 16], strides=[1, 2],
                                                     num_blocks=2, num_layers=2, inner_dim=4), x()),
        "ESPnetVGG": (lambda: ESPnetVGG.ESPnetVGG((B, T, F), cnn_channels=[4, 8], projection_neurons=16, **small_rnn), x()),
        "GatedNN": (lambda: GatedNN.GatedNN((B, T, F), blocks=2, neurons=16), x()),
        "VanillaNN": (lambda: VanillaNN.VanillaNN((B, T, F), dnn_blocks=2, dnn_neurons=16), x()),
        "ConvolutionFrontEnd": (lambda: convolution.ConvolutionFrontEnd((B, T, F), num_blocks=2, num_layers_per_block=2,
                                                                        out_channels=[4, 8], kernel_sizes=[3, 3], strides=[1, 2],
                                                                        dilations=[1, 1], residuals=[True, False]), x()),
        "Cnn14": (lambda: cnn14.Cnn14(mel_bins=F * 2, emb_dim=32), lambda: {"x": torch.randn(B, 64, F * 2)}),
        "TransformerASR": (lambda: TransformerASR.TransformerASR(32, F, d_model=32, nhead=4, num_encoder_layers=2,
                                                                 num_decoder_layers=2, d_ffn=64),
                           lambda: {"src": feats(), "tgt": torch.randint(1, 32, (B, 7)), "wav_len": lens}),
        "TransformerASR_conformer": (lambda: TransformerASR.TransformerASR(32, F, d_model=32, nhead=4, num_encoder_layers=2,
                                                                           num_decoder_layers=1, d_ffn=64, encoder_module="conformer", normalize_before=True,
                                                                           attention_type="RelPosMHAXL", kernel_size=7),
                                     lambda: {"src": feats(), "tgt": torch.randint(1, 32, (B, 7)), "wav_len": lens}),
        "TransformerASR_branchformer": (lambda: TransformerASR.TransformerASR(32, F, d_model=32, nhead=4, num_encoder_layers=2,
                                                                              num_decoder_layers=1, d_ffn=64, encoder_module="branchformer",
                                                                              attention_type="RelPosMHAXL", kernel_size=7,
                                                                              csgu_linear_units=64),
                                        lambda: {"src": feats(), "tgt": torch.randint(1, 32, (B, 7)), "wav_len": lens}),
        "TransformerASR_hypermixing": (lambda: TransformerASR.TransformerASR(32, F, d_model=32, nhead=4, num_encoder_layers=1,
                                                                             num_decoder_layers=1, d_ffn=64, attention_type="hypermixing"),
                                       lambda: {"src": feats(), "tgt": torch.randint(1, 32, (B, 7))}),
        "ConformerEncoder": (lambda: Conformer.ConformerEncoder(2, 32, 64, 4, kernel_size=7, attention_type="regularMHA"),
                             lambda: {"src": feats(f=32)}),
        "BranchformerEncoder": (lambda: Branchformer.BranchformerEncoder(2, 32, 4, kernel_size=7, attention_type="regularMHA",
                                                                         csgu_linear_units=64), lambda: {"src": feats(f=32)}),
        "TransformerLM": (lambda: TransformerLM.TransformerLM(32, d_model=32, nhead=4, num_encoder_layers=2, d_ffn=64),
                          lambda: {"src": torch.randint(1, 32, (B, 9))}),
        "CNNTransformerSE": (lambda: TransformerSE.CNNTransformerSE(32, F, nhead=4, num_layers=2, d_ffn=64,
                                                                    custom_emb_module=torch.nn.Linear(F, 32)), x()),
        "RNNLM": (lambda: RNNLM.RNNLM(32, embedding_dim=16, rnn_layers=1, rnn_neurons=16, dnn_neurons=16),
                  lambda: {"x": torch.randint(0, 32, (B, 9))}),
        # speaker embeddings
        "ECAPA_TDNN": (lambda: ECAPA_TDNN.ECAPA_TDNN(F, lin_neurons=16, channels=[16, 16, 16, 16, 48], attention_channels=8,
                                                     res2net_scale=4, se_channels=8), x(lengths=lens)),
        "ECAPA_TDNN_no_context": (lambda: ECAPA_TDNN.ECAPA_TDNN(F, lin_neurons=16, channels=[16, 16, 16, 16, 48], attention_channels=8,
                                                                res2net_scale=4, se_channels=8, global_context=False), x()),
        "ECAPA_Classifier": (lambda: ECAPA_TDNN.Classifier(16, lin_blocks=1, lin_neurons=16, out_neurons=5),
                             lambda: {"x": torch.randn(B, 1, 16, requires_grad=True)}),
        "Xvector": (lambda: Xvector.Xvector(tdnn_channels=[16, 16, 16, 16, 32], lin_neurons=16, in_channels=F), x(lens=lens)),
        "Xvector_Discriminator": (lambda: Xvector.Discriminator((B, 1, 16), lin_neurons=16), lambda: {"x": torch.randn(B, 1, 16)}),
        "ResNet": (lambda: ResNet.ResNet(F, channels=[8, 8, 16, 16], block_sizes=[1, 1, 1, 1], lin_neurons=16), x(lengths=lens)),
        # separation and enhancement
        "ConvTasNet_Encoder": (lambda: conv_tasnet.Encoder(16, 32), lambda: {"mixture": wav(1600)}),
        "ConvTasNet_MaskNet": (lambda: conv_tasnet.MaskNet(32, 16, 32, 3, 2, 1, 2), lambda: {"mixture_w": torch.randn(B, 32, 40)}),
        "ConvTasNet_MaskNet_causal": (lambda: conv_tasnet.MaskNet(32, 16, 32, 3, 2, 1, 2, norm_type="cLN", causal=True, mask_nonlinear="softmax"),
                                      lambda: {"mixture_w": torch.randn(B, 32, 40)}),
        "ConvTasNet_Decoder": (lambda: conv_tasnet.Decoder(16, 32), lambda: {"mixture_w": torch.randn(B, 40, 32), "est_mask": torch.rand(B, 40, 2, 32)}),
        "Dual_Path_Model_transformer": (lambda: dual_path.Dual_Path_Model(16, 16, intra(), intra(), num_layers=1, K=10),
                                        lambda: {"x": torch.randn(B, 16, 60)}),
        "Dual_Path_Model_rnn": (lambda: dual_path.Dual_Path_Model(16, 16, dual_path.SBRNNBlock(16, 8, 1), dual_path.SBRNNBlock(16, 8, 1),
                                                                  num_layers=1, K=10, norm="gln"),
                                lambda: {"x": torch.randn(B, 16, 60)}),
        "Dual_Path_Model_conformer": (lambda: dual_path.Dual_Path_Model(16, 16, dual_path.SBConformerEncoderBlock(1, 16, 2, d_ffn=32, kernel_size=3),
                                                                        dual_path.SBConformerEncoderBlock(1, 16, 2, d_ffn=32, kernel_size=3),
                                                                        num_layers=1, K=10, norm="cln"),
                                      lambda: {"x": torch.randn(B, 16, 60)}),
        "DPTNetBlock": (lambda: dual_path.DPTNetBlock(16, 2, dim_feedforward=32), lambda: {"src": torch.randn(10, B, 16)}),
        "SepformerWrapper": (lambda: dual_path.SepformerWrapper(encoder_out_nchannels=16, masknet_chunksize=10, intra_numlayers=1,
                                                                inter_numlayers=1, intra_nhead=2, inter_nhead=2, intra_dffn=32, inter_dffn=32),
                             lambda: {"mix": wav(800)}),
        "MetricGAN_Generator": (lambda: MetricGAN.EnhancementGenerator(input_size=F, num_layers=1),
                                lambda: {"x": feats().abs(), "lengths": lens}),
        "MetricGAN_Discriminator": (lambda: MetricGAN.MetricDiscriminator(base_channels=4), lambda: {"x": torch.randn(B, 2, T, F)}),
        "MetricGAN_U_Generator": (lambda: MetricGAN_U.EnhancementGenerator(input_size=F, hidden_size=16, num_layers=1, lin_dim=16),
                                  lambda: {"x": feats().abs(), "lengths": lens}),
        "EnhanceResnet": (lambda: EnhanceResnet.EnhanceResnet(n_fft=64, win_length=4, hop_length=2, channel_counts=[4, 8],
                                                              dense_count=1, dense_nodes=16), lambda: {"x": wav(800)}),
        # vocoders
        "HifiganGenerator": (lambda: HifiGAN.HifiganGenerator(**hifi), lambda: {"x": torch.randn(B, F, 10)}),
        "HifiganGenerator_resblock2": (lambda: HifiGAN.HifiganGenerator(**dict(hifi, resblock_type="2")),
                                       lambda: {"x": torch.randn(B, F, 10)}),
        "HifiganDiscriminator": (lambda: HifiGAN.HifiganDiscriminator(), lambda: {"x": torch.randn(B, 1, 2048)}),
        "Fbank": (lambda: ft.Fbank(n_mels=F), lambda: {"wav": wav()}),
        "Fbank_deltas_context": (lambda: ft.Fbank(n_mels=F, deltas=True, context=True), lambda: {"wav": wav()}),
        "MFCC": (lambda: ft.MFCC(n_mels=F, n_mfcc=13), lambda: {"wav": wav()}),
        "Leaf": (lambda: ft.Leaf(out_channels=8, use_pcen=True, in_channels=1), lambda: {"x": wav()}),
        "STFT": (lambda: ft.STFT(16000), lambda: {"x": wav()}),
        "AttentionalPooling": (lambda: pooling.AttentionPooling(F), x()),
        "StatisticsPooling": (lambda: pooling.StatisticsPooling(), x(lengths=lens)),
        "LiGRU": (lambda: RNN.LiGRU(16, input_shape=(B, T, F), num_layers=2), x()),
        "SLiGRU": (lambda: RNN.SLiGRU(16, input_shape=(B, T, F), num_layers=1, bidirectional=True), x()),
        "QuasiRNN": (lambda: RNN.QuasiRNN(16, input_shape=(B, T, F), num_layers=2, bidirectional=True), x()),
        "LSTM_lengths": (lambda: RNN.LSTM(16, input_shape=(B, T, F), num_layers=1), x(lengths=lens)),
    }


def names():
    return sorted(_specs())


def _layerdrop(model, config, inputs):
    """Layer dropout 0.5 on every encoder that has the option (set on the built modules: not every
    wrapper passes it on to its encoder)."""
    for module in model.modules():
        if hasattr(module, "layerdrop_prob"):
            module.layerdrop_prob = 0.5
    return model, inputs


def _batch3(model, config, inputs):
    """A batch of 3 where the layer was built for 2 (`input_shape`): its batch-size change path."""
    import torch

    return model, {"x": torch.randn(3, T, F, requires_grad=True)}


# The encoders whose layer loop skips a layer on a random draw when `layerdrop_prob > 0` (train).
LAYERDROP_MODELS = ["BranchformerEncoder", "CNNTransformerSE", "ConformerEncoder", "Dual_Path_Model_conformer",
                    "Dual_Path_Model_rnn", "Dual_Path_Model_transformer", "SepformerWrapper", "TransformerASR",
                    "TransformerASR_branchformer", "TransformerASR_conformer", "TransformerASR_hypermixing",
                    "TransformerLM"]
# The front ends whose context window builds its kernel on the first call (`first_call`).
FIRST_CALL_MODELS = ["Fbank", "Fbank_deltas_context", "MFCC"]
# The recurrent layers that resize their state and dropout masks when the batch size changes.
BATCH_SIZE_MODELS = ["CRDNN", "LiGRU", "SLiGRU"]


# The other encoders of `TransformerASR` (its `encoder_module` option), with layer dropout 0.5: the
# random layer skip of the encoder loop each claims (Branchformer / Conformer / Transformer), for
# the TransformerASR models built with another encoder; and a `Dual_Path_Model` over transformer
# blocks with layer dropout, for the two built over RNN or conformer blocks (added 2026-11-28, run on
# torch 2.13 CPU with a stand-in torchaudio module, which these models never call).
ENCODER_SWAPS = {"TransformerASR": ("branchformer", "conformer"), "TransformerASR_conformer": ("branchformer", "transformer"),
                 "TransformerASR_branchformer": ("conformer", "transformer"),
                 "TransformerASR_hypermixing": ("branchformer", "conformer")}
TRANSFORMER_BLOCK_MODELS = ["Dual_Path_Model_conformer", "Dual_Path_Model_rnn"]


def _encoder(module):
    def prepare(model, config, inputs):
        from speechbrain.lobes.models.transformer import TransformerASR

        options = dict(attention_type="RelPosMHAXL", kernel_size=7, csgu_linear_units=64, normalize_before=True)
        model = TransformerASR.TransformerASR(32, F, d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=1,
                                              d_ffn=64, encoder_module=module,
                                              **(options if module != "transformer" else {}))
        return _layerdrop(model, config, inputs)

    return prepare


def _transformer_blocks(model, config, inputs):
    from speechbrain.lobes.models import dual_path

    intra = lambda: dual_path.SBTransformerBlock(1, 16, 2, d_ffn=32)  # noqa: E731
    return _layerdrop(dual_path.Dual_Path_Model(16, 16, intra(), intra(), num_layers=1, K=10), config, inputs)


def _ligru_batch3(model, config, inputs):
    """CRDNN with its default recurrent layer (LiGRU) instead of the LSTM it was built with, on a batch
    of 3 where it was built for 2: the LiGRU's batch-size change and drop-mask counter."""
    import torch
    from speechbrain.lobes.models import CRDNN

    model = CRDNN.CRDNN(input_shape=(B, T, F), cnn_blocks=2, cnn_channels=[4, 8], time_pooling=True,
                        using_2d_pooling=True, dnn_blocks=1, dnn_neurons=16, rnn_layers=1, rnn_neurons=16)
    return model, {"x": torch.randn(3, T, F, requires_grad=True)}


def _context(model, config, inputs):
    """The same front end with its context window on (`context=True`), the option its default leaves off."""
    from speechbrain.lobes import features as ft

    return ft.Fbank(n_mels=F, context=True), inputs


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS)."""
    layerdrop = Variant("layer dropout 0.5 (`layerdrop_prob`): the random layer skip in train", prepare=_layerdrop)
    fresh = Variant("compiled as built, with no eager call first: the first call's kernel set-up under Dynamo",
                    fresh=True)
    batch3 = Variant("compiled as built, with no eager call first, on a batch of 3 where the layer was built for 2: "
                     "the batch-size change", prepare=_batch3, fresh=True)
    table = {name: {"layerdrop": layerdrop} for name in LAYERDROP_MODELS}
    table.update({name: {"fresh": fresh} for name in FIRST_CALL_MODELS})
    table.update({name: {"batch3": batch3} for name in BATCH_SIZE_MODELS})
    for name, modules in ENCODER_SWAPS.items():
        for module in modules:
            table.setdefault(name, {})[f"{module}_layerdrop"] = Variant(
                f"encoder_module={module!r}, layer dropout 0.5: that encoder's random layer skip", prepare=_encoder(module))
    table["Fbank"]["context_fresh"] = Variant(
        "context=True, compiled as built with no eager call first: the context window's first-call kernel set-up",
        prepare=_context, fresh=True)
    table.setdefault("CRDNN_lstm_pooling", {})["ligru_batch3"] = Variant(
        "its default LiGRU, compiled as built, on a batch of 3 where it was built for 2", prepare=_ligru_batch3, fresh=True)
    for name in TRANSFORMER_BLOCK_MODELS:
        table.setdefault(name, {})["transformer_layerdrop"] = Variant(
            "transformer blocks with layer dropout 0.5: the transformer encoder's random layer skip",
            prepare=_transformer_blocks)
    return table


def build(name, variant=None):
    import torch

    make_model, make_inputs = _specs()[name]
    torch.manual_seed(0)
    model, inputs = make_model(), make_inputs()
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
