"""The empty model chosen only because no path point fits the budget warns."""
import warnings

import numpy as np
import pytest

from firecy import FIRERegressor


def _toy():
    rng = np.random.default_rng(0)
    n = 240
    X = rng.normal(size=(n, 4))
    y = 3 * (X[:, 0] > 0.2) + 2 * (X[:, 1] < -0.5) * (X[:, 2] > 0) + 0.2 * rng.normal(size=n)
    return np.c_[X[:, 0], X[:, 1], (X[:, 2] > 0).astype(float), X[:, 3]], y


def test_jump_past_budget_warns():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _toy()
    model = lightgbm.LGBMRegressor(n_estimators=20, verbose=-1, random_state=0).fit(X, y)
    est = FIRERegressor(model, penalty="l1", max_rules=4, n_lambdas=15, n_jobs=1,
                        rule_values="leaf", linear_terms=False)
    with pytest.warns(UserWarning, match="no point of the path keeps between 1 and max_rules=4"):
        est.fit(X, y)
    counts = est.path_.n_rules
    # the claim the warning makes, checked on the path itself
    assert np.count_nonzero(est.coef_) == 0
    assert not np.any((counts >= 1) & (counts <= 4)) and np.any(counts > 4)


def test_budget_reachable_does_not_warn():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _toy()
    model = lightgbm.LGBMRegressor(n_estimators=20, verbose=-1, random_state=0).fit(X, y)
    est = FIRERegressor(model, penalty="l1", max_rules=5, n_lambdas=15, n_jobs=1,
                        rule_values="leaf", linear_terms=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.fit(X, y)
    assert 1 <= np.count_nonzero(est.coef_) <= 5
