"""``rule_values``: the value in each rule's design column ("leaf", "unit", "auto").

Under "unit" the design FIRE solves on is the rules' 0/1 indicators (checked
against each rule's own row mask), and every reader of the fit (predict,
decision_function, transform, rules_) agrees with ``design @ coef_ +
intercept_ + baseline`` built here from scipy; "auto" resolves per ensemble
kind; a forest's fit is bitwise the same under "auto" as under "leaf".
"""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification, make_regression
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import DecisionTreeRegressor

from firecy import (
    FIREClassifier,
    FIREPoissonRegressor,
    FIRERegressor,
    FIRESurvivalRegressor,
)
from firecy.ensembles import rule_ensemble_from_model
from firecy.estimators._rule_values import resolve_rule_values

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def reg_data():
    X, y = make_regression(300, 6, n_informative=4, noise=5.0, random_state=0)
    return X, y


def _quiet_fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def _fire(model, X, y, cls=FIRERegressor, **kw):
    params = dict(n_lambdas=15, cv=3, random_state=0, n_jobs=1, linear_terms=False)
    params.update(kw)
    return _quiet_fit(cls(model, **params), X, y)


def _design_raw(fire, X):
    """``design(X) @ coef_ + intercept_ + baseline(X)``, per output, from scipy."""
    ens = fire.ensemble_
    M = ens.design(X).tocsc()               # scipy sparse, the solved-on values
    coef = np.asarray(fire.coef_, dtype=np.float64)
    contrib = M.multiply(coef[None, :]).tocsc()
    if ens.n_outputs == 1:
        return np.asarray(contrib.sum(axis=1)).ravel() + fire.intercept_ + ens.baseline(X)
    # column j speaks for class tree_class[tree of j]
    cls_of_col = np.repeat(ens.tree_class, np.diff(ens.block_ptr))
    out = np.column_stack([np.asarray(contrib[:, cls_of_col == k].sum(axis=1)).ravel()
                           for k in range(ens.n_outputs)])
    return out + fire.intercept_ + ens.baseline(X)


# -- the design -------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: xgb.XGBRegressor(n_estimators=40, max_depth=4, n_jobs=1, random_state=0),
    lambda: lgb.LGBMRegressor(n_estimators=40, n_jobs=1, verbose=-1, random_state=0),
    lambda: RandomForestRegressor(30, max_depth=3, random_state=0),
], ids=["xgb", "lgbm", "rf"])
def test_unit_design_is_the_rule_indicators(reg_data, make):
    X, y = reg_data
    model = make().fit(X, y)
    leaf = _fire(model, X, y, rule_values="leaf")
    unit = _fire(model, X, y, rule_values="unit")
    assert leaf.rule_values_ == "leaf" and unit.rule_values_ == "unit"
    # the same rules (the cut does not depend on the values), other values
    assert unit.ensemble_.n_rules == leaf.ensemble_.n_rules
    assert not np.all(leaf.ensemble_.leaf_values == 1.0)
    np.testing.assert_array_equal(unit.ensemble_.leaf_values, 1.0)
    M = unit.ensemble_.design(X).toarray()
    # every column is its rule's own row mask (the conditions, evaluated apart)
    for j in np.linspace(0, unit.ensemble_.n_rules - 1, 25).astype(int):
        np.testing.assert_array_equal(M[:, j], unit.ensemble_.rule_mask(j, X).astype(float))
    # transform: the kept rules' indicators
    T = unit.transform(X)
    np.testing.assert_array_equal(T, M[:, np.flatnonzero(unit.coef_)])
    # rules_ reports the solved-on value, and a contribution that is coef itself
    table = unit.rules_
    if len(table):
        np.testing.assert_array_equal(table["leaf_value"].to_numpy(float), 1.0)


@pytest.mark.parametrize("rule_values", ["leaf", "unit"])
def test_predict_is_design_times_coef(reg_data, rule_values):
    X, y = reg_data
    model = xgb.XGBRegressor(n_estimators=40, max_depth=4, n_jobs=1, random_state=0).fit(X, y)
    fire = _fire(model, X, y, rule_values=rule_values)
    assert fire.n_rules_ > 0
    np.testing.assert_allclose(fire.predict(X), _design_raw(fire, X), rtol=1e-10, atol=1e-8)


