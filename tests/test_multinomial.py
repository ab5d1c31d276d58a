"""The multinomial datafit solved by the engine, against independent references.

Objective (docs/datafits.rst, "Multinomial"):
F(w, b) = 1/(sum s) sum_i s_i [log sum_k exp(eta_ik) - eta_{i y_i}] + P(w),
eta_ik = o_ik + b_k + (M_k w_k)_i, every block (tree) speaking for one class;
the coordinate curvature of a class-k column is
a_j = 1/4 sum_i s_i M_ij^2 / sum_i s_i (the binary logistic bound, per class).
"""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import firecy.estimators._multinomial_engine as engine_path
from firecy.datafits import Multinomial
from firecy.estimators._logistic_paths import pack_target
from firecy.penalties import L1, MCP, L1Fusion
from firecy.solver import BlockDesign

K = 3


def forest_leaves(n_samples=240, n_trees=5, max_depth=2, seed=0):
    """Leaf indicators of a random forest on a 3-class problem, built from
    scikit-learn's tree arrays (independent of firecy.ensembles)."""
    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier

    X, y = make_classification(n_samples=n_samples, n_features=8, n_informative=5,
                               n_classes=K, n_clusters_per_class=1, flip_y=0.15,
                               random_state=seed)
    rf = RandomForestClassifier(n_estimators=n_trees, max_depth=max_depth,
                                random_state=seed).fit(X, y)
    node = rf.apply(X)
    cols = []
    for t, est in enumerate(rf.estimators_):
        leaves = np.flatnonzero(est.tree_.children_left == -1)
        cols.append((node[:, t][:, None] == leaves[None, :]).astype(np.float64))
    return cols, y


def class_design(cols):
    """Every tree once per class (blocks tree-major, class-minor, as the
    classifier lays out a random forest's), leaf value 1: the model is
    scikit-learn's multinomial model on the leaf indicators."""
    blocks, block_class, ptr = [], [], [0]
    for leaves in cols:
        for k in range(K):
            blocks.append(leaves)
            block_class.append(k)
            ptr.append(ptr[-1] + leaves.shape[1])
    M = np.hstack(blocks)
    return BlockDesign.from_matrix(M, ptr), M, np.array(block_class)


@pytest.fixture(scope="module")
def problem():
    cols, y = forest_leaves()
    design, M, block_class = class_design(cols)
    s = np.random.default_rng(3).uniform(0.2, 3.0, y.shape[0])
    s[:7] = 0.0
    return design, M, block_class, y, s


def margins(M, block_class, ptr, w, b, offset=0.0):
    col_class = np.repeat(block_class, np.diff(ptr))
    eta = np.zeros((M.shape[0], K)) + b + offset
    for k in range(K):
        eta[:, k] += M[:, col_class == k] @ w[col_class == k]
    return eta


def softmax(eta):
    e = np.exp(eta - eta.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def loss(eta, y, s):
    top = eta.max(axis=1)
    lse = top + np.log(np.exp(eta - top[:, None]).sum(axis=1))
    return float(np.dot(s, lse - eta[np.arange(len(y)), y]) / s.sum())


def gradients(M, block_class, ptr, y, s, w, b, offset=0.0):
    """dF/dw per column (of its class) and dF/db per class."""
    P = softmax(margins(M, block_class, ptr, w, b, offset))
    R = (P - np.eye(K)[y]) * (s / s.sum())[:, None]
    col_class = np.repeat(block_class, np.diff(ptr))
    g = np.einsum("ij,ij->j", M, R[:, col_class])
    return g, R.sum(axis=0)


def fit(design, y, s, penalty, lam, offset=None, tol=1e-10, **kwargs):
    offset = np.zeros((len(y), K)) if offset is None else offset
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = engine_path.multinomial_path(
            design, pack_target(y, offset), penalty, block_class=kwargs.pop("block_class"),
            n_classes=K, sample_weight=s, lambdas=[lam], tol=tol, max_iter=1_000_000,
            **kwargs)
    assert path.converged.all()
    return path.coefs[0], path.intercepts[0], path.objectives[0]


def assert_l1_kkt(M, block_class, ptr, y, s, w, b, lam, atol=1e-7):
    g, g_b = gradients(M, block_class, ptr, y, s, w, b)
    nz = w != 0
    np.testing.assert_allclose(g[nz] + lam * np.sign(w[nz]), 0, atol=atol)
    assert np.all(np.abs(g[~nz]) <= lam + atol)
    np.testing.assert_allclose(g_b, 0, atol=atol)


def test_l1_matches_sklearn_saga(problem):
    design, M, block_class, _, _ = problem
    X, y = forest_leaves()
    X = np.hstack(X)
    # unit weights: saga with unequal sample weights stalls short of the
    # optimum (measured: 0.945 after 1000 epochs, 1.455 after 10000, for an
    # optimum of 0.638; cvxpy checks the weighted problem below)
    s = np.ones(len(y))
    lam = 0.004
    w, b, obj = fit(design, y, s, L1(), lam, block_class=block_class)
    ptr = design.block_ptr
    f = loss(margins(M, block_class, ptr, w, b), y, s) + lam * np.abs(w).sum()
    assert abs(obj - f) <= 1e-12 * f              # the reported objective is F
    assert np.count_nonzero(w) > 3
    # scikit-learn: C sum_i CE_i + ||W||_1 (every class's coefficients on the
    # same leaf indicators, the intercepts unpenalised): C = 1 / (n lam)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = LogisticRegression(l1_ratio=1.0, C=1.0 / (s.sum() * lam), solver="saga",
                                 tol=1e-13, max_iter=3000).fit(X, y)
    f_ref = loss(X @ ref.coef_.T + ref.intercept_, y, s) + lam * np.abs(ref.coef_).sum()
    assert f <= f_ref * (1 + 1e-9)
    assert abs(f - f_ref) <= 1e-6 * f_ref
    assert_l1_kkt(M, block_class, ptr, y, s, w, b, lam)
    assert abs(b.sum()) <= 1e-12 * (1 + np.abs(b).max())   # centred intercepts


