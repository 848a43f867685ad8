"""The models of the truth corpus: which ones, and how each is built small with random weights.

Nothing is downloaded. transformers: the base model class of every `model_type` in the library's
auto mapping, from its config class with sizes shrunk (`tiny_config`); timm: one model per
architecture module, the smallest name of each; diffusers: the `models/` classes with small
configs written here. A model that cannot be built or does not run in eager is recorded as such
by the caller and left out of scoring: the corpus is what runs.

`build(lib, name)` returns `(model, inputs)`: `inputs` is a dict of keyword arguments.

`VARIANTS` (below) names, per model, a few runs beside the default one whose config or inputs
open paths the tiny default run never takes (an fp16 clamp, block-sparse attention, a padded
mask, layerdrop in train, ...): `build(lib, name, variant)` builds one. They exist so the scorer
can judge findings on those paths (see score.py), not to change the corpus.
"""
from __future__ import annotations

import inspect
import os
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

# `TRUTH_SIZE=moderate` (bench/fix/latency.py): a size whose compiled latency means something on a
# GPU: hidden 512, 4 layers, 8 heads of 64, feed-forward 2048, 8 experts, batch 8 x 128 tokens,
# each where the config's own default is not smaller (the shrink keeps the smaller of the two).
MODERATE = dict(TINY, **{k: 512 for k in ("hidden_size", "d_model", "n_embd", "n_embed", "embed_dim", "dim", "emb_dim",
                                           "hidden_dim", "embedding_size", "word_embed_proj_dim", "projection_dim")},
                **{k: 4 for k in ("num_hidden_layers", "num_layers", "n_layer", "n_layers", "encoder_layers",
                                  "decoder_layers", "num_decoder_layers", "num_encoder_layers", "depth")},
                num_sparse_encoder_layers=2, num_sparse_decoder_layers=2,
                **{k: 8 for k in ("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
                                  "decoder_attention_heads")}, num_key_value_heads=4,
                **{k: 64 for k in ("head_dim", "d_kv", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")},
                kv_lora_rank=128, q_lora_rank=128,
                **{k: 2048 for k in ("intermediate_size", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner",
                                     "d_ff")}, moe_intermediate_size=1024, shared_expert_intermediate_size=1024,
                num_experts=8, num_local_experts=8, n_routed_experts=8, expert_capacity=1024,
                vocab_size=1024, max_position_embeddings=512, n_positions=512, max_seq_len=512)
# `TRUTH_EXPERTS=N`: exactly N experts (not capped by the config's default), for a realistic count.
EXACT = {}
if os.environ.get("TRUTH_SIZE") == "moderate":
    TINY, SEQ, BATCH = MODERATE, 128, 8
if os.environ.get("TRUTH_EXPERTS"):
    EXACT = dict.fromkeys(("num_experts", "num_local_experts", "n_routed_experts"), int(os.environ["TRUTH_EXPERTS"]))


def _shrink(d: dict) -> dict:
    """A config dict with every known size replaced, sub-configs (nested dicts) shrunk too, and
    the vocabulary kept larger than every special token id."""
    out = {}
    for key, value in d.items():
        if isinstance(value, dict) and key not in ("id2label", "label2id"):
            out[key] = _shrink(value)
        elif key in EXACT and isinstance(value, int) and not isinstance(value, bool):
            out[key] = EXACT[key]
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


def transformers_inputs(model, config, seq=SEQ):
    import torch

    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    vocab = _sub(config, "vocab_size", 128)
    low = min(4, vocab - 1)
    inputs = {}
    if main == "input_ids" or ("input_ids" in params and main not in params):
        inputs["input_ids"] = torch.randint(low, vocab, (BATCH, seq))
        if "attention_mask" in params:
            inputs["attention_mask"] = torch.ones(BATCH, seq, dtype=torch.long)
    if main == "pixel_values" or ("pixel_values" in params and "input_ids" in inputs and "vision_config" in config.to_dict()):
        size = _sub(config.vision_config if hasattr(config, "vision_config") else config, "image_size", 32)
        size = size[0] if isinstance(size, (list, tuple)) else size
        channels = _sub(config, "num_channels", 3)
        inputs["pixel_values"] = torch.randn(BATCH, channels, size, size)
    if main == "input_values":
        inputs["input_values"] = torch.randn(BATCH, 16000)  # 1 s at 16 kHz: ~49 frames, room for SpecAugment masks
    if "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False):
        inputs["decoder_input_ids"] = torch.randint(low, vocab, (BATCH, seq // 2))
    if not inputs:
        raise ValueError(f"no inputs known for main input {main!r}")
    return inputs


def _configs(config):
    """The config and its sub-configs (text_config, vision_config, encoder, ...), depth first."""
    from transformers import PretrainedConfig

    yield config
    for value in list(vars(config).values()):
        if isinstance(value, PretrainedConfig):
            yield from _configs(value)


def build_transformers(model_type, variant=None):
    import torch

    config = tiny_config(model_type)
    for key, value in (variant.config if variant else {}).items():
        parts = [part for part in _configs(config) if hasattr(part, key)]
        for part in parts or [config]:  # every (sub-)config that has the key, else the top one
            setattr(part, key, value)
    cls = _transformers_class(model_type)
    torch.manual_seed(0)
    model = cls(config)
    inputs = transformers_inputs(model, config, (variant.seq if variant else 0) or SEQ)
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, config, inputs)
    return model, inputs


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


def build_timm(name, variant=None):
    import timm
    import torch

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, **(variant.config if variant else {}))
    cfg = getattr(model, "pretrained_cfg", None) or {}
    size = tuple(cfg.get("input_size", (3, 224, 224)))
    if not cfg.get("fixed_input_size", False) and max(size[1:]) > 128:
        size = (size[0], 128, 128)
    inputs = {"x": torch.randn(1, *size)}
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs


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


def build_diffusers(name, variant=None):
    import diffusers
    import torch

    cls_name, kwargs, make_inputs = _diffusers_specs()[name]
    torch.manual_seed(0)
    model = getattr(diffusers, cls_name)(**kwargs, **(variant.config if variant else {}))
    inputs = make_inputs()
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs


LIBS = {
    "transformers": (transformers_names, build_transformers),
    "timm": (timm_names, build_timm),
    "diffusers": (diffusers_names, build_diffusers),
}
# The import name of each library whose distribution is named otherwise (read by run.py).
DISTRIBUTIONS = {}


def _breadth_libraries():
    """The breadth corpus: one module per library in `breadth/`, each with `DIST` (its distribution
    name), `names()` and `build(name, variant=None) -> (model, inputs)`; imported only when used,
    so a library that is not installed costs nothing to the others."""
    import importlib
    import os

    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "breadth")
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".py") or file.startswith("_"):
            continue
        lib = file[:-3]

        def module(lib=lib):
            return importlib.import_module(f"breadth.{lib}")

        LIBS[lib] = (lambda module=module: module().names(),
                     lambda name, variant=None, module=module: module().build(name, variant))
        DISTRIBUTIONS[lib] = lambda module=module: module().DIST


