"""Unpenalised blocks (``firecy.penalties.Unpenalised``) and the stable mode
that keeps its pool's rules with them (issue 39)."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import Lasso

from firecy import FIREClassifier, FIRERegressor
from firecy.penalties import L1, MCP, BlockwisePenalty, Unpenalised
from firecy.solver import fire_path

FAST = dict(n_lambdas=15, cv=3, random_state=0, n_jobs=1)


def _problem(seed=0, n=200):
    rng = np.random.default_rng(seed)
    A = (rng.random((n, 3)) < 0.4).astype(float)      # kept: indicator columns
    B = rng.normal(size=(n, 5))                        # chosen by the path
    y = A @ [1.0, -2.0, 0.5] + B @ [1.0, 0.0, 0.0, -0.5, 0.0] + rng.normal(size=n)
    return A, B, y


def _projected_out(A, B, y, w=None):
    """B and y with the intercept and A projected out (weighted by ``w``)."""
    w = np.ones(len(y)) if w is None else w
    r = np.sqrt(w / w.sum())
    Z = np.column_stack([np.ones(len(y)), A]) * r[:, None]
    Q, _ = np.linalg.qr(Z)
    Bw, yw = B * r[:, None], y * r
    return Bw - Q @ (Q.T @ Bw), yw - Q @ (Q.T @ yw)


def test_contract_of_the_zero_penalty():
    pen = Unpenalised(0.7)
    assert pen.value_of([3.0, -2.0]) == 0.0
    np.testing.assert_array_equal(pen.prox_of([2.0, -0.3], step=0.1), [2.0, -0.3])
    assert pen.lambda_max_of([0.0, 1e-9]) == np.inf and pen.lambda_max_of([0.0]) == 0.0
    assert pen.is_separable and not pen.score_is_decrease
    # a fixed ridge, scaled by the curvature: value, prox, subdifferential
    ridged = Unpenalised(ridge=0.5)
    assert ridged.value_of([2.0], curvature=3.0) == pytest.approx(0.5 / 2 * 3.0 * 4.0)
    np.testing.assert_allclose(ridged.prox_of([2.0], step=1.0, curvature=3.0), [2.0 / 2.5])
    assert ridged.direction_of([1.0], [-1.5], curvature=3.0) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="ridge"):
        Unpenalised(ridge=-1.0)
    blockwise = BlockwisePenalty(Unpenalised(), L1(1.0), 3)
    np.testing.assert_array_equal(blockwise.unpenalised_blocks(np.arange(9)), [0, 1, 2])
    assert BlockwisePenalty(L1(), L1(), 3).unpenalised_blocks(np.arange(9)).size == 0


@pytest.mark.parametrize("weighted", [False, True])
def test_squared_path_is_the_lasso_with_the_kept_columns_projected_out(weighted):
    # min 1/2 sum s_i r_i^2 + lam |w_B| over (b, v, w_B): v and b are least
    # squares given w_B, so w_B is the lasso on B and y with [1, A] projected out
    A, B, y = _problem()
    s = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if weighted else None
    pen = BlockwisePenalty(Unpenalised(), L1(1.0), 3)
    path = fire_path(np.column_stack([A, B]), y, pen, block_ptr=np.arange(9),
                     sample_weight=s, n_lambdas=10, tol=1e-12)
    Br, yr = _projected_out(A, B, y, s)
    assert path.lambda_max == pytest.approx(np.abs(Br.T @ yr).max(), rel=1e-10)
    assert np.all(path.coefs[0][3:] == 0) and np.all(path.coefs[:, :3] != 0)
    for k in (0, 3, 9):
        ref = Lasso(alpha=path.lambdas[k], fit_intercept=False, tol=1e-14,
                    max_iter=100_000).fit(Br * np.sqrt(len(y)), yr * np.sqrt(len(y)))
        np.testing.assert_allclose(path.coefs[k][3:], ref.coef_, atol=1e-7)
    # just below the top, a penalised column enters
    below = fire_path(np.column_stack([A, B]), y, pen, block_ptr=np.arange(9), sample_weight=s,
                      lambdas=[0.99 * path.lambda_max], tol=1e-12)
    assert np.count_nonzero(below.coefs[0][3:]) == 1


def test_logistic_path_is_stationary_and_the_kept_blocks_alone_is_least_squares():
    A, B, y = _problem(seed=2)
    labels = (y > 0).astype(float)
    M = np.column_stack([A, B])
    pen = BlockwisePenalty(Unpenalised(), MCP(1.0, 3.0), 3)
    path = fire_path(M, labels, pen, block_ptr=np.arange(9), datafit="logistic",
                     n_lambdas=8, tol=1e-12)
    for k in range(len(path.lambdas)):
        w, b, lam = path.coefs[k], path.intercepts[k], path.lambdas[k]
        p = 1 / (1 + np.exp(-(M @ w + b)))
        grad = M.T @ (p - labels) / len(labels)
        assert abs(np.mean(p - labels)) < 1e-8             # the intercept
        np.testing.assert_allclose(grad[:3], 0, atol=1e-8)  # the unpenalised columns
        zero = w[3:] == 0
        assert np.all(np.abs(grad[3:][zero]) <= lam * (1 + 1e-6))
    # only unpenalised blocks: every lam gives the plain fit (lambda_max 0)
    only = fire_path(A, y, Unpenalised(), block_ptr=np.arange(4), lambdas=[1.0, 0.1],
                     tol=1e-14)
    ref, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(y)), A]), y, rcond=None)
    for k in range(2):
        np.testing.assert_allclose(np.r_[only.intercepts[k], only.coefs[k]], ref, atol=1e-8)


def test_stable_regressor_keeps_its_pool_and_chooses_the_lines():
    # with linear terms, stable=True keeps the pool's max_rules rules under a
    # fixed ridge (ridge / 2) a_j w_j^2 only, on centred columns (a_j =
    # sum_i s_i (M_ij - m_j)^2, s summing to 1): in a rule's contribution
    # beta_j = value_j * coef_j that is (ridge / 2) p_j (1 - p_j) beta_j^2,
    # p_j its training support. Given the chosen slopes, the intercept and
    # the betas solve the ridge normal equations on what the lines leave (no
    # penalty on the intercept).
    from firecy.estimators import _stable

    X, y = load_diabetes(return_X_y=True)
    fire = FIRERegressor(stable=True, max_rules=8, **FAST).fit(X, y)
    cols = fire.stable_columns_
    assert len(cols) == 8 and fire.n_rules_ == 8
    assert np.all(fire.coef_[cols] != 0) and fire.n_terms_ >= fire.n_rules_
    ridge = _stable.KEEP_POOL_LOSSES["squared"]
    assert isinstance(fire.penalty_.rules, Unpenalised) and fire.penalty_.rules.ridge == ridge
    ens, terms = fire.ensemble_, fire.linear_terms_
    masks = np.column_stack([ens.rule_mask(j, X) for j in cols]).astype(float)
    lines = terms.design(X) @ (fire.linear_coef_ / terms.scale)
    Z = np.column_stack([np.ones(len(y)), masks])
    n = len(y)
    p = masks.mean(axis=0)
    A = Z.T @ Z / n + np.diag(np.r_[0.0, ridge * p * (1 - p)])
    ref = np.linalg.solve(A, Z.T @ (y - lines) / n)
    beta = fire.coef_[cols] * ens.leaf_values[cols]
    np.testing.assert_allclose(np.r_[fire.intercept_, beta], ref,
                               rtol=1e-5, atol=1e-6 * np.abs(ref).max())
    np.testing.assert_allclose(fire.predict(X), Z @ ref + lines, rtol=1e-4)
    # the path's stability counts terms: the rules alone would agree trivially
    s = fire.path_.stability
    assert np.isfinite(s).any() and np.nanmin(s) < 1


def test_stable_binary_classifier_keeps_its_pool_under_a_fixed_ridge():
    # under the logistic loss a kept rule that holds rows of one class would
    # run off: the pool's rules carry a fixed ridge (ridge / 2) a_j w_j^2,
    # a_j = sum_i s_i / 4 (M_ij - m_j)^2 their centred columns' curvature (s
    # summing to 1). In a rule's contribution beta_j = value_j * coef_j, that
    # is (ridge / 8) p_j (1 - p_j) beta_j^2 with p_j its training support, so
    # the rules' stationarity reads
    # mean((p - y) mask_j) + (ridge / 4) p_j (1 - p_j) beta_j = 0.
    from firecy.estimators import _stable

    X, y = load_breast_cancer(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = FIREClassifier(stable=True, max_rules=6, **FAST).fit(X, y)
    ridge = _stable.KEEP_POOL_LOSSES["logistic"]
    assert ridge > 0 and isinstance(clf.penalty_.rules, Unpenalised)
    assert clf.penalty_.rules.ridge == ridge
    cols = clf.stable_columns_
    assert clf.n_rules_ == len(cols) == 6
    ens = clf.ensemble_
    masks = np.column_stack([ens.rule_mask(j, X) for j in cols]).astype(float)
    assert np.linalg.matrix_rank(np.column_stack([np.ones(len(y)), masks])) == len(cols) + 1
    beta = clf.coef_[cols] * ens.leaf_values[cols]
    p = clf.predict_proba(X)[:, 1]
    support = masks.mean(axis=0)
    grad = masks.T @ (p - y) / len(y) + ridge / 4 * support * (1 - support) * beta
    np.testing.assert_allclose(grad, 0, atol=1e-5)
    # and the loss alone is not stationary there: the ridge is what holds
    assert np.abs(masks.T @ (p - y) / len(y)).max() > 1e-3


def test_multiclass_and_poisson_select_in_their_pool():
    from sklearn.datasets import load_iris

    from firecy import FIREPoissonRegressor

    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = FIREClassifier(stable=True, max_rules=6, **FAST).fit(X, y)
    assert not isinstance(clf.penalty_.rules, Unpenalised)
    Xd, yd = load_diabetes(return_X_y=True)
    counts = np.random.default_rng(0).poisson(np.exp(0.5 * (yd - yd.mean()) / yd.std()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = FIREPoissonRegressor(stable=True, max_rules=6, **FAST).fit(Xd, counts)
    assert not isinstance(fit.penalty_.rules, Unpenalised)


def test_kept_pool_through_the_poisson_outer_loop():
    from firecy import FIREPoissonRegressor

    X, y = load_diabetes(return_X_y=True)
    counts = np.random.default_rng(0).poisson(np.exp(0.5 * (y - y.mean()) / y.std()))
    fit = FIREPoissonRegressor(stable=True, max_rules=6, **FAST)
    fit._fit_options = {"keep_pool_losses": {"squared": 0.0, "poisson": 0.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit.fit(X, counts)
    cols = fit.stable_columns_
    assert fit.n_rules_ == len(cols) == 6 and isinstance(fit.penalty_.rules, Unpenalised)
    R = np.column_stack([fit.ensemble_.rule_mask(j, X) for j in cols]).astype(float)
    # unpenalised: the Poisson loss is stationary in the rules' weights
    grad = R.T @ (fit.predict(X) - counts) / len(counts)
    np.testing.assert_allclose(grad, 0, atol=1e-5 * counts.mean())
