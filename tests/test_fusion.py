"""Fusion (L1 / MCP + fusion within trees) and group-L0 over trees.

References: cvxpy for L1 + fusion and for each block of MCP + fusion (the
curvature-scaled MCP keeps each block problem convex); brute-force
enumeration of tree subsets for group-L0.
"""
import itertools

import numpy as np
import pytest

from conftest import forest_design
from firecy.penalties import L1, MCP, Fusion, GroupL0, L1Fusion, MCPFusion
from firecy.solver import BlockDesign, fire_path, group_l0_path, lambda_max, solve

cp = pytest.importorskip("cvxpy")


@pytest.fixture(scope="module")
def small_forest():
    table, values, ptr, X, y, rf = forest_design(n_samples=300, n_trees=12, max_depth=3, seed=3)
    return BlockDesign.from_leaf_table(table, values, ptr), y


def tv_blocks(w, ptr):
    return sum(cp.norm1(cp.diff(w[ptr[t]:ptr[t + 1]])) for t in range(len(ptr) - 1)
               if ptr[t + 1] - ptr[t] > 1)


def fused_objective(M, y, w, b, lam, ratio, ptr):
    r = y - b - M @ w
    tv = sum(np.abs(np.diff(w[ptr[t]:ptr[t + 1]])).sum() for t in range(len(ptr) - 1))
    return 0.5 * np.mean(r ** 2) + lam * np.abs(w).sum() + ratio * lam * tv


@pytest.mark.parametrize("frac,ratio", [(0.3, 0.5), (0.1, 0.5), (0.05, 2.0), (0.02, 0.1)])
def test_l1_fusion_matches_cvxpy(small_forest, frac, ratio):
    design, y = small_forest
    M, ptr = design.tocsc(), design.block_ptr
    lam = frac * lambda_max(design, y, L1Fusion(1.0, ratio))
    res = solve(design, y, L1Fusion(lam, ratio), tol=1e-10)
    assert res.converged
    w, b = cp.Variable(M.shape[1]), cp.Variable()
    prob = cp.Problem(cp.Minimize(
        0.5 * cp.sum_squares(y - b - M @ w) / len(y) + lam * cp.norm1(w)
        + ratio * lam * tv_blocks(w, ptr)))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    f_ref = fused_objective(M, y, w.value, b.value, lam, ratio, ptr)
    f = fused_objective(M, y, res.coef, res.intercept, lam, ratio, ptr)
    assert abs(res.objective - f) <= 1e-10 * f
    assert f <= f_ref * (1 + 1e-6)
    assert abs(f - f_ref) <= 1e-6 * f_ref


def test_l1_fusion_general_layout_nondiagonal_blocks():
    """Prox-gradient steps (equal steps: the thresholding shortcut) on a
    design whose blocks are not diagonal, against cvxpy."""
    rng = np.random.default_rng(0)
    M = rng.standard_normal((60, 12)) * (rng.random((60, 12)) < 0.4)
    ptr = np.array([0, 5, 9, 12])
    y = M @ rng.standard_normal(12) + rng.standard_normal(60)
    lam, ratio = 0.05, 1.0
    res = solve(M, y, L1Fusion(lam, ratio), block_ptr=ptr, tol=1e-11, max_iter=10**6)
    w, b = cp.Variable(12), cp.Variable()
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - b - M @ w) / 60 + lam * cp.norm1(w)
                           + ratio * lam * tv_blocks(w, ptr))).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    f_ref = fused_objective(M, y, w.value, b.value, lam, ratio, ptr)
    assert abs(res.objective - f_ref) <= 1e-6 * f_ref


def block_cvxpy_prox(z, a, lam, gamma, lam_tv):
    """argmin sum a_j/2 (x_j - z_j)^2 + MCP_j(x_j) + lam_tv TV(x), by cvxpy.

    MCP_j(x) = lam|x| - a x^2/(2 gamma) + a/(2 gamma) pos(|x| - gamma lam / a)^2,
    and a/2 (x - z)^2 - a x^2 / (2 gamma) is a convex quadratic for gamma > 1.
    """
    x = cp.Variable(len(z))
    knot = gamma * lam / a
    expr = (cp.sum(cp.multiply(a * (1 - 1 / gamma) / 2, cp.square(x)) - cp.multiply(a * z, x))
            + lam * cp.norm1(x)
            + cp.sum(cp.multiply(a / (2 * gamma), cp.square(cp.pos(cp.abs(x) - knot)))))
    if len(z) > 1:
        expr = expr + lam_tv * cp.norm1(cp.diff(x))
    cp.Problem(cp.Minimize(expr)).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return x.value