def test_unit_changes_the_booster_fit(reg_data):
    # a booster's values shrink along its trees: "unit" must select otherwise
    X, y = reg_data
    model = xgb.XGBRegressor(n_estimators=60, max_depth=3, learning_rate=0.1, n_jobs=1,
                             random_state=0).fit(X, y)
    leaf = _fire(model, X, y, rule_values="leaf")
    unit = _fire(model, X, y, rule_values="unit")
    tree_of = np.searchsorted(leaf.ensemble_.block_ptr, np.arange(leaf.ensemble_.n_rules),
                              side="right") - 1
    last_leaf = tree_of[np.flatnonzero(leaf.coef_)].max()
    last_unit = tree_of[np.flatnonzero(unit.coef_)].max()
    # the leaf design's price of a late tree's rule is higher (module docstring)
    assert last_unit >= last_leaf
    assert not np.array_equal(leaf.coef_ != 0, unit.coef_ != 0)


def test_binary_and_multiclass_classifier_margins():
    X, y = make_classification(300, 6, n_informative=4, random_state=0)
    model = xgb.XGBClassifier(n_estimators=30, max_depth=3, n_jobs=1, random_state=0).fit(X, y)
    clf = _fire(model, X, y, cls=FIREClassifier, rule_values="unit")
    assert clf.rule_values_ == "unit"
    np.testing.assert_array_equal(clf.ensemble_.leaf_values, 1.0)
    np.testing.assert_allclose(clf.decision_function(X), _design_raw(clf, X),
                               rtol=1e-10, atol=1e-8)

    Xw, yw = load_wine(return_X_y=True)
    model = xgb.XGBClassifier(n_estimators=10, max_depth=2, n_jobs=1).fit(Xw, yw)
    clf = _fire(model, Xw, yw, cls=FIREClassifier, rule_values="auto", max_rules=8)
    assert clf.rule_values_ == "unit"
    raw = _design_raw(clf, Xw)
    assert raw.shape == (len(yw), 3)
    np.testing.assert_allclose(clf.decision_function(Xw), raw, rtol=1e-10, atol=1e-8)
    np.testing.assert_array_equal(clf.predict(Xw), clf.classes_[raw.argmax(axis=1)])


def test_counts_and_survival_estimators_take_it():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    counts = rng.poisson(np.exp(0.5 * (X[:, 0] > 0)))
    model = GradientBoostingRegressor(n_estimators=20, max_depth=2, random_state=0)
    pois = _fire(model, X, counts, cls=FIREPoissonRegressor, rule_values="auto")
    assert pois.rule_values_ == "unit"
    np.testing.assert_array_equal(pois.ensemble_.leaf_values, 1.0)
    # the Poisson mean is exp of the raw score
    np.testing.assert_allclose(pois.predict(X), np.exp(_design_raw(pois, X)), rtol=1e-10)

    time = rng.exponential(np.exp(-1.0 * (X[:, 0] > 0)))
    ys = np.array(list(zip(rng.uniform(size=300) < 0.8, time)),
                  dtype=[("event", bool), ("time", float)])
    forest = RandomForestRegressor(30, max_depth=3, random_state=0)
    surv = _fire(forest, X, ys, cls=FIRESurvivalRegressor, rule_values="unit")
    assert surv.rule_values_ == "unit"
    assert surv.get_params()["rule_values"] == "unit"
    np.testing.assert_array_equal(surv.ensemble_.leaf_values, 1.0)


# -- "auto" -----------------------------------------------------------------------
@pytest.mark.parametrize("make, expected", [
    (lambda: RandomForestRegressor(5, max_depth=3, random_state=0), "leaf"),
    (lambda: ExtraTreesRegressor(5, max_depth=3, random_state=0), "leaf"),
    (lambda: DecisionTreeRegressor(max_depth=3, random_state=0), "leaf"),
    (lambda: GradientBoostingRegressor(n_estimators=5, random_state=0), "unit"),
    (lambda: HistGradientBoostingRegressor(max_iter=5, random_state=0), "unit"),
    (lambda: xgb.XGBRegressor(n_estimators=5, n_jobs=1), "unit"),
    (lambda: xgb.XGBRFRegressor(n_estimators=5, n_jobs=1), "leaf"),
    # one round of parallel trees is a forest; several rounds of them boost
    (lambda: xgb.XGBRegressor(n_estimators=1, num_parallel_tree=5, subsample=0.8,
                              colsample_bynode=0.8, n_jobs=1), "leaf"),
    (lambda: xgb.XGBRegressor(n_estimators=3, num_parallel_tree=2, n_jobs=1), "unit"),
    (lambda: lgb.LGBMRegressor(n_estimators=5, verbose=-1), "unit"),
    (lambda: lgb.LGBMRegressor(n_estimators=5, boosting_type="dart", verbose=-1), "unit"),
    (lambda: lgb.LGBMRegressor(n_estimators=5, boosting_type="rf", subsample=0.7,
                               subsample_freq=1, verbose=-1), "leaf"),
    # one boosting round is one tree (per class), in every library
    (lambda: GradientBoostingRegressor(n_estimators=1, random_state=0), "leaf"),
    (lambda: HistGradientBoostingRegressor(max_iter=1, random_state=0), "leaf"),
    (lambda: xgb.XGBRegressor(n_estimators=1, n_jobs=1), "leaf"),
    (lambda: lgb.LGBMRegressor(n_estimators=1, verbose=-1), "leaf"),
], ids=["rf", "et", "tree", "gb", "hgb", "xgb", "xgbrf", "xgb-1-round-forest",
        "xgb-boosted-forests", "lgbm", "lgbm-dart", "lgbm-rf", "gb-1", "hgb-1", "xgb-1",
        "lgbm-1"])
