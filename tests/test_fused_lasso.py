"""Tests of the 1-D fused lasso solvers (firecy.penalties._fused_lasso).

Three independent kinds of evidence:

* an exact optimality certificate (``kkt_violation``): the dual path u of
  the total-variation term is rebuilt from the solution by a cumulative sum
  and checked against |u| <= lam_tv, u = lam_tv * sign(jump) at every jump,
  and u = 0 at both ends (run for every size up to 10,000);
* cvxpy (CLARABEL with tight tolerances) for sizes up to a few thousand:
  objective values to 1e-9 relative, and solutions to 1e-8 after
  "polishing" cvxpy's answer (solving exactly for the segment values on the
  jump pattern cvxpy found);
* brute-force grid search for n = 1, 2 with MCP, and closed forms.
"""
import numpy as np
import pytest

from firecy.penalties import _fused_lasso as fl
from firecy.penalties._fused_lasso import fused_lasso, fused_lasso_weighted


# ---------------------------------------------------------------------------
# reference helpers
# ---------------------------------------------------------------------------

def _mcp_parts(n, lam1, gamma, curvature):
    a = np.zeros(n) if curvature is None else np.asarray(curvature, float)
    g = 1.0 if gamma is None else float(gamma)
    knot = np.full(n, np.inf)
    knot[a > 0] = g * lam1 / a[a > 0]
    return a, g, knot


def objective(x, z, lam, c=None, lam1=0.0, gamma=None, a=None):
    """The objective every solver minimises (same scaling as the docs).

    ``x`` may hold candidates in its rows (shape (m, n)): one value each.
    """
    x = np.asarray(x, float)
    n = x.shape[-1]
    c = np.ones(n) if c is None else np.asarray(c, float)
    total = (0.5 * np.sum(c * (x - z) ** 2, axis=-1)
             + lam * np.sum(np.abs(np.diff(x, axis=-1)), axis=-1))
    if lam1 > 0:
        a, g, knot = _mcp_parts(n, lam1, gamma, a)
        ax = np.abs(x)
        inside = ax <= knot
        safe_a = np.where(a > 0, a, 1.0)
        pen = np.where(inside, lam1 * ax - a * x * x / (2 * g),
                       g * lam1 ** 2 / (2 * safe_a))
        total = total + np.sum(pen, axis=-1)
    return total


def kkt_violation(x, z, lam, c=None, lam1=0.0, gamma=None, a=None):
    """Largest violation of the optimality conditions at x (0: optimal).

    With u_0 = 0 and u_{i+1} = u_i + c_i (x_i - z_i) + s_i, s_i in the
    subdifferential of phi_i at x_i, x is optimal iff some choice of the s_i
    gives u_n = 0, |u_i| <= lam and u_i = lam * sign(x_i - x_{i-1}) wherever
    x_i != x_{i-1}. s_i is a point except where x_i = 0 (an interval), so the
    reachable u_i form an interval, tracked exactly left to right. Returns the
    largest distance by which a constraint is missed.
    """
    x = np.asarray(x, float)
    n = len(x)
    c = np.ones(n) if c is None else np.asarray(c, float)
    g = c * (x - z)
    s_lo = np.zeros(n)
    s_hi = np.zeros(n)
    if lam1 > 0:
        a, gm, knot = _mcp_parts(n, lam1, gamma, a)
        d = np.where(np.abs(x) <= knot, lam1 * np.sign(x) - a / gm * x, 0.0)
        s_lo = np.where(x == 0, -lam1, d)
        s_hi = np.where(x == 0, lam1, d)
    lo = hi = 0.0
    worst = 0.0
    for i in range(n):
        lo += g[i] + s_lo[i]
        hi += g[i] + s_hi[i]
        if i == n - 1:
            t_lo = t_hi = 0.0
        elif x[i + 1] == x[i]:
            t_lo, t_hi = -lam, lam
        else:
            t_lo = t_hi = lam * np.sign(x[i + 1] - x[i])
        gap = max(t_lo - hi, lo - t_hi, 0.0)
        worst = max(worst, gap)
        if gap > 0:   # continue from the nearest admissible point
            lo = hi = min(max(lo, t_lo), t_hi)
        else:
            lo, hi = max(lo, t_lo), min(hi, t_hi)
    return worst


def kkt_scale(z, lam, c=None, lam1=0.0):
    c = np.ones(len(z)) if c is None else np.asarray(c, float)
    cz = np.abs(c * z)
    return 1.0 + lam + lam1 + (cz.max() if len(z) else 0.0)


def assert_certified(x, z, lam, c=None, lam1=0.0, gamma=None, a=None, rtol=1e-9):
    viol = kkt_violation(x, z, lam, c, lam1, gamma, a)
    tol = rtol * kkt_scale(z, lam, c, lam1) * max(1.0, np.sqrt(len(z)) / 10)
    assert viol <= tol, f"KKT violated by {viol:.3g} (tol {tol:.3g})"


