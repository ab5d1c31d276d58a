"""The estimator's linear terms against independent references on its own
design: the rule columns of ``ensemble_`` (leaf indicator times leaf value)
beside ``linear_terms_.design(X)`` (clipped, centred, scaled columns).

docs/objective.rst: with ``penalty="l1", fusion=0`` and a given ``lam`` the
fit minimises 1/(2n) ||y - b - D w||^2 + lam ||w||_1, scikit-learn's Lasso
with alpha = lam; the solver's weight on a linear column is
``linear_coef_ / linear_terms_.scale`` (docs/linear_terms.rst).
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Lasso

from firecy import FIRERegressor

from test_linear_terms import forest, linear_data


def data_with_missing():
    X, y = linear_data(300, seed=2)
    X.iloc[::17, 1] = np.nan           # a missing value sits at the centre: adds 0
    return X, y


def fit(X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FIRERegressor(forest(n=8), fusion=0.0, linear_terms=True, max_rules=None,
                             tol=1e-12, random_state=0, n_jobs=1, **params).fit(X, y)


def combined_design(est, X):
    """(D, w): the fit's rule and linear columns in user units and its weights."""
    ens = est.ensemble_
    table = ens.leaf_table(X)
    values = np.asarray(ens.leaf_values, dtype=np.float64).ravel()
    n, cols = len(X), table.ravel()
    rows = np.repeat(np.arange(n), table.shape[1])
    rules = sp.csr_matrix((values[cols], (rows, cols)), shape=(n, values.size)).toarray()
    D = np.hstack([rules, est.linear_terms_.design(X)])
    w = np.r_[np.ravel(est.coef_), est.linear_coef_ / est.linear_terms_.scale]
    return D, w


def test_l1_fit_is_the_lasso_on_the_combined_design():
    X, y = data_with_missing()
    lam = 0.02
    est = fit(X, y, penalty="l1", lam=lam)
    assert est.rule_values_ == "leaf"
    D, w = combined_design(est, X)
    np.testing.assert_allclose(D @ w + est.intercept_, est.predict(X), rtol=1e-10,
                               atol=1e-10 * np.abs(y).max())
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=10**6).fit(D, y)

    def objective(b, coef):
        return 0.5 * np.mean((y - b - D @ coef) ** 2) + lam * np.abs(coef).sum()

    np.testing.assert_allclose(objective(est.intercept_, w), objective(ref.intercept_, ref.coef_),
                               rtol=1e-6)
    np.testing.assert_allclose(est.predict(X), ref.predict(D), rtol=1e-6,
                               atol=1e-6 * np.abs(y).max())
    # the three linear columns are not collinear with the leaves: unique weights
    assert np.count_nonzero(est.linear_coef_) >= 2
    np.testing.assert_allclose(w[-3:], ref.coef_[-3:], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("lam, gamma", [(0.03, 2.0), (0.05, 40.0)])
def test_mcp_fit_is_stationary_on_the_linear_terms(lam, gamma):
    # MCP_j with the column's curvature a_j = ||D_j||^2 / n (docs/objective.rst):
    # w = 0: |g| <= lam; 0 < |w| <= gamma lam / a: g + lam sign(w) - a w / gamma = 0;
    # beyond: g = 0
    X, y = data_with_missing()
    est = fit(X, y, penalty="mcp", gamma=gamma, lam=lam)
    D, w = combined_design(est, X)
    n = len(y)
    residual = y - est.predict(X)
    grad = -D.T @ residual / n
    curv = (D ** 2).sum(axis=0) / n
    tol = 1e-7 * np.abs(y).max()
    linear = np.arange(D.shape[1] - len(est.linear_terms_), D.shape[1])
    assert np.count_nonzero(w[linear]) >= 1
    for j in linear:
        if w[j] == 0.0:
            assert abs(grad[j]) <= lam + tol
        elif abs(w[j]) <= gamma * lam / curv[j]:
            assert abs(grad[j] + lam * np.sign(w[j]) - curv[j] * w[j] / gamma) <= tol
        else:
            assert abs(grad[j]) <= tol
