"""gpytorch: kernels, means, likelihoods, marginal log likelihoods, variational distributions and
strategies: the library's modules, each compiled as a user calls it.

A GP model is a user's class (its `forward` composes a mean and a kernel), so it cannot be the
scorer's entry (library code); the user classes defined here are parts of the library modules
that hold them (an mll's model, a variational strategy's model). `ExactGP.__call__` is reached by
no library module's forward (`IndependentModelList` overrides `__call__` and takes positional
inputs only), so the exact-posterior path is not in this corpus. Kernels are called with
`diag=True` (an evaluated tensor) or in full (a lazily evaluated kernel tensor). Data: 12 points
in 2 dimensions. The approximate mlls' second train call raises (eager too): the strategy's
memoized prior keeps the first call's graph, which a user's loop clears by calling the model
(`ApproximateGP.__call__`) before the mll each step; the first call's events stand.
"""
from __future__ import annotations

DIST = "gpytorch"
N, D = 12, 2


def _data():
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.rand(N, D, generator=g)
    y = torch.sin(6 * x[:, 0]) + 0.1 * torch.randn(N, generator=g)
    return x, y


def _user_models():
    """A user's exact and approximate GP classes (gpytorch's documented pattern)."""
    import gpytorch

    class ExactModel(gpytorch.models.ExactGP):
        def __init__(self, x, y, likelihood, mean, kernel):
            super().__init__(x, y, likelihood)
            self.mean_module, self.covar_module = mean, kernel

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    class ApproximateModel(gpytorch.models.ApproximateGP):
        def __init__(self, inducing, make_strategy, distribution):
            super().__init__(make_strategy(self, inducing, distribution(inducing.size(-2))))
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    return ExactModel, ApproximateModel


