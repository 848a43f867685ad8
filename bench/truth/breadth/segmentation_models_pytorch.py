"""segmentation_models_pytorch: every architecture on a small ResNet-18 encoder, the options that
take other decoder paths (attention, output stride, merge policy, the classification head, a
shallower encoder, one input channel), and Unet over one encoder of each encoder family (smp's own
ports and timm's through `tu-`), random weights (`encoder_weights=None`), 64×64 images."""
from __future__ import annotations

DIST = "segmentation_models_pytorch"

AUX = dict(classes=3, dropout=0.1)
# name -> (architecture, keywords); the encoder is resnet18 unless named.
SPECS = {
    "unet": ("Unet", {}),
    "unet_scse": ("Unet", dict(decoder_attention_type="scse", decoder_interpolation="bilinear")),
    "unet_aux": ("Unet", dict(aux_params=AUX, activation="sigmoid")),
    "unet_depth3": ("Unet", dict(encoder_depth=3, decoder_channels=(64, 32, 16))),
    "unet_gray": ("Unet", dict(in_channels=1, classes=2, decoder_use_norm=False)),
    "unetplusplus": ("UnetPlusPlus", dict(decoder_channels=(64, 32, 16, 16, 8))),
    "manet": ("MAnet", dict(decoder_channels=(64, 32, 16, 16, 8), decoder_pab_channels=16)),
    "linknet": ("Linknet", {}),
    "fpn": ("FPN", dict(decoder_pyramid_channels=64, decoder_segmentation_channels=32)),
    "fpn_cat": ("FPN", dict(decoder_pyramid_channels=64, decoder_segmentation_channels=32, decoder_merge_policy="cat")),
    "pspnet": ("PSPNet", dict(psp_out_channels=64)),
    "deeplabv3": ("DeepLabV3", dict(decoder_channels=64)),
    "deeplabv3plus": ("DeepLabV3Plus", dict(decoder_channels=64)),
    "deeplabv3plus_os8": ("DeepLabV3Plus", dict(decoder_channels=64, encoder_output_stride=8, aux_params=AUX)),
    "pan": ("PAN", dict(decoder_channels=16)),
    "upernet": ("UPerNet", dict(decoder_channels=64)),
    "segformer": ("Segformer", dict(decoder_segmentation_channels=64)),
    "segformer_mit": ("Segformer", dict(encoder_name="mit_b0", decoder_segmentation_channels=64)),
    "dpt": ("DPT", dict(encoder_name="tu-vit_tiny_patch16_224", decoder_intermediate_channels=(32, 64, 64, 64),
                        decoder_fusion_channels=32, dynamic_img_size=True)),
    # one encoder of each family, under Unet
    "unet_dpn68": ("Unet", dict(encoder_name="dpn68")),
    "unet_vgg11_bn": ("Unet", dict(encoder_name="vgg11_bn")),
    "unet_se_resnet50": ("Unet", dict(encoder_name="se_resnet50")),
    "unet_densenet121": ("Unet", dict(encoder_name="densenet121")),
    "unet_inceptionv4": ("Unet", dict(encoder_name="inceptionv4")),
    "unet_inceptionresnetv2": ("Unet", dict(encoder_name="inceptionresnetv2")),
    "unet_efficientnet_b0": ("Unet", dict(encoder_name="efficientnet-b0")),
    "unet_timm_efficientnet_b0": ("Unet", dict(encoder_name="timm-efficientnet-b0")),
    "unet_efficientnet_lite0": ("Unet", dict(encoder_name="timm-tf_efficientnet_lite0")),
    "unet_mobilenet_v2": ("Unet", dict(encoder_name="mobilenet_v2")),
    "unet_xception": ("Unet", dict(encoder_name="xception")),
    "unet_skresnet18": ("Unet", dict(encoder_name="timm-skresnet18")),
    "unet_mit_b0": ("Unet", dict(encoder_name="mit_b0")),
    "unet_mobileone_s0": ("Unet", dict(encoder_name="mobileone_s0")),
    "unet_tu_resnet18": ("Unet", dict(encoder_name="tu-resnet18")),
    "unet_tu_convnext_atto": ("Unet", dict(encoder_name="tu-convnext_atto")),
    "unet_tu_mobilenetv3": ("Unet", dict(encoder_name="tu-mobilenetv3_small_050")),
    "fpn_tu_efficientvit": ("FPN", dict(encoder_name="tu-efficientvit_b0", decoder_pyramid_channels=64,
                                        decoder_segmentation_channels=32)),
}
SIZE = {"dpt": 224, "pan": 128, "unet_inceptionv4": 96, "unet_inceptionresnetv2": 96, "unet_xception": 96}


def names():
    return sorted(SPECS)


def build(name, variant=None):
    import segmentation_models_pytorch as smp
    import torch

    arch, kwargs = SPECS[name]
    kwargs = dict(dict(encoder_name="resnet18", encoder_weights=None), **kwargs, **(variant.config if variant else {}))
    torch.manual_seed(0)
    model = getattr(smp, arch)(**kwargs)
    size = SIZE.get(name, 64)
    inputs = {"x": torch.randn(2, kwargs.get("in_channels", 3), size, size)}
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