def soft(v, t):
    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)


def signal(kind, n, rng):
    """Test signals, including exact ties and constant stretches."""
    if kind == "noise":
        return rng.normal(size=n)
    if kind == "blocks":
        levels = rng.normal(scale=2.0, size=max(1, n // 7 + 1))
        return np.repeat(levels, 7)[:n] + 0.3 * rng.normal(size=n)
    if kind == "ints":   # many exact ties
        return rng.integers(-2, 3, size=n).astype(float)
    if kind == "constant":
        return np.full(n, 1.25)
    if kind == "ramp":
        return np.linspace(-3, 3, n) + 0.5 * rng.normal(size=n)
    if kind == "spikes":
        y = np.zeros(n)
        y[rng.random(n) < 0.05] = 10.0 * rng.choice([-1, 1])
        if n:
            y[-1] = -7.0
        return y
    raise ValueError(kind)


KINDS = ["noise", "blocks", "ints", "constant", "ramp", "spikes"]
SIZES = [1, 2, 3, 5, 17, 100, 1000, 10000]


# ---------------------------------------------------------------------------
# unweighted: Condat's direct algorithm
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", KINDS)
def test_condat_certified(n, kind):
    rng = np.random.default_rng(n * 31 + KINDS.index(kind))
    y = signal(kind, n, rng)
    for lam in [0.0, 0.01, 0.3, 1.0, 4.0, 1e3]:
        x = fused_lasso(y, lam)
        assert x.shape == y.shape
        assert_certified(x, y, lam)


def test_condat_matches_dp_on_many_small_signals():
    rng = np.random.default_rng(0)
    for trial in range(1500):
        n = int(rng.integers(1, 40))
        y = (rng.integers(-3, 4, size=n).astype(float) if trial % 2
             else np.round(rng.normal(size=n), 2))
        lam = float(rng.choice([0.05, 0.25, 0.5, 1.0, 1.5, 2.0, 10.0]))
        x = fused_lasso(y, lam)
        assert_certified(x, y, lam)
        np.testing.assert_allclose(x, fused_lasso_weighted(y, lam), rtol=0,
                                   atol=1e-12 * kkt_scale(y, lam))


@pytest.mark.parametrize("y, lam", [
    ([0.0, 0.0, 0.0, 10.0], 1.0),          # jump at the very end
    ([10.0, 0.0, 0.0, 0.0], 1.0),          # jump at the very start
    ([0.0, 0.0, 0.0, -10.0], 1.0),
    ([0.0, 2.0], 1.0),                     # exactly at the fusion threshold
    ([0.0, 2.0], 1.0 - 1e-15),
    ([0.0, 2.0], 1.0 + 1e-15),
    ([1.0, -1.0] * 20, 0.5),               # alternating
    ([1.0, -1.0] * 20 + [5.0], 0.5),
    ([0.0] * 30 + [1.0], 0.1),             # end restarts (the 2013 corner case)
    ([0.0] * 30 + [-1.0], 0.1),
    ([0.0] * 10 + [3.0] + [0.0] * 10 + [-3.0], 0.4),
    ([3.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.0, 3.0], 0.7),
    ([0.0, 1.0, 3.0, 6.0, 10.0, 15.0], 1.0),   # convex ramp
    ([2.0, 0.0, 1.0, 0.0, 2.0], 1.0),
    ([5.0, 5.0, 5.0, 5.0], 100.0),          # constant
    ([1e8, 1e8 + 1.0, 1e8], 0.25),          # large offset
])
def test_condat_corner_cases(y, lam):
    y = np.asarray(y, float)
    x = fused_lasso(y, lam)
    assert_certified(x, y, lam)
    np.testing.assert_allclose(x, fused_lasso_weighted(y, lam), rtol=1e-13,
                               atol=1e-12 * kkt_scale(y, lam))


def test_condat_two_points_closed_form():
    rng = np.random.default_rng(1)
    for _ in range(200):
        y = rng.normal(size=2)
        lam = float(rng.uniform(0, 1.5))
        d = y[1] - y[0]
        if abs(d) <= 2 * lam:
            expect = np.full(2, y.mean())
        else:
            expect = y + lam * np.sign(d) * np.array([1.0, -1.0])
        np.testing.assert_allclose(fused_lasso(y, lam), expect, atol=1e-14)


@pytest.mark.parametrize("kind", ["noise", "ints", "ramp", "spikes"])
def test_condat_hand_over_to_dp_at_any_point(kind):
    """The step budget may run out anywhere: the result must not change."""
    rng = np.random.default_rng(2)
    for trial in range(150):
        n = int(rng.integers(2, 60))
        y = signal(kind, n, rng)
        lam = float(rng.choice([0.1, 0.5, 1.0, 3.0, 30.0]))
        full, steps, handed = fl._condat_with_budget(y, lam)
        assert not handed
        for slack in sorted({0, 1, 2, int(rng.integers(0, steps)), steps - 1}):
            if slack >= steps:
                continue
            x, _, handed = fl._condat_with_budget(y, lam, 0, slack)
            assert handed
            assert_certified(x, y, lam)
            np.testing.assert_allclose(x, full, rtol=0,
                                       atol=1e-12 * kkt_scale(y, lam))


def test_condat_step_budget():
    """Typical signals stay within the budget; heavily fused smooth ones
    (which make the direct algorithm rescan) are handed to the programme."""
    rng = np.random.default_rng(3)
    n = 20000
    for kind in ["noise", "blocks", "ints"]:
        y = signal(kind, n, rng)
        for lam in [0.01, 0.1, 1.0, 10.0]:
            _, steps, handed = fl._condat_with_budget(y, lam, 4, 256)
            assert not handed and steps <= 2.5 * n
    y = np.linspace(0, 10, n) + rng.normal(size=n)
    x, steps, handed = fl._condat_with_budget(y, 1e4, 4, 256)
    assert handed and steps <= 4 * n + 256
    assert_certified(x, y, 1e4)
    np.testing.assert_allclose(fused_lasso(y, 1e4), x, atol=1e-9)


def test_condat_without_workspace():
    rng = np.random.default_rng(4)
    y = np.linspace(0, 10, 3000) + rng.normal(size=3000)
    status, x = fl._call_c("condat", y, 1e4, null_work=True)
    assert status == 0
    assert_certified(x, y, 1e4)


# ---------------------------------------------------------------------------
# weighted: the dynamic programme
# ---------------------------------------------------------------------------

def weights_for(n, rng, zeros=True):
    c = rng.exponential(size=n)
    if zeros and n > 1:
        c[rng.random(n) < 0.2] = 0.0
    return c


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kind", ["noise", "blocks", "ints", "constant"])
def test_dp_weighted_certified(n, kind):
    rng = np.random.default_rng(n * 7 + 1)
    z = signal(kind, n, rng)
    c = weights_for(n, rng)
    for lam, lam1 in [(0.0, 0.0), (0.2, 0.0), (1.0, 0.0), (0.2, 0.3),
                      (1.0, 1.5), (50.0, 0.1), (0.0, 0.5)]:
        x = fused_lasso_weighted(z, lam, weights=c, lam1=lam1)
        assert_certified(x, z, lam, c, lam1)


# where the MCP kinks live: the sorted array only, the heaps from the start,
# or a move from one to the other once a few kinks are live
KINK_MODES = {"sorted": 10**9, "heap": 0, "switch": 4}


@pytest.mark.parametrize("mode", list(KINK_MODES))
@pytest.mark.parametrize("n", SIZES)
def test_dp_mcp_certified(n, mode):
    previous = fl._set_sorted_kinks_max_live(KINK_MODES[mode])
    try:
        rng = np.random.default_rng(n * 13 + 5)
        z = 2.0 * signal("blocks", n, rng)
        c = weights_for(n, rng)
        for gamma in [1.0, 1.2, 3.0, 20.0]:
            # curvature up to c * gamma (gamma == 1 with a == c: the loss is
            # flat between 0 and the kink, the degenerate convex case)
            a = c * gamma * rng.choice([0.0, 0.5, 1.0], size=n)
            for lam, lam1 in [(0.0, 0.7), (0.3, 0.5), (1.0, 1.0), (5.0, 0.2)]:
                x = fused_lasso_weighted(z, lam, weights=c, lam1=lam1,
                                         gamma=gamma, curvature=a)
                assert_certified(x, z, lam, c, lam1, gamma, a)
    finally:
        fl._set_sorted_kinks_max_live(previous)


def test_dp_kink_modes_agree():
    rng = np.random.default_rng(6)
    previous = fl._set_sorted_kinks_max_live(0)
    try:
        for trial in range(300):
            n = int(rng.integers(1, 80))
            z = np.round(rng.normal(scale=2, size=n), 1)
            c = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
            gamma = float(rng.choice([1.0, 2.0, 4.0]))
            a = c * gamma * rng.uniform(0, 1, size=n)
            args = (z, float(rng.choice([0.1, 0.5, 2.0, 20.0])))
            kw = dict(weights=c, lam1=float(rng.choice([0.2, 1.0])), gamma=gamma,
                      curvature=a)
            results = []
            for limit in KINK_MODES.values():
                fl._set_sorted_kinks_max_live(limit)
                results.append(fused_lasso_weighted(*args, **kw))
            for x in results[1:]:
                np.testing.assert_array_equal(x, results[0])
    finally:
        fl._set_sorted_kinks_max_live(previous)


def test_dp_separable_closed_forms():
    rng = np.random.default_rng(7)
    n = 500
    z = 3.0 * rng.normal(size=n)
    c = weights_for(n, rng)
    lam1 = 0.8
    # plain and L1
    np.testing.assert_allclose(fused_lasso_weighted(z, 0.0, weights=c),
                               np.where(c > 0, z, 0.0), atol=0)
    safe_c = np.where(c > 0, c, 1.0)
    np.testing.assert_allclose(fused_lasso_weighted(z, 0.0, c, lam1=lam1),
                               np.where(c > 0, soft(z, lam1 / safe_c), 0.0),
                               atol=1e-15)
    # MCP, textbook firm thresholding with concavity gamma / a
    gamma = 3.0
    a = c * rng.uniform(0, 1, size=n)
    x = fused_lasso_weighted(z, 0.0, c, lam1=lam1, gamma=gamma, curvature=a)
    knot = np.where(a > 0, gamma * lam1 / np.where(a > 0, a, 1), np.inf)
    firm = np.where(np.abs(z) > knot, z,
                    soft(c * z, lam1) / np.where(c > 0, c - a / gamma, 1.0))
    np.testing.assert_allclose(x, np.where(c > 0, firm, 0.0), atol=1e-12)
    assert_certified(x, z, 0.0, c, lam1, gamma, a)


def test_dp_zero_weights():
    # no data at all: every constant vector is optimal; 0 is chosen
    z = np.array([3.0, -1.0, 2.0])
    np.testing.assert_array_equal(
        fused_lasso_weighted(z, 1.0, weights=np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(
        fused_lasso_weighted(z, 1.0, weights=np.zeros(3), lam1=0.5), np.zeros(3))
    # data only at the ends: the middle can sit anywhere between them
    c = np.array([1.0, 0.0, 0.0, 0.0, 1.0])
    z = np.array([4.0, 9.0, 9.0, 9.0, -4.0])
    x = fused_lasso_weighted(z, 1.0, weights=c)
    assert_certified(x, z, 1.0, c)
    np.testing.assert_allclose(x[[0, 4]], [3.0, -3.0], atol=1e-14)
    assert np.all(np.diff(x) <= 0)   # monotone between the two data points
    # a zero-weight element next to data takes the neighbour's value
    x = fused_lasso_weighted([1.0, 5.0], 0.1, weights=[1.0, 0.0])
    np.testing.assert_allclose(x, [1.0, 1.0])


def test_dp_large_lambda_gives_weighted_mean():
    rng = np.random.default_rng(8)
    n = 300
    z = rng.normal(size=n) + 5.0
    c = rng.uniform(0.1, 3.0, size=n)
    mean = np.sum(c * z) / np.sum(c)
    x = fused_lasso_weighted(z, 1e6, weights=c)
    np.testing.assert_allclose(x, mean, rtol=1e-9)
    # with L1: the mean shrunk as one group
    lam1 = 0.5
    x = fused_lasso_weighted(z, 1e6, weights=c, lam1=lam1)
    np.testing.assert_allclose(x, soft(np.sum(c * z), lam1 * n) / np.sum(c),
                               rtol=1e-9)
    np.testing.assert_allclose(fused_lasso(z, 1e6), z.mean(), rtol=1e-9)


def test_constant_signals():
    for n in [1, 2, 10, 1000]:
        y = np.full(n, -2.5)
        for lam in [0.0, 0.1, 100.0]:
            # (exact up to the rounding of lam-sized intermediate sums)
            np.testing.assert_allclose(fused_lasso(y, lam), y, rtol=1e-13)
            np.testing.assert_allclose(fused_lasso_weighted(y, lam), y, rtol=1e-12)
            np.testing.assert_allclose(
                fused_lasso_weighted(y, lam, np.full(n, 2.0), lam1=1.0),
                np.full(n, -2.0), rtol=1e-12)


def test_extreme_scales():
    rng = np.random.default_rng(9)
    n = 2000
    z = 1e6 * signal("blocks", n, rng)
    c = 10.0 ** rng.uniform(-6, 6, size=n)
    for lam in [1e-3, 1e3, 1e9]:
        x = fused_lasso_weighted(z, lam, weights=c, lam1=1e2)
        assert_certified(x, z, lam, c, 1e2)
        x = fused_lasso(z, lam)
        assert_certified(x, z, lam)


@pytest.mark.parametrize("n", [1, 2])
def test_mcp_against_grid_search(n):
    """Independent check of the MCP pieces: dense grid, then a finer one."""
    rng = np.random.default_rng(10 + n)
    for trial in range(100):
        z = rng.normal(scale=2, size=n)
        c = rng.uniform(0.2, 2.0, size=n)
        gamma = float(rng.choice([1.5, 3.0]))
        a = c * gamma * rng.uniform(0.3, 1.0, size=n)
        lam, lam1 = float(rng.uniform(0, 1)), float(rng.uniform(0, 1.5))
        x = fused_lasso_weighted(z, lam, c, lam1, gamma, a)
        f = lambda pts: objective(pts, z, lam, c, lam1, gamma, a)
        centre, width = np.zeros(n), 6.0
        for _ in range(4):
            axes = [np.linspace(m - width, m + width, 101) for m in centre]
            pts = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, n)
            vals = f(pts)
            centre = pts[np.argmin(vals)]
            width /= 10.0
        assert objective(x, z, lam, c, lam1, gamma, a) <= vals.min() + 1e-12
        np.testing.assert_allclose(x, centre, atol=4 * width)


# ---------------------------------------------------------------------------
# cvxpy
# ---------------------------------------------------------------------------

def cvxpy_solve(z, lam, c=None, lam1=0.0, gamma=None, a=None):
    """Same problem in cvxpy. The MCP part is written in DCP form:
    c/2 x^2 - a/(2 gamma) huber-like = (c - a/gamma)/2 x^2
    + a/(2 gamma) pos(|x| - knot)^2, convex when c gamma >= a."""
    cp = pytest.importorskip("cvxpy")
    n = len(z)
    c = np.ones(n) if c is None else np.asarray(c, float)
    a, g, knot = _mcp_parts(n, lam1, gamma, a)
    x = cp.Variable(n)
    terms = [0.5 * cp.sum(cp.multiply(c - a / g, cp.square(x))) - (c * z) @ x]
    if lam1 > 0:
        terms.append(lam1 * cp.norm1(x))
        idx = np.flatnonzero(a > 0)
        if len(idx):
            terms.append(cp.sum(cp.multiply(
                a[idx] / (2 * g), cp.square(cp.pos(cp.abs(x[idx]) - knot[idx])))))
    if n > 1 and lam > 0:
        terms.append(lam * cp.norm1(cp.diff(x)))
    problem = cp.Problem(cp.Minimize(sum(terms)))
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                  tol_feas=1e-12, tol_ktratio=1e-10, max_iter=500)
    assert problem.status == "optimal"
    return np.asarray(x.value)


def polish(x_approx, z, lam, c=None, lam1=0.0, gamma=None, a=None, tol=1e-7):
    """Exact solution on the jump/sign pattern of an approximate one.

    Given which neighbours are fused, the sign of each jump and each
    segment's sign and MCP region, the optimality condition of a segment is
    linear in its value: solve it. Segments without data keep their value.
    """
    n = len(z)
    c = np.ones(n) if c is None else np.asarray(c, float)
    a, g, knot = _mcp_parts(n, lam1, gamma, a)
    cuts = np.flatnonzero(np.abs(np.diff(x_approx)) > tol) + 1
    starts, ends = np.r_[0, cuts], np.r_[cuts, n]
    values = np.array([x_approx[s:e].mean() for s, e in zip(starts, ends)])
    out = np.empty(n)
    for j, (s, e) in enumerate(zip(starts, ends)):
        v = values[j]
        left = np.sign(v - values[j - 1]) if j > 0 else 0.0
        right = np.sign(values[j + 1] - v) if j + 1 < len(values) else 0.0
        if lam1 > 0 and abs(v) <= tol:
            out[s:e] = 0.0
            continue
        slope = c[s:e].sum()
        rhs = np.sum(c[s:e] * z[s:e]) - lam * (left - right)
        if lam1 > 0:
            inside = np.abs(v) <= knot[s:e]
            slope -= np.sum(a[s:e][inside]) / g
            rhs -= lam1 * np.sign(v) * np.count_nonzero(inside)
        out[s:e] = rhs / slope if slope > 1e-12 else v
    return out


CVX_SIZES = [1, 2, 5, 30, 200, 1000, 3000]


@pytest.mark.parametrize("n", CVX_SIZES)
@pytest.mark.parametrize("problem", ["unweighted", "weighted", "l1", "mcp"])
def test_against_cvxpy(n, problem):
    rng = np.random.default_rng(n + 100 * len(problem))
    z = signal("blocks", n, rng)
    lam = 0.4
    kw = {}
    if problem == "unweighted":
        x = fused_lasso(z, lam)
    else:
        kw["c"] = rng.uniform(0.2, 3.0, size=n)
        if problem in ("l1", "mcp"):
            kw["lam1"] = 0.3
        if problem == "mcp":
            kw["gamma"] = 2.5
            kw["a"] = kw["c"] * 2.5 * rng.choice([0.0, 0.5, 0.9], size=n)
        x = fused_lasso_weighted(z, lam, weights=kw.get("c"),
                                 lam1=kw.get("lam1", 0.0), gamma=kw.get("gamma"),
                                 curvature=kw.get("a"))
    x_cvx = cvxpy_solve(z, lam, **kw)
    f_ours = objective(x, z, lam, **kw)
    f_cvx = objective(x_cvx, z, lam, **kw)
    scale = 1.0 + abs(f_cvx)
    assert f_ours <= f_cvx + 1e-10 * scale
    assert f_cvx - f_ours <= 1e-9 * scale
    # cvxpy's own solution is only accurate to ~1e-5 at these sizes
    # (objective gap ~1e-10, and the objective is quadratic near x*) ...
    err = np.max(np.abs(x - x_cvx))
    assert err <= 1e-4
    # ... so polish it: on cvxpy's jump pattern, solve the segment values
    # exactly. Jumps below the cut tolerance count as fused; a tolerance a
    # bit above cvxpy's error can only make this check fail, never pass, if
    # the pattern is misread.
    x_pol = polish(x_cvx, z, lam, tol=max(1e-7, 20 * err), **kw)
    np.testing.assert_allclose(x, x_pol, atol=1e-8, rtol=0)
    assert_certified(x, z, lam, kw.get("c"), kw.get("lam1", 0.0),
                     kw.get("gamma"), kw.get("a"))


def test_against_cvxpy_with_ties_and_zero_weights():
    rng = np.random.default_rng(11)
    for n in [8, 40, 400]:
        z = signal("ints", n, rng)
        c = rng.choice([0.0, 1.0, 2.0], size=n)
        c[0] = 1.0
        for lam, lam1 in [(0.5, 0.0), (0.5, 0.5), (1.5, 0.25)]:
            x = fused_lasso_weighted(z, lam, weights=c, lam1=lam1)
            x_cvx = cvxpy_solve(z, lam, c=c, lam1=lam1)
            f_ours = objective(x, z, lam, c, lam1)
            f_cvx = objective(x_cvx, z, lam, c, lam1)
            assert f_ours <= f_cvx + 1e-10 * (1 + abs(f_cvx))
            assert f_cvx - f_ours <= 1e-9 * (1 + abs(f_cvx))
            assert_certified(x, z, lam, c, lam1)


# ---------------------------------------------------------------------------
# FIRE supplement (Liu & Mazumder, KDD 2023), C.3-C.4: thresholding the fused solution
# ---------------------------------------------------------------------------

def test_soft_threshold_of_fused_is_exact_for_equal_weights():
    """C.3: with c_i = c for all i, soft-thresholding the fused-lasso
    solution at lam1 / c solves the L1 + TV problem exactly."""
    rng = np.random.default_rng(12)
    for trial in range(200):
        n = int(rng.integers(1, 200))
        z = signal(KINDS[trial % len(KINDS)], n, rng)
        cval = float(rng.uniform(0.2, 5.0))
        lam, lam1 = float(rng.uniform(0, 2)), float(rng.uniform(0, 2))
        c = np.full(n, cval)
        x_dp = fused_lasso_weighted(z, lam, weights=c, lam1=lam1)
        x_thr = soft(fused_lasso(z, lam / cval), lam1 / cval)
        np.testing.assert_allclose(x_thr, x_dp, rtol=0, atol=1e-11)
        assert_certified(x_thr, z, lam, c, lam1)


def test_soft_threshold_of_fused_is_not_exact_for_unequal_weights():
    """With unequal weights the same shortcut (per element, at lam1 / c_i)
    is wrong: the fused values order the elements, thresholding by
    different amounts breaks that order's subgradients."""
    z = np.array([1.0, 0.8])
    c = np.array([1.0, 10.0])
    lam, lam1 = 0.5, 0.5
    fused = fused_lasso_weighted(z, lam, weights=c)      # one fused segment
    np.testing.assert_allclose(fused, np.full(2, 9.0 / 11.0))
    shortcut = soft(fused, lam1 / c)                     # [0.318.., 0.768..]
    x_dp = fused_lasso_weighted(z, lam, weights=c, lam1=lam1)
    x_cvx = cvxpy_solve(z, lam, c=c, lam1=lam1)
    np.testing.assert_allclose(x_dp, np.full(2, 8.0 / 11.0), atol=1e-14)
    np.testing.assert_allclose(x_cvx, x_dp, atol=1e-7)
    assert kkt_violation(shortcut, z, lam, c, lam1) > 0.1
    assert_certified(x_dp, z, lam, c, lam1)
    f = lambda x: objective(x, z, lam, c, lam1)
    assert f(shortcut) > f(x_dp) + 1e-3
    # and at random: the shortcut is usually off
    rng = np.random.default_rng(13)
    off = 0
    for _ in range(50):
        n = 30
        z = signal("blocks", n, rng)
        c = rng.uniform(0.1, 5.0, size=n)
        x_dp = fused_lasso_weighted(z, 0.5, weights=c, lam1=0.5)
        shortcut = soft(fused_lasso_weighted(z, 0.5, weights=c), 0.5 / c)
        off += objective(shortcut, z, 0.5, c, 0.5) > objective(x_dp, z, 0.5, c, 0.5) + 1e-9
    assert off >= 40


def test_mcp_threshold_of_fused_for_equal_weights():
    """C.4: with equal weights and curvatures, MCP-thresholding the fused
    solution solves the MCP + TV problem (convex here: gamma > 1)."""
    rng = np.random.default_rng(14)
    for trial in range(200):
        n = int(rng.integers(1, 100))
        z = 2.0 * signal("blocks", n, rng)
        cval, gamma = float(rng.uniform(0.5, 3.0)), float(rng.uniform(1.1, 5.0))
        lam, lam1 = float(rng.uniform(0, 2)), float(rng.uniform(0, 2))
        c = np.full(n, cval)
        x_dp = fused_lasso_weighted(z, lam, weights=c, lam1=lam1, gamma=gamma)
        theta = fused_lasso(z, lam / cval)
        knot = gamma * lam1 / cval
        x_thr = np.where(np.abs(theta) > knot, theta,
                         gamma / (gamma - 1) * soft(theta, lam1 / cval))
        np.testing.assert_allclose(x_thr, x_dp, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------
# API and C-level contract
# ---------------------------------------------------------------------------

def test_empty_and_single():
    assert fused_lasso([], 1.0).shape == (0,)
    assert fused_lasso_weighted([], 1.0, lam1=1.0, gamma=3.0).shape == (0,)
    np.testing.assert_array_equal(fused_lasso([3.0], 5.0), [3.0])
    np.testing.assert_allclose(fused_lasso_weighted([3.0], 5.0, [2.0], lam1=1.0),
                               [2.5])
    np.testing.assert_allclose(
        fused_lasso_weighted([3.0], 5.0, [2.0], lam1=1.0, gamma=3.0), [3.0])
    np.testing.assert_array_equal(fused_lasso_weighted([3.0], 5.0, [0.0]), [0.0])


def test_accepts_lists_and_other_dtypes():
    y = [1, 5, 2, 2]
    np.testing.assert_allclose(fused_lasso(y, 0.5),
                               fused_lasso(np.array(y, np.float32), 0.5))
    x = fused_lasso(np.arange(10.0)[::2], 0.1)   # non-contiguous input
    assert_certified(x, np.arange(10.0)[::2], 0.1)


@pytest.mark.parametrize("call, match", [
    (lambda: fused_lasso([1.0, np.nan], 1.0), "NaN"),
    (lambda: fused_lasso([1.0, np.inf], 1.0), "NaN or infinite"),
    (lambda: fused_lasso([1.0, 2.0], -1.0), "lam"),
    (lambda: fused_lasso([1.0, 2.0], np.nan), "lam"),
    (lambda: fused_lasso([1.0, 2.0], np.inf), "lam"),
    (lambda: fused_lasso(np.ones((2, 2)), 1.0), "one-dimensional"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, weights=[1.0]), "length"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, weights=[1.0, -1.0]),
     "non-negative"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, weights=[1.0, np.nan]), "NaN"),
    (lambda: fused_lasso_weighted([1.0, 2.0], -0.5), "lam_tv"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, lam1=-1.0), "lam1"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, lam1=1.0, gamma=0.0), "gamma"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, lam1=1.0, gamma=np.nan), "gamma"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, curvature=[1.0, 1.0]),
     "curvature"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, lam1=1.0, gamma=3.0,
                                  curvature=[1.0]), "length"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, lam1=1.0, gamma=3.0,
                                  curvature=[1.0, -1.0]), "non-negative"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, weights=[1.0, 1.0], lam1=1.0,
                                  gamma=0.5), "non-convex"),
    (lambda: fused_lasso_weighted([1.0, 2.0], 1.0, weights=[0.0, 1.0], lam1=1.0,
                                  gamma=3.0, curvature=[0.1, 0.0]), "non-convex"),
])
def test_input_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_c_level_status_codes():
    z = [1.0, 2.0, 0.5]
    assert fl._call_c("condat", z, -1.0)[0] == -1
    assert fl._call_c("condat", z, np.nan)[0] == -1
    assert fl._call_c("condat", z, np.inf)[0] == -1
    assert fl._call_c("dp", z, 1.0, lam1=-1.0)[0] == -1
    assert fl._call_c("dp", z, np.nan)[0] == -1
    assert fl._call_c("dp_mcp", z, 1.0, [1.0] * 3, 1.0, 0.0, [1.0] * 3)[0] == -1
    # non-convex element (c * gamma < a) is refused, also without fusion
    for lam in [0.0, 1.0]:
        assert fl._call_c("dp_mcp", z, lam, [1.0] * 3, 1.0, 2.0, [1.0, 3.0, 1.0])[0] == -1
    # NULL weights = unit weights; NULL curvature = L1
    status, x = fl._call_c("dp_mcp", z, 0.3, None, 0.2, 3.0, None)
    assert status == 0
    np.testing.assert_allclose(x, fused_lasso_weighted(z, 0.3, lam1=0.2))
    assert fl._call_c("condat", [], 1.0)[0] == 0
    assert fl._call_c("dp_mcp", [], 1.0, [], 1.0, 3.0, [])[0] == 0


