"""The penalty contract: each method against an independent reference."""
import copy
import pickle
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from firecy.penalties import (
    L1, MCP, GroupL0, L1Fusion, MCPFusion, Penalty, PythonPenalty, as_penalty,
    available_penalties, make_penalty, register_penalty)
from firecy.solver import BlockDesign, solve



def brute_prox_1d(pen, z, step, curv):
    """Global minimiser of step/2 (x - z)^2 + pen(x) on a fine grid + polish."""
    grid = np.linspace(-abs(z) - 3, abs(z) + 3, 20001)
    vals = [0.5 * step * (x - z) ** 2 + pen.value_of([x], [curv]) for x in grid]
    x0 = grid[int(np.argmin(vals))]
    res = minimize_scalar(lambda x: 0.5 * step * (x - z) ** 2 + pen.value_of([x], [curv]),
                          bounds=(x0 - 1e-3, x0 + 1e-3), method="bounded",
                          options={"xatol": 1e-12})
    return res.x


@pytest.mark.parametrize("pen", [L1(0.7), MCP(0.7, 1.1), MCP(0.7, 3.0)], ids=repr)
@pytest.mark.parametrize("z", [-3.0, -0.75, -0.2, 0.0, 0.3, 0.69, 1.5, 2.5])
@pytest.mark.parametrize("step,curv", [(1.0, 1.0), (2.0, 0.5), (0.5, 0.5), (3.0, 3.0)])
def test_prox_is_the_minimiser(pen, z, step, curv):
    x = pen.prox_of([z], step, curv)[0]
    ref = brute_prox_1d(pen, z, step, curv)
    f = lambda v: 0.5 * step * (v - z) ** 2 + pen.value_of([v], [curv])
    assert f(x) <= f(ref) + 1e-10


@pytest.mark.parametrize("pen", [L1(0.7), MCP(0.7, 1.5), L1Fusion(0.3, 1.0),
                                 MCPFusion(0.3, 2.0, 0.5)], ids=repr)
def test_subdiff_matches_directional_derivatives(pen):
    """For every coordinate, the one-sided derivatives of the penalty bound
    the subdifferential interval: hi = d+ and lo = -d- (the penalties here
    are sums of regular functions)."""
    rng = np.random.default_rng(0)
    w = np.array([0.0, 0.5, 0.5, -1.2, 0.0, 0.0, 3.0])
    curv = rng.uniform(0.5, 2.0, w.size)
    lo, hi = pen.subdiff_of(w, curv)
    h = 1e-7
    for j in range(w.size):
        e = np.zeros(w.size)
        e[j] = h
        d_plus = (pen.value_of(w + e, curv) - pen.value_of(w, curv)) / h
        d_minus = (pen.value_of(w - e, curv) - pen.value_of(w, curv)) / h
        assert hi[j] == pytest.approx(d_plus, abs=1e-5)
        assert lo[j] == pytest.approx(-d_minus, abs=1e-5)


def test_group_l0_prox_compares_with_zero():
    inner = L1(0.1)
    z = np.array([0.3, -0.2, 0.05])
    kept = GroupL0(inner, 0.001).prox_of(z, 1.0)
    np.testing.assert_allclose(kept, L1(0.1).prox_of(z, 1.0))
    assert np.all(GroupL0(L1(0.1), 10.0).prox_of(z, 1.0) == 0)
    # the decision is exactly the objective comparison
    x = L1(0.1).prox_of(z, 1.0)
    gain = 0.5 * np.sum(z ** 2) - (0.5 * np.sum((x - z) ** 2) + 0.1 * np.abs(x).sum())
    assert np.all(GroupL0(L1(0.1), gain * 1.001).prox_of(z, 1.0) == 0)
    assert np.any(GroupL0(L1(0.1), gain * 0.999).prox_of(z, 1.0) != 0)


def test_block_score_is_direction_norm():
    pen = MCP(0.5, 2.0)
    w = np.array([0.0, 0.3, 0.0])
    g = np.array([0.8, -0.1, 0.2])
    d = pen.direction_of(w, g)
    assert pen.block_score_of(w, g) == pytest.approx(np.sum(d ** 2))
    np.testing.assert_allclose(d, [0.3, abs(-0.1 + 0.5 - 0.3 / 2.0), 0.0])


# -- penalties written in Python -------------------------------------------

class PyL1:
    """The L1 penalty in plain Python, through the protocol."""

    is_separable = True

    def __init__(self, lam):
        self.lam = lam

    def value(self, w, curvature):
        return self.lam * np.abs(w).sum()

    def prox(self, z, step, curvature):
        return np.sign(z) * np.maximum(np.abs(z) - self.lam / step, 0.0)

    def subdiff(self, w, curvature):
        s = np.sign(w) * self.lam
        return np.where(w == 0, -self.lam, s), np.where(w == 0, self.lam, s)

    def lambda_max(self, grad, curvature):
        return np.abs(grad).max()


class PyL1Newton(PyL1):
    """Also gives its local quadratic model, which enables Newton steps."""

    def local_quadratic(self, w, curvature):
        return self.lam * np.sign(w), np.zeros_like(w)


