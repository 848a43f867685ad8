"""The user's code of the gpytorch truth models, written in gpytorch's documented form: module-level
model classes, the strategy built with the model (`VariationalStrategy(self, ...)`), the mlls and
the kernels built with direct calls. Not the code that ran (breadth/gpytorch.py builds the same
parts through nested classes, lambdas and closures, which the engine does not read): an experiment
of what reach gains when the user's code is analysed with the library,

    python bench/truth/score.py --site-packages /tmp/sp-all --lib gpytorch --write '' \
        --with bench/truth/user/gpytorch_documented.py
"""
import gpytorch
import torch
from gpytorch import kernels as k
from gpytorch import likelihoods as lk
from gpytorch import means as mn
from gpytorch import mlls
from gpytorch import variational as vr

x = torch.rand(12, 2)
y = torch.rand(12)
inducing = x[:6]


class ExactModel(gpytorch.models.ExactGP):
    def __init__(self, x, y, likelihood, mean, kernel):
        super().__init__(x, y, likelihood)
        self.mean_module, self.covar_module = mean, kernel

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


class ApproximateModel(gpytorch.models.ApproximateGP):
    def __init__(self, inducing):
        super().__init__(vr.VariationalStrategy(self, inducing, vr.CholeskyVariationalDistribution(6), learn_inducing_locations=True))
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


def build():
    a = k.ArcKernel(k.MaternKernel(nu=2.5), angle_prior=None, radius_prior=None, ard_num_dims=2)
    b = k.AdditiveStructureKernel(k.RBFKernel(), num_dims=2)
    c = k.ProductStructureKernel(k.RBFKernel(), num_dims=2)
    d = k.NewtonGirardAdditiveKernel(k.RBFKernel(), num_dims=2, max_degree=2)
    e = k.ScaleKernel(k.RBFKernel())
    f = k.GridInterpolationKernel(k.RBFKernel(), grid_size=8, num_dims=2)
    g = mn.MultitaskMean(mn.ConstantMean(), num_tasks=2)
    m1 = mlls.ExactMarginalLogLikelihood(lk.GaussianLikelihood(), ExactModel(x, y, lk.GaussianLikelihood(), mn.ConstantMean(), k.RBFKernel()))
    m2 = mlls.LeaveOneOutPseudoLikelihood(lk.GaussianLikelihood(), ExactModel(x, y, lk.GaussianLikelihood(), mn.ConstantMean(), k.RBFKernel()))
    m3 = mlls.VariationalELBO(lk.GaussianLikelihood(), ApproximateModel(inducing), num_data=12)
    m4 = mlls.PredictiveLogLikelihood(lk.GaussianLikelihood(), ApproximateModel(inducing), num_data=12, beta=0.5)
    m5 = mlls.GammaRobustVariationalELBO(lk.GaussianLikelihood(), ApproximateModel(inducing), num_data=12)
    return a, b, c, d, e, f, g, m1, m2, m3, m4, m5
