"""Count and survival models read exactly: the leaves on the model's own
scale (log rate, log hazard), so that baseline + the sum of a row's leaf
values is the library's raw margin."""
import numpy as np
import pytest

from firecy.ensembles import rule_ensemble_from_model
from firecy.solver import BlockDesign


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    mu = np.exp(0.5 * X[:, 0] - 0.7 * (X[:, 1] > 0))
    return X, rng.poisson(mu).astype(float), rng


def _check_margin(model, X, margin):
    ens = rule_ensemble_from_model(model, X=X)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X), ens.leaf_values, ens.block_ptr)
    by_hand = np.asarray(ens.baseline(X), dtype=float).reshape(-1) + design.matvec(
        np.ones(design.n_columns))
    np.testing.assert_allclose(by_hand, margin, rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ens.predict_raw(X, np.ones(design.n_columns)))
                               .reshape(-1), margin, rtol=0, atol=1e-6)
    return ens


def test_xgboost_count_poisson():
    xgb = pytest.importorskip("xgboost")
    X, y, _ = _data()
    model = xgb.XGBRegressor(objective="count:poisson", n_estimators=20, max_depth=3,
                             base_score=0.8).fit(X, y)
    _check_margin(model, X, model.predict(X, output_margin=True))
    # the margin is the log rate
    np.testing.assert_allclose(np.exp(model.predict(X, output_margin=True)), model.predict(X),
                               rtol=1e-5)


def test_xgboost_survival_cox():
    xgb = pytest.importorskip("xgboost")
    X, _, rng = _data()
    time = rng.exponential(np.exp(-X[:, 0]))
    event = rng.uniform(size=len(time)) < 0.7
    model = xgb.XGBRegressor(objective="survival:cox", n_estimators=20, max_depth=3).fit(
        X, np.where(event, time, -time))
    _check_margin(model, X, model.predict(X, output_margin=True))


def test_lightgbm_poisson():
    lgb = pytest.importorskip("lightgbm")
    X, y, _ = _data()
    model = lgb.LGBMRegressor(objective="poisson", n_estimators=20, num_leaves=8,
                              verbose=-1).fit(X, y)
    _check_margin(model, X, model.predict(X, raw_score=True))


def test_hist_gradient_boosting_poisson():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y, _ = _data()
    model = HistGradientBoostingRegressor(loss="poisson", max_iter=20, max_depth=3).fit(X, y)
    _check_margin(model, X, model._raw_predict(X).reshape(-1))


def test_poisson_estimator_uses_the_log_rate_baseline():
    """With a Poisson booster, the fitted ensemble's default weights (no
    intercept) give the booster's own prediction through the log-rate
    baseline, whatever the rule values solved on (a booster's default is
    "unit": the values move into ``column_scale``)."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from firecy import FIREPoissonRegressor

    X, y, _ = _data()
    model = HistGradientBoostingRegressor(loss="poisson", max_iter=20, max_depth=3).fit(X, y)
    fire = FIREPoissonRegressor(model, cv=3, random_state=0, rule_depth=None).fit(X, y)
    ens = fire.ensemble_
    assert fire.rule_values_ == "unit" and np.all(ens.leaf_values == 1.0)
    raw = np.asarray(ens.predict_raw(X, ens.column_scale)).reshape(-1)
    np.testing.assert_allclose(np.exp(raw), model.predict(X), rtol=1e-6)
    np.testing.assert_allclose(np.exp(np.asarray(ens.predict_raw(X)).reshape(-1)),
                               model.predict(X), rtol=1e-6)
    assert fire.n_rules_ <= 14 and np.all(fire.predict(X) > 0)