def _specs():
    import gpytorch
    import torch
    from gpytorch import kernels as k
    from gpytorch import likelihoods as lk
    from gpytorch import means as mn
    from gpytorch import mlls
    from gpytorch import variational as vr

    x, y = _data()
    ExactModel, ApproximateModel = _user_models()
    inducing = x[:6].clone()

    def mvn(n=N):
        """A function distribution with a dense covariance, as a model's output would be."""
        a = torch.randn(n, n)
        return gpytorch.distributions.MultivariateNormal(torch.randn(n, requires_grad=True), a @ a.T + n * torch.eye(n))

    def exact(kernel, mean=None, likelihood=None):
        likelihood = likelihood or lk.GaussianLikelihood()
        return ExactModel(x, y, likelihood, mean or mn.ConstantMean(), kernel)

    def svgp(make_strategy=vr.VariationalStrategy, distribution=vr.CholeskyVariationalDistribution):
        return ApproximateModel(inducing, lambda m, z, d: make_strategy(m, z, d, learn_inducing_locations=True), distribution)

    diag = lambda: {"x1": x, "x2": x, "diag": True}  # noqa: E731
    full = lambda: {"x1": x, "x2": x[:5]}  # noqa: E731
    structured = lambda: {"x1_": x, "x2_": x}  # noqa: E731
    on_x = lambda: {"x": x}  # noqa: E731
    on_f = lambda: {"input": mvn()}  # noqa: E731
    on_samples = lambda: {"input": torch.randn(3, N)}  # noqa: E731
    kernel_specs = {
        "RBFKernel": lambda: k.RBFKernel(),
        "RBFKernel_ard": lambda: k.RBFKernel(ard_num_dims=D),
        "MaternKernel_12": lambda: k.MaternKernel(nu=0.5),
        "MaternKernel_32": lambda: k.MaternKernel(nu=1.5),
        "MaternKernel_52": lambda: k.MaternKernel(nu=2.5, ard_num_dims=D),
        "RQKernel": lambda: k.RQKernel(),
        "PeriodicKernel": lambda: k.PeriodicKernel(),
        "LinearKernel": lambda: k.LinearKernel(),
        "PolynomialKernel": lambda: k.PolynomialKernel(power=2),
        "CosineKernel": lambda: k.CosineKernel(),
        "SpectralMixtureKernel": lambda: k.SpectralMixtureKernel(num_mixtures=3, ard_num_dims=D),
        "PiecewisePolynomialKernel": lambda: k.PiecewisePolynomialKernel(q=2),
        "RFFKernel": lambda: k.RFFKernel(num_samples=16, num_dims=D),
        "ConstantKernel": lambda: k.ConstantKernel(),
        "ScaleKernel": lambda: k.ScaleKernel(k.RBFKernel()),
        "AdditiveKernel": lambda: k.RBFKernel() + k.LinearKernel(),
        "ProductKernel": lambda: k.RBFKernel(active_dims=[0]) * k.PeriodicKernel(active_dims=[1]),
        "AdditiveStructureKernel": lambda: k.AdditiveStructureKernel(k.RBFKernel(), num_dims=D),
        "ProductStructureKernel": lambda: k.ProductStructureKernel(k.RBFKernel(), num_dims=D),
        "NewtonGirardAdditiveKernel": lambda: k.NewtonGirardAdditiveKernel(k.RBFKernel(), num_dims=D, max_degree=2),
        "ArcKernel": lambda: k.ArcKernel(k.MaternKernel(nu=2.5), angle_prior=None, radius_prior=None, ard_num_dims=D),
        "RBFKernelGrad": lambda: k.RBFKernelGrad(),
        "PolynomialKernelGrad": lambda: k.PolynomialKernelGrad(power=2),
    }
    specs = {}
    for name, make in kernel_specs.items():
        specs[name] = (make, structured if name == "ProductStructureKernel" else diag)
    for name in ("RBFKernel", "ScaleKernel", "SpectralMixtureKernel", "AdditiveKernel", "ProductKernel", "RFFKernel",
                 "PiecewisePolynomialKernel", "RBFKernelGrad"):
        specs[name + "_full"] = (kernel_specs[name], full)
    specs.update({
        "IndexKernel": (lambda: k.IndexKernel(num_tasks=3, rank=1), lambda: {"x1": torch.tensor([[0], [1], [2], [1]]), "diag": True}),
        "GridInterpolationKernel": (lambda: k.GridInterpolationKernel(k.RBFKernel(), grid_size=8, num_dims=D), full),
        # means
        "ConstantMean": (lambda: mn.ConstantMean(), on_x),
        "LinearMean": (lambda: mn.LinearMean(D), on_x),
        "ZeroMean": (lambda: mn.ZeroMean(), on_x),
        "ConstantMeanGrad": (lambda: mn.ConstantMeanGrad(), on_x),
        "LinearMeanGrad": (lambda: mn.LinearMeanGrad(D), on_x),
        "MultitaskMean": (lambda: mn.MultitaskMean(mn.ConstantMean(), num_tasks=2), on_x),
        # likelihoods: on function values (the conditional) and on a function distribution (the marginal)
        "GaussianLikelihood": (lambda: lk.GaussianLikelihood(), on_f),
        "GaussianLikelihood_samples": (lambda: lk.GaussianLikelihood(), on_samples),
        "FixedNoiseGaussianLikelihood": (lambda: lk.FixedNoiseGaussianLikelihood(noise=torch.full((N,), 0.1), learn_additional_noise=True), on_f),
        "BernoulliLikelihood": (lambda: lk.BernoulliLikelihood(), on_f),
        "BernoulliLikelihood_samples": (lambda: lk.BernoulliLikelihood(), on_samples),
        "StudentTLikelihood": (lambda: lk.StudentTLikelihood(), on_samples),
        "LaplaceLikelihood": (lambda: lk.LaplaceLikelihood(), on_samples),
        "BetaLikelihood": (lambda: lk.BetaLikelihood(), on_samples),
        "PoissonLikelihood": (lambda: lk.PoissonLikelihood(), on_samples),
        "SoftmaxLikelihood": (lambda: lk.SoftmaxLikelihood(num_features=4, num_classes=3), lambda: {"input": torch.randn(3, N, 4)}),
        "MultitaskGaussianLikelihood": (lambda: lk.MultitaskGaussianLikelihood(num_tasks=2, rank=1),
                                        lambda: {"input": gpytorch.distributions.MultitaskMultivariateNormal.from_independent_mvns([mvn(), mvn()])}),
        # marginal log likelihoods: a function distribution and targets
        "ExactMarginalLogLikelihood": (lambda: mlls.ExactMarginalLogLikelihood(lk.GaussianLikelihood(), exact(k.RBFKernel())),
                                       lambda: {"function_dist": mvn(), "target": y}),
        "LeaveOneOutPseudoLikelihood": (lambda: mlls.LeaveOneOutPseudoLikelihood(lk.GaussianLikelihood(), exact(k.RBFKernel())),
                                        lambda: {"function_dist": mvn(), "target": y}),
        "VariationalELBO": (lambda: mlls.VariationalELBO(lk.GaussianLikelihood(), svgp(), num_data=N),
                            lambda: {"variational_dist_f": mvn(), "target": y}),
        "VariationalELBO_bernoulli": (lambda: mlls.VariationalELBO(lk.BernoulliLikelihood(), svgp(), num_data=N, combine_terms=False),
                                      lambda: {"variational_dist_f": mvn(), "target": (y > 0).float()}),
        "PredictiveLogLikelihood": (lambda: mlls.PredictiveLogLikelihood(lk.GaussianLikelihood(), svgp(), num_data=N, beta=0.5),
                                    lambda: {"approximate_dist_f": mvn(), "target": y}),
        "GammaRobustVariationalELBO": (lambda: mlls.GammaRobustVariationalELBO(lk.GaussianLikelihood(), svgp(), num_data=N),
                                       lambda: {"approximate_dist_f": mvn(), "target": y}),
        # variational distributions (called with no argument) and strategies (on inputs)
        "CholeskyVariationalDistribution": (lambda: vr.CholeskyVariationalDistribution(6), lambda: {}),
        "MeanFieldVariationalDistribution": (lambda: vr.MeanFieldVariationalDistribution(6), lambda: {}),
        "DeltaVariationalDistribution": (lambda: vr.DeltaVariationalDistribution(6), lambda: {}),
        "NaturalVariationalDistribution": (lambda: vr.NaturalVariationalDistribution(6), lambda: {}),
        "TrilNaturalVariationalDistribution": (lambda: vr.TrilNaturalVariationalDistribution(6), lambda: {}),
        "VariationalStrategy": (lambda: svgp().variational_strategy, lambda: {"x": x}),
        "UnwhitenedVariationalStrategy": (lambda: svgp(vr.UnwhitenedVariationalStrategy).variational_strategy, lambda: {"x": x}),
        "CiqVariationalStrategy": (lambda: svgp(vr.CiqVariationalStrategy).variational_strategy, lambda: {"x": x}),
        "VariationalStrategy_meanfield": (lambda: svgp(distribution=vr.MeanFieldVariationalDistribution).variational_strategy, lambda: {"x": x}),
        "VariationalStrategy_prior": (lambda: svgp().variational_strategy, lambda: {"x": x, "prior": True}),
    })
    return specs, x


