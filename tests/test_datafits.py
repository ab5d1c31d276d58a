"""The datafit contract: the shipped losses, Python datafits, compiled plug-ins.

Objective (docs/datafits.rst): F(w, b) = 1/(sum s) sum_i s_i loss(y_i, eta_i)
+ P(w), eta = offset + b + M w.
"""
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from firecy.datafits import (
    Datafit,
    Logistic,
    PythonDatafit,
    Quadratic,
    as_datafit,
    available_datafits,
)
from firecy.penalties import L1, MCP
from firecy.solver import BlockDesign, fire_path, lambda_max, solve


class PySquared:
    """The squared loss in Python."""

    def loss(self, y, eta):
        return 0.5 * (y - eta) ** 2

    def gradient(self, y, eta):
        return eta - y

    def hessian(self, y, eta):
        return np.ones_like(y)

    def curvature_bound(self, y):
        return 1.0


class PyLogistic:
    """The logistic loss in Python."""

    def loss(self, y, eta):
        return np.logaddexp(0.0, eta) - y * eta

    def gradient(self, y, eta):
        return 0.5 * (1 + np.tanh(0.5 * eta)) - y

    def hessian(self, y, eta):
        p = 0.5 * (1 + np.tanh(0.5 * eta))
        return p * (1 - p)

    def curvature_bound(self, y):
        return np.full(y.shape, 0.25)


@pytest.fixture(scope="module")
def forest(rf_design):
    table, values, ptr, X, y, _ = rf_design
    return BlockDesign.from_leaf_table(table, values, ptr), y


@pytest.fixture(scope="module")
def forest_binary(forest):
    design, y = forest
    return design, (y > np.median(y)).astype(float)


# -- the per-sample methods -------------------------------------------------