def test_auto_resolves_by_ensemble_kind(reg_data, make, expected):
    X, y = reg_data
    model = make().fit(X, y)
    ens = rule_ensemble_from_model(model)
    assert resolve_rule_values("auto", model, ens) == expected
    assert resolve_rule_values("leaf", model, ens) == "leaf"
    assert resolve_rule_values("unit", model, ens) == "unit"
    # the raw boosters resolve like their wrappers
    if isinstance(model, xgb.XGBModel):
        booster = model.get_booster()
        assert resolve_rule_values("auto", booster, rule_ensemble_from_model(booster)) == expected
    if isinstance(model, lgb.LGBMModel):
        booster = model.booster_
        assert resolve_rule_values("auto", booster, rule_ensemble_from_model(booster)) == expected


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_auto_counts_the_rounds_the_model_predicts_with(library):
    # early stopping that kept the first round (the attribute it sets): the
    # model predicts with one tree, whatever it trained after it, and the
    # ensemble reads that tree only, so it is not a booster
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0) + rng.normal(scale=0.1, size=300)
    if library == "xgboost":
        model = xgb.XGBRegressor(n_estimators=5, max_depth=2, n_jobs=1).fit(X, y)
        model.get_booster().set_attr(best_iteration="0")
        assert model.best_iteration == 0 and model.get_booster().num_boosted_rounds() == 5
        raw = model.predict(X, output_margin=True)
    else:
        model = lgb.train({"max_depth": 2, "verbose": -1}, lgb.Dataset(X, y),
                          num_boost_round=5)
        model.best_iteration = 1
        assert model.num_trees() == 5
        raw = model.predict(X, raw_score=True)
    ens = rule_ensemble_from_model(model)
    assert ens.n_trees == 1
    np.testing.assert_allclose(ens.predict_raw(X), raw, rtol=1e-6, atol=1e-6)
    assert resolve_rule_values("auto", model, ens) == "leaf"


def test_auto_leaves_a_forest_fit_bitwise_unchanged():
    X, y = make_classification(300, 6, n_informative=4, random_state=1)
    forest = RandomForestClassifier(50, max_depth=3, random_state=0).fit(X, y)
    a = _fire(forest, X, y, cls=FIREClassifier, rule_values="auto")
    b = _fire(forest, X, y, cls=FIREClassifier, rule_values="leaf")
    assert a.rule_values_ == b.rule_values_ == "leaf"
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.ensemble_.leaf_values, b.ensemble_.leaf_values)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    # and the leaf values are the library's (no rescaling on the way)
    np.testing.assert_array_equal(
        a.ensemble_.leaf_values, rule_ensemble_from_model(forest).leaf_values)


# -- bad input --------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["Unit", "indicator", None, 1, True])
@pytest.mark.parametrize("cls", [FIRERegressor, FIREClassifier])
def test_bad_rule_values_is_a_clear_error(reg_data, bad, cls):
    X, y = reg_data
    if cls is FIREClassifier:
        y = (y > np.median(y)).astype(int)
    with pytest.raises(ValueError, match=r"rule_values must be 'auto', 'leaf'.*'unit'"):
        cls(RandomForestRegressor(5) if cls is FIRERegressor
            else RandomForestClassifier(5), rule_values=bad).fit(X, y)


