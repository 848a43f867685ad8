"""The models of the truth corpus: which ones, and how each is built small with random weights.

Nothing is downloaded. transformers: the base model class of every `model_type` in the library's
auto mapping, from its config class with sizes shrunk (`tiny_config`); timm: one model per
architecture module, the smallest name of each; diffusers: the `models/` classes with small
configs written here. A model that cannot be built or does not run in eager is recorded as such
by the caller and left out of scoring: the corpus is what runs.

`build(lib, name)` returns `(model, inputs)`: `inputs` is a dict of keyword arguments.
"""
from __future__ import annotations

import inspect
import re

SEQ = 16
BATCH = 2

# Config keys shrunk to these values wherever a config (or one of its sub-configs) has them.
# Sizes are chosen so that heads divide widths and head dims stay even (rotary embeddings).
TINY = {
    # widths
    "hidden_size": 32, "d_model": 32, "n_embd": 32, "n_embed": 32, "embed_dim": 32, "dim": 32,
    "hidden_dim": 32, "embedding_size": 32, "word_embed_proj_dim": 32, "projection_dim": 32,
    # depths
    "num_hidden_layers": 2, "num_layers": 2, "n_layer": 2, "n_layers": 2, "encoder_layers": 2,
    "decoder_layers": 2, "num_decoder_layers": 2, "num_encoder_layers": 2, "depth": 2,
    "num_sparse_encoder_layers": 1, "num_sparse_decoder_layers": 1,
    # heads
    "num_attention_heads": 4, "n_head": 4, "n_heads": 4, "num_heads": 4,
    "encoder_attention_heads": 4, "decoder_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 8, "d_kv": 8, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
    "kv_lora_rank": 16, "q_lora_rank": 16,
    # feed-forward
    "intermediate_size": 64, "ffn_dim": 64, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64,
    "n_inner": 64, "d_ff": 64, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    # experts
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "n_group": 1, "topk_group": 1, "expert_capacity": 8,
    # vocabulary and positions
    "vocab_size": 128, "max_position_embeddings": 128, "n_positions": 128, "max_seq_len": 128,
    "type_vocab_size": 2,
    # vision
    "image_size": 32, "patch_size": 8, "num_channels": 3,
}
_TOKEN_ID = re.compile(r"_token_id$")


def _shrink(d: dict) -> dict:
    """A config dict with every known size replaced, sub-configs (nested dicts) shrunk too, and
    the vocabulary kept larger than every special token id."""
    out = {}
    for key, value in d.items():
        if isinstance(value, dict) and key not in ("id2label", "label2id"):
            out[key] = _shrink(value)
        elif key in TINY and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[key] = min(value, TINY[key]) if key != "num_channels" else value
        elif key == "layer_types" or key == "layers_block_type":
            out[key] = None  # derived again from the shrunk depth
    ids = [v for k, v in d.items() if _TOKEN_ID.search(k) and isinstance(v, int) and not isinstance(v, bool)]
    if "vocab_size" in out and ids:
        out["vocab_size"] = max(out["vocab_size"], max(ids) + 1)
    return out


# ---------------------------------------------------------------------------------- transformers
def transformers_names():
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return sorted(MODEL_MAPPING_NAMES)


def _transformers_class(model_type):
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES[model_type]
    if isinstance(name, (tuple, list)):
        name = name[0]
    return getattr(transformers, name)


def tiny_config(model_type):
    from transformers import CONFIG_MAPPING

    config_class = CONFIG_MAPPING[model_type]
    default = config_class().to_dict()
    kwargs = {k: v for k, v in _shrink(default).items() if v is not None or k in ("layer_types", "layers_block_type")}
    kwargs = {k: v for k, v in kwargs.items() if not (v is None and k not in default)}
    try:
        config = config_class(**kwargs)
    except Exception:
        config = config_class(**{k: v for k, v in kwargs.items() if v is not None})
    config._attn_implementation = "eager" if not hasattr(config, "_attn_implementation_internal") else config._attn_implementation
    return config


def _sub(config, attr, default):
    for part in (config, getattr(config, "text_config", None), getattr(config, "vision_config", None),
                 getattr(config, "encoder", None)):
        if part is not None and getattr(part, attr, None):
            return getattr(part, attr)
    return default