def test_weighted_l1_matches_cvxpy(problem):
    cp = pytest.importorskip("cvxpy")
    design, M, block_class, y, s = problem
    ptr = design.block_ptr
    lam = 0.004
    w, b, obj = fit(design, y, s, L1(), lam, block_class=block_class)
    value = cvxpy_value(cp, M, block_class, ptr, y, s, lam, 0.0, np.zeros((len(y), K)))
    assert obj <= value * (1 + 1e-7)
    assert abs(obj - value) <= 1e-6 * value
    assert_l1_kkt(M, block_class, ptr, y, s, w, b, lam)


def cvxpy_value(cp, M, block_class, ptr, y, s, lam, ratio, offset):
    col_class = np.repeat(block_class, np.diff(ptr))
    wv, bv = cp.Variable(M.shape[1]), cp.Variable(K)
    eta = cp.hstack([cp.reshape(M[:, col_class == k] @ wv[np.flatnonzero(col_class == k)]
                                + offset[:, k] + bv[k], (len(y), 1), order="C")
                     for k in range(K)])
    Y = np.eye(K)[y]
    data = cp.sum(cp.multiply(s, cp.log_sum_exp(eta, axis=1))
                  - cp.multiply(s, cp.sum(cp.multiply(Y, eta), axis=1))) / s.sum()
    objective = data + lam * cp.norm1(wv)
    if ratio:
        objective += ratio * lam * sum(cp.norm1(cp.diff(wv[ptr[t]:ptr[t + 1]]))
                                       for t in range(len(ptr) - 1))
    prob = cp.Problem(cp.Minimize(objective))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value


@pytest.mark.parametrize("gamma", [1.2, 3.0])
def test_mcp_stationarity(problem, gamma):
    design, M, block_class, y, s = problem
    ptr = design.block_ptr
    lam = 0.006
    w, b, obj = fit(design, y, s, MCP(gamma=gamma), lam, block_class=block_class)
    assert np.count_nonzero(w) > 0
    a = 0.25 * (M ** 2).T @ s / s.sum()
    g, g_b = gradients(M, block_class, ptr, y, s, w, b)
    knot = gamma * lam / a
    inside = (w != 0) & (np.abs(w) <= knot)
    beyond = np.abs(w) > knot
    np.testing.assert_allclose(
        g[inside] + lam * np.sign(w[inside]) - a[inside] * w[inside] / gamma, 0, atol=1e-7)
    np.testing.assert_allclose(g[beyond], 0, atol=1e-7)
    assert np.all(np.abs(g[w == 0]) <= lam + 1e-7)
    np.testing.assert_allclose(g_b, 0, atol=1e-7)
    mcp = np.where(np.abs(w) <= knot, lam * np.abs(w) - a * w ** 2 / (2 * gamma),
                   gamma * lam ** 2 / (2 * a))
    f = loss(margins(M, block_class, ptr, w, b), y, s) + mcp.sum()
    np.testing.assert_allclose(obj, f, rtol=1e-10)


def test_offset_and_fusion_against_cvxpy(problem):
    cp = pytest.importorskip("cvxpy")
    design, M, block_class, y, s = problem
    offset = np.random.default_rng(5).normal(0.0, 0.5, (len(y), K))
    lam, ratio = 0.004, 0.5
    w, b, obj = fit(design, y, s, L1Fusion(fusion=ratio), lam, offset=offset,
                    block_class=block_class)
    value = cvxpy_value(cp, M, block_class, design.block_ptr, y, s, lam, ratio, offset)
    assert obj <= value * (1 + 1e-7)
    assert abs(obj - value) <= 1e-6 * value


