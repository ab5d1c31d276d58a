"""The mixed design layout (tree blocks in a leaf table, then general blocks)
and BlockwisePenalty, against the general layout of the same matrix,
scikit-learn's Lasso and the penalties' stationarity conditions.

Objective (docs/objective.rst): F = 1/(2 n) ||y - b - M w||^2 + P(w) for the
squared loss, which is scikit-learn's Lasso objective with alpha = lam.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Lasso

from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import L1, MCP, BlockwisePenalty, GroupL0, L1Fusion, MCPFusion
from firecy.solver import BlockDesign, solve


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    n = 240
    X = rng.normal(size=(n, 4))
    y = 1.5 * X[:, 0] + np.sin(2 * X[:, 1]) + (X[:, 2] > 0.5) + 0.3 * rng.normal(size=n)
    rf = RandomForestRegressor(n_estimators=12, max_depth=3, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    tree = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    L = np.clip(X, -2.0, 2.0)
    L = (L - L.mean(axis=0)) / L.std(axis=0)
    mixed = tree.with_general_blocks(L, np.arange(L.shape[1] + 1))
    general = BlockDesign.from_matrix(mixed.tocsc(), mixed.block_ptr)
    return dict(X=X, y=y, tree=tree, L=L, mixed=mixed, general=general,
                T=tree.n_blocks, dense=mixed.tocsc().toarray())


def test_the_layouts_hold_the_same_matrix(problem):
    mixed, general, dense = problem["mixed"], problem["general"], problem["dense"]
    assert mixed.layout == "mixed" and not mixed.is_tree
    assert mixed.n_tree_blocks == problem["T"] and general.n_tree_blocks == 0
    assert mixed.n_blocks == problem["T"] + 4
    # the tree part keeps the leaf table it was given
    assert mixed.leaf_table is problem["tree"].leaf_table
    np.testing.assert_array_equal(dense[:, -4:], problem["L"])
    np.testing.assert_array_equal(dense, general.tocsc().toarray())
    w = np.random.default_rng(1).normal(size=mixed.n_columns)
    np.testing.assert_allclose(mixed.matvec(w), dense @ w, rtol=1e-12, atol=1e-12)
    s = np.random.default_rng(2).uniform(0.2, 3.0, mixed.n_samples)
    sums, curv = mixed.column_stats(s)
    np.testing.assert_allclose(sums, dense.T @ s, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(curv, (dense ** 2).T @ s, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mixed.block_lipschitz(s, curv),
                               general.block_lipschitz(s, general.column_stats(s)[1]),
                               rtol=1e-12)
    np.testing.assert_array_equal(mixed.block_is_diagonal, general.block_is_diagonal)


@pytest.mark.parametrize("blocks", [[0, 3, 5], [1, 4, 13, 15], [12, 14], [0, 15]])
def test_subset_blocks_keeps_the_columns(problem, blocks):
    mixed, dense = problem["mixed"], problem["dense"]
    sub, cols = mixed.subset_blocks(blocks)
    np.testing.assert_array_equal(sub.tocsc().toarray(), dense[:, cols])
    n_tree = sum(b < problem["T"] for b in blocks)
    assert sub.n_tree_blocks == n_tree
    assert sub.layout == ("general" if n_tree == 0 else
                          "tree" if n_tree == len(blocks) else "mixed")


def test_more_general_blocks_and_a_general_design(problem):
    mixed, general, dense = problem["mixed"], problem["general"], problem["dense"]
    extra = np.random.default_rng(3).normal(size=(mixed.n_samples, 2))
    both = mixed.with_general_blocks(extra, [0, 2])        # one block of two columns
    assert both.layout == "mixed" and both.n_blocks == mixed.n_blocks + 1
    np.testing.assert_array_equal(both.tocsc().toarray(), np.column_stack([dense, extra]))
    assert not both.block_is_diagonal[-1]
    again = general.with_general_blocks(extra, [0, 2])
    assert again.layout == "general"
    np.testing.assert_array_equal(again.tocsc().toarray(), both.tocsc().toarray())
    with pytest.raises(ValueError, match="rows"):
        mixed.with_general_blocks(extra[:-1], [0, 2])


def _penalties(T):
    return {
        "l1": BlockwisePenalty(L1(0.02), L1(0.02), T),
        "mcp": BlockwisePenalty(MCP(0.05, 3.0), MCP(0.05, 3.0), T),
        "l1_fusion": BlockwisePenalty(L1Fusion(0.02, 0.5), L1(0.02), T),
        "mcp_fusion": BlockwisePenalty(MCPFusion(0.05, 3.0, 0.5), MCP(0.05, 3.0), T),
    }


@pytest.mark.parametrize("strategy", ["working_set", "greedy"])
@pytest.mark.parametrize("name", ["l1", "mcp", "l1_fusion", "mcp_fusion"])
@pytest.mark.parametrize("datafit", ["quadratic", "logistic"])
def test_mixed_and_general_layouts_give_the_same_fit(problem, name, datafit, strategy):
    y = problem["y"] if datafit == "quadratic" else (problem["y"] > 1.0).astype(float)
    pen = _penalties(problem["T"])[name]
    tol = 1e-10 if strategy == "working_set" else 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = solve(problem["mixed"], y, pen, datafit=datafit, tol=tol, strategy=strategy,
                  max_iter=10**6)
        b = solve(problem["general"], y, pen, datafit=datafit, tol=tol, strategy=strategy,
                  max_iter=10**6)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-8)
    np.testing.assert_allclose(problem["dense"] @ a.coef + a.intercept,
                               problem["dense"] @ b.coef + b.intercept, atol=1e-4)
    assert np.any(a.coef[-4:] != 0)   # the linear columns are in the model


@pytest.mark.parametrize("name", ["l1", "mcp"])
def test_mixed_and_general_layouts_give_the_same_poisson_fit(problem, name):
    from firecy.datafits._poisson_loss import PoissonLoss
    from firecy.solver._irls import IRLSProblem, irls_solve

    rng = np.random.default_rng(4)
    counts = rng.poisson(np.exp(0.4 * problem["X"][:, 0] + 0.3 * (problem["X"][:, 1] > 0)))
    s = np.ones(counts.size)
    pen = _penalties(problem["T"])[name]
    fits = []
    for design in (problem["mixed"], problem["general"]):
        prob = IRLSProblem(design, PoissonLoss(counts.astype(float), s), np.zeros(counts.size))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fits.append(irls_solve(prob, pen, tol=1e-10))
    a, b = fits
    assert a.converged and b.converged
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-8)
    assert np.any(a.coef[-4:] != 0)


def test_l1_on_the_combined_design_is_the_lasso(problem):
    # docs/objective.rst: 1/(2n) ||y - b - M w||^2 + lam ||w||_1, scikit-learn's
    # Lasso with alpha = lam (its intercept is unpenalised too)
    y, dense, T = problem["y"], problem["dense"], problem["T"]
    lam = 0.01
    res = solve(problem["mixed"], y, BlockwisePenalty(L1(lam), L1(lam), T), tol=1e-12)
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=10**6).fit(dense, y)
    f_ref = 0.5 * np.mean((y - ref.intercept_ - dense @ ref.coef_) ** 2) \
        + lam * np.abs(ref.coef_).sum()
    np.testing.assert_allclose(res.objective, f_ref, rtol=1e-6)
    # the solution is unique on the fitted values; the linear columns' weights
    # (full rank, not collinear with the leaves) are unique themselves
    np.testing.assert_allclose(dense @ res.coef + res.intercept, ref.predict(dense),
                               rtol=1e-6, atol=1e-6 * np.abs(y).max())
    np.testing.assert_allclose(res.coef[-4:], ref.coef_[-4:], rtol=1e-6, atol=1e-8)


def test_mcp_stationarity_on_the_linear_blocks(problem):
    y, dense, T = problem["y"], problem["dense"], problem["T"]
    lam, gamma = 0.03, 2.0
    pen = BlockwisePenalty(MCP(lam, gamma), MCP(lam, gamma), T)
    res = solve(problem["mixed"], y, pen, tol=1e-12)
    n = y.size
    grad = -dense.T @ (y - res.intercept - dense @ res.coef) / n
    curv = (dense ** 2).sum(axis=0) / n
    lin = np.arange(dense.shape[1] - 4, dense.shape[1])
    assert np.count_nonzero(res.coef[lin]) >= 2
    for j, t in zip(lin, range(T, T + 4)):
        w, g, a = res.coef[j], grad[j], curv[j]
        if w == 0.0:
            assert abs(g) <= lam + 1e-8
        elif abs(w) <= gamma * lam / a:
            # g + lam sign(w) - a w / gamma = 0 (the curvature-scaled MCP)
            assert abs(g + lam * np.sign(w) - a * w / gamma) <= 1e-8
        else:
            assert abs(g) <= 1e-8
        # the penalty's own direction vector agrees (block t: the linear penalty)
        d = pen.direction_of([w], [g], curvature=[a], columns=[j], block=t)
        assert d[0] <= 1e-8


def test_group_l0_rules_and_linear_blocks(problem):
    y, dense, L, T = problem["y"], problem["dense"], problem["L"], problem["T"]
    lam = 0.01
    # a price no tree pays: only the linear terms enter, and they are the
    # lasso on the linear columns alone
    pen = BlockwisePenalty(GroupL0(L1(lam), lam0=1e6), L1(lam), T)
    assert pen.score_is_decrease
    res = solve(problem["mixed"], y, pen, tol=1e-12)
    assert not np.any(res.coef[:-4])
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=10**6).fit(L, y)
    np.testing.assert_allclose(res.coef[-4:], ref.coef_, rtol=1e-6, atol=1e-8)
    # a zero price: group-L0 is its inner L1, the whole design's lasso
    free = solve(problem["mixed"], y, BlockwisePenalty(GroupL0(L1(lam), lam0=0.0), L1(lam), T),
                 tol=1e-12)
    plain = solve(problem["mixed"], y, BlockwisePenalty(L1(lam), L1(lam), T), tol=1e-12)
    np.testing.assert_allclose(free.objective, plain.objective, rtol=1e-7)
    # a price in between: the objective the engine reports is the penalty's
    mid = BlockwisePenalty(GroupL0(L1(lam), lam0=2e-3), L1(lam), T)
    res = solve(problem["mixed"], y, mid, tol=1e-10)
    ptr = problem["mixed"].block_ptr
    trees = sum(np.any(res.coef[ptr[t]:ptr[t + 1]]) for t in range(T))
    f = (0.5 * np.mean((y - res.intercept - dense @ res.coef) ** 2)
         + lam * np.abs(res.coef).sum() + 2e-3 * trees)
    np.testing.assert_allclose(res.objective, f, rtol=1e-10)
    assert np.any(res.coef[-4:])


def test_blockwise_penalty_dispatches_and_moves_lam_together():
    pen = BlockwisePenalty(MCPFusion(0.5, 3.0, 1.0), L1(0.5), n_rule_blocks=1)
    w = np.array([1.0, 1.0, -2.0])
    # block 0: MCP + fusion; block 1: L1
    assert pen.value_of(w, curvature=1.0, block=0) == MCPFusion(0.5, 3.0, 1.0).value_of(
        w, curvature=1.0)
    assert pen.value_of(w, block=1) == pytest.approx(0.5 * 4.0)
    pen.lam = 0.25
    assert pen.rules.lam == 0.25 and pen.linear.lam == 0.25 and pen.lam == 0.25
    assert not pen.is_separable   # fusion is not
    assert BlockwisePenalty(L1(1.0), MCP(1.0, 2.0), 3).is_separable
    with pytest.raises(ValueError, match="separable"):
        BlockwisePenalty(L1(1.0), L1Fusion(1.0, 0.5), 1)
    restricted = pen.restrict_blocks([0, 2, 5])
    assert restricted.n_rule_blocks == 1
    import pickle

    again = pickle.loads(pickle.dumps(pen))
    assert again.n_rule_blocks == 1 and again.lam == 0.25


def test_a_design_of_general_blocks_only_still_solves(problem):
    # the general part alone (no tree block): the engine's general kernels
    L = problem["L"]
    design = BlockDesign.from_matrix(sp.csc_matrix(L), np.arange(5))
    res = solve(design, problem["y"], L1(0.01), tol=1e-12)
    ref = Lasso(alpha=0.01, tol=1e-14, max_iter=10**6).fit(L, problem["y"])
    np.testing.assert_allclose(res.coef, ref.coef_, rtol=1e-6, atol=1e-8)
