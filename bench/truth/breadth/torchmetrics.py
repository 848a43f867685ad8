"""torchmetrics: metric modules called as modules (`metric(preds=..., target=...)`: `forward` runs
`update` on the batch and `compute` on it, and accumulates the state), one per metric class,
over the families whose code differs: classification (binary / multiclass / multilabel, curves and
fixed-point metrics), regression, image, audio, segmentation, aggregation, nominal, clustering,
retrieval, text, detection IoU, shape, and the wrappers around a metric. Metrics have no parameters:
train runs only the forward (nothing to differentiate)."""
from __future__ import annotations

DIST = "torchmetrics"

N, C, L = 16, 4, 3  # batch, classes, labels


def _inputs():
    """Input kind -> factory of the keyword arguments of `forward` (a fixed seed: same each call)."""
    import torch

    g = lambda: torch.Generator().manual_seed(0)  # noqa: E731

    def probs(*shape):
        return torch.rand(*shape, generator=g())

    def ints(high, *shape):
        return torch.randint(0, high, shape, generator=g())

    texts = ["the cat sat on the mat", "hello there world"]
    refs = ["the cat is on the mat", "hello world"]
    box = lambda: [{"boxes": torch.tensor([[10.0, 20.0, 50.0, 60.0], [5.0, 5.0, 30.0, 40.0]]),  # noqa: E731
                    "labels": torch.tensor([0, 1])}]
    return {
        "bin": lambda: {"preds": probs(N), "target": ints(2, N)},
        "bin2d": lambda: {"preds": probs(4, 8), "target": ints(2, 4, 8)},
        "mc": lambda: {"preds": probs(N, C).softmax(-1), "target": ints(C, N)},
        "mc_int": lambda: {"preds": ints(C, N), "target": ints(C, N)},
        "ml": lambda: {"preds": probs(N, L), "target": ints(2, N, L)},
        "reg": lambda: {"preds": torch.randn(N, generator=g()), "target": torch.randn(N, generator=g()) + 0.1},
        "pos": lambda: {"preds": probs(N) + 0.1, "target": probs(N) + 0.2},
        "reg_targets": lambda: {"preds": torch.randn(N, generator=g()), "targets": torch.randn(N, generator=g())},
        "pos_targets": lambda: {"preds": probs(N) + 0.1, "targets": probs(N) + 0.2},
        "reg2": lambda: {"preds": torch.randn(N, 2, generator=g()), "target": torch.randn(N, 2, generator=g())},
        "dist": lambda: {"p": probs(N, C).softmax(-1), "q": probs(N, C).softmax(-1)},
        "ens": lambda: {"preds": torch.randn(N, 5, generator=g()), "target": torch.randn(N, generator=g())},
        "img": lambda: {"preds": probs(2, 3, 32, 32), "target": probs(2, 3, 32, 32) * 0.9},
        "img_msssim": lambda: {"preds": probs(1, 3, 180, 180), "target": probs(1, 3, 180, 180) * 0.9},
        "gray": lambda: {"preds": probs(2, 1, 32, 32), "target": probs(2, 1, 32, 32) * 0.9},
        "tv": lambda: {"img": probs(2, 3, 16, 16)},
        "audio": lambda: {"preds": torch.randn(2, 800, generator=g()), "target": torch.randn(2, 800, generator=g())},
        "audio_src": lambda: {"preds": torch.randn(2, 2, 800, generator=g()), "target": torch.randn(2, 2, 800, generator=g())},
        "audio_cplx": lambda: {"preds": torch.randn(2, 65, 10, 2, generator=g()), "target": torch.randn(2, 65, 10, 2, generator=g())},
        "seg_idx": lambda: {"preds": ints(C, 2, 16, 16), "target": ints(C, 2, 16, 16)},
        "seg_onehot": lambda: {"preds": torch.nn.functional.one_hot(ints(C, 2, 16, 16), C).permute(0, 3, 1, 2),
                               "target": torch.nn.functional.one_hot(ints(C, 2, 16, 16), C).permute(0, 3, 1, 2)},
        "value": lambda: {"value": torch.randn(N, generator=g())},
        "nominal": lambda: {"preds": ints(C, N), "target": ints(3, N)},
        "ratings": lambda: {"ratings": ints(3, N, C)},
        "cluster": lambda: {"preds": ints(3, N), "target": ints(3, N)},
        "cluster_data": lambda: {"data": torch.randn(N, 4, generator=g()), "labels": torch.arange(N) % 3},
        "retrieval": lambda: {"preds": probs(N), "target": torch.arange(N) % 3 == 0, "indexes": torch.arange(N) // 4},
        "text": lambda: {"preds": texts, "target": refs},
        "text_multi": lambda: {"preds": texts, "target": [[r] for r in refs]},
        "squad": lambda: {"preds": [{"prediction_text": "1976", "id": "a"}],
                          "target": [{"answers": {"answer_start": [97], "text": ["1976"]}, "id": "a"}]},
        "perplexity": lambda: {"preds": torch.randn(2, 8, 10, generator=g()), "target": ints(10, 2, 8)},
        "boxes": lambda: {"preds": [dict(b, scores=torch.tensor([0.9, 0.6])) for b in box()], "target": box()},
        "shape": lambda: {"point_cloud1": torch.randn(2, 10, 3, generator=g()), "point_cloud2": torch.randn(2, 10, 3, generator=g())},
        "multitask": lambda: {"task_preds": {"cls": probs(N), "reg": torch.randn(N, generator=g())},
                              "task_targets": {"cls": ints(2, N), "reg": torch.randn(N, generator=g())}},
        "tracker": lambda: {"preds": probs(N), "target": ints(2, N)},
    }


mc, ml = dict(num_classes=C), dict(num_labels=L)
# name -> (module under torchmetrics, class, keywords, input kind); the name is the class's unless
# one class appears twice with keywords that take another path.
SPECS = {
    # classification: binary
    "BinaryAccuracy": ("classification", "BinaryAccuracy", {}, "bin"),
    "BinaryF1Score": ("classification", "BinaryF1Score", {}, "bin"),
    "BinaryFBetaScore": ("classification", "BinaryFBetaScore", dict(beta=2.0), "bin"),
    "BinaryPrecision": ("classification", "BinaryPrecision", {}, "bin"),
    "BinaryRecall": ("classification", "BinaryRecall", {}, "bin"),
    "BinarySpecificity": ("classification", "BinarySpecificity", {}, "bin"),
    "BinaryStatScores": ("classification", "BinaryStatScores", dict(multidim_average="samplewise"), "bin2d"),
    "BinaryHammingDistance": ("classification", "BinaryHammingDistance", {}, "bin"),
    "BinaryJaccardIndex": ("classification", "BinaryJaccardIndex", {}, "bin"),
    "BinaryConfusionMatrix": ("classification", "BinaryConfusionMatrix", dict(normalize="true"), "bin"),
    "BinaryCohenKappa": ("classification", "BinaryCohenKappa", {}, "bin"),
    "BinaryMatthewsCorrCoef": ("classification", "BinaryMatthewsCorrCoef", {}, "bin"),
    "BinaryAUROC": ("classification", "BinaryAUROC", {}, "bin"),
    "BinaryAUROC_binned": ("classification", "BinaryAUROC", dict(thresholds=5), "bin"),
    "BinaryAveragePrecision": ("classification", "BinaryAveragePrecision", {}, "bin"),
    "BinaryROC": ("classification", "BinaryROC", {}, "bin"),
    "BinaryPrecisionRecallCurve": ("classification", "BinaryPrecisionRecallCurve", {}, "bin"),
    "BinaryPrecisionRecallCurve_binned": ("classification", "BinaryPrecisionRecallCurve", dict(thresholds=5), "bin"),
    "BinaryCalibrationError": ("classification", "BinaryCalibrationError", dict(n_bins=5), "bin"),
    "BinaryHingeLoss": ("classification", "BinaryHingeLoss", {}, "bin"),
    "BinaryEER": ("classification", "BinaryEER", {}, "bin"),
    "BinaryLogAUC": ("classification", "BinaryLogAUC", {}, "bin"),
    "BinaryNegativePredictiveValue": ("classification", "BinaryNegativePredictiveValue", {}, "bin"),
    "BinaryRecallAtFixedPrecision": ("classification", "BinaryRecallAtFixedPrecision", dict(min_precision=0.5), "bin"),
    "BinarySpecificityAtSensitivity": ("classification", "BinarySpecificityAtSensitivity", dict(min_sensitivity=0.5), "bin"),
    # classification: multiclass
    "MulticlassAccuracy": ("classification", "MulticlassAccuracy", mc, "mc"),
    "MulticlassAccuracy_top2": ("classification", "MulticlassAccuracy", dict(mc, top_k=2, average="micro"), "mc"),
    "MulticlassAccuracy_labels": ("classification", "MulticlassAccuracy", dict(mc, ignore_index=0), "mc_int"),
    "MulticlassF1Score": ("classification", "MulticlassF1Score", dict(mc, average="weighted"), "mc"),
    "MulticlassPrecision": ("classification", "MulticlassPrecision", mc, "mc"),
    "MulticlassRecall": ("classification", "MulticlassRecall", dict(mc, average=None), "mc"),
    "MulticlassConfusionMatrix": ("classification", "MulticlassConfusionMatrix", mc, "mc"),
    "MulticlassCohenKappa": ("classification", "MulticlassCohenKappa", dict(mc, weights="quadratic"), "mc"),
    "MulticlassMatthewsCorrCoef": ("classification", "MulticlassMatthewsCorrCoef", mc, "mc"),
    "MulticlassAUROC": ("classification", "MulticlassAUROC", mc, "mc"),
    "MulticlassAveragePrecision": ("classification", "MulticlassAveragePrecision", mc, "mc"),
    "MulticlassROC": ("classification", "MulticlassROC", mc, "mc"),
    "MulticlassCalibrationError": ("classification", "MulticlassCalibrationError", dict(mc, n_bins=5), "mc"),
    "MulticlassHingeLoss": ("classification", "MulticlassHingeLoss", mc, "mc"),
    "MulticlassExactMatch": ("classification", "MulticlassExactMatch", mc, "mc_int"),
    "MulticlassJaccardIndex": ("classification", "MulticlassJaccardIndex", mc, "mc"),
    "MulticlassSpecificityAtSensitivity": ("classification", "MulticlassSpecificityAtSensitivity",
                                           dict(mc, min_sensitivity=0.5), "mc"),
    # classification: multilabel
    "MultilabelAccuracy": ("classification", "MultilabelAccuracy", ml, "ml"),
    "MultilabelF1Score": ("classification", "MultilabelF1Score", ml, "ml"),
    "MultilabelAUROC": ("classification", "MultilabelAUROC", ml, "ml"),
    "MultilabelAveragePrecision": ("classification", "MultilabelAveragePrecision", ml, "ml"),
    "MultilabelConfusionMatrix": ("classification", "MultilabelConfusionMatrix", ml, "ml"),
    "MultilabelCoverageError": ("classification", "MultilabelCoverageError", ml, "ml"),
    "MultilabelRankingAveragePrecision": ("classification", "MultilabelRankingAveragePrecision", ml, "ml"),
    "MultilabelRankingLoss": ("classification", "MultilabelRankingLoss", ml, "ml"),
    "MultilabelExactMatch": ("classification", "MultilabelExactMatch", ml, "ml"),
    "MultilabelHammingDistance": ("classification", "MultilabelHammingDistance", ml, "ml"),
    # regression
    "MeanSquaredError": ("regression", "MeanSquaredError", {}, "reg"),
    "MeanSquaredError_rmse": ("regression", "MeanSquaredError", dict(squared=False), "reg"),
    "MeanAbsoluteError": ("regression", "MeanAbsoluteError", {}, "reg"),
    "MeanAbsolutePercentageError": ("regression", "MeanAbsolutePercentageError", {}, "reg"),
    "SymmetricMeanAbsolutePercentageError": ("regression", "SymmetricMeanAbsolutePercentageError", {}, "reg"),
    "WeightedMeanAbsolutePercentageError": ("regression", "WeightedMeanAbsolutePercentageError", {}, "reg"),
    "MeanSquaredLogError": ("regression", "MeanSquaredLogError", {}, "pos"),
    "LogCoshError": ("regression", "LogCoshError", {}, "reg"),
    "MinkowskiDistance": ("regression", "MinkowskiDistance", dict(p=3), "reg_targets"),
    "NormalizedRootMeanSquaredError": ("regression", "NormalizedRootMeanSquaredError", {}, "reg"),
    "RelativeSquaredError": ("regression", "RelativeSquaredError", {}, "reg"),
    "R2Score": ("regression", "R2Score", {}, "reg"),
    "ExplainedVariance": ("regression", "ExplainedVariance", {}, "reg"),
    "PearsonCorrCoef": ("regression", "PearsonCorrCoef", {}, "reg"),
    "PearsonCorrCoef_multi": ("regression", "PearsonCorrCoef", dict(num_outputs=2), "reg2"),
    "SpearmanCorrCoef": ("regression", "SpearmanCorrCoef", {}, "reg"),
    "KendallRankCorrCoef": ("regression", "KendallRankCorrCoef", {}, "reg"),
    "ConcordanceCorrCoef": ("regression", "ConcordanceCorrCoef", {}, "reg"),
    "CosineSimilarity": ("regression", "CosineSimilarity", {}, "reg2"),
    "TweedieDevianceScore": ("regression", "TweedieDevianceScore", dict(power=1.5), "pos_targets"),
    "CriticalSuccessIndex": ("regression", "CriticalSuccessIndex", dict(threshold=0.5), "pos"),
    "KLDivergence": ("regression", "KLDivergence", {}, "dist"),
    "JensenShannonDivergence": ("regression", "JensenShannonDivergence", {}, "dist"),
    "ContinuousRankedProbabilityScore": ("regression", "ContinuousRankedProbabilityScore", {}, "ens"),
    # image
    "PeakSignalNoiseRatio": ("image", "PeakSignalNoiseRatio", dict(data_range=1.0), "img"),
    "PeakSignalNoiseRatio_dims": ("image", "PeakSignalNoiseRatio", dict(data_range=1.0, dim=(1, 2, 3)), "img"),
    "StructuralSimilarityIndexMeasure": ("image", "StructuralSimilarityIndexMeasure", dict(data_range=1.0), "img"),
    "MultiScaleStructuralSimilarityIndexMeasure": ("image", "MultiScaleStructuralSimilarityIndexMeasure",
                                                   dict(data_range=1.0), "img_msssim"),
    "UniversalImageQualityIndex": ("image", "UniversalImageQualityIndex", {}, "img"),
    "TotalVariation": ("image", "TotalVariation", {}, "tv"),
    "SpectralAngleMapper": ("image", "SpectralAngleMapper", {}, "img"),
    "ErrorRelativeGlobalDimensionlessSynthesis": ("image", "ErrorRelativeGlobalDimensionlessSynthesis", {}, "img"),
    "RelativeAverageSpectralError": ("image", "RelativeAverageSpectralError", {}, "img"),
    "RootMeanSquaredErrorUsingSlidingWindow": ("image", "RootMeanSquaredErrorUsingSlidingWindow", {}, "img"),
    "SpatialCorrelationCoefficient": ("image", "SpatialCorrelationCoefficient", {}, "img"),
    "PeakSignalNoiseRatioWithBlockedEffect": ("image", "PeakSignalNoiseRatioWithBlockedEffect", dict(data_range=1.0), "gray"),
    "VisualInformationFidelity": ("image", "VisualInformationFidelity", {}, "img_msssim"),
    # audio
    "SignalNoiseRatio": ("audio", "SignalNoiseRatio", {}, "audio"),
    "ScaleInvariantSignalNoiseRatio": ("audio", "ScaleInvariantSignalNoiseRatio", {}, "audio"),
    "ScaleInvariantSignalDistortionRatio": ("audio", "ScaleInvariantSignalDistortionRatio", {}, "audio"),
    "SignalDistortionRatio": ("audio", "SignalDistortionRatio", {}, "audio"),
    "SourceAggregatedSignalDistortionRatio": ("audio", "SourceAggregatedSignalDistortionRatio", {}, "audio_src"),
    "ComplexScaleInvariantSignalNoiseRatio": ("audio", "ComplexScaleInvariantSignalNoiseRatio", {}, "audio_cplx"),
    # segmentation
    "MeanIoU": ("segmentation", "MeanIoU", dict(num_classes=C, input_format="index"), "seg_idx"),
    "GeneralizedDiceScore": ("segmentation", "GeneralizedDiceScore", dict(num_classes=C), "seg_onehot"),
    "DiceScore": ("segmentation", "DiceScore", dict(num_classes=C, input_format="index"), "seg_idx"),
    "HausdorffDistance": ("segmentation", "HausdorffDistance", dict(num_classes=C), "seg_onehot"),
    # aggregation
    "MeanMetric": ("aggregation", "MeanMetric", {}, "value"),
    "SumMetric": ("aggregation", "SumMetric", {}, "value"),
    "MaxMetric": ("aggregation", "MaxMetric", {}, "value"),
    "MinMetric": ("aggregation", "MinMetric", {}, "value"),
    "CatMetric": ("aggregation", "CatMetric", {}, "value"),
    "RunningMean": ("aggregation", "RunningMean", dict(window=3), "value"),
    "RunningSum": ("aggregation", "RunningSum", dict(window=3), "value"),
    # nominal
    "CramersV": ("nominal", "CramersV", dict(num_classes=C), "nominal"),
    "TheilsU": ("nominal", "TheilsU", dict(num_classes=C), "nominal"),
    "TschuprowsT": ("nominal", "TschuprowsT", dict(num_classes=C), "nominal"),
    "PearsonsContingencyCoefficient": ("nominal", "PearsonsContingencyCoefficient", dict(num_classes=C), "nominal"),
    "FleissKappa": ("nominal", "FleissKappa", dict(mode="counts"), "ratings"),
    # clustering
    "MutualInfoScore": ("clustering", "MutualInfoScore", {}, "cluster"),
    "AdjustedMutualInfoScore": ("clustering", "AdjustedMutualInfoScore", {}, "cluster"),
    "NormalizedMutualInfoScore": ("clustering", "NormalizedMutualInfoScore", {}, "cluster"),
    "AdjustedRandScore": ("clustering", "AdjustedRandScore", {}, "cluster"),
    "RandScore": ("clustering", "RandScore", {}, "cluster"),
    "FowlkesMallowsIndex": ("clustering", "FowlkesMallowsIndex", {}, "cluster"),
    "HomogeneityScore": ("clustering", "HomogeneityScore", {}, "cluster"),
    "VMeasureScore": ("clustering", "VMeasureScore", {}, "cluster"),
    "CalinskiHarabaszScore": ("clustering", "CalinskiHarabaszScore", {}, "cluster_data"),
    "DaviesBouldinScore": ("clustering", "DaviesBouldinScore", {}, "cluster_data"),
    "DunnIndex": ("clustering", "DunnIndex", {}, "cluster_data"),
    # retrieval
    "RetrievalMAP": ("retrieval", "RetrievalMAP", {}, "retrieval"),
    "RetrievalMRR": ("retrieval", "RetrievalMRR", {}, "retrieval"),
    "RetrievalNormalizedDCG": ("retrieval", "RetrievalNormalizedDCG", dict(top_k=3), "retrieval"),
    "RetrievalPrecision": ("retrieval", "RetrievalPrecision", dict(top_k=2), "retrieval"),
    "RetrievalRecall": ("retrieval", "RetrievalRecall", dict(top_k=2), "retrieval"),
    "RetrievalHitRate": ("retrieval", "RetrievalHitRate", {}, "retrieval"),
    "RetrievalFallOut": ("retrieval", "RetrievalFallOut", {}, "retrieval"),
    "RetrievalRPrecision": ("retrieval", "RetrievalRPrecision", {}, "retrieval"),
    "RetrievalAUROC": ("retrieval", "RetrievalAUROC", {}, "retrieval"),
    "RetrievalPrecisionRecallCurve": ("retrieval", "RetrievalPrecisionRecallCurve", dict(max_k=3), "retrieval"),
    # text (Python strings in, the state is counts)
    "CharErrorRate": ("text", "CharErrorRate", {}, "text"),
    "WordErrorRate": ("text", "WordErrorRate", {}, "text"),
    "MatchErrorRate": ("text", "MatchErrorRate", {}, "text"),
    "WordInfoLost": ("text", "WordInfoLost", {}, "text"),
    "EditDistance": ("text", "EditDistance", {}, "text"),
    "BLEUScore": ("text", "BLEUScore", {}, "text_multi"),
    "CHRFScore": ("text", "CHRFScore", {}, "text_multi"),
    "TranslationEditRate": ("text", "TranslationEditRate", {}, "text_multi"),
    "ExtendedEditDistance": ("text", "ExtendedEditDistance", {}, "text"),
    "SQuAD": ("text", "SQuAD", {}, "squad"),
    "Perplexity": ("text", "Perplexity", {}, "perplexity"),
    # detection (box IoU family)
    "IntersectionOverUnion": ("detection", "IntersectionOverUnion", {}, "boxes"),
    "GeneralizedIntersectionOverUnion": ("detection", "GeneralizedIntersectionOverUnion", {}, "boxes"),
    "DistanceIntersectionOverUnion": ("detection", "DistanceIntersectionOverUnion", {}, "boxes"),
    "CompleteIntersectionOverUnion": ("detection", "CompleteIntersectionOverUnion", {}, "boxes"),
    # shape
    "ProcrustesDisparity": ("shape", "ProcrustesDisparity", {}, "shape"),
    # wrappers around a metric (the wrapped metric is built by the wrapper spec)
    "ClasswiseWrapper": ("wrappers", "ClasswiseWrapper", {"metric": ("MulticlassAccuracy", dict(mc, average=None))}, "mc"),
    "MultioutputWrapper": ("wrappers", "MultioutputWrapper", {"base_metric": ("MeanSquaredError", {}), "num_outputs": 2}, "reg2"),
    "MinMaxMetric": ("wrappers", "MinMaxMetric", {"base_metric": ("BinaryAccuracy", {})}, "bin"),
    "BootStrapper": ("wrappers", "BootStrapper", {"base_metric": ("MeanSquaredError", {}), "num_bootstraps": 3}, "reg"),
    "Running": ("wrappers", "Running", {"base_metric": ("SumMetric", {}), "window": 2}, "value"),
    "MetricTracker": ("wrappers", "MetricTracker", {"metric": ("BinaryAccuracy", {})}, "tracker"),
    "MultitaskWrapper": ("wrappers", "MultitaskWrapper",
                         {"task_metrics": {"cls": ("BinaryAccuracy", {}), "reg": ("MeanSquaredError", {})}}, "multitask"),
}


def names():
    return sorted(SPECS)


FAMILIES = sorted({family for family, *_ in SPECS.values()})


def _arg(value):
    """A keyword's value: a `(class, keywords)` spec is a metric built from it, a dict of them a dict."""
    if isinstance(value, tuple) and isinstance(value[0], str):
        return _metric(*value)
    if isinstance(value, dict) and all(isinstance(spec, tuple) for spec in value.values()):
        return {key: _metric(*spec) for key, spec in value.items()}
    return value


def _metric(cls_name, kwargs, family=None):
    import importlib

    for module in [family] if family else FAMILIES:
        cls = getattr(importlib.import_module(f"torchmetrics.{module}"), cls_name, None)
        if cls is not None:
            return cls(**{key: _arg(value) for key, value in kwargs.items()})
    raise LookupError(cls_name)


def build(name, variant=None):
    import torch

    family, cls_name, kwargs, kind = SPECS[name]
    torch.manual_seed(0)
    model = _metric(cls_name, {**kwargs, **(variant.config if variant else {})}, family)
    if cls_name == "MetricTracker":
        model.increment()  # a tracker needs a step before its first update
    inputs = _inputs()[kind]()
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs


# Options and inputs that take the other paths of the metrics' update, for the models whose
# findings sit there: an ignored target value, label (integer) predictions (not the calibration, hinge
# and ranking metrics: they require scores), NaN values.
IGNORE_INDEX_MODELS = [
    "BinaryAUROC", "BinaryAUROC_binned", "BinaryAveragePrecision", "BinaryCalibrationError", "BinaryCohenKappa",
    "BinaryConfusionMatrix", "BinaryEER", "BinaryHingeLoss", "BinaryJaccardIndex", "BinaryLogAUC",
    "BinaryMatthewsCorrCoef", "BinaryPrecisionRecallCurve", "BinaryPrecisionRecallCurve_binned", "BinaryROC",
    "BinaryRecallAtFixedPrecision", "BinarySpecificityAtSensitivity", "MulticlassAUROC", "MulticlassAccuracy",
    "MulticlassAccuracy_top2", "MulticlassAveragePrecision", "MulticlassCalibrationError",
    "MulticlassCohenKappa", "MulticlassConfusionMatrix", "MulticlassF1Score", "MulticlassHingeLoss",
    "MulticlassJaccardIndex", "MulticlassMatthewsCorrCoef", "MulticlassPrecision", "MulticlassROC",
    "MulticlassRecall", "MulticlassSpecificityAtSensitivity", "MultilabelAUROC", "MultilabelAveragePrecision",
    "RetrievalAUROC", "RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP", "RetrievalMRR",
    "RetrievalNormalizedDCG", "RetrievalPrecision", "RetrievalPrecisionRecallCurve", "RetrievalRPrecision",
    "RetrievalRecall"]
LABEL_MODELS = [
    "BinaryAccuracy", "BinaryCohenKappa", "BinaryConfusionMatrix", "BinaryF1Score",
    "BinaryFBetaScore", "BinaryHammingDistance", "BinaryJaccardIndex", "BinaryMatthewsCorrCoef",
    "BinaryNegativePredictiveValue", "BinaryPrecision", "BinaryRecall", "BinarySpecificity", "BinaryStatScores",
    "MulticlassAccuracy", "MulticlassCohenKappa", "MulticlassConfusionMatrix",
    "MulticlassF1Score", "MulticlassJaccardIndex", "MulticlassMatthewsCorrCoef",
    "MulticlassPrecision", "MulticlassRecall", "MultilabelAccuracy", "MultilabelConfusionMatrix",
    "MultilabelExactMatch", "MultilabelF1Score", "MultilabelHammingDistance"]
NAN_MODELS = {"CatMetric": {}, "MaxMetric": {}, "MeanMetric": {}, "MinMetric": {}, "SumMetric": {},  # "warn": dropped
              "RunningMean": {}, "RunningSum": {},  # their base metric's update (the default "warn")
              "CramersV": dict(nan_strategy="drop"), "PearsonsContingencyCoefficient": dict(nan_strategy="drop"),
              "TheilsU": dict(nan_strategy="drop"), "TschuprowsT": dict(nan_strategy="drop")}


# Options users set that take other paths of compute: binned curves (`thresholds`: the bin counts
# of the curve state), a partial AUROC (`max_fpr`), micro averaging over an ignored target value,
# weighted averaging of the per-class curves, and predictions of one class only (a confusion matrix
# with an empty column: the degenerate-denominator branches).
BINNED_MODELS = [
    "BinaryAUROC", "BinaryAveragePrecision", "BinaryEER", "BinaryLogAUC", "BinaryPrecisionRecallCurve", "BinaryROC",
    "BinaryRecallAtFixedPrecision", "BinarySpecificityAtSensitivity", "MulticlassROC",
    "MulticlassSpecificityAtSensitivity", "MultilabelAUROC", "MultilabelAveragePrecision", "MulticlassAUROC",
    "MulticlassAveragePrecision"]
MAX_FPR_MODELS = ["BinaryAUROC", "BinaryAUROC_binned", "RetrievalAUROC"]
MICRO_MODELS = ["MulticlassAccuracy", "MulticlassAccuracy_labels", "MulticlassF1Score", "MulticlassPrecision",
                "MulticlassRecall"]
WEIGHTED_MODELS = ["MulticlassAUROC", "MulticlassAveragePrecision", "MultilabelAUROC", "MultilabelAveragePrecision"]
ONE_CLASS_MODELS = ["BinaryMatthewsCorrCoef", "MulticlassMatthewsCorrCoef"]
# The l2 calibration norm, the Tweedie powers of the other distributions, and states a metric sets
# on its first update (compiled fresh: no eager call first).
L2_MODELS = ["BinaryCalibrationError", "MulticlassCalibrationError"]
TWEEDIE_POWERS = {"poisson": 1.0, "gamma": 2.0, "power3": 3.0, "negative": -1.0}


def _one_hot_segments(model, config, inputs):
    """Index masks as one-hot (N, C, H, W) masks."""
    import torch

    return model, {k: torch.nn.functional.one_hot(v, C).permute(0, 3, 1, 2) for k, v in inputs.items()}


def _one_class(model, config, inputs):
    """Every prediction the first class (scores below the threshold; class 0 the largest score)."""
    import torch

    preds = inputs["preds"]
    if preds.dim() == inputs["target"].dim() + 1:
        one = torch.zeros_like(preds)
        one[:, 0] = 1.0
    else:
        one = torch.full_like(preds, 0.1)
    return model, dict(inputs, preds=one)


def _two_classes(how):
    """Two-class inputs (scores of shape (N, 2)): every prediction class 0 (`one_class`) or every
    prediction wrong (`all_wrong`)."""
    def prepare(model, config, inputs):
        import torch

        target = torch.arange(N) % 2
        label = torch.zeros_like(target) if how == "one_class" else 1 - target
        return model, dict(inputs, preds=torch.nn.functional.one_hot(label, 2).float(), target=target)
    return prepare


def _all_wrong(model, config, inputs):
    """Every binary prediction wrong: scores 0.9 where the target is 0, 0.1 where it is 1."""
    return model, dict(inputs, preds=0.9 - 0.8 * inputs["target"].float())


def _empty_references(model, config, inputs):
    """Every reference an empty text (a reference length of 0)."""
    return model, dict(inputs, target=[[""] for _ in inputs["target"]])


def _ignored_targets(model, config, inputs):
    """Every fifth target value set to the ignored -1 (retrieval's boolean targets as integers)."""
    target = inputs["target"].long().clone()
    target.view(-1)[::5] = -1
    return model, dict(inputs, target=target)


def _labels(model, config, inputs):
    """Label predictions: the class of the highest score (multiclass), scores thresholded at 0.5 (else)."""
    preds, target = inputs["preds"], inputs["target"]
    labels = preds.argmax(1) if preds.dim() == target.dim() + 1 else (preds > 0.5).long()
    return model, dict(inputs, preds=labels)


def _with_nan(model, config, inputs):
    """Every fourth value NaN (nominal: the predictions as floats)."""
    key = "value" if "value" in inputs else "preds"
    values = inputs[key].float().clone()
    values.view(-1)[::4] = float("nan")
    return model, dict(inputs, **{key: values})


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS)."""
    table = {}
    ignore = Variant("ignore_index=-1 with every fifth target ignored", config=dict(ignore_index=-1),
                     prepare=_ignored_targets)
    labels = Variant("label (integer) predictions instead of scores: the label validation", prepare=_labels)
    for name in IGNORE_INDEX_MODELS:
        table.setdefault(name, {})["ignore_index"] = ignore
    for name in LABEL_MODELS:
        table.setdefault(name, {})["labels"] = labels
    for name, config in NAN_MODELS.items():
        table.setdefault(name, {})["nan"] = Variant(f"NaN values, nan_strategy {config.get('nan_strategy', 'default')}",
                                                    config=config, prepare=_with_nan)
    for name in BINNED_MODELS:
        table.setdefault(name, {})["binned"] = Variant("thresholds=5: the binned curve state", config=dict(thresholds=5))
    for name in MAX_FPR_MODELS:
        table.setdefault(name, {})["max_fpr"] = Variant("max_fpr=0.5: the partial AUROC", config=dict(max_fpr=0.5))
    for name in MICRO_MODELS:
        table.setdefault(name, {})["micro_ignore"] = Variant(
            "average='micro', ignore_index=-1 with every fifth target ignored",
            config=dict(average="micro", ignore_index=-1), prepare=_ignored_targets)
    for name in WEIGHTED_MODELS:
        table.setdefault(name, {})["weighted"] = Variant("average='weighted'", config=dict(average="weighted"))
    for name in ONE_CLASS_MODELS:
        table.setdefault(name, {})["one_class"] = Variant("every prediction the first class", prepare=_one_class)
    for name in L2_MODELS:
        table.setdefault(name, {})["l2"] = Variant("norm='l2'", config=dict(norm="l2"))
    for variant, power in TWEEDIE_POWERS.items():
        table.setdefault("TweedieDevianceScore", {})[variant] = Variant(f"power={power}", config=dict(power=power))
    table.setdefault("MeanIoU", {})["fresh_one_hot"] = Variant(
        "num_classes=None, one-hot masks, compiled fresh: the classes are read on the first update",
        config=dict(num_classes=None, input_format="one-hot"), prepare=_one_hot_segments, fresh=True)
    table.setdefault("RootMeanSquaredErrorUsingSlidingWindow", {})["fresh"] = Variant(
        "compiled fresh: the error map is built on the first update", fresh=True)
    # the binary confusion-matrix branches of the Matthews coefficient: a 2-class multiclass metric too
    table.setdefault("BinaryMatthewsCorrCoef", {})["all_wrong"] = Variant("every prediction wrong", prepare=_all_wrong)
    for how in ("one_class", "all_wrong"):
        table.setdefault("MulticlassMatthewsCorrCoef", {})[f"two_classes_{how}"] = Variant(
            f"num_classes=2, {how.replace('_', ' ')} predictions", config=dict(num_classes=2),
            prepare=_two_classes(how))
    table.setdefault("MulticlassHingeLoss", {})["one_vs_all"] = Variant(
        "multiclass_mode='one-vs-all'", config=dict(multiclass_mode="one-vs-all"))
    table.setdefault("MultilabelAUROC", {})["micro_ignore"] = Variant(
        "average='micro', ignore_index=-1 with every fifth target ignored",
        config=dict(average="micro", ignore_index=-1), prepare=_ignored_targets)
    table.setdefault("KendallRankCorrCoef", {})["tau_c_t_test"] = Variant(
        "variant='c' with the t-test", config=dict(variant="c", t_test=True))
    for name in ("MulticlassConfusionMatrix", "MultilabelConfusionMatrix"):
        table.setdefault(name, {})["normalize"] = Variant("normalize='true'", config=dict(normalize="true"))
    table.setdefault("TranslationEditRate", {})["empty_references"] = Variant(
        "empty reference texts", prepare=_empty_references)
    table.setdefault("BinaryStatScores", {})["global"] = Variant(
        "multidim_average='global' (the default): tensor states, not lists", config=dict(multidim_average="global"))
    return table
