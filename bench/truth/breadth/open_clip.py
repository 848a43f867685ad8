"""open_clip (open-clip-torch): CLIP, CustomTextCLIP and CoCa built from small tower configs, over the
towers that take other code paths: ViT (pooling, attentional pooler, patch dropout, sin-cos
positions, layer scale, the custom attention block), the modified ResNet, timm backbones, and text
towers (causal or not, pooling, a class token with a pad mask, an MLP projection); and the towers run
alone. Random weights, 32×32 images, 16 tokens, no tokenizer."""
from __future__ import annotations

DIST = "open-clip-torch"

EMBED = 32
VISION = dict(layers=2, width=32, head_width=16, patch_size=8, image_size=32)
TEXT = dict(context_length=16, vocab_size=100, width=32, heads=2, layers=2)

# name -> (model class, vision overrides, text overrides, model keywords, tower run alone or None)
SPECS = {
    "clip_vit": ("CLIP", {}, {}, {}, None),
    "clip_vit_quickgelu": ("CLIP", {}, {}, dict(quick_gelu=True), None),
    "clip_vit_custom_block": ("CLIP", dict(qk_norm=True, scale_heads=True, scale_attn_inner=True, scale_fc=True),
                              dict(qk_norm=True, scale_attn=True), {}, None),
    "clip_vit_avg_pool": ("CLIP", dict(pool_type="avg", final_ln_after_pool=True, no_ln_pre=True), {}, {}, None),
    "clip_vit_attentional_pool": ("CLIP", dict(attentional_pool=True, attn_pooler_queries=4, attn_pooler_heads=2), {}, {}, None),
    "clip_vit_patch_dropout": ("CLIP", dict(patch_dropout=0.5), {}, {}, None),
    "clip_vit_sincos_layerscale": ("CLIP", dict(pos_embed_type="sin_cos_2d", ls_init_value=1e-5), {}, {}, None),
    "clip_resnet": ("CLIP", dict(layers=(1, 1, 1, 1), width=16, image_size=64), {}, {}, None),
    "clip_timm_resnet": ("CLIP", dict(timm_model_name="resnet18", timm_pool="avg", timm_proj="mlp"), {}, {}, None),
    "clip_timm_attn_pool": ("CLIP", dict(timm_model_name="resnet18", timm_pool="abs_attn", timm_proj="linear"), {}, {}, None),
    "clip_text_no_causal_last": ("CLIP", {}, dict(no_causal_mask=True, pool_type="last"), {}, None),
    "clip_text_eos_mlp": ("CLIP", {}, dict(pool_type="eos", eos_id=2, proj_type="mlp", proj_bias=True,
                                          final_ln_after_pool=True, ls_init_value=1e-5), {}, None),
    "clip_logit_bias": ("CLIP", {}, {}, dict(init_logit_bias=-10.0, output_dict=True), None),
    "custom_text_clip": ("CustomTextCLIP", {}, {}, {}, None),
    "coca": ("CoCa", dict(attentional_pool=True, attn_pooler_queries=4, attn_pooler_heads=2, output_tokens=True),
             dict(embed_cls=True, output_tokens=True), {}, None),
    "vision_transformer": ("CLIP", dict(output_tokens=True), {}, {}, "visual"),
    "modified_resnet": ("CLIP", dict(layers=(1, 1, 1, 1), width=16, image_size=64), {}, {}, "visual"),
    "timm_model": ("CLIP", dict(timm_model_name="resnet18", timm_pool="", timm_proj="linear"), {}, {}, "visual"),
    "text_transformer": ("CustomTextCLIP", {}, dict(output_tokens=True), {}, "text"),
}


def names():
    return sorted(SPECS)


def build(name, variant=None):
    import open_clip
    import torch

    cls, vision, text, kwargs, tower = SPECS[name]
    vision_cfg, text_cfg = dict(VISION, **vision), dict(TEXT, **text)
    extra = {"multimodal_cfg": dict(TEXT, layers=1, attn_pooler_heads=2)} if cls == "CoCa" else {}
    torch.manual_seed(0)
    model = getattr(open_clip, cls)(embed_dim=EMBED, vision_cfg=vision_cfg, text_cfg=text_cfg, **extra, **kwargs)
    g = torch.Generator().manual_seed(0)
    size = vision_cfg["image_size"]
    image = torch.randn(2, 3, size, size, generator=g)
    text = torch.randint(1, TEXT["vocab_size"], (2, TEXT["context_length"]), generator=g)
    text[:, -4:] = 0  # padding after the text
    if tower == "visual":
        model, inputs = model.visual, {"x": image}
    elif tower == "text":
        model, inputs = model.text, {"text": text}
    else:
        inputs = {"image": image, "text": text}
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