def test_greedy_strategy_reports_the_group(problem):
    # the greedy strategy keeps the full gradient from the row changes
    # shift_rows reports: without the engine widening its rows to whole
    # groups, the other classes' gradients go stale and the answer is wrong
    design, M, block_class, y, s = problem
    state = engine_path._StackedMultinomial(design, pack_target(y, np.zeros((len(y), K))),
                                            block_class, K, s, True)
    assert state.problem.engine.row_group == K
    lam = 0.006
    ws = np.zeros(design.n_columns)
    wg = np.zeros(design.n_columns)
    a = state.problem.solve(L1(lam), ws, 1e-10, 10 ** 6)
    b_ws = state.full_intercepts(ws)
    state.set_engine_intercepts(np.zeros(K))
    g = state.problem.solve(L1(lam), wg, 1e-8, 10 ** 6, strategy="greedy")
    assert a.converged and g.converged
    np.testing.assert_allclose(g.objective, a.objective, rtol=1e-7)
    grad, g_b = gradients(M, block_class, design.block_ptr, y, s, wg,
                          state.full_intercepts(wg))
    assert np.all(np.abs(grad) <= lam + 1e-5)
    np.testing.assert_allclose(g_b, 0, atol=1e-5)
    assert np.abs(b_ws).max() > 0


def test_absent_class_is_left_out(problem):
    design, M, block_class, y, s = problem
    s = s.copy()
    s[y == 2] = 0.0                                  # class 2: no row of weight
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = engine_path.multinomial_path(
            design, pack_target(y, np.zeros((len(y), K))), L1(), block_class=block_class,
            n_classes=K, sample_weight=s, n_lambdas=8)
    col_class = np.repeat(block_class, np.diff(design.block_ptr))
    assert np.all(path.coefs[:, col_class == 2] == 0)
    assert np.all(np.isfinite(path.intercepts))
    P = softmax(margins(M, block_class, design.block_ptr, path.coefs[-1], path.intercepts[-1]))
    # the absent class: about half an observation's probability
    assert 0 < np.average(P[:, 2], weights=s) < 1.0 / np.count_nonzero(s)


def test_same_answer_as_the_class_cycles(problem):
    from firecy.estimators._multinomial_cycles import multinomial_path as cycles_path

    design, M, block_class, y, s = problem
    target = pack_target(y, np.zeros((len(y), K)))
    kwargs = dict(block_class=block_class, n_classes=K, sample_weight=s, n_lambdas=6,
                  tol=1e-10, max_iter=10 ** 6)
    new = engine_path.multinomial_path(design, target, L1(), **kwargs)
    with warnings.catch_warnings():
        # the cycles stop on the decrease of F, not on tol 1e-10's gradients
        warnings.simplefilter("ignore", ConvergenceWarning)
        old = cycles_path(design, target, L1(), **kwargs)
    np.testing.assert_allclose(new.lambdas, old.lambdas, rtol=1e-9)
    np.testing.assert_allclose(new.objectives, old.objectives, rtol=1e-7)
    assert np.all(new.objectives <= old.objectives * (1 + 1e-9))


def test_datafit_checks():
    mn = Multinomial(3)
    assert mn.row_group_size == 3
    with pytest.raises(ValueError, match="one-hot"):
        mn.validate(np.array([1.0, 1.0, 0.0]), np.ones(3))
    with pytest.raises(ValueError, match="repeated"):
        mn.validate(np.array([1.0, 0.0, 0.0]), np.array([1.0, 2.0, 1.0]))
    with pytest.raises(ValueError, match="pseudo-rows"):
        mn.validate(np.array([1.0, 0.0]), np.ones(2))
    with pytest.raises(ValueError, match="every class"):
        mn.validate(np.array([1.0, 0.0, 0.0, 1.0, 0.0, 0.0]), np.ones(6))
    with pytest.raises(ValueError, match="at least 2"):
        Multinomial(1)
    # the per-sample methods work on whole groups
    y = np.array([0.0, 1.0, 0.0])
    eta = np.array([0.5, -1.0, 2.0])
    grad, hess = mn.gradient_hessian_of(y, eta)
    p = softmax(eta[None, :])[0]
    np.testing.assert_allclose(grad, 3 * (p - y))
    np.testing.assert_allclose(hess, 3 * p * (1 - p))
    import pickle

    again = pickle.loads(pickle.dumps(Multinomial(4, fit_intercept=False)))
    assert again.n_classes == 4 and not again.fit_intercept