@pytest.mark.parametrize("solver", ["condat", "dp", "dp_mcp"])
def test_in_place(solver):
    rng = np.random.default_rng(15)
    n = 700
    z = signal("blocks", n, rng)
    c = weights_for(n, rng)
    a = c * rng.uniform(0, 1, size=n) * 3.0
    args = (solver, z, 0.7, None if solver == "condat" else c, 0.3, 3.0,
            a if solver == "dp_mcp" else None)
    status, x_copy = fl._call_c(*args)
    status_in, x_in = fl._call_c(*args, inplace=True)
    assert status == status_in == 0
    np.testing.assert_array_equal(x_in, x_copy)


def test_time_solver_helper_runs():
    rng = np.random.default_rng(16)
    z = rng.normal(size=64)
    rows = rng.normal(size=(5, 64))
    for solver, kw in [("condat", {}), ("dp", {"lam1": 0.1}),
                       ("dp_mcp", {"lam1": 0.1, "gamma": 3.0})]:
        assert fl._time_solver(solver, z, 0.5, repeat=3, **kw) >= 0.0
        assert fl._time_solver(solver, rows, 0.5, repeat=7, clock="wall",
                               weights=np.ones((5, 64)), **kw) >= 0.0


def test_c_level_nonfinite_data_terminates():
    """The C functions do not check data values: NaN or inf must still
    finish (any output) without crashing or looping."""
    rng = np.random.default_rng(17)
    for bad in [np.nan, np.inf, -np.inf]:
        for _ in range(50):
            n = int(rng.integers(1, 40))
            z = rng.normal(size=n)
            z[rng.random(n) < 0.3] = bad
            c = rng.uniform(0, 2, size=n)
            c_bad = c.copy()
            c_bad[rng.random(n) < 0.2] = abs(bad)
            for solver, kw in [
                    ("condat", {}),
                    ("dp", dict(weights=c, lam1=0.3)),
                    ("dp", dict(weights=c_bad)),
                    ("dp_mcp", dict(weights=c, lam1=0.3, gamma=3.0, curvature=c)),
                    ("dp_mcp", dict(weights=c_bad, lam1=0.3, gamma=3.0,
                                    curvature=c))]:
                status, _ = fl._call_c(solver, z, 0.5, **kw)
                assert status in (0, -1)