_breadth_libraries()


def names(lib):
    return LIBS[lib][0]()


def is_fresh(lib, name, variant=None) -> bool:
    """Is the run compiled with no eager call first (`Variant.fresh`)?"""
    return variant is not None and VARIANTS[lib][name][variant].fresh


def build(lib, name, variant=None):
    """`(model, inputs)` of the model, built as its named variant (VARIANTS) when one is given."""
    if variant is None:
        return LIBS[lib][1](name)
    return LIBS[lib][1](name, VARIANTS[lib][name][variant])


def defining_class(model):
    """`(file relative to site-packages, class name)` of the model's class: the scorer's --entry."""
    import sys

    cls = type(model)
    module = sys.modules[cls.__module__]
    path = module.__file__
    top = cls.__module__.split(".")[0]
    idx = path.rfind(f"/{top}/")
    return path[idx + 1:] if idx >= 0 else path, cls.__name__


# ---------------------------------------------------------------------------------------- variants
class Variant:
    """A run beside a model's default one: config keys changed (transformers: on the config and
    every sub-config that has the key; timm: `create_model` keywords; diffusers: the class's
    keywords), a text length (`seq`, transformers), and `prepare(model, config, inputs) -> (model,
    inputs)` for what is done to the built model or its inputs. `doc`: the path it opens.
    `fresh`: compile the model as built, with no eager call first (the default runs make one): what
    a user who compiles a new model runs, where the first call's one-time work (a fallback warning,
    a table grown or a state set on first use) happens under Dynamo.
    `torch`: the torch (major.minor) the run must be made on, where the claims it opens are measured
    to differ between versions (a 2.13 run would judge a 2.11 claim on the wrong torch); `run.py`
    leaves it out on any other. None: any torch."""

    def __init__(self, doc, config=None, seq=0, prepare=None, fresh=False, torch=None):
        self.doc, self.config, self.seq, self.prepare = doc, dict(config or {}), seq, prepare
        self.fresh, self.torch = fresh, torch