def test_iris_lightgbm_default_fit_converges():
    """Issue 23's table: iris with a 100-tree depth-3 LightGBM model, FIRE at its
    defaults.  A multinomial Newton step that did not land was once never
    retried on its support (0eb9329), and this fit then hit max_iter on 22
    solves (a ConvergenceWarning each) and took ten times the CPU; the retry
    rule in ``firecy/solver/_newton.pyx`` lets it converge."""
    lightgbm = pytest.importorskip("lightgbm")
    from sklearn.datasets import load_iris
    from sklearn.model_selection import train_test_split

    from firecy import FIREClassifier

    X, y = load_iris(return_X_y=True)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=0,
                                              stratify=y)
    model = lightgbm.LGBMClassifier(n_estimators=100, max_depth=3, num_leaves=8,
                                    random_state=0, n_jobs=1, verbose=-1).fit(X_tr, y_tr)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fire = FIREClassifier(model, random_state=0, n_jobs=1, linear_terms=False).fit(X_tr, y_tr)
    assert 0 < fire.n_rules_ <= fire.max_rules_
    # the rules keep the model's ranking of the held-out rows, near enough
    assert fire.score(X_te, y_te) >= model.score(X_te, y_te) - 0.1


def _plain_line_minimum(value, f_old, bracket_steps, golden_steps):
    """The Newton line search as specified, every value computed: the
    minimum of F along the direction bracketed on t = 2^-k, then located by
    golden-section search (0 when no bracketed step lowers F)."""
    t_hi, f_hi = 1.0, value(1.0)
    t, f_t = 0.5, value(0.5)
    for _ in range(bracket_steps):
        if f_t < f_old and f_t <= f_hi:
            f_lo = value(0.5 * t)
            if f_lo >= f_t:
                break
            t_hi, f_hi, t, f_t = t, f_t, 0.5 * t, f_lo
        else:
            t_hi, f_hi, t, f_t = t, f_t, 0.5 * t, value(0.5 * t)
    else:
        return 0.0
    if not f_t < f_old:
        return 0.0
    a, b = 0.5 * t, t_hi
    best_t, best_f = t, f_t
    ratio = 0.5 * (5.0 ** 0.5 - 1.0)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    f_c, f_d = value(c), value(d)
    for _ in range(golden_steps):
        if f_c <= f_d:
            b, d, f_d = d, c, f_c
            c = b - ratio * (b - a)
            f_c = value(c)
        else:
            a, c, f_c = c, d, f_d
            d = a + ratio * (b - a)
            f_d = value(d)
        for tt, ff in ((c, f_c), (d, f_d)):
            if ff < best_f:
                best_t, best_f = tt, ff
    return best_t


@pytest.mark.parametrize("penalty", [L1(), L1Fusion(fusion=0.5)], ids=["l1", "l1_fusion"])
def test_newton_line_search_shortcuts_keep_its_step(problem, monkeypatch, penalty):
    """The Newton line search reuses the values of the halved steps its
    caller tried and stops halving once the step no longer moves a weight
    (issue 23: most of a 3-class fit's line searches found nothing after ~60
    state rebuilds). Along a multinomial path, every search must return the
    step of the search without those shortcuts, with fewer evaluations."""
    import firecy.solver._newton as newton

    design, M, block_class, y, s = problem
    searches = []
    real = newton._line_minimum
    value_at = newton._value_at

    def spy(engine, model, support, w_old, b_old, direction, f_old, known=None):
        counted = [0]

        def value(t):
            counted[0] += 1
            return value_at(engine, model, support, w_old, b_old, w_old + t * direction)

        expected = _plain_line_minimum(value, f_old, newton.LINE_BRACKET_STEPS,
                                       newton.LINE_GOLDEN_STEPS)
        plain_evaluations = counted[0]
        calls = [0]

        def counting_value_at(*args):
            calls[0] += 1
            return value_at(*args)

        monkeypatch.setattr(newton, "_value_at", counting_value_at)
        try:
            got = real(engine, model, support, w_old, b_old, direction, f_old,
                       *([] if known is None else [known]))
        finally:
            monkeypatch.setattr(newton, "_value_at", value_at)
        searches.append((expected, got, plain_evaluations, calls[0]))
        return got

    monkeypatch.setattr(newton, "_line_minimum", spy)
    target = pack_target(y, np.zeros((len(y), K)))
    engine_path.multinomial_path(design, target, penalty, block_class=block_class,
                                 n_classes=K, sample_weight=s, n_lambdas=15, tol=1e-6)
    assert len(searches) >= 5
    expected, got, plain, used = map(np.array, zip(*searches))
    np.testing.assert_array_equal(got, expected)
    assert np.any(got == 0.0) and np.any(got > 0.0)
    assert np.all(used <= plain) and used.sum() < plain.sum()
