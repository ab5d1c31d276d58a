"""Plug-in penalties without their own local model (issue 37, item 3): a
separable penalty's Newton model is derived from its subdifferential, so a
Python L1 or MCP without ``local_quadratic`` converges as the built-in ones
do on a rank-deficient leaf design (trees that repeat each other's leaves)."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from conftest import forest_design
from firecy.penalties import L1, MCP, L1Fusion, PythonPenalty
from firecy.solver import BlockDesign, solve


class PyL1:
    """The lasso in Python, without local_quadratic."""

    is_separable = True

    def __init__(self, lam):
        self.lam = lam

    def value(self, w, curvature):
        return self.lam * np.abs(w).sum()

    def prox(self, z, step, curvature):
        out = np.zeros_like(z)
        on = step > 0
        out[on] = np.sign(z[on]) * np.maximum(np.abs(z[on]) - self.lam / step[on], 0.0)
        return out

    def subdiff(self, w, curvature):
        edge = np.sign(w) * self.lam
        return np.where(w == 0, -self.lam, edge), np.where(w == 0, self.lam, edge)

    def lambda_max(self, grad, curvature):
        return np.abs(grad).max()


class PyMCP:
    """docs/objective.rst's MCP (concavity gamma / a_j) in Python, from its
    definition, without local_quadratic."""

    is_separable = True

    def __init__(self, lam, gamma):
        self.lam, self.gamma = lam, gamma

    def _concavity(self, curvature):
        # gamma / a_j; a column without curvature is the lasso's (infinite)
        with np.errstate(divide="ignore"):
            return np.where(curvature > 0, self.gamma / curvature, np.inf)

    def _values(self, x, g):
        a = np.abs(x)
        return np.where(a <= g * self.lam, self.lam * a - a * a / (2 * g),
                        0.5 * g * self.lam ** 2)

    def value(self, w, curvature):
        return float(self._values(w, self._concavity(curvature)).sum())

    def prox(self, z, step, curvature):
        # the global minimiser among the candidates: 0, the stationary point
        # of the curved piece, its ends, and z beyond them
        g, lam = self._concavity(curvature), self.lam
        out = np.zeros_like(z)
        for k in range(z.size):
            if step[k] <= 0:
                continue
            s, gk, zk = step[k], g[k], z[k]
            edge = gk * lam
            cands = [0.0]
            if np.isfinite(edge):
                cands += [np.sign(zk) * edge]
                if abs(zk) > edge:
                    cands.append(zk)
            inner = s - (1.0 / gk if np.isfinite(gk) else 0.0)
            if inner > 0:
                x = np.sign(zk) * max(abs(zk) * s - lam, 0.0) / inner
                cands.append(min(abs(x), edge) * np.sign(x) if np.isfinite(edge) else x)
            vals = [0.5 * s * (c - zk) ** 2 + self._values(np.array([c]), np.array([gk]))[0]
                    for c in cands]
            out[k] = cands[int(np.argmin(vals))]
        return out

    def subdiff(self, w, curvature):
        g, lam = self._concavity(curvature), self.lam
        a = np.abs(w)
        slope = np.where(a <= g * lam, np.sign(w) * (lam - a / g), 0.0)
        return np.where(w == 0, -lam, slope), np.where(w == 0, lam, slope)

    def lambda_max(self, grad, curvature):
        return np.abs(grad).max()


@pytest.fixture(scope="module")
def repeated_leaves():
    """15 depth-3 trees, 120 leaves, of rank 94 on 1,000 rows."""
    table, values, ptr, X, y, _ = forest_design(n_samples=1000, n_trees=15, seed=3)
    design = BlockDesign.from_leaf_table(table, values, ptr)
    M = design.tocsc().toarray()
    assert M.shape[1] == 120 and np.linalg.matrix_rank(M) < 100
    lam_max = np.abs(M.T @ (y - y.mean())).max() / len(y)
    return design, M, y, lam_max


def _solve_quietly(design, y, pen, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return solve(design, y, pen, tol=1e-10, max_iter=15000, **kw)


@pytest.mark.parametrize("frac", [0.01, 0.001])
def test_python_l1_without_local_model_reaches_builtin_objective(repeated_leaves, frac):
    design, _, y, lam_max = repeated_leaves
    lam = frac * lam_max
    ref = _solve_quietly(design, y, L1(lam))
    res = _solve_quietly(design, y, PyL1(lam))
    assert ref.converged and res.converged
    assert abs(res.objective - ref.objective) <= 1e-9 * ref.objective


def _mcp_kkt(M, y, res, lam, gamma):
    """The largest distance of -grad_j to MCP's subdifferential at the
    solution, by hand (docs/objective.rst: squared loss over 2n, a_j the
    column's mean square), and the intercept's gradient."""
    n = len(y)
    r = y - res.intercept - M @ res.coef
    g, a, w = -(M.T @ r) / n, (M * M).mean(axis=0), res.coef
    with np.errstate(divide="ignore"):
        edge = np.where(a > 0, gamma * lam / a, np.inf)
        curved = np.where(a > 0, a * w / gamma, 0.0)
    inside = (w != 0) & (np.abs(w) <= edge)
    resid = np.where(w == 0, np.maximum(np.abs(g) - lam, 0.0),
                     np.where(inside, np.abs(g + lam * np.sign(w) - curved), np.abs(g)))
    return resid.max(), abs(r.mean())


@pytest.mark.parametrize("frac", [0.01, 0.001])
def test_python_mcp_without_local_model_is_stationary(repeated_leaves, frac):
    design, M, y, lam_max = repeated_leaves
    lam, gamma = frac * lam_max, 3.0
    res = _solve_quietly(design, y, PyMCP(lam, gamma))
    ref = _solve_quietly(design, y, MCP(lam, gamma))
    assert res.converged and res.n_rules > 0
    kkt, kkt_b = _mcp_kkt(M, y, res, lam, gamma)
    ref_kkt, _ = _mcp_kkt(M, y, ref, lam, gamma)
    # as stationary as the engine's tolerance asks (tol times lambda_max per
    # block), and as the built-in MCP's own solution
    assert kkt <= 1e-9 * lam_max and kkt <= max(10 * ref_kkt, 1e-12 * lam_max)
    assert kkt_b <= 1e-9 * lam_max


def test_derived_model_is_the_exact_one():
    rng = np.random.default_rng(0)
    curv = rng.uniform(0.2, 2.0, 40)
    lam, gamma = 0.3, 2.5
    w = rng.normal(scale=1.5, size=40)
    w[::5] = 0.0
    edge = gamma * lam / curv
    w[np.abs(np.abs(w) - edge) < 1e-3 * edge] *= 0.9   # off MCP's breakpoints
    group, grad, hess = PythonPenalty(PyMCP(lam, gamma)).local_groups_of(w, curv)
    ref_group, ref_grad, ref_hess = MCP(lam, gamma).local_groups_of(w, curv)
    np.testing.assert_array_equal(group, ref_group)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(hess, ref_hess, rtol=1e-7, atol=1e-12)
    # the lasso's is linear off zero, exactly (what the active-set solver needs)
    group, grad, hess = PythonPenalty(PyL1(lam)).local_groups_of(w, curv)
    np.testing.assert_array_equal(group >= 0, w != 0)
    np.testing.assert_array_equal(grad, lam * np.sign(w[w != 0]))
    assert np.all(hess == 0.0)


def test_no_derived_model_when_not_separable_or_declined():
    class Joint(PyL1):
        is_separable = False

    class Declines(PyL1):
        def local_quadratic(self, w, curvature):
            return None

    w = np.array([0.5, 0.0, -1.0])
    assert PythonPenalty(Joint(0.1)).local_groups_of(w) is None
    assert PythonPenalty(Declines(0.1)).local_groups_of(w) is None
    # and the built-in non-separable fusion keeps its own model
    assert L1Fusion(0.1, 0.5).local_groups_of(w) is not None


class ProbeBoom(PyL1):
    """Raises when asked for the subdifferential near zero, off zero: the
    derived model's probes (the active-set solver's first step asks them)."""

    def subdiff(self, w, curvature):
        a = np.abs(w)
        if np.any((a > 0) & (a < 1e-6 * self.lam)):
            raise RuntimeError("boom from the derived model's subdiff")
        return super().subdiff(w, curvature)


def test_an_exception_in_the_derived_model_propagates(repeated_leaves):
    design, _, y, lam_max = repeated_leaves
    with pytest.raises(RuntimeError, match="boom from the derived model") as info:
        solve(design, y, ProbeBoom(0.01 * lam_max), tol=1e-10)
    assert any("ProbeBoom.subdiff" in note for note in getattr(info.value, "__notes__", []))
    with pytest.raises(RuntimeError, match="boom from the derived model"):
        PythonPenalty(ProbeBoom(1.0)).local_groups_of(np.array([1e-9, 0.5]))