def _params(model):
    return inspect.signature(model.forward).parameters


def _half(model, config, inputs):
    """fp16 weights and floating inputs (the CPU runs float16 matmuls and convolutions)."""
    import torch

    model = model.half()
    return model, {k: v.half() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in inputs.items()}


def _checkpointing(model, config, inputs):
    """Gradient checkpointing on, and `use_cache=True` where the forward takes it (what users of
    `generate`-capable models pass by default)."""
    model.gradient_checkpointing_enable()
    if "use_cache" in _params(model):
        inputs = dict(inputs, use_cache=True)
    return model, inputs


def _padded(model, config, inputs):
    """An attention mask with real padding: the second sequence's last quarter (text) or half
    (audio) masked out."""
    import torch

    inputs = dict(inputs)
    if "attention_mask" in inputs:
        mask = inputs["attention_mask"].clone()
        mask[1, -max(1, mask.shape[1] // 4):] = 0
        inputs["attention_mask"] = mask
    elif "input_values" in inputs and "attention_mask" in _params(model):
        mask = torch.ones(inputs["input_values"].shape, dtype=torch.long)
        mask[1, mask.shape[1] // 2:] = 0
        inputs["attention_mask"] = mask
    return model, inputs


def _adding(**make):
    """Extra inputs, each made by `make[name](model, config, inputs)`."""
    def prepare(model, config, inputs):
        return model, dict(inputs, **{k: f(model, config, inputs) for k, f in make.items()})
    return prepare


def _then(*steps):
    def prepare(model, config, inputs):
        for step in steps:
            model, inputs = step(model, config, inputs)
        return model, inputs
    return prepare


def _global_attention(model, config, inputs):
    """Longformer/LED: the first token of each sequence attends globally."""
    import torch

    mask = torch.zeros_like(inputs["input_ids"])
    mask[:, 0] = 1
    return model, dict(inputs, global_attention_mask=mask)


def _naflex(model, config, inputs):
    """timm NaFlex input: a dict of pre-patchified patches with coordinates and validity, the
    second image smaller (its last patches are padding)."""
    import torch

    ph, pw = model.get_patch_size() if hasattr(model, "get_patch_size") else model.patch_embed.patch_size
    grid, n = 4, 16
    patches = torch.randn(2, n, ph * pw * 3)
    ys, xs = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
    coord = torch.stack([ys.flatten(), xs.flatten()], -1).unsqueeze(0).repeat(2, 1, 1)
    valid = torch.ones(2, n, dtype=torch.bool)
    valid[1, 12:] = False  # the second image is 3 x 4 patches
    coord[1, 12:] = 0
    return model, {"x": {"patches": patches, "patch_coord": coord, "patch_valid": valid}}


def _radio_packed(model, config, inputs):
    """RADIO's packed input: the flattened patches of two images of different grids."""
    import torch

    grids = torch.tensor([[2, 2], [3, 4]])
    channels, patch = config.num_channels, config.patch_size
    return model, {"pixel_values": torch.randn(int(grids.prod(-1).sum()), channels * patch * patch),
                   "image_grid_hw": grids}


def _visual(model, config, inputs):
    """VisualBERT's visual inputs, with an image-text alignment whose second region is aligned to
    no token (all -1)."""
    import torch

    b, n = inputs["input_ids"].shape[0], 4
    alignment = torch.randint(0, SEQ, (b, n, 2))
    alignment[:, 1] = -1
    return model, dict(inputs, visual_embeds=torch.randn(b, n, config.visual_embedding_dim),
                       visual_token_type_ids=torch.ones(b, n, dtype=torch.long),
                       visual_attention_mask=torch.ones(b, n, dtype=torch.long), image_text_alignment=alignment)


def _lengths(model, config, inputs):
    """XLM-style `lengths` instead of an attention mask: the second sequence 4 tokens shorter."""
    import torch

    seq = inputs["input_ids"].shape[1]
    inputs = {k: v for k, v in inputs.items() if k != "attention_mask"}
    return model, dict(inputs, lengths=torch.tensor([seq, seq - 4]))


def _seamless_speech(model, config, inputs):
    """SeamlessM4T(v2)Model given speech features and labels beside the text: the speech encoder
    runs (with layerdrop 0.5, its conformer skips layers in train), the labels switch off the cache
    (each with its warning)."""
    import torch

    b, seq = inputs["input_ids"].shape
    features = torch.randn(b, 40, config.feature_projection_input_dim)
    inputs = {k: v for k, v in inputs.items() if k != "attention_mask"}  # the text's mask does not fit the speech
    return model, dict(inputs, input_features=features, labels=torch.randint(4, 64, (b, seq // 2)),
                       use_cache=True, inputs_embeds=torch.randn(b, seq, config.hidden_size))


def _qwen2_audio(model, config, inputs):
    """Qwen2-Audio given 100 mel frames (the encoder's max_source_positions shrunk to 50) and their 25
    audio tokens already expanded in input_ids (the processor's layout: not the legacy merge)."""
    import torch

    b, seq = inputs["input_ids"].shape
    ids = inputs["input_ids"].clone()
    ids[:, 2:27] = config.audio_token_id
    return model, dict(inputs, input_ids=ids, input_features=torch.randn(b, config.audio_config.num_mel_bins, 100),
                       feature_attention_mask=torch.ones(b, 100, dtype=torch.long))


def _evolla_protein(model, config, inputs):
    """Evolla given a protein sequence: its SaProt encoder and the protein cross-attention run."""
    import torch

    b, seq = inputs["input_ids"].shape
    vocab = config.protein_encoder_config.vocab_size
    return model, dict(inputs, protein_input_ids=torch.randint(4, vocab, (b, seq)),
                       protein_attention_mask=torch.ones(b, seq, dtype=torch.long))


def _phi4_audio(model, config, inputs):
    """Phi-4-multimodal given audio features (64 frames of 80 mel bins: 8 embeddings after the 8x time
    reduction) and their audio tokens in input_ids (8 in the first sequence, 6 in the second)."""
    import torch

    b = inputs["input_ids"].shape[0]
    ids = inputs["input_ids"].clone()
    ids[ids == config.audio_config.audio_token_id] = 5
    ids[0, 2:10] = config.audio_config.audio_token_id
    ids[1, 2:8] = config.audio_config.audio_token_id
    return model, dict(inputs, input_ids=ids, audio_input_features=torch.randn(b, 64, config.audio_config.input_size),
                       audio_embed_sizes=torch.tensor([8, 6]))


def _phi4_image(model, config, inputs):
    """Phi-4-multimodal given one 32x32 image per sequence (crop size shrunk to 32: a global view and
    one crop, 4x4 patches pooled to 2x2) with its patch mask, and its 13 image tokens in input_ids."""
    import torch

    b = inputs["input_ids"].shape[0]
    image_token = config.vision_config.image_token_id
    ids = inputs["input_ids"].clone()
    ids[ids == image_token] = 5
    ids[:, 1:14] = image_token
    return model, dict(inputs, input_ids=ids, image_pixel_values=torch.randn(b, 2, 3, 32, 32),
                       image_sizes=torch.tensor([[32, 32]] * b), image_attention_mask=torch.ones(b, 2, 4, 4))


LAYERDROP = {"layerdrop": 0.5, "encoder_layerdrop": 0.5, "decoder_layerdrop": 0.5, "speech_encoder_layerdrop": 0.5}
# The generic variants, and the models whose unexercised findings each one reaches.
GENERIC = {
    # fp16 weights and inputs: the `hidden_states.dtype == torch.float16 and not isfinite(...)` clamps
    "fp16": (Variant("float16 weights and inputs: the fp16-only clamps run", prepare=_half),
             ["bart", "bigbird_pegasus", "blenderbot-small", "led", "longt5", "marian", "mvp", "nllb-moe", "plbart"]),
    # gradient checkpointing with use_cache=True: the "incompatible with gradient checkpointing" warnings,
    # T5's `position_bias.requires_grad = True`
    "checkpointing": (Variant("gradient checkpointing on, use_cache=True: the checkpointing branches of train",
                              prepare=_checkpointing),
                      # not rwkv: its train run raises in eager (the state is built before use_cache is turned off)
                      ["bigbird_pegasus", "bloom", "falcon", "imagegpt", "led", "longt5", "mpt", "mt5", "mvp", "prophetnet",
                       "switch_transformers", "t5"]),
    # BERT-like encoders used as decoders (is_decoder, as their CausalLM heads do), checkpointing on and
    # use_cache=True: their "incompatible with gradient checkpointing" warnings (an encoder forces use_cache off)
    "decoder_checkpointing": (Variant("is_decoder=True, gradient checkpointing on, use_cache=True",
                                      config={"is_decoder": True}, prepare=_checkpointing),
                              # not roformer: its train run raises in eager (the cache made before use_cache is
                              # turned off is filled twice by the recomputation)
                              ["megatron-bert", "rembert"]),
    # a padded attention mask: SpecAugment's per-sequence lengths (`attention_mask.sum(-1).tolist()`),
    # the feature-extractor lengths of speech models
    "padded": (Variant("an attention mask with real padding: per-sequence lengths", prepare=_padded),
               ["data2vec-audio", "hubert", "moonshine", "sew", "sew-d", "unispeech", "unispeech-sat", "wav2vec2",
                "wav2vec2-conformer", "wavlm"]),
    # layerdrop 0.5 (train): the skip branch of `if skip_the_layer:` / `dropout_probability < self.layerdrop`
    "layerdrop": (Variant("layerdrop 0.5: layers are skipped in train", config=LAYERDROP),
                  ["flaubert", "nllb-moe", "seamless_m4t", "seamless_m4t_v2", "vits"]),
    # output_attentions=True: the attention classes' "does not support output_attentions" warnings
    "attentions": (Variant("output_attentions=True", prepare=_adding(output_attentions=lambda m, c, i: True)),
                   ["data2vec-vision"]),
}
ONE_OFF = {
    "transformers": {
        # BigBird: block-sparse attention needs seq > (5 + 2 * num_random_blocks) * block_size; 46 is
        # padded to 48 (the padding warning), 12 blocks plan two random-block ranges (train draws them)
        "big_bird": {"fresh": Variant("the default config compiled fresh: the first call falls back from "
                                      "block-sparse to full attention and logs it", fresh=True),
                     "sparse": Variant("block-sparse attention, 46 tokens padded to 48 (block 4, 2 random blocks)",
                                       config={"attention_type": "block_sparse", "block_size": 4, "num_random_blocks": 2},
                                       seq=46),
                     # the paper's fixed plans for 1024/3072/4096 tokens: `_bigbird_block_rand_mask`, drawn
                     # over max_position_embeddings (4096, the default: every branch of its loop runs)
                     "sparse1024": Variant("block-sparse attention on 1024 tokens (the paper's fixed random plan)",
                                           config={"attention_type": "block_sparse", "block_size": 16,
                                                   "num_random_blocks": 2, "max_position_embeddings": 4096},
                                           seq=1024)},
        "bigbird_pegasus": {"fresh": Variant("the default config compiled fresh: the first call falls back from "
                                             "block-sparse to full attention and logs it", fresh=True),
                            "sparse": Variant("block-sparse attention, 46 tokens padded to 48 (block 4, 2 random blocks)",
                                              config={"attention_type": "block_sparse", "block_size": 4,
                                                      "num_random_blocks": 2}, seq=46),
                            "sparse1024": Variant("block-sparse attention on 1024 tokens (the paper's fixed random plan)",
                                                  config={"attention_type": "block_sparse", "block_size": 16,
                                                          "num_random_blocks": 2, "max_position_embeddings": 4096},
                                                  seq=1024)},
        # global attention on the first token: Longformer's global/local index split (`.nonzero()`)
        "led": {"global": Variant("global_attention_mask on the first token", prepare=_global_attention)},
        "longformer": {"global": Variant("global_attention_mask on the first token", prepare=_global_attention)},
        # `lengths` given: `assert lengths.max().item() <= slen`
        "xlm": {"lengths": Variant("per-sequence lengths given", prepare=_lengths)},
        "flaubert": {"lengths": Variant("per-sequence lengths given", prepare=_lengths)},
        # visual inputs with an unaligned region: the alignment average and its divide-by-zero guard
        "visual_bert": {"visual": Variant("visual embeddings with an image-text alignment", prepare=_visual)},
        # integer-only quantisation: IntLayerNorm's lazy `dim_sqrt` and overflow fallback, the shift log
        "ibert": {"quant": Variant("quant_mode=True (integer-only inference)", config={"quant_mode": True}),
                  "quant_fresh": Variant("quant_mode=True, compiled fresh: IntLayerNorm sets dim_sqrt on its first "
                                         "call", config={"quant_mode": True}, fresh=True)},
        # two sparse (MoE) layers of two: the router's classifier cast, the experts' `nonzero` dispatch
        "nllb-moe": {"sparse": Variant("every second layer an MoE layer (sparse_step 2 of 2 layers)",
                                       config={"encoder_sparse_step": 2, "decoder_sparse_step": 2})},
        # more tokens than positions: FSMT's sinusoidal table is rebuilt on the fly
        "fsmt": {"long": Variant("160 tokens, more than max_position_embeddings (128)", seq=160),
                 "long_fresh": Variant("160 tokens, compiled fresh: the positional table grows on the first call",
                                       seq=160, fresh=True)},
        # packed images of two grids: RADIO's packed patches and cu_seqlens attention
        "radio": {"packed": Variant("two images of different grids, packed", prepare=_radio_packed)},
        # speech features and labels beside the text ids: the speech encoder and its warnings
        "seamless_m4t": {"speech": Variant("input_features + labels beside input_ids/inputs_embeds, layerdrop 0.5",
                                           config=LAYERDROP, prepare=_seamless_speech)},
        "seamless_m4t_v2": {"speech": Variant("input_features + labels beside input_ids/inputs_embeds, layerdrop 0.5",
                                              config=LAYERDROP, prepare=_seamless_speech)},
        # audio features with their expanded audio tokens: the audio tower and the feature merge
        "qwen2_audio": {"audio": Variant("100 mel frames with 25 expanded audio tokens (32 tokens)", seq=32,
                                         config={"max_source_positions": 50, "audio_token_index": 100},
                                         prepare=_qwen2_audio)},
        # a protein sequence beside the text: the protein encoder and the gated cross-attention
        "evolla": {"protein": Variant("protein_input_ids with their mask", prepare=_evolla_protein)},
        # audio features with their audio tokens: Phi-4-multimodal's audio embedding and merge
        "phi4_multimodal": {"audio": Variant("64 audio frames with their audio tokens (the audio encoder shrunk too)",
                                             config={"audio_token_id": 100, "num_blocks": 2, "ext_pw_out_channel": 32,
                                                     "depthwise_separable_out_channel": 32, "nemo_conv_channels": 32},
                                             prepare=_phi4_audio),
                            "image": Variant("a 32x32 image per sequence with its image tokens (crop size 32)",
                                             config={"image_token_id": 101, "crop_size": 32}, prepare=_phi4_image)},
        # text labels without a text head (the default use_text_head=False): the ignored-labels warning
        "higgs_audio_v2": {"labels": Variant("labels given (the text head is off by default)",
                                             prepare=_adding(labels=lambda m, c, i: i["input_ids"]))},
        # compiled as built: the first eval call rescales the layers and flips `layers_are_rescaled`,
        # which the compiled forward's guard reads (the default runs make that call eagerly first)
        "rwkv": {"fresh": Variant("the default config compiled fresh: the first call rescales the layers",
                                  fresh=True)},
        # Phi-3.5-MoE's own RoPE: longrope with short/long mscale, chosen by the sequence length
        "phimoe": {"longrope": Variant("rope_type longrope (original 8 positions: the long factors apply)",
                                       config={"rope_parameters": {
                                           "rope_type": "longrope", "rope_theta": 10000.0, "short_factor": [1.0] * 4,
                                           "long_factor": [2.0] * 4, "short_mscale": 1.0, "long_mscale": 1.2,
                                           "original_max_position_embeddings": 8}})},
    },
    "timm": {
        # NaFlex dict input with padding patches: the grid sizes from coordinates, the padding masks
        "naflexvit_base_patch16_gap": {"naflex": Variant("NaFlex dict input, the second image padded", prepare=_naflex)},
        "gemma4_vit_167m": {"naflex": Variant("NaFlex dict input, the second image padded", prepare=_naflex)},
    },
    "diffusers": {
        # a sample size no multiple of the upsampling factor: the forwarded upsample size
        "UNetSpatioTemporalConditionModel": {
            "odd": Variant("15x15 latents: not a multiple of the upsampling factor",
                           prepare=lambda m, c, i: (m, dict(i, sample=__import__("torch").randn(1, 2, 8, 15, 15))))},
    },
}


# The breadth libraries whose module declares variants (`variants(Variant) -> {model: {variant: Variant}}`).
BREADTH_WITH_VARIANTS = ["e3nn", "encodec", "esm", "gpytorch", "peft", "sentence_transformers", "speechbrain", "stable_baselines3",
                         "torchmetrics", "vector_quantize_pytorch", "x_transformers"]


def _variants():
    import importlib

    table = {lib: {name: dict(vs) for name, vs in per.items()} for lib, per in ONE_OFF.items()}
    lib_of = {}
    for name_list in (v[1] for v in GENERIC.values()):
        for name in name_list:
            lib_of[name] = "transformers"
    for vname, (variant, model_names) in GENERIC.items():
        for name in model_names:
            table.setdefault(lib_of[name], {}).setdefault(name, {})[vname] = variant
    for lib in BREADTH_WITH_VARIANTS:  # a breadth module declares its own: `variants(Variant)`
        for name, per in importlib.import_module(f"breadth.{lib}").variants(Variant).items():
            table.setdefault(lib, {}).setdefault(name, {}).update(per)
    return table


VARIANTS = _variants()  # lib -> model name -> variant name -> Variant


def variant_names(lib, torch_version=None):
    """{model name: [its variant names]} of the library; with `torch_version` (major.minor), only
    the variants that may run on it (`Variant.torch`)."""
    return {name: sorted(v for v, variant in vs.items() if not (torch_version and variant.torch
                                                                 and variant.torch != torch_version))
            for name, vs in sorted(VARIANTS.get(lib, {}).items())}
