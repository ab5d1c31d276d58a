"""Categorical rules by label: XGBoost and LightGBM re-code a new DataFrame by label.

A frame whose categories are in another order, lack some categories or hold
labels the model never saw must be routed as the library routes it, by every
reading of a rule: the leaf table and design, ``rule_mask``, each condition on
the raw frame, the printed text read back, and the Python and SQL exports.
The reference is always the library itself (``pred_leaf`` and its raw
prediction on the same frame).
"""
import warnings

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from firecy.ensembles import rule_ensemble_from_model
from firecy.ensembles._testing import check_design, check_predict_raw, check_rules_route_rows
from firecy.rules import evaluate_parsed, library_reading, parse_rule, rule_text, rules_python
from firecy.rules import rules_sql
from test_export import run_python, run_sql

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

LABELS = ["red", "green", "blue", "cyan", "pink", "gold"]
SIZES = [3, 10, 7, 1]   # integer labels, not in sorted order


def make_frame(n=1500, seed=0, missing=0.05):
    rng = np.random.default_rng(seed)
    colour = np.array(LABELS, dtype=object)[rng.integers(0, len(LABELS), n)]
    size = np.array(SIZES)[rng.integers(0, len(SIZES), n)]
    x = rng.normal(size=n)
    X = pd.DataFrame({
        "x a": x,                                    # a space: LightGBM renames it
        "colour": pd.Categorical(colour, categories=LABELS),
        "size": pd.Categorical(size, categories=SIZES),
        "z": rng.normal(size=n),
    })
    X.loc[rng.random(n) < missing, "colour"] = np.nan
    X.loc[rng.random(n) < missing, "x a"] = np.nan
    effect = {"red": 0.0, "green": 3.0, "blue": 1.0, "cyan": 5.0, "pink": 2.0, "gold": 4.0}
    y = (pd.Series(colour).map(effect).to_numpy() + np.nan_to_num(x)
         + (size > 5) * 1.5 + 0.1 * rng.normal(size=n))
    return X, y


def reordered(X):
    F = X.copy()
    F["colour"] = F["colour"].cat.reorder_categories(LABELS[::-1])
    F["size"] = F["size"].cat.reorder_categories(sorted(SIZES))
    return F


def missing_categories(X):
    keep = X["colour"].isin(["green", "cyan", "gold"]) | X["colour"].isna()
    F = X[keep].reset_index(drop=True)
    F["colour"] = F["colour"].cat.remove_unused_categories().cat.reorder_categories(
        ["gold", "cyan", "green"])
    return F


def unseen_labels(X):
    F = X.copy()
    values = F["colour"].astype(object).to_numpy().copy()
    values[::5] = "purple"
    F["colour"] = pd.Categorical(values, categories=["purple"] + LABELS[::-1])
    return F


def fit(model, X, y):
    with warnings.catch_warnings(), threadpool_limits(1, user_api="openmp"):
        warnings.simplefilter("ignore")
        return model.fit(X, y)


MODELS = {
    "xgboost_partition": lambda: xgb.XGBRegressor(
        n_estimators=15, max_depth=4, enable_categorical=True, max_cat_to_onehot=1,
        n_jobs=1, random_state=0),
    "xgboost_onehot": lambda: xgb.XGBRegressor(
        n_estimators=15, max_depth=4, enable_categorical=True, max_cat_to_onehot=16,
        n_jobs=1, random_state=0),
    "lightgbm": lambda: lgb.LGBMRegressor(
        n_estimators=15, num_leaves=10, min_child_samples=5, min_data_per_group=5,
        cat_smooth=1.0, n_jobs=1, verbose=-1, random_state=0),
}
_CACHE = {}


def fitted(name):
    if name not in _CACHE:
        X, y = make_frame()
        model = fit(MODELS[name](), X, y)
        _CACHE[name] = (model, rule_ensemble_from_model(model), X)
    return _CACHE[name]


def training_codes(ens, F, feature):
    """The code the library gives each row of a category column of F."""
    labels = ens._adapter.labels[feature]
    return F.iloc[:, feature].map(
        lambda v: labels.index(v) if v in labels else np.nan).astype(float).to_numpy()


