"""The greedy block CD engine against independent references.

Objective (firecy.solver._api): F = 1/(2 sum s) sum s_i (y_i - b - M w)^2 + P(w).
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from firecy.penalties import L1, MCP
from firecy.solver import BlockDesign, fire_path, lambda_max, solve

STRATEGIES = ["working_set", "greedy"]


def objective(M, y, w, b, lam, s=None):
    s = np.full(len(y), 1.0 / len(y)) if s is None else s / s.sum()
    r = y - b - M @ w
    return 0.5 * np.sum(s * r * r) + lam * np.abs(w).sum()


def gradient(M, y, w, b, s=None):
    s = np.full(len(y), 1.0 / len(y)) if s is None else s / s.sum()
    return -(M.T @ (s * (y - b - M @ w)))


def random_block_problem(seed, n=80, n_blocks=6, max_block=7, density=0.3):
    """A general design whose blocks are NOT diagonal (prox-gradient path)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_block + 1, n_blocks)
    M = sp.random(n, sizes.sum(), density=density, random_state=seed, format="csc")
    M.data = rng.standard_normal(M.nnz)
    w_true = np.zeros(sizes.sum())
    w_true[rng.choice(sizes.sum(), 4, replace=False)] = rng.standard_normal(4) * 3
    y = M @ w_true + 0.3 * rng.standard_normal(n) + 1.5
    return M, np.r_[0, np.cumsum(sizes)], y


def assert_l1_kkt(M, y, res, lam, s=None, atol=1e-6, intercept=True):
    g = gradient(M, y, res.coef, res.intercept, s)
    nz = res.coef != 0
    # nonzero coordinates: grad + lam * sign(w) = 0
    np.testing.assert_allclose(g[nz] + lam * np.sign(res.coef[nz]), 0, atol=atol)
    # zero coordinates: |grad| <= lam
    assert np.all(np.abs(g[~nz]) <= lam + atol)
    if intercept:  # weighted residuals sum to zero
        s = np.ones(len(y)) if s is None else s
        assert abs(np.sum(s * (y - res.intercept - M @ res.coef)) / s.sum()) < 1e-9


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("seed", range(4))
def test_l1_matches_sklearn_lasso_general_design(seed, strategy):
    M, block_ptr, y = random_block_problem(seed)
    lam = 0.05 * np.max(np.abs(M.T @ (y - y.mean()))) / len(y)
    res = solve(M, y, L1(lam), block_ptr=block_ptr, tol=1e-10, strategy=strategy)
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=100_000).fit(M.toarray(), y)
    f_ref = objective(M, y, ref.coef_, ref.intercept_, lam)
    f = objective(M, y, res.coef, res.intercept, lam)
    assert res.converged
    assert f <= f_ref * (1 + 1e-6)
    assert abs(res.objective - f) <= 1e-10 * f  # the reported objective is F
    assert_l1_kkt(M, y, res, lam)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("frac", [0.3, 0.05, 0.01])
def test_l1_matches_sklearn_lasso_forest(rf_design, frac, strategy):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    M = design.tocsc()
    lam = frac * lambda_max(design, y, L1())
    res = solve(design, y, L1(lam), tol=1e-10, strategy=strategy)
    ref = Lasso(alpha=lam, tol=1e-12, max_iter=200_000).fit(M, y)
    f_ref = objective(M, y, ref.coef_, ref.intercept_, lam)
    f = objective(M, y, res.coef, res.intercept, lam)
    assert f <= f_ref * (1 + 1e-6)
    assert abs(f - f_ref) <= 1e-6 * f_ref
    assert_l1_kkt(M, y, res, lam, atol=1e-7)