def test_per_sample_methods_match_formulas():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50).astype(float)
    eta = rng.normal(0, 4, 50)
    np.testing.assert_allclose(Quadratic().loss_of(y, eta), 0.5 * (y - eta) ** 2)
    g, h = Quadratic().gradient_hessian_of(y, eta)
    np.testing.assert_allclose(g, eta - y)
    np.testing.assert_array_equal(h, 1.0)
    log = Logistic()
    np.testing.assert_allclose(log.loss_of(y, eta), np.logaddexp(0, eta) - y * eta, rtol=1e-13)
    p = 1 / (1 + np.exp(-eta))
    g, h = log.gradient_hessian_of(y, eta)
    np.testing.assert_allclose(g, p - y, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, p * (1 - p), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(log.curvature_bound_of(y), 0.25)


@pytest.mark.parametrize("datafit", [Quadratic(), Logistic()], ids=["quadratic", "logistic"])
def test_derivatives_and_bound(datafit):
    """Finite differences of the loss; the bound holds everywhere."""
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    eta = np.array([-30.0, -2.0, 0.0, 0.5, 12.0])
    h = 1e-6
    g, hess = datafit.gradient_hessian_of(y, eta)
    fd = (datafit.loss_of(y, eta + h) - datafit.loss_of(y, eta - h)) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    fd2 = (datafit.gradient_hessian_of(y, eta + h)[0]
           - datafit.gradient_hessian_of(y, eta - h)[0]) / (2 * h)
    np.testing.assert_allclose(hess, fd2, rtol=1e-5, atol=1e-9)
    grid = np.linspace(-40, 40, 2001)
    for label in (0.0, 1.0):
        _, curv = datafit.gradient_hessian_of(np.full(grid.size, label), grid)
        assert np.all(curv <= datafit.curvature_bound_of(np.full(grid.size, label)))


def test_logistic_is_stable_for_extreme_predictions():
    y = np.array([0.0, 1.0, 0.0, 1.0])
    eta = np.array([800.0, -800.0, -800.0, 800.0])
    loss = Logistic().loss_of(y, eta)
    np.testing.assert_allclose(loss, [800.0, 800.0, 0.0, 0.0])
    g, h = Logistic().gradient_hessian_of(y, eta)
    np.testing.assert_allclose(g, [1.0, -1.0, 0.0, 0.0])
    assert np.all(np.isfinite(h))


# -- names and wrapping ------------------------------------------------------

def test_as_datafit():
    assert isinstance(as_datafit(None), Quadratic)
    assert isinstance(as_datafit("logistic"), Logistic)
    assert {"quadratic", "logistic"} <= set(available_datafits())
    d = Logistic()
    assert as_datafit(d) is d
    assert isinstance(as_datafit(PySquared()), PythonDatafit)
    with pytest.raises(ValueError, match="unknown datafit 'hinge'; available:"):
        as_datafit("hinge")
    with pytest.raises(TypeError, match="not the class Logistic"):
        as_datafit(Logistic)
    with pytest.raises(TypeError, match="cannot be used as a datafit: it has no method"):
        as_datafit(object())


# -- Python datafits in the engine -----------------------------------------

def test_python_squared_matches_sklearn_lasso(forest):
    design, y = forest
    M = design.tocsc()
    lam = 0.01
    res = solve(design, y, L1(lam), datafit=PySquared(), tol=1e-10)
    ref = Lasso(alpha=lam, tol=1e-12, max_iter=200_000).fit(M, y)
    r = y - ref.intercept_ - M @ ref.coef_
    f_ref = 0.5 * np.mean(r * r) + lam * np.abs(ref.coef_).sum()
    assert res.converged
    assert abs(res.objective - f_ref) <= 1e-7 * f_ref
    quad = solve(design, y, L1(lam), tol=1e-10)
    np.testing.assert_allclose(res.objective, quad.objective, rtol=1e-10)


@pytest.mark.parametrize("strategy", ["working_set", "greedy"])
def test_python_logistic_matches_compiled(forest_binary, strategy):
    design, y = forest_binary
    s = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    tol = 1e-10 if strategy == "working_set" else 1e-6
    a = solve(design, y, L1(0.005), datafit=PyLogistic(), sample_weight=s, tol=tol,
              strategy=strategy, record_objective=True, max_iter=300_000)
    b = solve(design, y, L1(0.005), datafit="logistic", sample_weight=s, tol=tol,
              strategy=strategy, max_iter=300_000)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-5 if strategy == "greedy" else 1e-9)
    trace = a.objective_trace
    assert np.all(np.diff(trace) <= 1e-12 * np.abs(trace[:-1]))


class Broken(PySquared):
    def __init__(self, method, result):
        self.method, self.result = method, result

    def _maybe(self, name, value):
        if name != self.method:
            return value
        if isinstance(self.result, Exception):
            raise self.result
        return self.result(value)

    def loss(self, y, eta):
        return self._maybe("loss", super().loss(y, eta))

    def gradient(self, y, eta):
        return self._maybe("gradient", super().gradient(y, eta))

    def hessian(self, y, eta):
        return self._maybe("hessian", super().hessian(y, eta))

    def curvature_bound(self, y):
        return self._maybe("curvature_bound", np.ones_like(y))


class LossError(RuntimeError):
    pass


@pytest.mark.parametrize("method", ["loss", "gradient", "hessian", "curvature_bound"])
def test_python_datafit_exception_propagates(forest, method):
    design, y = forest
    with pytest.raises(LossError, match="boom"):
        fire_path(design, y, L1(), datafit=Broken(method, LossError("boom")), n_lambdas=4)


@pytest.mark.parametrize("method", ["loss", "gradient", "hessian", "curvature_bound"])
@pytest.mark.parametrize("kind", ["nan", "inf", "shape"])
def test_python_datafit_bad_results(forest, method, kind):
    design, y = forest

    def corrupt(v):
        v = np.array(v, dtype=float, ndmin=1)
        if kind == "shape":
            return v[:-1] if v.size > 1 else np.zeros(2)
        v[0] = np.nan if kind == "nan" else np.inf
        return v

    with pytest.raises(ValueError, match=f"datafit Broken: {method} returned"):
        fire_path(design, y, L1(), datafit=Broken(method, corrupt), n_lambdas=4)