@pytest.mark.parametrize("gamma,ratio,frac", [(1.1, 0.5, 0.05), (3.0, 1.0, 0.1), (1.5, 0.1, 0.02)])
def test_mcp_fusion_is_blockwise_stationary(small_forest, gamma, ratio, frac):
    design, y = small_forest
    M, ptr = design.tocsc(), design.block_ptr
    lam = frac * lambda_max(design, y, MCPFusion(1.0, gamma, ratio))
    res = solve(design, y, MCPFusion(lam, gamma, ratio), tol=1e-10)
    assert res.converged and res.n_rules > 0
    a = np.asarray(M.multiply(M).mean(axis=0)).ravel()
    grad = -(M.T @ (y - res.intercept - M @ res.coef)) / len(y)
    # stationarity: every block is the (unique) minimiser of its convex block
    # problem given the others, checked by an independent solver
    for t in range(design.n_blocks):
        sl = slice(ptr[t], ptr[t + 1])
        z = res.coef[sl] - grad[sl] / a[sl]
        ref = block_cvxpy_prox(z, a[sl], lam, gamma, ratio * lam)
        np.testing.assert_allclose(res.coef[sl], ref, atol=1e-5)
    # intercept optimal
    assert abs(np.mean(y - res.intercept - M @ res.coef)) < 1e-9


def test_fusion_lambda_max(small_forest):
    design, y = small_forest
    for pen in (L1Fusion(1.0, 0.5), MCPFusion(1.0, 1.1, 2.0)):
        top = lambda_max(design, y, pen)
        assert top < lambda_max(design, y, L1())  # fusion helps keep zero
        pen.lam = top * 1.0001
        assert solve(design, y, pen).n_rules == 0
        pen.lam = top * 0.97
        assert solve(design, y, pen).n_rules > 0


def test_fusion_alone_has_no_finite_lambda_max(small_forest):
    design, y = small_forest
    assert lambda_max(design, y, Fusion(1.0)) == np.inf
    with pytest.raises(ValueError, match="infinite"):
        fire_path(design, y, Fusion())
    # the levels are unpenalised: an ill-conditioned problem, solved loosely
    res = solve(design, y, Fusion(0.05), tol=1e-5, max_iter=10**6)
    assert res.converged
    assert res.objective < 0.5 * np.var(y)


def test_fused_path_warm_equals_cold(small_forest):
    design, y = small_forest
    path = fire_path(design, y, L1Fusion(1.0, 0.5), n_lambdas=6, eps=0.02, tol=1e-10)
    for k in (2, 5):
        cold = solve(design, y, L1Fusion(path.lambdas[k], 0.5), tol=1e-10)
        np.testing.assert_allclose(path.objectives[k], cold.objective, rtol=1e-8)


def test_objective_monotone_with_fusion(small_forest):
    design, y = small_forest
    res = solve(design, y, MCPFusion(0.01, 1.1, 0.5), tol=1e-9, record_objective=True)
    tr = res.objective_trace
    assert np.all(np.diff(tr) <= 1e-10 * np.abs(tr[:-1]))


# -- group-L0 ------------------------------------------------------------------

def subset_objective(table, values, ptr, y, trees, inner_lam, lam0):
    """Best objective with only ``trees`` allowed (inner problem is convex)."""
    if not trees:
        return 0.5 * np.var(y)
    cols = np.concatenate([np.arange(ptr[t], ptr[t + 1]) for t in trees])
    sizes = [ptr[t + 1] - ptr[t] for t in trees]
    sub_ptr = np.r_[0, np.cumsum(sizes)]
    remap = np.full(ptr[-1], -1)
    remap[cols] = np.arange(cols.size)
    sub = BlockDesign.from_leaf_table(remap[table[:, trees]], values[cols], sub_ptr)
    res = solve(sub, y, L1(inner_lam), tol=1e-12)
    used = sum(np.any(res.coef[sub_ptr[k]:sub_ptr[k + 1]] != 0) for k in range(len(trees)))
    return res.objective + lam0 * used