@pytest.mark.parametrize("mode", list(KINK_MODES))
def test_c_level_workspace_bounds(mode):
    """The solvers stay inside the documented workspace sizes (the hook
    surrounds workspace and output with guard zones it checks), on every
    path: direct algorithm, its hand-over, and each kink storage."""
    previous = fl._set_sorted_kinks_max_live(KINK_MODES[mode])
    try:
        rng = np.random.default_rng(18)
        cases = [(n, kind) for n in [1, 2, 3, 8, 64, 700] for kind in KINDS]
        for n, kind in cases:
            z = signal(kind, n, rng)
            c = weights_for(n, rng)
            a = c * 3.0 * rng.choice([0.0, 0.5, 1.0], size=n)
            for lam in [0.0, 0.3, 5.0]:
                for lam1 in [0.0, 0.4]:
                    assert fl._call_c("condat", z, lam)[0] == 0
                    assert fl._call_c("dp", z, lam, c, lam1)[0] == 0
                    assert fl._call_c("dp_mcp", z, lam, c, lam1, 3.0, a)[0] == 0
        # heavily fused ramp: the direct algorithm hands over to the programme
        z = np.linspace(0, 10, 5000) + rng.normal(size=5000)
        status, x = fl._call_c("condat", z, 300.0)
        assert status == 0
        assert fl._condat_with_budget(z, 300.0, 4, 256)[2]
        assert_certified(x, z, 300.0)
    finally:
        fl._set_sorted_kinks_max_live(previous)