@pytest.mark.parametrize("cls,lam", [(PyL1Newton, 0.02), (PyL1, 0.1)])
def test_python_penalty_matches_compiled(rf_design, cls, lam):
    table, values, ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, ptr)
    a = solve(design, y, L1(lam), tol=1e-9)
    b = solve(design, y, cls(lam), tol=1e-9, max_iter=10**6)
    assert a.converged and b.converged
    np.testing.assert_allclose(b.objective, a.objective, rtol=1e-9)
    np.testing.assert_allclose(b.coef, a.coef, atol=1e-6)


def _repeating_forest_design():
    """A 118-column leaf design of rank 95: 15 depth-3 trees on two features
    each repeat each other's leaves (what stalled coordinate descent)."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import RandomForestRegressor

    from firecy.ensembles import rule_ensemble_from_model

    X, y = load_diabetes(return_X_y=True)
    X, y = X[:150], y[:150]
    rf = RandomForestRegressor(15, max_depth=3, max_features=2, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values / 100,
                                         ens.block_ptr)
    assert np.linalg.matrix_rank(design.tocsc().toarray()) < design.n_columns - 20
    return design, (y - y.mean()) / y.std()


class PyMCP:
    """MCP (concavity scaled by each coordinate's curvature, as the built-in),
    without local_quadratic."""

    is_separable = True

    def __init__(self, lam, gamma):
        self.lam, self.gamma = lam, gamma

    def value(self, w, curvature):
        g = self.gamma / np.where(curvature > 0, curvature, 1.0)
        a = np.abs(w)
        return float(np.sum(np.where(a <= g * self.lam, self.lam * a - a * a / (2 * g),
                                     g * self.lam ** 2 / 2)))

    def prox(self, z, step, curvature):
        g = self.gamma / np.where(curvature > 0, curvature, 1.0)
        out = np.where(np.abs(z) > g * self.lam, z, 0.0)
        inner = np.sign(z) * np.maximum(np.abs(z) - self.lam / step, 0) / (1 - 1 / (g * step))
        return np.where(np.abs(z) <= g * self.lam, inner, out)

    def subdiff(self, w, curvature):
        g = self.gamma / np.where(curvature > 0, curvature, 1.0)
        d = np.where(np.abs(w) <= g * self.lam, self.lam * np.sign(w) - w / g, 0.0)
        return np.where(w == 0, -self.lam, d), np.where(w == 0, self.lam, d)

    def lambda_max(self, grad, curvature):
        return np.abs(grad).max()


@pytest.mark.parametrize("lam", [0.01, 0.001])
def test_separable_plugin_without_local_quadratic_reaches_the_builtin(lam):
    # issue 37: without the optional local model the engine took no Newton
    # step and crawled (15,000 block updates, 2e-8 above the built-in L1)
    design, y = _repeating_forest_design()
    ref = solve(design, y, L1(lam), tol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = solve(design, y, PyL1(lam), tol=1e-10, max_iter=15000)
    assert res.converged
    assert res.objective <= ref.objective * (1 + 1e-9)


def test_separable_mcp_plugin_without_local_quadratic_is_stationary():
    design, y = _repeating_forest_design()
    lam, gamma = 0.003, 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = solve(design, y, PyMCP(lam, gamma), tol=1e-10, max_iter=15000)
    ref = solve(design, y, MCP(lam, gamma), tol=1e-10)
    assert res.converged and res.n_rules > 0
    # stationary by the built-in MCP's own optimality measure: the gradient
    # of 1/(2n) |y - b - M w|^2 and the curvatures a_j = |M_j|^2 / n
    M = design.tocsc()
    n = M.shape[0]
    grad = -np.asarray(M.T @ (y - res.intercept - M @ res.coef)) / n
    curv = np.asarray(M.multiply(M).sum(axis=0)).ravel() / n
    d = MCP(lam, gamma).direction_of(res.coef, grad, curvature=curv,
                                     columns=np.arange(design.n_columns), block=0)
    assert np.max(d) <= 1e-6 * lam
    # and no worse a local minimum than the built-in reaches
    assert res.objective <= ref.objective * (1 + 1e-6)


class BoomInSubdiff(PyL1):
    def subdiff(self, w, curvature):
        if np.any(w != 0):
            raise RuntimeError("boom from subdiff")
        return super().subdiff(w, curvature)


def test_an_exception_in_the_generic_local_model_propagates():
    design, y = _repeating_forest_design()
    with pytest.raises(RuntimeError, match="boom from subdiff"):
        solve(design, y, BoomInSubdiff(0.001), tol=1e-10, max_iter=15000)


class Boom(PyL1):
    def prox(self, z, step, curvature):
        raise RuntimeError("boom from a Python penalty")


class BadShape(PyL1):
    def prox(self, z, step, curvature):
        return np.zeros(len(z) + 1)


def test_python_penalty_exceptions_propagate(rf_design):
    table, values, ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, ptr)
    with pytest.raises(RuntimeError, match="boom from a Python penalty"):
        solve(design, y, Boom(0.02))
    with pytest.raises(ValueError, match=r"penalty BadShape: prox returned shape"):
        solve(design, y, BadShape(0.02))


def test_python_penalty_protocol_checked():
    class NoProx:
        lam = 1.0

        def value(self, w, c):
            return 0.0

    with pytest.raises(TypeError, match="prox, subdiff, lambda_max"):
        as_penalty(NoProx())
    with pytest.raises(TypeError, match="cannot be used as a penalty"):
        as_penalty(3.0)


def test_registry():
    assert {"l1", "mcp"} <= set(available_penalties())
    pen = make_penalty("mcp", lam=0.2, gamma=1.5, fusion=0.5, group_l0=0.1)
    assert isinstance(pen, GroupL0) and isinstance(pen.inner, MCPFusion)
    assert isinstance(make_penalty("l1", lam=0.2), L1)
    with pytest.raises(ValueError, match="unknown penalty 'lasso'; available: .*l1"):
        make_penalty("lasso")
    register_penalty("py_l1_test", PyL1)
    assert isinstance(make_penalty("py_l1_test", lam=0.3), PythonPenalty)
    with pytest.raises(ValueError, match="already registered"):
        register_penalty("py_l1_test", L1)


def test_entry_point_discovery(monkeypatch):
    import firecy.penalties._registry as reg

    class FakeEP:
        name = "from_entry_point"

        def load(self):
            return L1

    registry = reg.PENALTIES
    monkeypatch.setattr(registry, "_listed", False)
    monkeypatch.setattr(registry, "_entry_points", lambda: [FakeEP()])
    assert "from_entry_point" in available_penalties()
    assert isinstance(make_penalty("from_entry_point", lam=0.1), L1)


@pytest.mark.parametrize("pen", [L1(0.3), MCP(0.3, 2.5), L1Fusion(0.3, 0.7),
                                 MCPFusion(0.3, 1.5, 2.0), GroupL0(MCP(0.3, 2.0), 0.4)],
                         ids=repr)
def test_pickle_and_copy(pen):
    for clone in (pickle.loads(pickle.dumps(pen)), copy.deepcopy(pen)):
        assert type(clone) is type(pen) and repr(clone) == repr(pen)
        z = np.array([0.5, -1.0, 2.0])
        np.testing.assert_array_equal(clone.prox_of(z, 1.0), pen.prox_of(z, 1.0))


# -- a compiled penalty in another package ------------------------------------

@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="needs a C compiler")
def test_compiled_plugin_penalty(tmp_path, rf_design):
    src = Path(__file__).parent.parent / "examples" / "plugin_penalty"
    for name in ("ridge_penalty.pyx", "setup.py"):
        shutil.copy(src / name, tmp_path / name)
    import os

    import firecy

    env = dict(os.environ)
    # build against the firecy these tests import (installed or in place)
    env["PYTHONPATH"] = str(Path(firecy.__file__).parent.parent)
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"],
                         cwd=tmp_path, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    sys.path.insert(0, str(tmp_path))
    try:
        from ridge_penalty import Ridge
    finally:
        sys.path.remove(str(tmp_path))
    pen = Ridge(0.05)
    assert isinstance(pen, Penalty)
    table, values, ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, ptr)
    res = solve(design, y, pen, tol=1e-10)
    # ridge has a closed form: (M^T M / n + lam I) w = M^T (y - ybar) / n
    M = design.tocsc().toarray()
    Mc = M - M.mean(axis=0)
    w = np.linalg.solve(Mc.T @ Mc / len(y) + 0.05 * np.eye(M.shape[1]),
                        Mc.T @ (y - y.mean()) / len(y))
    np.testing.assert_allclose(res.coef, w, atol=1e-6)


@pytest.mark.parametrize("pen", [L1(0.7), MCP(0.7, 1.5), L1Fusion(0.3, 1.0),
                                 MCPFusion(0.3, 2.0, 0.5), GroupL0(MCPFusion(0.3, 2.0, 0.5), 1.0)],
                         ids=repr)
def test_local_groups_are_directional_derivatives(pen):
    """Moving every coordinate of group g by h changes the penalty by
    grad[g] h + hess[g] h^2 / 2 exactly (for small h); zeros stay fixed."""
    w = np.array([0.0, 0.5, 0.5, 0.5, -0.2, 0.0, 0.0, 1.0, 1.0, 0.1])
    curv = np.linspace(0.5, 2.0, w.size)
    group, grad, hess = pen.local_groups_of(w, curv)
    assert np.all(group[w == 0] == -1)
    for g in range(grad.size):
        members = group == g
        assert np.ptp(w[members]) == 0   # a group shares one value
        for h in (1e-6, -1e-6):
            step = np.where(members, h, 0.0)
            change = pen.value_of(w + step, curv) - pen.value_of(w, curv)
            assert change == pytest.approx(grad[g] * h + 0.5 * hess[g] * h * h, abs=1e-11)
    if isinstance(pen, (L1, MCP)):
        assert grad.size == np.count_nonzero(w)   # one group per nonzero weight
    else:
        assert grad.size == 4                      # fused segments of equal values