@pytest.mark.parametrize("seed,lam0", [(0, 0.05), (1, 0.2), (2, 0.01)])
def test_group_l0_no_single_tree_switch_helps(seed, lam0):
    table, values, ptr, X, y, _ = forest_design(n_samples=150, n_trees=6, max_depth=2, seed=seed)
    design = BlockDesign.from_leaf_table(table, values, ptr)
    inner_lam = 0.01
    res = solve(design, y, GroupL0(L1(inner_lam), lam0), tol=1e-12, local_search=True)
    assert res.converged
    on = [t for t in range(6) if np.any(res.coef[ptr[t]:ptr[t + 1]] != 0)]
    f = subset_objective(table, values, ptr, y, on, inner_lam, lam0)
    np.testing.assert_allclose(res.objective, f, rtol=1e-8)
    for t in range(6):
        switched = sorted(set(on) ^ {t})
        assert subset_objective(table, values, ptr, y, switched, inner_lam, lam0) >= f * (1 - 1e-9)
    # brute force over all 64 subsets: the global optimum is a lower bound
    best = min(subset_objective(table, values, ptr, y, list(s), inner_lam, lam0)
               for k in range(7) for s in itertools.combinations(range(6), k))
    assert best <= f * (1 + 1e-9)


def test_group_l0_path(small_forest):
    design, y = small_forest
    path = group_l0_path(design, y, GroupL0(MCP(0.005, 1.5), 1.0), n_lam0s=8, eps=1e-3)
    assert path.n_rules[0] == 0
    ptr = design.block_ptr
    n_trees = [sum(np.any(c[ptr[t]:ptr[t + 1]] != 0) for t in range(design.n_blocks))
               for c in path.coefs]
    assert n_trees[-1] > 1
    # fewer trees as lam0 grows (allowing non-convex wiggle of one tree)
    assert all(n_trees[k] <= n_trees[k + 1] + 1 for k in range(len(n_trees) - 1))
    # just above lam0_max nothing enters; just below, a tree does
    above = solve(design, y, GroupL0(MCP(0.005, 1.5), path.lambda_max * 1.001))
    below = solve(design, y, GroupL0(MCP(0.005, 1.5), path.lambda_max * 0.99))
    assert above.n_rules == 0 and below.n_rules > 0


def test_group_l0_bad_input():
    with pytest.raises(ValueError, match="lam0 must be non-negative"):
        GroupL0(L1(0.1), -1.0)
    with pytest.raises(TypeError):
        GroupL0("l1", 1.0)
    with pytest.raises(ValueError, match="fusion must be non-negative"):
        L1Fusion(0.1, -0.5)
    with pytest.raises(ValueError, match="gamma > 1"):
        MCPFusion(0.1, 1.0, 0.5)


# -- fusion makes kept leaves share parents ----------------------------------

def test_fusion_shares_internal_nodes():
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    from firecy.ensembles import rule_ensemble_from_model

    X, y = make_friedman1(n_samples=600, noise=1.0, random_state=0)
    rf = RandomForestRegressor(n_estimators=40, max_depth=4, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)

    def nodes_at(penalty, n_rules):
        path = fire_path(design, y, penalty, n_lambdas=60, eps=1e-3)
        k = int(np.argmin(np.abs(path.n_rules - n_rules)))
        kept = np.flatnonzero(path.coefs[k])
        nodes = set()
        for j in kept:
            nodes.update(np.asarray(ens.node_paths[j]).tolist())
        return len(kept), len(nodes)

    for budget in (20, 40):
        r0, n0 = nodes_at(MCP(gamma=1.1), budget)
        r1, n1 = nodes_at(MCPFusion(gamma=1.1, fusion=2.0), budget)
        # compare per kept rule (the two paths rarely hit the same count)
        assert abs(r0 - r1) <= max(3, budget // 5)
        assert n1 / r1 < n0 / r0