def transformers_inputs(model, config):
    import torch

    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    vocab = _sub(config, "vocab_size", 128)
    low = min(4, vocab - 1)
    inputs = {}
    if main == "input_ids" or ("input_ids" in params and main not in params):
        inputs["input_ids"] = torch.randint(low, vocab, (BATCH, SEQ))
        if "attention_mask" in params:
            inputs["attention_mask"] = torch.ones(BATCH, SEQ, dtype=torch.long)
    if main == "pixel_values" or ("pixel_values" in params and "input_ids" in inputs and "vision_config" in config.to_dict()):
        size = _sub(config.vision_config if hasattr(config, "vision_config") else config, "image_size", 32)
        size = size[0] if isinstance(size, (list, tuple)) else size
        channels = _sub(config, "num_channels", 3)
        inputs["pixel_values"] = torch.randn(BATCH, channels, size, size)
    if main == "input_values":
        inputs["input_values"] = torch.randn(BATCH, 16000)  # 1 s at 16 kHz: ~49 frames, room for SpecAugment masks
    if "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):
        inputs["decoder_input_ids"] = torch.randint(low, vocab, (BATCH, SEQ // 2))
    if not inputs:
        raise ValueError(f"no inputs known for main input {main!r}")
    return inputs


def build_transformers(model_type):
    import torch

    config = tiny_config(model_type)
    cls = _transformers_class(model_type)
    torch.manual_seed(0)
    model = cls(config)
    return model, transformers_inputs(model, config)


# ------------------------------------------------------------------------------------------ timm
def timm_names():
    """One model per architecture module: the shortest name, preferring small variants."""
    import timm
    from timm.models import _registry

    by_module = {}
    for name in timm.list_models():
        by_module.setdefault(_registry._model_to_module[name], []).append(name)
    size_words = ("atto", "femto", "pico", "nano", "tiny", "mini", "small", "xs", "s", "18", "b0", "lite")
    picked = []
    for module, names in sorted(by_module.items()):
        small = [n for n in names if any(w in re.split(r"[_\.]", n) or w in n for w in size_words)]
        picked.append(min(small or names, key=lambda n: (len(n), n)))
    return sorted(picked)


def build_timm(name):
    import timm
    import torch

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False)
    cfg = getattr(model, "pretrained_cfg", None) or {}
    size = tuple(cfg.get("input_size", (3, 224, 224)))
    if not cfg.get("fixed_input_size", False) and max(size[1:]) > 128:
        size = (size[0], 128, 128)
    return model, {"x": torch.randn(1, *size)}


# ------------------------------------------------------------------------------------- diffusers
def _diffusers_specs():
    """name -> (class name, config kwargs, inputs factory)."""
    import torch

    def lat(c=4, s=16):
        return torch.randn(BATCH, c, s, s)

    t = lambda: torch.tensor([10, 500])  # noqa: E731
    ctx = lambda d=32, n=8: torch.randn(BATCH, n, d)  # noqa: E731
    blocks = dict(block_out_channels=(32, 64), layers_per_block=1, norm_num_groups=32)
    return {
        "UNet2DModel": ("UNet2DModel", dict(sample_size=16, in_channels=3, out_channels=3, **blocks,
                        down_block_types=("DownBlock2D", "AttnDownBlock2D"), up_block_types=("AttnUpBlock2D", "UpBlock2D")),
                        lambda: {"sample": lat(3), "timestep": t()}),
        "UNet2DConditionModel": ("UNet2DConditionModel", dict(sample_size=16, in_channels=4, out_channels=4, **blocks,
                                 cross_attention_dim=32, attention_head_dim=8,
                                 down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")),
                                 lambda: {"sample": lat(), "timestep": t(), "encoder_hidden_states": ctx()}),
        "AutoencoderKL": ("AutoencoderKL", dict(in_channels=3, out_channels=3, latent_channels=4, **blocks,
                          down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2),
                          lambda: {"sample": lat(3, 32)}),
        "VQModel": ("VQModel", dict(in_channels=3, out_channels=3, latent_channels=4, **blocks,
                    down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2, num_vq_embeddings=32),
                    lambda: {"sample": lat(3, 32)}),
        "AutoencoderTiny": ("AutoencoderTiny", dict(encoder_block_out_channels=(16, 16), decoder_block_out_channels=(16, 16),
                            num_encoder_blocks=(1, 1), num_decoder_blocks=(1, 1), latent_channels=4),
                            lambda: {"sample": lat(3, 32)}),
        "Transformer2DModel": ("Transformer2DModel", dict(num_attention_heads=2, attention_head_dim=16, in_channels=4,
                               num_layers=1, norm_num_groups=4, cross_attention_dim=32),
                               lambda: {"hidden_states": lat(), "encoder_hidden_states": ctx()}),
        "DiTTransformer2DModel": ("DiTTransformer2DModel", dict(num_attention_heads=2, attention_head_dim=16, in_channels=4,
                                  out_channels=8, num_layers=2, sample_size=16, patch_size=2, num_embeds_ada_norm=10),
                                  lambda: {"hidden_states": lat(), "timestep": t(), "class_labels": torch.tensor([1, 2])}),
        "PixArtTransformer2DModel": ("PixArtTransformer2DModel", dict(num_attention_heads=2, attention_head_dim=16, in_channels=4,
                                     out_channels=8, num_layers=2, sample_size=16, patch_size=2, cross_attention_dim=32,
                                     caption_channels=32),
                                     lambda: {"hidden_states": lat(), "timestep": t(), "encoder_hidden_states": ctx(),
                                              "added_cond_kwargs": {"resolution": None, "aspect_ratio": None}}),
        "SD3Transformer2DModel": ("SD3Transformer2DModel", dict(sample_size=16, patch_size=2, in_channels=4, num_layers=2,
                                  attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32, caption_projection_dim=32,
                                  pooled_projection_dim=16, out_channels=4, pos_embed_max_size=32),
                                  lambda: {"hidden_states": lat(), "timestep": t(), "encoder_hidden_states": ctx(),
                                           "pooled_projections": torch.randn(BATCH, 16)}),
        "FluxTransformer2DModel": ("FluxTransformer2DModel", dict(patch_size=1, in_channels=16, num_layers=1, num_single_layers=1,
                                   attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
                                   pooled_projection_dim=16, axes_dims_rope=(4, 6, 6)),
                                   lambda: {"hidden_states": torch.randn(BATCH, 64, 16), "encoder_hidden_states": ctx(),
                                            "pooled_projections": torch.randn(BATCH, 16), "timestep": torch.tensor([0.5, 0.5]),
                                            "img_ids": torch.zeros(64, 3), "txt_ids": torch.zeros(8, 3)}),
        "UNet1DModel": ("UNet1DModel", dict(block_out_channels=(32, 64), in_channels=14, out_channels=14, extra_in_channels=16,
                        down_block_types=("DownBlock1DNoSkip", "DownBlock1D"), up_block_types=("UpBlock1D", "UpBlock1DNoSkip"),
                        mid_block_type="MidResTemporalBlock1D", use_timestep_embedding=False, sample_size=16),
                        lambda: {"sample": torch.randn(BATCH, 14, 16), "timestep": t()}),
        "PriorTransformer": ("PriorTransformer", dict(num_attention_heads=2, attention_head_dim=16, num_layers=2, embedding_dim=32,
                             num_embeddings=4, additional_embeddings=4),
                             lambda: {"hidden_states": torch.randn(BATCH, 32), "timestep": t(),
                                      "proj_embedding": torch.randn(BATCH, 32), "encoder_hidden_states": torch.randn(BATCH, 4, 32)}),
        "UNetSpatioTemporalConditionModel": ("UNetSpatioTemporalConditionModel", dict(block_out_channels=(32, 64), sample_size=16,
                             in_channels=8, out_channels=4, layers_per_block=1, cross_attention_dim=32, num_attention_heads=(4, 8),
                             projection_class_embeddings_input_dim=96, addition_time_embed_dim=32,
                             down_block_types=("CrossAttnDownBlockSpatioTemporal", "DownBlockSpatioTemporal"),
                             up_block_types=("UpBlockSpatioTemporal", "CrossAttnUpBlockSpatioTemporal")),
                             lambda: {"sample": torch.randn(1, 2, 8, 16, 16), "timestep": torch.tensor([10]),
                                      "encoder_hidden_states": torch.randn(1, 1, 32), "added_time_ids": torch.randn(1, 3)}),
        "ControlNetModel": ("ControlNetModel", dict(in_channels=4, **blocks, cross_attention_dim=32, attention_head_dim=8,
                            down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), conditioning_embedding_out_channels=(16, 32)),
                            lambda: {"sample": lat(), "timestep": t(), "encoder_hidden_states": ctx(),
                                     "controlnet_cond": torch.randn(BATCH, 3, 32, 32)}),
        "T2IAdapter": ("T2IAdapter", dict(in_channels=3, channels=(32, 64), num_res_blocks=1, downscale_factor=4,
                       adapter_type="full_adapter"), lambda: {"x": torch.randn(BATCH, 3, 32, 32)}),
        "UVit2DModel": ("UVit2DModel", dict(hidden_size=32, in_channels=32, block_out_channels=32, num_res_blocks=1, num_hidden_layers=2,
                        num_attention_heads=2, attention_dropout=0.0, cond_embed_dim=32, micro_cond_encode_dim=2,
                        micro_cond_embed_dim=10, encoder_hidden_size=32, vocab_size=32, codebook_size=32),
                        lambda: {"input_ids": torch.randint(0, 32, (BATCH, 4, 4)), "encoder_hidden_states": ctx(),
                                 "pooled_text_emb": torch.randn(BATCH, 32), "micro_conds": torch.randn(BATCH, 5)}),
    }


def diffusers_names():
    return sorted(_diffusers_specs())


def build_diffusers(name):
    import diffusers
    import torch

    cls_name, kwargs, make_inputs = _diffusers_specs()[name]
    torch.manual_seed(0)
    model = getattr(diffusers, cls_name)(**kwargs)
    return model, make_inputs()


LIBS = {
    "transformers": (transformers_names, build_transformers),
    "timm": (timm_names, build_timm),
    "diffusers": (diffusers_names, build_diffusers),
}


def names(lib):
    return LIBS[lib][0]()


def build(lib, name):
    return LIBS[lib][1](name)


def defining_class(model):
    """`(file relative to site-packages, class name)` of the model's class: the scorer's --entry."""
    import sys

    cls = type(model)
    module = sys.modules[cls.__module__]
    path = module.__file__
    top = cls.__module__.split(".")[0]
    idx = path.rfind(f"/{top}/")
    return path[idx + 1:] if idx >= 0 else path, cls.__name__