def check_frame(ens, F):
    """Every reading of every rule on F agrees with the library on F."""
    table, _ = check_design(ens, F)                 # leaf table = pred_leaf
    check_predict_raw(ens, F, rtol=1e-6, table=table)  # = the library's raw prediction
    check_rules_route_rows(ens, F, table)          # rule_mask
    reading = library_reading(ens)
    rule_tree = ens.rule_tree
    for j in range(ens.n_rules):
        expected = table[:, rule_tree[j]] == j
        # each condition on the raw frame, without the library's re-coding
        raw = np.ones(len(F), dtype=bool)
        for c in ens.rules[j]:
            raw &= c.evaluate(F)
        np.testing.assert_array_equal(raw, expected, err_msg=f"conditions of rule {j}")
        text = rule_text(ens, j, show_missing=True)
        got = evaluate_parsed(parse_rule(text, ens.feature_names), F, **reading)
        np.testing.assert_array_equal(got, expected, err_msg=f"rule {j}: {text}")
    # the exports of the whole ensemble (every leaf at its own weight) give
    # the library's raw prediction
    coef = ens.column_scale
    reference = ens.reference_predict_raw(F)
    names = list(F.columns)  # LightGBM's own names have "_" for spaces
    np.testing.assert_allclose(run_python(rules_python(ens, coef, feature_names=names), F),
                               reference, rtol=1e-6, atol=1e-6)
    sql = rules_sql(ens, coef, feature_names=names)
    np.testing.assert_allclose(run_sql(sql, F, {"colour": "text"}), reference,
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_conditions_hold_the_libraries_labels(name):
    _, ens, X = fitted(name)
    assert ens._adapter.labels[1] == tuple(LABELS)
    assert ens._adapter.labels[2] == tuple(SIZES)
    cats = [c for r in ens.rules for c in r if c.is_categorical]
    assert {c.feature for c in cats} == {1, 2}
    for c in cats:
        assert set(c.categories) <= set(ens._adapter.labels[c.feature])
    texts = " ".join(rule_text(ens, j) for j in range(ens.n_rules))
    assert "'green'" in texts or "'cyan'" in texts


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("frame", [reordered, missing_categories])
def test_reordered_and_missing_categories_route_as_the_library(name, frame):
    _, ens, X = fitted(name)
    F = frame(X)
    # the frame's own codes are not the library's: reading them would misroute
    assert not np.array_equal(F["colour"].cat.codes.to_numpy().astype(float),
                              np.nan_to_num(training_codes(ens, F, 1), nan=-1.0))
    check_frame(ens, F)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_training_frame(name):
    _, ens, X = fitted(name)
    check_frame(ens, X)


def test_lightgbm_reads_unseen_labels_as_missing():
    model, ens, X = fitted("lightgbm")
    F = unseen_labels(X)
    # LightGBM's own reading: an unseen label is a missing value
    G = F.copy()
    G["colour"] = G["colour"].cat.set_categories(LABELS)
    np.testing.assert_array_equal(model.predict(F, pred_leaf=True),
                                  model.predict(G, pred_leaf=True))
    check_frame(ens, F)


def _leaves_of(model, X, colour):
    F = X.iloc[:3].copy()
    F["colour"] = pd.Categorical([colour] * 3, categories=sorted({colour, *LABELS}))
    return model.apply(F)


@pytest.mark.parametrize("name", ["xgboost_partition", "xgboost_onehot"])
def test_xgboost_reads_unseen_labels_as_the_next_label_and_so_does_firecy(name):
    model, ens, X = fitted(name)
    # XGBoost 3.2 re-codes by binary search in its sorted categories: an unseen
    # label takes the code of the next one ("purple" -> "red", "blue2" ->
    # "cyan"), and a label after the last one is refused
    np.testing.assert_array_equal(_leaves_of(model, X, "purple"), _leaves_of(model, X, "red"))
    np.testing.assert_array_equal(_leaves_of(model, X, "blue2"), _leaves_of(model, X, "cyan"))
    F = unseen_labels(X)
    with pytest.warns(UserWarning, match="'purple' as 'red'"):
        check_frame(ens, F)
    G = X.copy()
    G["colour"] = G["colour"].cat.add_categories(["zzz"])   # unused, still refused
    with pytest.raises(xgb.core.XGBoostError, match="not in the training set"):
        model.apply(G)
    with pytest.raises(ValueError, match="XGBoost refuses"):
        ens.dense_for_rules(G)
    cat_rule = next(j for j in range(ens.n_rules)
                    if any(c.is_categorical and c.feature == 1 for c in ens.rules[j]))
    cond = next(c for c in ens.rules[cat_rule] if c.feature == 1)
    with pytest.raises(ValueError, match="XGBoost refuses"):
        cond.evaluate(G)
    ns = {}
    exec(rules_python(ens, ens.column_scale, feature_names=list(X.columns)), ns)
    row = {"x a": 0.0, "colour": "zzz", "size": 3, "z": 0.0}
    with pytest.raises(ValueError, match="not one the model was fitted with"):
        ns["predict"](row)
    # integer labels: 5 reads as 7, 11 is refused
    H = X.iloc[:4].copy()
    H["size"] = pd.Categorical([5, 7, 11, 3], categories=[3, 5, 7, 11])
    with pytest.raises(xgb.core.XGBoostError):
        model.apply(H)
    with pytest.raises(ValueError, match="XGBoost refuses"):
        ens.dense_for_rules(H)


def test_lightgbm_booster_from_model_text_keeps_labels():
    model, ens, X = fitted("lightgbm")
    booster = lgb.Booster(model_str=model.booster_.model_to_string())
    ens2 = rule_ensemble_from_model(booster)
    assert ens2._adapter.labels == ens._adapter.labels
    check_frame(ens2, reordered(X))


def test_lightgbm_ordered_categorical_warns_and_routes_by_label():
    X, y = make_frame()
    X["size"] = X["size"].cat.as_ordered()   # LightGBM splits it as numeric codes
    model = fit(MODELS["lightgbm"](), X, y)
    with pytest.warns(UserWarning, match="cannot tell which"):
        ens = rule_ensemble_from_model(model)
    F = reordered(X)
    F["size"] = F["size"].cat.as_ordered()
    table = ens.leaf_table(F)
    # the design and rule_mask re-code the frame as LightGBM does
    check_rules_route_rows(ens, F, table)
    check_predict_raw(ens, F, table=table)


def test_frame_with_other_category_columns_is_refused_as_lightgbm_does():
    model, ens, X = fitted("lightgbm")
    F = X.copy()
    F["z"] = pd.Categorical(np.where(F["z"] > 0, "up", "down"))
    with pytest.raises(ValueError):
        model.predict(F)
    with pytest.raises(ValueError, match="category column"):
        ens.dense_for_rules(F)


def test_histgradientboosting_categories_by_value_unchanged():
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = make_frame()
    model = fit(HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype",
                                              random_state=0), X, y)
    ens = rule_ensemble_from_model(model)
    for F in (reordered(X), missing_categories(X), unseen_labels(X)):
        table = ens.leaf_table(F)
        check_rules_route_rows(ens, F, table)
        check_predict_raw(ens, F, table=table)