def names():
    return sorted(_specs()[0])


# The kernel models called with `diag=True` (an evaluated tensor): the full call builds a lazily
# evaluated kernel tensor instead, which the default runs never construct.
DIAG_KERNEL_MODELS = ["ArcKernel", "AdditiveKernel", "AdditiveStructureKernel", "ConstantKernel", "CosineKernel",
                      "IndexKernel", "LinearKernel", "MaternKernel_12", "MaternKernel_32", "MaternKernel_52",
                      "NewtonGirardAdditiveKernel", "PeriodicKernel", "PiecewisePolynomialKernel", "PolynomialKernel",
                      "PolynomialKernelGrad", "ProductKernel", "RBFKernel", "RBFKernelGrad", "RBFKernel_ard",
                      "RFFKernel", "RQKernel", "ScaleKernel", "SpectralMixtureKernel"]
# The kernel models called in full: their lazy kernel tensor is returned unevaluated, so the
# kernel's `forward` never runs in the default runs.
FULL_KERNEL_MODELS = ["AdditiveKernel_full", "GridInterpolationKernel", "PiecewisePolynomialKernel_full",
                      "ProductKernel_full", "RBFKernelGrad_full", "RBFKernel_full", "RFFKernel_full",
                      "ScaleKernel_full", "SpectralMixtureKernel_full"]