def test_sample_weights_match_sklearn(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    M = design.tocsc()
    s = np.random.default_rng(1).uniform(0, 3, len(y))
    s[:20] = 0.0
    lam = 0.05 * lambda_max(design, y, L1(), sample_weight=s)
    res = solve(design, y, L1(lam), sample_weight=s, tol=1e-10)
    ref = Lasso(alpha=lam, tol=1e-12, max_iter=200_000).fit(M, y, sample_weight=s)
    f_ref = objective(M, y, ref.coef_, ref.intercept_, lam, s)
    assert abs(res.objective - f_ref) <= 1e-6 * f_ref
    assert_l1_kkt(M, y, res, lam, s=s, atol=1e-7)


def test_integer_weights_equal_duplicated_rows(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    counts = np.random.default_rng(2).integers(0, 3, len(y))
    lam = 0.02
    a = solve(BlockDesign.from_leaf_table(table, values, block_ptr), y, L1(lam),
              sample_weight=counts, tol=1e-10)
    rows = np.repeat(np.arange(len(y)), counts)
    b = solve(BlockDesign.from_leaf_table(table[rows], values, block_ptr), y[rows],
              L1(lam), tol=1e-10)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-9)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-6)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("gamma", [1.1, 3.0])
def test_mcp_stationarity(rf_design, gamma, strategy):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    M = design.tocsc()
    lam = 0.03 * lambda_max(design, y, MCP(gamma=gamma))
    res = solve(design, y, MCP(lam, gamma), tol=1e-10, strategy=strategy)
    assert res.converged and res.n_rules > 0
    a = np.asarray(M.multiply(M).mean(axis=0)).ravel()  # curvature, unit weights
    g = gradient(M, y, res.coef, res.intercept)
    w = res.coef
    inside = (w != 0) & (np.abs(w) <= gamma * lam / a)
    beyond = np.abs(w) > gamma * lam / a
    np.testing.assert_allclose(
        g[inside] + lam * np.sign(w[inside]) - a[inside] * w[inside] / gamma, 0, atol=1e-7)
    np.testing.assert_allclose(g[beyond], 0, atol=1e-7)
    assert np.all(np.abs(g[w == 0]) <= lam + 1e-7)
    # and the value is the documented objective
    mcp = np.where(np.abs(w) <= gamma * lam / a,
                   lam * np.abs(w) - a * w ** 2 / (2 * gamma), gamma * lam ** 2 / (2 * a))
    r = y - res.intercept - M @ w
    np.testing.assert_allclose(res.objective, 0.5 * np.mean(r ** 2) + mcp.sum(), rtol=1e-10)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("penalty", [L1(0.01), MCP(0.01, 1.5)], ids=["l1", "mcp"])
def test_objective_never_increases(rf_design, penalty, strategy):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    tol = 1e-9 if strategy == "working_set" else 1e-5  # greedy alone is slow here
    res = solve(design, y, penalty, tol=tol, record_objective=True, strategy=strategy,
                max_iter=200_000)
    trace = res.objective_trace
    assert trace.size > 20   # (the active-set Newton steps need few)
    assert res.converged
    # the objective is kept incrementally: rounding noise only (1e-10 relative)
    assert np.all(np.diff(trace) <= 1e-10 * np.abs(trace[:-1]))


def test_nondiagonal_blocks_objective_never_increases():
    M, block_ptr, y = random_block_problem(7)
    design = BlockDesign.from_matrix(M, block_ptr)
    assert not design.block_is_diagonal.all()
    res = solve(design, y, MCP(0.05, 2.0), tol=1e-9, record_objective=True)
    assert np.all(np.diff(res.objective_trace) <= 1e-12 * np.abs(res.objective_trace[:-1]))


def test_tree_and_general_layouts_agree(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    tree = BlockDesign.from_leaf_table(table, values, block_ptr)
    general = BlockDesign.from_matrix(tree.tocsc(), block_ptr)
    assert general.block_is_diagonal.all()
    a = solve(tree, y, L1(0.02), tol=1e-10)
    b = solve(general, y, L1(0.02), tol=1e-10)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-12)
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-7)


