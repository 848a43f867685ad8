"""vector_quantize_pytorch: every quantizer class the package exports, and VectorQuantize / ResidualVQ
with the options that take other code paths (k-means init, cosine similarity, multi-head codebooks,
dead-code expiry, orthogonal and diversity losses, stochastic codes, the rotation trick, learnable
codebooks, image feature maps, masks, quantize dropout, beam search). Train runs update the EMA
codebooks; codebooks of 32 codes on 16-dim features."""
from __future__ import annotations

DIST = "vector-quantize-pytorch"

DIM, CODES = 16, 32

# name -> (class, keywords, input kind): "seq" (2, 8, DIM), "seq_mask" with a padding mask,
# "image" (2, DIM, 4, 4), "channels" (2, DIM, 8), "levels" (2, 8, 4) for scalar quantizers without projection, "logits".
SPECS = {
    "vq": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES), "seq"),
    "vq_kmeans_init": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, kmeans_init=True, kmeans_iters=2), "seq"),
    "vq_cosine": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, use_cosine_sim=True), "seq"),
    "vq_codebook_dim": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, codebook_dim=8,
                                               layernorm_after_project_in=True), "seq"),
    "vq_multihead": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, heads=2, separate_codebook_per_head=True), "seq"),
    "vq_dead_codes": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, threshold_ema_dead_code=2), "seq"),
    "vq_orthogonal_reg": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, orthogonal_reg_weight=10.0,
                                                 orthogonal_reg_active_codes_only=True, orthogonal_reg_max_codes=16), "seq"),
    "vq_diversity_loss": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, codebook_diversity_loss_weight=1.0), "seq"),
    "vq_stochastic": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, stochastic_sample_codes=True,
                                             sample_codebook_temp=0.1), "seq"),
    "vq_rotation_trick": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, rotation_trick=True), "seq"),
    "vq_straight_through": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, straight_through=True,
                                                   rotation_trick=False), "seq"),
    "vq_learnable_codebook": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, learnable_codebook=True,
                                                     ema_update=False), "seq"),
    "vq_affine_param": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, affine_param=True), "seq"),
    "vq_cross_entropy_commit": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES,
                                                       commitment_use_cross_entropy_loss=True), "seq"),
    "vq_image": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES, accept_image_fmap=True), "image"),
    "vq_mask": ("VectorQuantize", dict(dim=DIM, codebook_size=CODES), "seq_mask"),
    "residual_vq": ("ResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=3), "seq"),
    "residual_vq_shared": ("ResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=3, shared_codebook=True), "seq"),
    "residual_vq_dropout": ("ResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=3, quantize_dropout=True,
                                               quantize_dropout_cutoff_index=1), "seq"),
    "residual_vq_beam": ("ResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=3, beam_size=2), "seq"),
    "residual_vq_implicit": ("ResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=2,
                                                implicit_neural_codebook=True), "seq"),
    "residual_vq_mask": ("ResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=2), "seq_mask"),
    "grouped_residual_vq": ("GroupedResidualVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=2, groups=2), "seq"),
    "random_projection": ("RandomProjectionQuantizer", dict(dim=DIM, codebook_size=CODES, codebook_dim=8,
                                                            num_codebooks=2), "seq"),
    "fsq": ("FSQ", dict(levels=[8, 5, 5, 5]), "levels"),
    "fsq_projected": ("FSQ", dict(levels=[8, 5, 5], dim=DIM, num_codebooks=2, noise_dropout=0.5,
                                  preserve_symmetry=True), "seq"),
    "fsp": ("FSP", dict(levels=[8, 5, 5, 5]), "levels"),
    "residual_fsq": ("ResidualFSQ", dict(levels=[8, 5, 5], num_quantizers=3, dim=DIM, quantize_dropout=True), "seq"),
    "grouped_residual_fsq": ("GroupedResidualFSQ", dict(levels=[8, 5, 5], num_quantizers=2, dim=DIM, groups=2), "seq"),
    "lfq": ("LFQ", dict(dim=DIM, codebook_size=2 ** 8, num_codebooks=2), "seq"),
    "lfq_spherical": ("LFQ", dict(dim=DIM, codebook_size=2 ** 8, spherical=True, frac_per_sample_entropy=0.5,
                                  soft_clamp_input_value=10.0), "seq"),
    "lfq_mask": ("LFQ", dict(dim=DIM, codebook_size=2 ** 8), "seq_mask"),
    "residual_lfq": ("ResidualLFQ", dict(dim=DIM, codebook_size=2 ** 8, num_quantizers=2), "seq"),
    "grouped_residual_lfq": ("GroupedResidualLFQ", dict(dim=DIM, codebook_size=2 ** 8, num_quantizers=2, groups=2), "seq"),
    "latent_quantize": ("LatentQuantize", dict(levels=[5, 5, 8], dim=DIM), "channels"),
    "sim_vq": ("SimVQ", dict(dim=DIM, codebook_size=CODES), "seq"),
    "residual_sim_vq": ("ResidualSimVQ", dict(dim=DIM, codebook_size=CODES, num_quantizers=2, quantize_dropout=True), "seq"),
    "binary_mapper": ("BinaryMapper", dict(bits=4), "logits"),
    "hierarchical_vq": ("HierarchicalVQ", dict(dim=DIM, codebook_size=CODES, scales=(1, 2, 4), kmeans_init=False,
                                               channel_first=False), "seq"),
}


def names():
    return sorted(SPECS)


def _inputs(kind):
    import torch

    g = torch.Generator().manual_seed(0)
    if kind == "seq":
        return {"x": torch.randn(2, 8, DIM, generator=g)}
    if kind == "seq_mask":
        return {"x": torch.randn(2, 8, DIM, generator=g), "mask": torch.arange(8)[None].expand(2, -1) < torch.tensor([[8], [5]])}
    if kind == "channels":
        return {"z": torch.randn(2, DIM, 8, generator=g)}
    if kind == "image":
        return {"x": torch.randn(2, DIM, 4, 4, generator=g)}
    if kind == "levels":
        return {"z": torch.randn(2, 8, 4, generator=g)}
    if kind == "logits":
        return {"logits": torch.randn(2, 8, 4, generator=g)}
    raise KeyError(kind)


def build(name, variant=None):
    import torch
    import vector_quantize_pytorch as vq

    cls, kwargs, kind = SPECS[name]
    torch.manual_seed(0)
    model = getattr(vq, cls)(**{**kwargs, **(variant.config if variant else {})})
    inputs = _inputs(kind)
    if kind == "seq" and cls == "FSQ":  # FSQ names its input z
        inputs = {"z": inputs["x"]}
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs


# The codebook options a user turns on for training (k-means init, dead-code expiry, orthogonal
# regularisation of the codes in use), compiled fresh: k-means runs on the first call and the
# default runs make that call eagerly. Opens `Codebook.init_embed_` (fewer samples than codes),
# `expire_codes_` / `replace`, the active-codes orthogonal loss; for the models whose findings sit
# there (not beam search and separate multi-head codebooks: they refuse these options).
TRAINING_OPTIONS = dict(kmeans_init=True, kmeans_iters=2, threshold_ema_dead_code=2, orthogonal_reg_weight=1.0,
                        orthogonal_reg_active_codes_only=True)
TRAINING_MODELS = ["grouped_residual_vq", "hierarchical_vq", "random_projection", "residual_vq", "residual_vq_dropout",
                   "residual_vq_implicit", "residual_vq_mask", "residual_vq_shared", "vq",
                   "vq_affine_param", "vq_codebook_dim", "vq_cosine", "vq_cross_entropy_commit", "vq_dead_codes",
                   "vq_diversity_loss", "vq_image", "vq_kmeans_init", "vq_learnable_codebook", "vq_mask",
                   "vq_orthogonal_reg", "vq_rotation_trick", "vq_stochastic", "vq_straight_through"]


# A learnable codebook updated in place by its own optimizer (`in_place_codebook_optimizer`): in train,
# `forward` computes a loss and calls `loss.backward()` and the optimizer's step. For the models whose
# `VectorQuantize.forward` holds that finding, but those that refuse a learnable codebook (cosine
# similarity, gumbel straight-through, beam search) or do not take the option (hierarchical).
IN_PLACE_MODELS = sorted(set(TRAINING_MODELS + ["vq_multihead"])
                         - {"hierarchical_vq", "random_projection", "vq_cosine", "vq_straight_through"})


def _codebook_sgd(params):
    import torch

    return torch.optim.SGD(params, lr=0.1)


# A padding mask (the second sequence 5 of 8 long) for the models built without one: with a
# learnable codebook and its in-place optimizer, the masked in-place loss (`loss[loss_mask]`) and
# the masked commitment loss (`commit_loss[loss_mask]`); the mask alone (the commitment loss) for
# the models that refuse a learnable codebook. Not RandomProjectionQuantizer (its `forward` takes
# no mask) nor image feature maps (`accept_image_fmap` refuses a mask).
MASK_IN_PLACE_MODELS = sorted(set(IN_PLACE_MODELS) - {"vq_mask", "residual_vq_mask", "vq_image"})
MASK_MODELS = sorted(set(TRAINING_MODELS + ["residual_vq_beam", "vq_multihead"]) - set(MASK_IN_PLACE_MODELS)
                     - {"random_projection", "vq_mask", "residual_vq_mask", "vq_image"})

# Quantize dropout on the residual quantizers built without it (`quantize_dropout=True`, cutoff 1):
# the shared random seed drawn as a tensor and read back (`get_maybe_sync_seed`'s `.item()`).
DROPOUT_MODELS = ["residual_vq", "residual_vq_beam", "residual_vq_implicit", "residual_vq_mask", "residual_vq_shared"]


# Per-sample entropy on a random half of the tokens (`frac_per_sample_entropy=0.5`) for the
# lookup-free quantizers built without it: the boolean-mask read of the sampled tokens.
ENTROPY_SAMPLE_MODELS = ["grouped_residual_lfq", "lfq", "lfq_mask", "residual_lfq"]


def _masked(model, config, inputs):
    import torch

    x = inputs["x"]
    return model, {**inputs, "mask": torch.arange(x.shape[1])[None].expand(x.shape[0], -1) < torch.tensor([[8], [5]])}


# Options the variants above leave unrun, one model each (the lines their findings sit on):
# - plain masks for two models whose `mask_in_place` run raises in eager (the implicit neural codebook
#   backpropagates twice through its MLP; a codebook_dim of 8 meets the 16-dim input in the masked
#   commitment loss): the implicit codebook with the mask alone, the projected codebook with the
#   in-place optimizer and the mask but no commitment loss;
# - k-means init with fewer vectors than codes (the warning) for the image feature map (32 vectors,
#   a codebook of 64) and the separate multi-head codebooks (16 vectors per head);
# - beam search with dead-code expiry, and with the active-codes orthogonal loss (its k-means init
#   raises in eager: the beams widen the batch the codebook was initialised for);
# - the hierarchical quantizer's nested dropout and the residual LFQ's quantize dropout (a seed drawn
#   as a tensor and read back);
# - LatentQuantize with fixed values and its in-place optimizer (the loss weights are buffers).
def _latent_in_place(model, config, inputs):
    import torch

    model.in_place_codebook_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, inputs


def _more_variants(Variant, out):
    out["residual_vq_implicit"]["mask"] = Variant("a padding mask passed (8 and 5 of 8 positions): the masked "
                                                  "commitment loss", prepare=_masked)
    out["vq_codebook_dim"]["mask_in_place_no_commit"] = Variant(
        "a padding mask, a learnable codebook and its in-place optimizer, no commitment loss: the masked in-place loss",
        prepare=_masked, config=dict(learnable_codebook=True, ema_update=False,
                                     in_place_codebook_optimizer=_codebook_sgd, commitment_weight=0.0))
    out["vq_image"]["kmeans_few_samples"] = Variant(
        "k-means init of a 64-code codebook from 32 vectors, compiled fresh: the duplicate-samples warning",
        config=dict(kmeans_init=True, kmeans_iters=2, codebook_size=64), fresh=True)
    out["vq_multihead"]["kmeans_init"] = Variant(
        "k-means init of each head's 32 codes from 16 vectors, compiled fresh: the duplicate-samples warning",
        config=dict(kmeans_init=True, kmeans_iters=2), fresh=True)
    out["residual_vq_beam"]["dead_codes"] = Variant("dead-code expiry (threshold 2)", config=dict(threshold_ema_dead_code=2))
    out["residual_vq_beam"]["orthogonal_active"] = Variant(
        "orthogonal loss on the active codes", config=dict(orthogonal_reg_weight=1.0, orthogonal_reg_active_codes_only=True))
    out.setdefault("hierarchical_vq", {})["nested_dropout"] = Variant(
        "nested dropout 1.0: the dropped levels drawn from a tensor seed", config=dict(nested_dropout=1.0))
    out.setdefault("residual_lfq", {})["quantize_dropout"] = Variant(
        "quantize dropout on: the dropout layer drawn from a tensor seed", config=dict(quantize_dropout=True))
    out.setdefault("latent_quantize", {})["in_place_values"] = Variant(
        "fixed values with an in-place optimizer (train): the weighted losses, backward and step inside forward",
        config=dict(optimize_values=False), prepare=_latent_in_place)
    return out


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS)."""
    fresh = Variant("k-means init, dead-code expiry (threshold 2), orthogonal loss on the active codes, compiled "
                    "fresh: the k-means init runs under Dynamo", config=TRAINING_OPTIONS, fresh=True)
    in_place = Variant("learnable codebook with an in-place optimizer: backward and step inside forward (train)",
                       config=dict(learnable_codebook=True, ema_update=False, in_place_codebook_optimizer=_codebook_sgd))
    out = {name: {"training_fresh": fresh} for name in TRAINING_MODELS}
    for name in IN_PLACE_MODELS:
        out.setdefault(name, {})["in_place_optimizer"] = in_place
    mask = Variant("a padding mask passed (8 and 5 of 8 positions): the masked commitment loss", prepare=_masked)
    mask_in_place = Variant("a padding mask with a learnable codebook and its in-place optimizer: the masked "
                            "in-place loss", prepare=_masked, config=in_place.config)
    dropout = Variant("quantize dropout on (cutoff index 1): the dropout layer drawn from a tensor seed",
                      config=dict(quantize_dropout=True, quantize_dropout_cutoff_index=1))
    for name in MASK_MODELS:
        out.setdefault(name, {})["mask"] = mask
    for name in MASK_IN_PLACE_MODELS:
        out.setdefault(name, {})["mask_in_place"] = mask_in_place
    for name in DROPOUT_MODELS:
        out.setdefault(name, {})["quantize_dropout"] = dropout
    # separate multi-head codebooks refuse the active-codes orthogonal loss of `training_fresh`, not expiry
    out["vq_multihead"]["dead_codes"] = Variant("dead-code expiry (threshold 2): expired codes replaced from the batch",
                                                config=dict(threshold_ema_dead_code=2))
    sampled = Variant("per-sample entropy on a random half of the tokens", config=dict(frac_per_sample_entropy=0.5))
    for name in ENTROPY_SAMPLE_MODELS:
        out.setdefault(name, {})["entropy_sample"] = sampled
    return _more_variants(Variant, out)
