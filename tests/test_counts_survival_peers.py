"""Poisson and Cox objectives against glum and scikit-survival (skipped
where they are not installed; neither is a firecy dependency): each peer's
L1 solution, scored by firecy's objective, is no better than firecy's own."""
import numpy as np
import pytest

from firecy.datafits._cox_loss import CoxLoss
from firecy.datafits._poisson_loss import PoissonLoss
from firecy.penalties import L1
from firecy.solver._irls import IRLSProblem, irls_solve

from test_counts_survival import _cox_data, _poisson_data


@pytest.mark.parametrize("frac", [0.3, 0.05])
def test_poisson_l1_matches_glum(frac):
    glum = pytest.importorskip("glum")
    _, design, y, _ = _poisson_data()
    loss = PoissonLoss(y, np.ones(len(y)))
    prob = IRLSProblem(design, loss, np.zeros(len(y)))
    lam = frac * prob.lambda_max(L1())
    res = irls_solve(prob, L1(lam), tol=1e-10)
    M = design.tocsc().toarray()
    g = glum.GeneralizedLinearRegressor(family="poisson", alpha=lam, l1_ratio=1.0,
                                        gradient_tol=1e-10, max_iter=10000,
                                        scale_predictors=False).fit(M, y)
    ref = loss.value(M @ g.coef_ + g.intercept_) + lam * np.abs(g.coef_).sum()
    assert res.converged
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)


@pytest.mark.parametrize("frac", [0.3, 0.05])
def test_cox_l1_matches_scikit_survival(frac):
    linear_model = pytest.importorskip("sksurv.linear_model")
    _, design, event, time, _ = _cox_data()
    loss = CoxLoss(event, time, np.ones(len(time)))
    prob = IRLSProblem(design, loss, np.zeros(len(time)))
    lam = frac * prob.lambda_max(L1())
    res = irls_solve(prob, L1(lam), tol=1e-10)
    M = design.tocsc().toarray()
    y = np.array(list(zip(event > 0, time)), dtype=[("event", bool), ("time", float)])
    cx = linear_model.CoxnetSurvivalAnalysis(l1_ratio=1.0, alphas=[lam], normalize=False,
                                             tol=1e-12, max_iter=1000000).fit(M, y)
    c = cx.coef_[:, 0]
    ref = loss.value(M @ c) + lam * np.abs(c).sum()
    assert res.converged
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)


def test_cox_efron_unpenalised_matches_scikit_survival():
    # scikit-survival's CoxPHSurvivalAnalysis(ties="efron") maximises the
    # Efron partial likelihood: its coefficients are stationary for firecy's
    # Efron loss (and not for Breslow's, on these tied times)
    linear_model = pytest.importorskip("sksurv.linear_model")
    rng = np.random.default_rng(3)
    n = 150
    X = rng.normal(size=(n, 4))
    time = rng.integers(1, 10, size=n).astype(float)
    event = rng.uniform(size=n) < 0.7
    y = np.array(list(zip(event, time)), dtype=[("event", bool), ("time", float)])
    for ties, other in (("efron", "breslow"), ("breslow", "efron")):
        c = linear_model.CoxPHSurvivalAnalysis(ties=ties, tol=1e-12, n_iter=200).fit(X, y).coef_
        g = X.T @ CoxLoss(event.astype(float), time, np.ones(n), ties).gradient(X @ c)
        g_other = X.T @ CoxLoss(event.astype(float), time, np.ones(n), other).gradient(X @ c)
        assert np.abs(g).max() < 1e-8
        assert np.abs(g_other).max() > 1e-4