def test_python_datafit_bad_bound_and_validate(forest):
    design, y = forest
    with pytest.raises(ValueError, match="datafit Broken: curvature_bound must be positive"):
        solve(design, y, L1(0.1), datafit=Broken("curvature_bound", lambda v: 0 * v))

    class Picky(PySquared):
        def validate(self, y, sample_weight):
            if np.any(y < 0):
                raise ValueError("Picky needs non-negative targets")
            return y[:-1]

    with pytest.raises(ValueError, match="Picky needs non-negative targets"):
        solve(design, y - 100, L1(0.1), datafit=Picky())
    with pytest.raises(ValueError, match="datafit Picky: validate must return"):
        solve(design, np.abs(y), L1(0.1), datafit=Picky())


# -- the squared loss with an offset, and one object in two threads ---------

def test_quadratic_offset_equals_shifted_target(forest):
    design, y = forest
    offset = np.random.default_rng(0).normal(0, 1, len(y))
    a = solve(design, y, L1(0.02), offset=offset, tol=1e-10)
    b = solve(design, y - offset, L1(0.02), tol=1e-10)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-9)
    np.testing.assert_allclose(a.intercept, b.intercept, atol=1e-9)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-12)


def test_one_datafit_object_in_two_threads(forest_binary):
    design, y = forest_binary
    datafit = Logistic()
    lams = [0.002, 0.01]
    expected = [solve(design, y, L1(lam), datafit=datafit, tol=1e-10).coef for lam in lams]
    out = [None, None]

    def work(k):
        for _ in range(3):
            out[k] = solve(design, y, L1(lams[k]), datafit=datafit, tol=1e-10).coef

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        np.testing.assert_array_equal(out[k], expected[k])


def test_lambda_max_uses_the_datafit(forest_binary):
    design, y = forest_binary
    M = design.tocsc()
    quad = lambda_max(design, y, L1())
    np.testing.assert_allclose(quad, np.max(np.abs(M.T @ (y - y.mean()))) / len(y), rtol=1e-12)
    logit = lambda_max(design, y, L1(), datafit="logistic")
    # the logistic gradient at the optimal intercept: p = mean(y)
    np.testing.assert_allclose(logit, quad, rtol=1e-10)


# -- a compiled datafit from another package --------------------------------

def test_compiled_plugin_datafit(tmp_path, forest):
    cp = pytest.importorskip("cvxpy")
    src = Path(__file__).parent / "plugin_datafit"
    for name in ("huber_datafit.pyx", "setup.py"):
        shutil.copy(src / name, tmp_path / name)
    import os

    import firecy

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(firecy.__file__).parent.parent)
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"],
                         cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    sys.path.insert(0, str(tmp_path))
    try:
        from huber_datafit import Huber
    finally:
        sys.path.remove(str(tmp_path))
    assert isinstance(Huber(), Datafit)
    design, y = forest
    lam, delta = 0.01, 1.0
    res = solve(design, y, L1(lam), datafit=Huber(delta), tol=1e-10, record_objective=True)
    assert res.converged
    assert np.all(np.diff(res.objective_trace) <= 1e-12 * np.abs(res.objective_trace[:-1]))
    M = design.tocsc()
    w, b = cp.Variable(M.shape[1]), cp.Variable()
    # cvxpy's huber(x, M) is 2 x our loss
    problem = cp.Problem(cp.Minimize(
        cp.sum(cp.huber(b + M @ w - y, delta)) / (2 * len(y)) + lam * cp.norm1(w)))
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert res.objective <= problem.value * (1 + 1e-7)
    assert abs(res.objective - problem.value) <= 1e-6 * problem.value