def _dense(model, config, inputs):
    """The kernel called in full (no `diag`) and its lazy kernel tensor evaluated (`to_dense()`),
    as a user's model does when its covariance enters a likelihood: the lazy tensor's construction
    and the kernel's full `forward` run under Dynamo."""
    import torch

    class Dense(torch.nn.Module):
        def __init__(self, kernel):
            super().__init__()
            self.kernel = kernel

        def forward(self, **kwargs):
            return self.kernel(**kwargs).to_dense()

    return Dense(model), {k: v for k, v in inputs.items() if k != "diag"}


def _posterior(model, config, inputs):
    """The strategy called for the posterior (`prior` left at its default, False): the path the
    prior-mode model's claims past `if prior: return ...` are about."""
    return model, {k: v for k, v in inputs.items() if k != "prior"}


def _fixed_noise_only(model, config, inputs):
    """A fixed-noise likelihood with no learned noise on top (`learn_additional_noise` at its
    default, False) called on a distribution of another size than its noise: the no-op branch that
    warns (`elif isinstance(res, ZeroLinearOperator): warnings.warn(...)`)."""
    import gpytorch
    import torch

    n = 6
    a = torch.randn(n, n)
    dist = gpytorch.distributions.MultivariateNormal(torch.randn(n, requires_grad=True), a @ a.T + n * torch.eye(n))
    return gpytorch.likelihoods.FixedNoiseGaussianLikelihood(noise=torch.full((N,), 0.1)), {"input": dist}


def _interleaved(model, config, inputs):
    """The multitask likelihood on a multitask distribution built interleaved (the constructor's
    default, `interleaved=True`), where the default run's is not (`from_independent_mvns`): its
    `mean` takes the other return."""
    import gpytorch
    import torch

    t = 2
    a = torch.randn(N * t, N * t)
    dist = gpytorch.distributions.MultitaskMultivariateNormal(torch.randn(N, t, requires_grad=True),
                                                              a @ a.T + N * t * torch.eye(N * t))
    return model, {"input": dist}


def variants(Variant):
    """{model: {variant: Variant}} (models.VARIANTS)."""
    dense = Variant("the kernel called in full and its lazy kernel tensor evaluated (`to_dense()`)", prepare=_dense)
    table = {name: {"dense": dense} for name in DIAG_KERNEL_MODELS + FULL_KERNEL_MODELS}
    table["VariationalStrategy_prior"] = {"posterior": Variant("the strategy called for the posterior (no `prior`)",
                                                               prepare=_posterior)}
    table["FixedNoiseGaussianLikelihood"] = {"fixed_only": Variant(
        "no learned noise on top of the fixed noise, called on data of another size", prepare=_fixed_noise_only)}
    table["MultitaskGaussianLikelihood"] = {"interleaved": Variant(
        "called on a multitask distribution built interleaved (the constructor's default)", prepare=_interleaved)}
    return table


def build(name, variant=None):
    import torch

    torch.manual_seed(0)
    specs, x = _specs()
    make_model, make_inputs = specs[name]
    model, inputs = make_model(), make_inputs()
    if variant and variant.prepare:
        model, inputs = variant.prepare(model, None, inputs)
    return model, inputs
