"""Plug-in penalties: the third-party example package, and the two penalties
on per-rule data firecy ships on its public header (LengthWeightedL1,
HierarchicalGroup), each against an independent reference."""
import importlib.util
import os
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Lasso

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import (
    L1, HierarchicalGroup, LengthWeightedL1, available_penalties, make_penalty)
from firecy.solver import BlockDesign, solve

# CI installs examples/firecy-plugin-example and sets this, so that the test
# fails there instead of skipping when the package is missing (.ci/run)
REQUIRE_EXAMPLE = os.environ.get("FIRECY_REQUIRE_PLUGIN_EXAMPLE") == "1"
EXAMPLE_INSTALLED = importlib.util.find_spec("firecy_plugin_example") is not None


@pytest.fixture(scope="module")
def forest():
    X, y = make_friedman1(n_samples=300, n_features=6, noise=0.5, random_state=0)
    # centred: the squared loss's running value cancels catastrophically for a
    # target with a large mean, which would blur the descent checks below
    y = y - y.mean()
    rf = RandomForestRegressor(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    return X, y, rf, ens, design


# -- the third-party example package ------------------------------------------

@pytest.mark.skipif(not (EXAMPLE_INSTALLED or REQUIRE_EXAMPLE),
                    reason="examples/firecy-plugin-example is not installed")
def test_example_package_is_found_by_name_and_matches_builtin_l1(forest):
    X, y, rf, ens, design = forest
    assert "example_l1" in available_penalties()
    pen = make_penalty("example_l1", lam=0.05)
    assert type(pen).__module__ == "firecy_plugin_example._l1"
    a = solve(design, y, L1(0.05), tol=1e-12)
    b = solve(design, y, pen, tol=1e-12)
    np.testing.assert_allclose(b.coef, a.coef, rtol=0, atol=1e-10)
    assert abs(b.objective - a.objective) <= 1e-12 * a.objective
    # by name in the estimator: the same path, the same selection (fusion is
    # a parameter of the built-in penalties only: a registered one ignores it)
    ref = FIRERegressor(rf, penalty="l1", fusion=0.0, max_rules=15, random_state=0,
                        linear_terms=False).fit(X, y)
    est = FIRERegressor(rf, penalty="example_l1", max_rules=15, random_state=0,
                        linear_terms=False).fit(X, y)
    assert est.lambda_ == ref.lambda_
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(est.predict(X), ref.predict(X), rtol=0, atol=1e-9)


# -- rule-length-weighted L1 ----------------------------------------------------

def test_length_weighted_l1_is_a_weighted_lasso(forest):
    """lam * sum_j c_j |w_j| is the lasso on columns M_j / c_j (w'_j = c_j w_j)."""
    X, y, rf, ens, design = forest
    pen = LengthWeightedL1.from_ensemble(ens, lam=0.02, base=1.5)
    lengths = np.array([len(r) for r in ens.rules])
    assert np.all(pen.lengths <= lengths) and np.all(pen.lengths >= 1)
    c = 1.5 ** pen.lengths
    np.testing.assert_allclose(pen.weights, c)
    res = solve(design, y, pen, tol=1e-12)
    assert res.converged
    M = design.tocsc().toarray()
    lasso = Lasso(alpha=0.02, tol=1e-14, max_iter=10**6).fit(M / c, y)
    np.testing.assert_allclose(res.coef, lasso.coef_ / c, rtol=0, atol=1e-6)
    assert np.count_nonzero(res.coef) == np.count_nonzero(lasso.coef_)


def test_length_weighted_l1_by_name_reads_the_ensemble(forest):
    X, y, rf, ens, design = forest
    est = FIRERegressor(rf, penalty="length_l1", lam=0.02, random_state=0,
                        linear_terms=False).fit(X, y)
    assert isinstance(est.penalty_, LengthWeightedL1)
    np.testing.assert_array_equal(est.penalty_.lengths, LengthWeightedL1.from_ensemble(
        ens).lengths)
    direct = solve(design, y - ens.baseline(X), LengthWeightedL1.from_ensemble(ens, 0.02),
                   tol=1e-6)
    np.testing.assert_allclose(est.coef_, direct.coef, atol=1e-6)
    # base = 1 is the lasso
    same = solve(design, y, LengthWeightedL1.from_ensemble(ens, 0.02, base=1.0), tol=1e-12)
    np.testing.assert_allclose(same.coef, solve(design, y, L1(0.02), tol=1e-12).coef,
                               atol=1e-12)


def test_unbound_or_mismatched_penalties_are_refused(forest):
    X, y, rf, ens, design = forest
    with pytest.raises(ValueError, match="LengthWeightedL1 has no rule lengths"):
        solve(design, y, LengthWeightedL1(0.1))
    with pytest.raises(ValueError, match="has 3 rule lengths, the design has"):
        solve(design, y, LengthWeightedL1(0.1, lengths=[1, 2, 3]))
    with pytest.raises(ValueError, match="HierarchicalGroup has no tree structure"):
        solve(design, y, HierarchicalGroup(0.1))
    one_tree = HierarchicalGroup(0.1, tree_groups=[[[0, 2, 0]]])
    with pytest.raises(ValueError, match="do not match the design's blocks"):
        solve(design, y, one_tree)
    with pytest.raises(ValueError, match="overlap without nesting"):
        HierarchicalGroup(0.1, tree_groups=[[[0, 3, 0], [2, 5, 1]]])
    with pytest.raises(ValueError, match=r"leaves \[2\] are in no group"):
        HierarchicalGroup(0.1, tree_groups=[[[0, 2, 0], [3, 4, 0]]])
    with pytest.raises(ValueError, match="has no block 3"):
        one_tree.value_of(np.ones(2), block=3)


# -- the hierarchical penalty -----------------------------------------------------

def random_tree(rng, max_depth, p_split=0.75):
    """Groups (start, end, depth) of a random binary tree's internal nodes."""
    groups, counter = [], [0]

    def grow(depth):
        if depth < max_depth and (depth == 0 or rng.random() < p_split):
            start = counter[0]
            grow(depth + 1)
            grow(depth + 1)
            groups.append((start, counter[0], depth))
        else:
            counter[0] += 1

    grow(0)
    return np.array(groups), counter[0]


def reference_prox(z, s, groups, lam_g):
    """argmin sum s/2 (x - z)^2 + sum_g lam_g ||x_g||: cvxpy (Clarabel) finds
    the zero groups, then scipy's trust-region Newton polishes the smooth
    problem on the others to machine precision (an interior-point solution
    alone is accurate to about 1e-6 here)."""
    cp = pytest.importorskip("cvxpy")
    n = z.size
    x = cp.Variable(n)
    obj = 0.5 * cp.sum(cp.multiply(s, cp.square(x - z)))
    obj = obj + sum(lg * cp.norm(x[a:b]) for (a, b, _), lg in zip(groups, lam_g))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
    xc = x.value
    alive = [np.linalg.norm(xc[a:b]) > 1e-6 for a, b, _ in groups]
    live = np.ones(n, bool)
    for (a, b, _), keep in zip(groups, alive):
        if not keep:
            live[a:b] = False
    idx = np.flatnonzero(live)
    act = [(a, b, lg) for (a, b, _), lg, keep in zip(groups, lam_g, alive) if keep]

    def parts(v):
        full = np.zeros(n)
        full[idx] = v
        return full

    def f(v):
        x = parts(v)
        return 0.5 * np.sum(s * (x - z) ** 2) + sum(lg * np.linalg.norm(x[a:b])
                                                    for a, b, lg in act)

    def grad(v):
        x = parts(v)
        g = s * (x - z)
        for a, b, lg in act:
            g[a:b] += lg * x[a:b] / np.linalg.norm(x[a:b])
        return g[idx]

    def hess(v):
        x = parts(v)
        H = np.diag(s)
        for a, b, lg in act:
            u = x[a:b]
            r = np.linalg.norm(u)
            H[a:b, a:b] += lg * (np.eye(b - a) / r - np.outer(u, u) / r ** 3)
        return H[np.ix_(idx, idx)]

    if idx.size == 0:
        return np.zeros(n)
    res = minimize(f, xc[idx], jac=grad, hess=hess, method="trust-exact",
                   options={"gtol": 1e-13, "maxiter": 500})
    return parts(res.x)


@pytest.mark.parametrize("steps", ["equal", "unequal", "with_zeros"])
def test_hierarchical_prox_matches_cvxpy_on_random_trees(steps):
    rng = np.random.default_rng({"equal": 0, "unequal": 1, "with_zeros": 2}[steps])
    for trial in range(15):
        groups, n = random_tree(rng, int(rng.integers(1, 6)))
        z = rng.standard_normal(n) * rng.uniform(0.5, 3.0)
        if steps == "equal":
            s = np.full(n, rng.uniform(0.2, 2.0))
        else:
            s = rng.uniform(0.2, 2.0, n)
            if steps == "with_zeros":
                s[rng.choice(n, max(1, n // 4), replace=False)] = 0.0
        lam, base = rng.uniform(0.05, 0.5), rng.uniform(1.0, 2.0)
        pen = HierarchicalGroup(lam, base=base, tree_groups=[groups])
        x = pen.prox_of(z, s)
        ref = reference_prox(z, s, groups, lam * base ** groups[:, 2])
        np.testing.assert_allclose(x, ref, rtol=0, atol=1e-8, err_msg=f"trial {trial}")
        # a prox point is stationary: 0 in s (x - z) + dP(x), so its block score is 0
        assert pen.block_score_of(x, s * (x - z)) <= 1e-20 * (1 + np.sum((s * z) ** 2))


def test_hierarchical_penalty_definition_and_subdifferential():
    groups = np.array([[0, 2, 2], [2, 3, 2], [0, 3, 1], [3, 5, 1], [0, 5, 0]])
    pen = HierarchicalGroup(0.3, base=1.7, tree_groups=[groups])
    rng = np.random.default_rng(3)
    for w in (rng.standard_normal(5), np.array([0.0, 0.0, 1.5, -0.5, 0.0]),
              np.array([0.4, 0.0, 0.0, 0.0, 0.0]), np.zeros(5)):
        expect = sum(0.3 * 1.7 ** d * np.linalg.norm(w[a:b]) for a, b, d in groups)
        assert pen.value_of(w) == pytest.approx(expect, rel=1e-14, abs=1e-300)
        lo, hi = pen.subdiff_of(w)
        h = 1e-7
        for j in range(5):
            e = np.zeros(5)
            e[j] = h
            d_plus = (pen.value_of(w + e) - pen.value_of(w)) / h
            d_minus = (pen.value_of(w - e) - pen.value_of(w)) / h
            assert hi[j] == pytest.approx(d_plus, abs=1e-5)
            assert lo[j] == pytest.approx(-d_minus, abs=1e-5)


def test_hierarchical_lambda_max_is_where_zero_becomes_stationary():
    rng = np.random.default_rng(4)
    for _ in range(10):
        groups, n = random_tree(rng, 4)
        grad = rng.standard_normal(n)
        pen = HierarchicalGroup(1.0, base=1.5, tree_groups=[groups])
        top = pen.lambda_max_of(grad)
        for lam, zero in ((top * (1 + 1e-9), True), (top * (1 - 1e-6), False)):
            pen.lam = lam
            # w = 0 is stationary iff the unit-step prox at -grad is 0
            assert np.all(pen.prox_of(-grad, 1.0) == 0) == zero
            assert (pen.block_score_of(np.zeros(n), grad) <= 1e-30) == zero


def test_hierarchical_solve_matches_cvxpy_and_every_update_descends(forest):
    """Tree blocks have unequal steps (a_j): the engine's block updates must
    still never raise F, and the solution must be the problem's minimiser."""
    cp = pytest.importorskip("cvxpy")
    X, y, rf, ens, design = forest
    pen = HierarchicalGroup.from_ensemble(ens, lam=0.05, base=1.5)
    steps = design.column_stats(np.full(len(y), 1 / len(y)))[1]
    assert np.ptp(steps) > 0           # unequal steps within blocks
    for strategy in ("greedy", "working_set"):
        res = solve(design, y, pen, tol=1e-10, record_objective=True, strategy=strategy)
        assert res.converged
        trace = res.objective_trace
        assert np.all(np.diff(trace) <= 1e-13 * np.abs(trace[:-1])), strategy
    M = design.tocsc().toarray()
    w, b = cp.Variable(M.shape[1]), cp.Variable()
    reg = 0
    for t, groups in enumerate(pen.tree_groups):
        lo = ens.block_ptr[t]
        for a, e, d in groups:
            reg = reg + 0.05 * 1.5 ** d * cp.norm(w[lo + a:lo + e])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(y - b - M @ w) / (2 * len(y)) + reg))
    problem.solve(solver=cp.CLARABEL)
    assert res.objective <= problem.value + 1e-9 * abs(problem.value)
    assert res.objective == pytest.approx(problem.value, rel=1e-7)
    # rules drop out subtree by subtree: a zero leaf lies in a group that is
    # zero as a whole (with L1 single leaves drop out)
    n_zero_leaves = 0
    for t, groups in enumerate(pen.tree_groups):
        wt = res.coef[ens.block_ptr[t]:ens.block_ptr[t + 1]]
        for k in np.flatnonzero(wt == 0):
            n_zero_leaves += 1
            assert any(a <= k < e and not np.any(wt[a:e]) for a, e, _ in groups), (t, k)
    assert 0 < n_zero_leaves < res.coef.size


def test_hierarchical_by_name_reads_each_tree(forest):
    X, y, rf, ens, design = forest
    est = FIRERegressor(rf, penalty="hierarchical", max_rules=10, random_state=0,
                        linear_terms=False).fit(X, y)
    assert isinstance(est.penalty_, HierarchicalGroup)
    assert len(est.penalty_.tree_groups) == ens.n_trees
    assert 0 < est.n_rules_ <= 10
    # the groups are the trees' internal nodes: each tree's root covers all its leaves
    for t, groups in enumerate(est.penalty_.tree_groups):
        size = ens.block_ptr[t + 1] - ens.block_ptr[t]
        root = groups[groups[:, 2] == 0]
        assert root.tolist() == [[0, size, 0]]
        assert len(groups) == size - 1 or size == 1     # binary trees: leaves - 1 nodes


# -- per-column data in a Python penalty -----------------------------------------

class PyWeightedL1:
    """A Python penalty that reads per-column weights through ``columns``."""

    is_separable = True

    def __init__(self, lam, weights):
        self.lam = lam
        self.weights = np.asarray(weights, dtype=float)

    def value(self, w, curvature, *, columns, block):
        return self.lam * np.sum(self.weights[columns] * np.abs(w))

    def prox(self, z, step, curvature, *, columns, block):
        t = self.lam * self.weights[columns] / np.where(step > 0, step, 1)
        return np.where(step > 0, np.sign(z) * np.maximum(np.abs(z) - t, 0), 0.0)

    def subdiff(self, w, curvature, *, columns, block):
        c = self.lam * self.weights[columns]
        return np.where(w == 0, -c, np.sign(w) * c), np.where(w == 0, c, np.sign(w) * c)

    def lambda_max(self, grad, curvature, *, columns, block):
        return np.max(np.abs(grad) / self.weights[columns])


def test_python_penalty_reads_columns_like_the_compiled_one(forest):
    X, y, rf, ens, design = forest
    comp = LengthWeightedL1.from_ensemble(ens, lam=0.02, base=1.5)
    a = solve(design, y, comp, tol=1e-10)
    b = solve(design, y, PyWeightedL1(0.02, comp.weights), tol=1e-10)
    np.testing.assert_allclose(b.coef, a.coef, atol=1e-8)


def test_length_weighted_l1_wrappers_check_columns():
    """The *_of wrappers pass any columns: a column without a weight is an
    error, never a read out of bounds."""
    pen = LengthWeightedL1(0.5, lengths=[1, 3])
    assert pen.value_of([1.0], columns=[1]) == pytest.approx(0.5 * 2.0 ** 3)
    for columns in ([10**9], [2]):
        with pytest.raises(ValueError, match="has 2 rule weights"):
            pen.value_of([1.0], columns=columns)
    with pytest.raises(ValueError, match="has 0 rule weights"):
        LengthWeightedL1(0.5).value_of([1.0, 2.0])