def test_gradient_boosting_classifier_auto_is_unit():
    X, y = make_classification(200, 5, random_state=2)
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X, y)
    for cls in (FIRERegressor, FIREClassifier, FIREPoissonRegressor, FIRESurvivalRegressor):
        assert cls().get_params()["rule_values"] == "auto"
    clf = _fire(model, X, y, cls=FIREClassifier)
    assert clf.rule_values_ == "unit"
    np.testing.assert_allclose(clf.decision_function(X), _design_raw(clf, X),
                               rtol=1e-10, atol=1e-8)


def test_summary_says_unit_values(reg_data):
    X, y = reg_data
    model = lgb.LGBMRegressor(n_estimators=20, n_jobs=1, verbose=-1, random_state=0).fit(X, y)
    unit = _fire(model, X, y, rule_values="auto")
    assert "rule values: 1" in unit.summary() and "boosted" in unit.summary()
    forest = RandomForestRegressor(20, max_depth=3, random_state=0).fit(X, y)
    assert "rule values" not in _fire(forest, X, y, rule_values="auto").summary()


def test_risk_card_terms_under_unit():
    # the risk card's log-odds terms read the fitted ensemble: a kept rule's
    # contribution is its weight, and they sum to decision_function
    from firecy.risk._model_terms import contributions, rule_membership

    X, y = make_classification(300, 6, n_informative=4, random_state=3)
    model = lgb.LGBMClassifier(n_estimators=30, n_jobs=1, verbose=-1, random_state=0).fit(X, y)
    clf = _fire(model, X, y, cls=FIREClassifier, rule_values="unit", max_rules=6)
    A, cols, Xm = rule_membership(clf, X)
    c, c0 = contributions(clf, Xm, cols)
    np.testing.assert_array_equal(c, clf.coef_[cols])
    np.testing.assert_allclose(A @ c + c0, clf.decision_function(X), rtol=1e-10, atol=1e-8)


def _library_models(X, y):
    return {
        "gb": GradientBoostingRegressor(n_estimators=15, max_depth=3, random_state=0),
        "hgb": HistGradientBoostingRegressor(max_iter=15, random_state=0),
        "xgboost": xgb.XGBRegressor(n_estimators=15, max_depth=4, n_jobs=1),
        "lightgbm": lgb.LGBMRegressor(n_estimators=15, n_jobs=1, verbose=-1, random_state=0),
    }


@pytest.mark.parametrize("name", ["gb", "hgb", "xgboost", "lightgbm"])
@pytest.mark.parametrize("rule_depth", [None, "auto"])
def test_unit_ensemble_still_reproduces_the_library(reg_data, name, rule_depth):
    # under "unit" the values move into column_scale: the fitted ensemble_
    # with its default weights is still the library's prediction (leaves) or
    # the cut trees' (a cut), while its design is the rules' indicators
    X, y = reg_data
    model = _library_models(X, y)[name].fit(X, y)
    fire = _fire(model, X, y, rule_depth=rule_depth)
    assert fire.rule_values_ == "unit"
    ens = fire.ensemble_
    assert ens.is_indicator and np.all(ens.leaf_values == 1.0)
    np.testing.assert_array_equal(ens.design(X).data, 1.0)
    # the same ensemble built afresh (and cut the same way), with its values
    ref = rule_ensemble_from_model(model)
    if ens.rule_depth is not None:
        ref = ref.cut(ens.rule_depth, X=X)
    np.testing.assert_allclose(ens.column_scale, ref.leaf_values * ref.column_scale)
    np.testing.assert_allclose(ens.predict_raw(X), ref.predict_raw(X), rtol=1e-12, atol=1e-9)
    if rule_depth is None:
        np.testing.assert_allclose(ens.predict_raw(X), ens.reference_predict_raw(X),
                                   rtol=1e-5, atol=1e-5)
    # predict is the kept rules' effects, read from the same ensemble
    np.testing.assert_allclose(fire.predict(X), _design_raw(fire, X), rtol=1e-10, atol=1e-8)


def test_to_indicators_is_idempotent_and_refuses_a_later_cut(reg_data):
    X, y = reg_data
    model = GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(model)
    values = ens.leaf_values * ens.column_scale
    assert not ens.is_indicator
    ens.to_indicators().to_indicators()      # the second call changes nothing
    assert ens.is_indicator
    np.testing.assert_array_equal(ens.column_scale, values)
    np.testing.assert_array_equal(ens.leaf_values, 1.0)
    np.testing.assert_allclose(ens.predict_raw(X), model.predict(X), rtol=1e-12)
    with pytest.raises(ValueError, match="cut the ensemble before to_indicators"):
        ens.cut(2, X=X)