@pytest.mark.parametrize("weights", ["ones", "equal", "varied"])
def test_column_stats_match_the_matrix(rf_design, weights):
    # the tree layout reads a column's weight off its row count when the
    # weights are all equal; checked against M^T s and (M * M)^T s, with a
    # leaf that no row of X reaches (an empty column)
    table, values, block_ptr, X, y, _ = rf_design
    values = np.r_[values, 0.7]
    block_ptr = np.r_[block_ptr[:-1], block_ptr[-1] + 1]
    tree = BlockDesign.from_leaf_table(table, values, block_ptr)
    M = tree.tocsc()
    assert M[:, -1].nnz == 0
    n = M.shape[0]
    s = {"ones": np.ones(n), "equal": np.full(n, 0.3),
         "varied": np.random.default_rng(0).uniform(0.1, 2.0, n)}[weights]
    sums, curv = tree.column_stats(s)
    np.testing.assert_allclose(sums, M.T @ s, rtol=1e-13, atol=0)
    np.testing.assert_allclose(curv, M.multiply(M).T @ s, rtol=1e-13, atol=0)
    assert sums[-1] == 0.0 and curv[-1] == 0.0


def test_column_stats_names_a_wrong_weight_length(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    tree = BlockDesign.from_leaf_table(table, values, block_ptr)
    with pytest.raises(ValueError, match="sample_weight has shape"):
        tree.column_stats(np.ones(tree.n_samples + 1))


def test_warm_started_path_equals_cold_solves(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    path = fire_path(design, y, L1(), n_lambdas=8, eps=1e-2, tol=1e-10)
    assert path.lambdas[0] == pytest.approx(path.lambda_max)
    assert path.n_rules[0] == 0 and path.n_rules[-1] > 0
    assert np.all(np.diff(path.lambdas) < 0)
    for k in [1, 4, 7]:
        cold = solve(design, y, L1(path.lambdas[k]), tol=1e-10)
        np.testing.assert_allclose(path.objectives[k], cold.objective, rtol=1e-9)
        np.testing.assert_allclose(path.coefs[k], cold.coef, atol=1e-6)
        np.testing.assert_allclose(path.intercepts[k], cold.intercept, atol=1e-6)


def test_lambda_max_is_the_zero_threshold(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    for pen in (L1(), MCP(gamma=2.0)):
        lmax = lambda_max(design, y, pen)
        pen.lam = lmax * 1.0001
        assert solve(design, y, pen).n_rules == 0
        pen.lam = lmax * 0.98
        assert solve(design, y, pen).n_rules > 0


def test_path_stops_at_rule_budget(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    path = fire_path(design, y, MCP(gamma=1.1), n_lambdas=40, max_rules=5)
    assert path.n_rules[-1] > 5
    assert np.all(path.n_rules[:-1] <= 5)
    assert len(path) < 40


def test_two_runs_identical(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    a = fire_path(design, y, MCP(gamma=1.5), n_lambdas=6)
    b = fire_path(design, y, MCP(gamma=1.5), n_lambdas=6)
    assert np.array_equal(a.coefs, b.coefs)
    assert np.array_equal(a.intercepts, b.intercepts)


def test_no_intercept(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    M = design.tocsc()
    res = solve(design, y, L1(0.05), fit_intercept=False, tol=1e-10)
    assert res.intercept == 0.0
    assert_l1_kkt(M, y, res, 0.05, atol=1e-7, intercept=False)
    ref = Lasso(alpha=0.05, fit_intercept=False, tol=1e-12, max_iter=1_000_000).fit(M, y)
    f_ref = objective(M, y, ref.coef_, 0.0, 0.05)
    assert res.objective <= f_ref * (1 + 1e-6)


def test_convergence_warning_when_max_iter_reached(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = solve(design, y, L1(0.001), max_iter=5, tol=1e-12)
    assert not res.converged


@pytest.mark.parametrize("penalty, strategy, active_set, named", [
    (L1(0.001), "working_set", True, "firecy: the active-set Newton solver did not"),
    (L1(0.001), "working_set", False, "firecy: working-set block CD did not"),
    (L1(0.001), "greedy", True, "firecy: greedy block CD did not"),
    # MCP: the active set may take the first step from w = 0 (where MCP is
    # L1-like), then coordinate descent takes over
    (MCP(0.001, 3.0), "working_set", True, "working-set block CD did not"),
])
def test_convergence_warning_names_the_solver_that_ran(rf_design, penalty, strategy,
                                                       active_set, named):
    # the squared loss with L1 runs the active-set solver, MCP coordinate
    # descent (docs/solver.rst); the warning must not blame the wrong one
    from firecy.solver._problem import Problem

    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    problem = Problem(design, y, None, True)
    problem.engine.use_active_set = active_set
    with pytest.warns(ConvergenceWarning) as record:
        res = problem.solve(penalty, np.zeros(design.n_columns), 1e-14, design.n_blocks,
                            strategy=strategy)
    assert not res.converged
    messages = [str(w.message) for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 1 and named in messages[0], messages


def test_converged_solve_is_silent(rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert solve(design, y, L1(0.01)).converged


# -- bad input ---------------------------------------------------------------

@pytest.fixture
def small():
    M, block_ptr, y = random_block_problem(0)
    return M, block_ptr, y


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y(small, bad):
    M, block_ptr, y = small
    y = y.copy()
    y[3] = bad
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        solve(M, y, L1(0.1), block_ptr=block_ptr)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_design(small, bad):
    M, block_ptr, y = small
    M = M.copy()
    M.data[0] = bad
    with pytest.raises(ValueError, match="design contains NaN or infinity"):
        solve(M, y, L1(0.1), block_ptr=block_ptr)
    table, values, ptr, *_ = forest_small()
    values = values.copy()
    values[2] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        BlockDesign.from_leaf_table(table, values, ptr)


def forest_small():
    from conftest import forest_design
    return forest_design(n_samples=60, n_trees=3, max_depth=2)


def test_sample_weight_wrong_length_or_negative(small):
    M, block_ptr, y = small
    with pytest.raises(ValueError, match="sample_weight has shape"):
        solve(M, y, L1(0.1), block_ptr=block_ptr, sample_weight=np.ones(len(y) - 1))
    s = np.ones(len(y))
    s[0] = -1
    with pytest.raises(ValueError, match="non-negative"):
        solve(M, y, L1(0.1), block_ptr=block_ptr, sample_weight=s)
    with pytest.raises(ValueError, match="sums to zero"):
        solve(M, y, L1(0.1), block_ptr=block_ptr, sample_weight=np.zeros(len(y)))


@pytest.mark.parametrize("ptr_edit", ["short", "long", "nonzero_start", "empty_block"])
def test_blocks_must_cover_columns(small, ptr_edit):
    M, block_ptr, y = small
    ptr = block_ptr.copy()
    if ptr_edit == "short":
        ptr[-1] -= 1
    elif ptr_edit == "long":
        ptr[-1] += 1
    elif ptr_edit == "nonzero_start":
        ptr[0] = 1
    else:
        ptr = np.r_[ptr[:2], ptr[1:]]
    with pytest.raises(ValueError, match="block"):
        solve(M, y, L1(0.1), block_ptr=ptr)


def test_leaf_table_outside_block():
    table, values, ptr, X, y, _ = forest_small()
    table = table.copy()
    table[0, 1] = 0  # column 0 belongs to tree 0
    with pytest.raises(ValueError, match="outside its tree's block"):
        BlockDesign.from_leaf_table(table, values, ptr)


def test_negative_lambda(small):
    M, block_ptr, y = small
    with pytest.raises(ValueError, match="non-negative"):
        L1(-0.1)
    with pytest.raises(ValueError, match="non-negative"):
        MCP(-1.0, 3.0)
    pen = L1(0.1)
    pen.lam = -1.0
    with pytest.raises(ValueError, match="non-negative"):
        solve(M, y, pen, block_ptr=block_ptr)


@pytest.mark.parametrize("gamma", [1.0, 0.5, -2.0, np.nan])
def test_gamma_must_exceed_one(gamma):
    with pytest.raises(ValueError, match="gamma > 1"):
        MCP(0.1, gamma)


def test_empty_design():
    with pytest.raises(ValueError, match="empty"):
        solve(np.zeros((0, 3)), np.zeros(0), L1(0.1), block_ptr=[0, 3])
    with pytest.raises(ValueError, match="empty"):
        solve(np.zeros((5, 0)), np.zeros(5), L1(0.1), block_ptr=[0, 0])
    with pytest.raises(ValueError, match="empty"):
        BlockDesign.from_leaf_table(np.zeros((0, 1), dtype=np.int32), [1.0], [0, 1])


def test_shape_mismatch(small):
    M, block_ptr, y = small
    with pytest.raises(ValueError, match="y has 79 samples but the design has 80 rows"):
        solve(M, y[:-1], L1(0.1), block_ptr=block_ptr)
    with pytest.raises(ValueError, match="needs block_ptr"):
        solve(M, y, L1(0.1))
    with pytest.raises(ValueError, match="coef_init has shape"):
        solve(M, y, L1(0.1), block_ptr=block_ptr, coef_init=np.zeros(2))


def test_non_numeric_inputs(small):
    M, block_ptr, y = small
    with pytest.raises(TypeError, match="y must be numeric"):
        solve(M, np.array(["a"] * M.shape[0]), L1(0.1), block_ptr=block_ptr)
    with pytest.raises(TypeError, match="design must be numeric"):
        solve(np.array([["a", "b"]] * 3), np.zeros(3), L1(0.1), block_ptr=[0, 2])
    with pytest.raises(TypeError, match="cannot be used as a penalty"):
        solve(M, y, object(), block_ptr=block_ptr)


@pytest.mark.parametrize("kw", [dict(tol=0), dict(tol=-1), dict(max_iter=0), dict(max_iter=1.5)])
def test_bad_solver_params(small, kw):
    M, block_ptr, y = small
    with pytest.raises(ValueError, match="tol|max_iter"):
        solve(M, y, L1(0.1), block_ptr=block_ptr, **kw)


def test_bad_path_params(small):
    M, block_ptr, y = small
    with pytest.raises(ValueError, match="max_rules"):
        fire_path(M, y, L1(), block_ptr=block_ptr, max_rules=0)
    with pytest.raises(ValueError, match="eps"):
        fire_path(M, y, L1(), block_ptr=block_ptr, eps=2.0)
    with pytest.raises(ValueError, match="lambdas"):
        fire_path(M, y, L1(), block_ptr=block_ptr, lambdas=[-1.0])


# -- any datafit: the documented curvature, layout-independent kernels --------

@pytest.mark.parametrize("datafit, bound", [("quadratic", 1.0), ("logistic", 0.25)])
def test_coordinate_curvature_definition(rf_design, datafit, bound):
    """a_j = sum_i s_i u_i M_ij^2 / sum_i s_i (docs/datafits.rst)."""
    from firecy.solver._problem import Problem

    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    labels = (y > np.median(y)).astype(float)
    s = np.random.default_rng(5).uniform(0, 2, len(y))
    M = design.tocsc()
    a = bound * np.asarray(M.multiply(M).T @ s).ravel() / s.sum()
    np.testing.assert_allclose(Problem(design, labels, s, True, datafit=datafit).engine.curvature,
                               a, rtol=1e-12)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tree_and_general_layouts_agree_logistic(rf_design, strategy):
    table, values, block_ptr, X, y, _ = rf_design
    labels = (y > np.median(y)).astype(float)
    tree = BlockDesign.from_leaf_table(table, values, block_ptr)
    general = BlockDesign.from_matrix(tree.tocsc(), block_ptr)
    tol = 1e-10 if strategy == "working_set" else 1e-4   # greedy alone is slow here
    a = solve(tree, labels, L1(0.01), datafit="logistic", tol=tol, strategy=strategy,
              max_iter=300_000)
    b = solve(general, labels, L1(0.01), datafit="logistic", tol=tol, strategy=strategy,
              max_iter=300_000)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-9 if tol < 1e-8 else 1e-6)


def test_fused_mcp_path_on_boosted_trees_converges_to_block_fixed_points():
    # LightGBM trees on three features repeat each other's leaves: two trees
    # then trade weight along a direction the datafit does not see, and
    # coordinate descent crept there by equal small steps (8 of 30 points
    # stopped at 1000 updates per tree). The line search of the Newton step
    # reaches the penalty's kink in one move.
    lgb = pytest.importorskip("lightgbm")
    from firecy.ensembles import rule_ensemble_from_model
    from firecy.penalties import MCPFusion

    rng = np.random.RandomState(0)
    X = np.round(rng.uniform(20, 40, size=(300, 3)), 1)
    y = (X[:, 0] > 27.6) * 3.0 + np.sin(X[:, 1]) + 0.1 * rng.randn(300)
    model = lgb.LGBMRegressor(n_estimators=40, num_leaves=8, max_depth=3, verbose=-1,
                              random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(model)
    design = ens.design(X)
    M = design.tocsc()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = fire_path(design, y, MCPFusion(1.0, 1.1, 0.5), n_lambdas=30,
                         block_ptr=ens.block_ptr, tol=1e-9)
    assert np.all(path.converged)
    a = np.asarray(M.multiply(M).mean(axis=0)).ravel()   # exact curvature of a leaf
    ptr = np.asarray(ens.block_ptr)
    for k in range(1, len(path.lambdas)):
        w, b = path.coefs[k], path.intercepts[k]
        g = gradient(M, y, w, b)
        pen = MCPFusion(path.lambdas[k], 1.1, 0.5)
        # leaves of one tree are disjoint: the block's exact minimiser given
        # the others is the prox at w - g / a, and a stationary point is fixed
        for t in range(len(ptr) - 1):
            lo, hi = ptr[t], ptr[t + 1]
            z = w[lo:hi] - g[lo:hi] / a[lo:hi]
            x = pen.prox_of(z, a[lo:hi], a[lo:hi])
            # (the solver stopped at tol=1e-9: 2e-5 measured; main was off by 6.3)
            np.testing.assert_allclose(x, w[lo:hi], atol=1e-4)


def test_engine_callbacks_outside_a_solve_raise(rf_design):
    # the Newton steps call back into the engine during a solve; called
    # after it (no penalty bound) they used to dereference None and crash
    from firecy.solver._problem import Problem

    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    problem = Problem(design, y, None, True, None, "quadratic", None)
    problem.solve(L1(0.01), np.zeros(design.n_columns), 1e-6, 10_000, False)
    for method in ("refresh", "refresh_value", "penalty_groups"):
        with pytest.raises(RuntimeError, match="only during a solve"):
            getattr(problem.engine, method)()


@pytest.mark.parametrize("sizes", [(3, 7, 5), (3, 70000, 5)])
def test_tree_layout_rows_of_each_column_match_scipy(sizes):
    """col_ptr / col_rows of the tree layout are the CSC structure of the
    0/1 matrix (rows ascending in each column); a block of more than 65536
    columns takes the whole-table sort."""
    rng = np.random.default_rng(0)
    ptr = np.r_[0, np.cumsum(sizes)]
    n = 300
    table = np.column_stack([rng.integers(ptr[t], ptr[t + 1], n)
                             for t in range(len(sizes))]).astype(np.int32)
    design = BlockDesign.from_leaf_table(table, np.ones(ptr[-1]), ptr)
    rows = np.repeat(np.arange(n), len(sizes))
    ref = sp.csc_matrix((np.ones(rows.size), (rows, table.ravel())), shape=(n, ptr[-1]))
    ref.sort_indices()
    np.testing.assert_array_equal(design.col_ptr, ref.indptr)
    np.testing.assert_array_equal(design.col_rows, ref.indices)
