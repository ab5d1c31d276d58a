"""The Poisson proximal-Newton loop with and without an intercept on a leaf
design (issue 37, item 2): skglm's objective for L1, stationarity for MCP,
the estimator's D², and a warning that says what stopped the loop."""
import warnings

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import ConvergenceWarning

from firecy.datafits._poisson_loss import PoissonLoss
from firecy.penalties import L1, MCP
from firecy.solver import BlockDesign
from firecy.solver import _irls
from firecy.solver._irls import IRLSProblem, irls_solve

skglm = pytest.importorskip("skglm")


def _counts(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = rng.poisson(np.exp(0.5 * X[:, 0] - 0.4 * (X[:, 1] > 0) + 0.3 * X[:, 2]))
    return X, y.astype(float)


@pytest.fixture(scope="module")
def leaf_problem():
    """A 60-tree depth-3 forest's leaves on 2,000 Poisson counts (the leaf
    value is the log of the tree's mean count there)."""
    X, y = _counts(2000, 0)
    rf = RandomForestRegressor(60, max_depth=3, random_state=0).fit(X, y)
    leaves = rf.apply(X)
    table, values, ptr = [], [], [0]
    for t, tree in enumerate(rf.estimators_):
        ids = np.flatnonzero(tree.tree_.children_left == -1)
        position = np.full(tree.tree_.node_count, -1)
        position[ids] = np.arange(len(ids))
        table.append(ptr[-1] + position[leaves[:, t]])
        values.extend(np.log(np.maximum(tree.tree_.value[ids, 0, 0], 1e-3)))
        ptr.append(ptr[-1] + len(ids))
    return BlockDesign.from_leaf_table(np.column_stack(table), np.array(values), ptr), y


def _problem(leaf_problem, fit_intercept):
    design, y = leaf_problem
    return IRLSProblem(design, PoissonLoss(y, np.ones(len(y))), np.zeros(len(y)),
                       fit_intercept)


def _skglm_objective(M, y, lam, fit_intercept):
    from skglm.datafits import Poisson
    from skglm.penalties import WeightedL1
    from skglm.solvers import ProxNewton

    # skglm's Poisson has no intercept: an unpenalised column of ones
    p = M.shape[1]
    Xa = np.column_stack([M, np.ones(M.shape[0])]) if fit_intercept else M
    weights = np.r_[np.ones(p), 0.0] if fit_intercept else np.ones(p)
    datafit = Poisson()
    datafit.initialize(Xa, y)
    coef = ProxNewton(tol=1e-12, fit_intercept=False, max_iter=1000).solve(
        Xa, y, datafit, WeightedL1(lam, weights))[0]
    eta = Xa @ coef
    # firecy's objective with unit weights (docs/datafits.rst)
    return np.mean(np.exp(eta) - y * eta) + lam * np.abs(coef[:p]).sum()


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("frac", [0.3, 0.05, 0.01])
def test_poisson_l1_reaches_skglm_on_a_leaf_design(leaf_problem, fit_intercept, frac):
    prob = _problem(leaf_problem, fit_intercept)
    lam = frac * prob.lambda_max(L1())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = irls_solve(prob, L1(lam), tol=1e-10, max_iter=500)
    ref = _skglm_objective(prob.design.tocsc().toarray(), leaf_problem[1], lam, fit_intercept)
    assert res.converged
    assert res.objective <= ref + 1e-8 * abs(ref)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("frac", [0.3, 0.05])
def test_poisson_mcp_is_stationary_on_a_leaf_design(leaf_problem, fit_intercept, frac):
    prob = _problem(leaf_problem, fit_intercept)
    lam, gamma = frac * prob.lambda_max(L1()), 3.0
    tol = 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = irls_solve(prob, MCP(lam, gamma), tol=tol, max_iter=500)
    assert res.converged and res.n_rules > 0
    if not fit_intercept:
        assert res.intercept == 0.0
    # MCP's subdifferential with the reference curvature, by hand
    g = np.asarray(prob.csc.T @ prob.loss.gradient(prob.eta(res.coef, res.intercept)))
    w, a = res.coef, prob.curvature
    with np.errstate(divide="ignore"):   # a leaf of value 0 is a zero column
        inside = (w != 0) & (np.abs(w) <= gamma * lam / a)
    resid = np.where(w == 0, np.maximum(np.abs(g) - lam, 0.0),
                     np.where(inside, np.abs(g + lam * np.sign(w) - a * w / gamma),
                              np.abs(g)))
    assert resid.max() <= np.sqrt(tol) * np.max(np.abs(prob.grad0))
    # with an intercept, its own condition: the fitted counts sum to the counts
    if fit_intercept:
        y = leaf_problem[1]
        mu = np.exp(prob.eta(res.coef, res.intercept))
        assert abs(mu.sum() - y.sum()) <= 1e-8 * y.sum()


def test_poisson_estimator_without_intercept_fits_as_well():
    from firecy import FIREPoissonRegressor

    X, y = _counts(2000, 0)
    rf = RandomForestRegressor(60, max_depth=3, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        scores = [FIREPoissonRegressor(rf, fit_intercept=fi, random_state=0)
                  .fit(X, y).score(X, y) for fi in (True, False)]
    # the leaves of a tree add up to a constant: the rules can carry the
    # intercept (at some L1 cost), so the training D² stays close
    assert scores[1] >= scores[0] - 0.01


def test_a_stalled_loop_says_after_how_many_steps(leaf_problem, monkeypatch):
    prob = _problem(leaf_problem, False)
    lam = 0.05 * prob.lambda_max(L1())
    inner = _irls._inner_step

    def uphill(*args):
        # a step that raises the objective: the line search cannot accept it
        dw, db, deta = inner(*args)
        return -dw, -db, -deta

    monkeypatch.setattr(_irls, "_inner_step", uphill)
    with pytest.warns(ConvergenceWarning) as record:
        res = irls_solve(prob, L1(lam), tol=1e-10, max_iter=500)
    message = str(record[0].message)
    assert not res.converged and res.n_iter == 1
    assert "stopped after 1 of 500 outer steps" in message
    assert "no step that lowers the objective" in message
    assert "in 500 outer steps" not in message


def test_max_iter_warning_names_the_residual(leaf_problem):
    prob = _problem(leaf_problem, False)
    lam = 0.05 * prob.lambda_max(L1())
    with pytest.warns(ConvergenceWarning,
                      match=r"did not converge in 1 outer steps .*KKT residual"):
        res = irls_solve(prob, L1(lam), tol=1e-10, max_iter=1)
    assert res.n_iter == 1 and not res.converged
