"""RuleEnsemble from XGBoost models (sklearn wrapper and raw Booster)."""
import numpy as np
import pytest

xgb = pytest.importorskip("xgboost")

from firecy.ensembles import rule_ensemble_from_model  # noqa: E402
from firecy.ensembles._testing import check_rule_ensemble  # noqa: E402
from test_ensembles_sklearn import (  # noqa: E402
    N_FEATURES, N_NEW, make_data, threshold_rows, with_missing,
)

CAT = (4, 5)  # categorical columns of the categorical models
FEATURE_TYPES = ["q"] * 4 + ["c", "c"]
COMMON = dict(n_estimators=8, max_depth=3, n_jobs=1, random_state=0)


def _train(params, task, rounds=8, cat=(), **kw):
    X, y = make_data(task, categorical=cat)
    X = with_missing(X, np.random.default_rng(1))
    ft = FEATURE_TYPES if cat else None
    dtrain = xgb.DMatrix(X, y, feature_types=ft, enable_categorical=bool(cat))
    params = {"max_depth": 3, "nthread": 1, "seed": 0, **params}
    return xgb.train(params, dtrain, num_boost_round=rounds, **kw), X


# id -> (builder returning (model, X_train), task, categorical columns)
MODELS = {
    "reg_depthwise": (lambda X, y: xgb.XGBRegressor(tree_method="hist", **COMMON).fit(X, y),
                      "regression", ()),
    "reg_lossguide": (lambda X, y: xgb.XGBRegressor(
        grow_policy="lossguide", max_leaves=7, **{**COMMON, "max_depth": 0}).fit(X, y),
        "regression", ()),
    "reg_exact": (lambda X, y: xgb.XGBRegressor(tree_method="exact", **COMMON).fit(X, y),
                  "regression", ()),
    "rf_regressor": (lambda X, y: xgb.XGBRFRegressor(
        n_estimators=6, max_depth=4, n_jobs=1, random_state=0).fit(X, y), "regression", ()),
    "clf_binary": (lambda X, y: xgb.XGBClassifier(**COMMON).fit(X, y), "binary", ()),
    "clf_multiclass_parallel_trees": (lambda X, y: xgb.XGBClassifier(
        num_parallel_tree=2, subsample=0.8, **{**COMMON, "n_estimators": 4}).fit(X, y),
        "multiclass", ()),
    "rf_classifier_multiclass": (lambda X, y: xgb.XGBRFClassifier(
        n_estimators=4, max_depth=3, n_jobs=1, random_state=0).fit(X, y), "multiclass", ()),
    "dart": (lambda X, y: xgb.XGBRegressor(
        booster="dart", rate_drop=0.3, skip_drop=0.0, **COMMON).fit(X, y), "regression", ()),
    "dart_binary_forest_normalised": (lambda X, y: xgb.XGBClassifier(
        booster="dart", rate_drop=0.5, normalize_type="forest", **COMMON).fit(X, y),
        "binary", ()),
    "early_stopping": (lambda X, y: xgb.XGBRegressor(
        early_stopping_rounds=2, learning_rate=0.5, **{**COMMON, "n_estimators": 60}).fit(
            X[:200], y[:200], eval_set=[(X[200:], y[200:])], verbose=False),
        "regression", ()),
    "categorical_partition": (lambda X, y: xgb.XGBRegressor(
        enable_categorical=True, feature_types=FEATURE_TYPES, max_cat_to_onehot=1,
        **COMMON).fit(X, y), "regression", CAT),
    "categorical_onehot_multiclass": (lambda X, y: xgb.XGBClassifier(
        enable_categorical=True, feature_types=FEATURE_TYPES, max_cat_to_onehot=16,
        **{**COMMON, "n_estimators": 4}).fit(X, y), "multiclass", CAT),
    "poisson": (lambda X, y: xgb.XGBRegressor(objective="count:poisson", **COMMON).fit(X, y),
                "poisson", ()),
    "gamma": (lambda X, y: xgb.XGBRegressor(objective="reg:gamma", **COMMON).fit(X, y + 1.0),
              "poisson", ()),
    "absolute_error": (lambda X, y: xgb.XGBRegressor(objective="reg:absoluteerror", **COMMON)
                       .fit(X, y), "regression", ()),
    "booster_logistic": (lambda X, y: _train({"objective": "binary:logistic"}, "binary")[0],
                         "binary", ()),
    "booster_logitraw": (lambda X, y: _train({"objective": "binary:logitraw"}, "binary")[0],
                         "binary", ()),
    "booster_softprob": (lambda X, y: _train(
        {"objective": "multi:softprob", "num_class": 3}, "multiclass", rounds=4)[0],
        "multiclass", ()),
    "booster_categorical": (lambda X, y: _train(
        {"objective": "reg:squarederror", "max_cat_to_onehot": 1}, "regression", cat=CAT)[0],
        "regression", CAT),
    "booster_dart": (lambda X, y: _train(
        {"booster": "dart", "rate_drop": 0.4, "objective": "reg:squarederror"}, "regression")[0],
        "regression", ()),
}

_CACHE = {}


def fitted(name):
    if name not in _CACHE:
        build, task, cat = MODELS[name]
        rng = np.random.default_rng(1)
        X, y = make_data(task, categorical=cat)
        X = with_missing(X, rng)  # XGBoost learns default directions from NaN
        model = build(X, y)
        ens = rule_ensemble_from_model(model)
        X_new, _ = make_data(task, seed=2, n=N_NEW, categorical=cat)
        X_new = with_missing(np.vstack([X_new, threshold_rows(ens, N_NEW, rng, cat)]), rng)
        _CACHE[name] = (model, ens, X, X_new)
    return _CACHE[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_training_data(name):
    _, ens, X, _ = fitted(name)
    assert ens.source == "xgboost" and ens.n_features_in_ == N_FEATURES
    check_rule_ensemble(ens, X)


@pytest.mark.parametrize("name", list(MODELS))
def test_new_data_with_missing_and_thresholds(name):
    _, ens, _, X_new = fitted(name)
    check_rule_ensemble(ens, X_new)


def test_operators_and_precision():
    _, ens, _, _ = fitted("reg_depthwise")
    conds = [c for r in ens.rules for c in r]
    assert {c.op for c in conds} == {"<", ">="}
    assert all(c.dtype == "float32" for c in conds)
    assert all(float(np.float32(c.threshold)) == c.threshold for c in conds)


def test_lossguide_leaves_are_reordered():
    _, ens, _, _ = fitted("reg_lossguide")
    assert any(
        np.any(np.diff(ens.leaf_node_ids[ens.block_ptr[t]:ens.block_ptr[t + 1]]) < 0)
        for t in range(ens.n_trees)
    )


def test_multiclass_layout():
    model, ens, X, _ = fitted("clf_multiclass_parallel_trees")
    # Trees come round x class x parallel tree.
    assert ens.n_outputs == 3 and ens.n_trees == 4 * 3 * 2
    np.testing.assert_array_equal(ens.tree_class, np.tile(np.repeat(np.arange(3), 2), 4))
    assert ens.baseline(X).shape == (X.shape[0], 3)


def test_dart_uses_tree_weights():
    for name in ("dart", "booster_dart"):
        _, ens, _, _ = fitted(name)
        assert not np.allclose(ens.tree_scale, 1.0), name


def test_early_stopping_uses_best_iteration():
    model, ens, X, _ = fitted("early_stopping")
    n_all = model.get_booster().num_boosted_rounds()
    assert model.best_iteration + 1 < n_all
    assert ens.n_trees == model.best_iteration + 1
    # A raw Booster predicts with every tree, and so does its RuleEnsemble.
    ens_all = rule_ensemble_from_model(model.get_booster())
    assert ens_all.n_trees == n_all
    check_rule_ensemble(ens_all, X)


def test_categorical_splits_send_listed_categories_right():
    _, ens, X, _ = fitted("categorical_partition")
    cat_conds = [(c, r.index(c)) for r in ens.rules for c in r if c.is_categorical]
    assert cat_conds
    assert all(c.feature in CAT and c.category_cast == "floor" for c, _ in cat_conds)
    ops = {c.op for c, _ in cat_conds}
    assert ops == {"in", "not in"}
    X_bad = np.tile(X[:12], (3, 1))
    # Invalid categories (negative, even -0.5 which truncates to 0) and
    # unseen ones go left; fractions truncate.
    X_bad[:, 4] = np.repeat([-1.0, -0.5, 99.0], 12)
    X_bad[:, 5] = np.repeat([1.5, -0.25, 2.999], 12)
    check_rule_ensemble(ens, X_bad)


def test_booster_accepts_dmatrix_and_numpy():
    model, ens, X, _ = fitted("booster_categorical")
    dm = xgb.DMatrix(X, feature_types=FEATURE_TYPES, enable_categorical=True)
    np.testing.assert_array_equal(ens.leaf_table(dm), ens.leaf_table(X))
    np.testing.assert_allclose(ens.predict_raw(dm), ens.reference_predict_raw(X), rtol=1e-6)


def test_pandas_categorical_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = make_data("regression", categorical=(5,))
    names = np.array(["red", "green", "blue", "cyan", "black"])
    df = pd.DataFrame(X[:, :5], columns=[f"f{i}" for i in range(5)])
    df["colour"] = pd.Categorical(names[X[:, 5].astype(int)], categories=sorted(names))
    df.loc[np.random.default_rng(0).random(len(df)) < 0.1, "colour"] = np.nan
    model = xgb.XGBRegressor(enable_categorical=True, max_cat_to_onehot=1, **COMMON).fit(df, y)
    ens = rule_ensemble_from_model(model)
    assert ens.feature_names == list(df.columns)
    check_rule_ensemble(ens, df)


def test_gblinear_refused():
    X, y = make_data("regression", n=60)
    model = xgb.XGBRegressor(booster="gblinear", n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="gblinear"):
        rule_ensemble_from_model(model)


def test_vector_leaf_refused():
    X, y = make_data("regression2", n=100)
    model = xgb.XGBRegressor(
        multi_strategy="multi_output_tree", tree_method="hist", n_estimators=2, max_depth=2
    ).fit(X, y)
    with pytest.raises(ValueError, match="vector-leaf"):
        rule_ensemble_from_model(model)


def test_multi_target_one_tree_per_output():
    X, y = make_data("regression2", n=200)
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
    ens = rule_ensemble_from_model(model)
    assert ens.n_outputs == 2
    check_rule_ensemble(ens, X)


@pytest.mark.parametrize("cls", [xgb.XGBRegressor, xgb.XGBClassifier, xgb.XGBRFRegressor])
def test_unfitted_raises_value_error(cls):
    with pytest.raises(ValueError, match="not fitted"):
        rule_ensemble_from_model(cls())


def test_non_nan_missing_value_warns():
    X, y = make_data("regression", n=100)
    model = xgb.XGBRegressor(missing=-999.0, n_estimators=2, max_depth=2).fit(X, y)
    with pytest.warns(UserWarning, match="-999"):
        rule_ensemble_from_model(model)


@pytest.mark.parametrize("sentinel", [0.0, -999.0])
def test_non_nan_missing_value_is_missing_when_rules_are_evaluated(sentinel):
    # XGBRegressor(missing=v) reads every v as missing: the rules' row sets
    # (rule_mask, on which supports and cuts rest) must be XGBoost's own leaf
    # routing, and a FIRE fit's prediction the sum over its rules' masks
    import warnings

    from firecy import FIRERegressor

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 5)))          # many exact zeros
    X[rng.random(X.shape) < 0.1] = sentinel
    y = X[:, 0] + 2 * (X[:, 1] > 0) + rng.normal(scale=0.3, size=300)
    model = xgb.XGBRegressor(missing=sentinel, n_estimators=8, max_depth=3, n_jobs=1,
                             random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ens = rule_ensemble_from_model(model)
        fire = FIRERegressor(model, n_jobs=1, random_state=0, linear_terms=False).fit(X, y)
    leaf = model.apply(X)
    for j in range(ens.n_rules):
        t = np.searchsorted(ens.block_ptr, j, side="right") - 1
        np.testing.assert_array_equal(ens.rule_mask(j, X), leaf[:, t] == ens.leaf_node_ids[j])
    np.testing.assert_allclose(ens.predict_raw(X), model.predict(X, output_margin=True),
                               rtol=1e-5, atol=1e-5)
    fitted = fire.ensemble_
    masks = np.column_stack([fitted.rule_mask(k, X) for k in range(fitted.n_rules)])
    by_rules = masks @ (fitted.leaf_values * fire.coef_) + fitted.baseline(X) + fire.intercept_
    np.testing.assert_allclose(fire.predict(X), by_rules, rtol=1e-10, atol=1e-10)


def test_dmatrix_input_is_refused_by_name():
    # a DMatrix holds XGBoost's copy of the data: rules cannot read it back
    from firecy import FIRERegressor

    X, y = make_data("regression", n=100)
    model = xgb.XGBRegressor(n_estimators=2, max_depth=2).fit(X, y)
    ens = rule_ensemble_from_model(model)
    for call in (lambda d: ens.rule_mask(0, d), lambda d: ens.dense_for_rules(d),
                 lambda d: FIRERegressor(model, linear_terms=False).fit(d, y)):
        with pytest.raises(TypeError, match="xgboost DMatrix"):
            call(xgb.DMatrix(X))
    fire = FIRERegressor(model, lam=0.1, n_jobs=1, linear_terms=False).fit(X, y)
    with pytest.raises(TypeError, match="xgboost DMatrix"):
        fire.predict(xgb.DMatrix(X))


def test_sparse_input_implicit_entries_are_missing():
    sp = pytest.importorskip("scipy.sparse")
    X, y = make_data("regression")
    X[np.random.default_rng(0).random(X.shape) < 0.4] = 0.0
    model = xgb.XGBRegressor(**COMMON).fit(X, y)
    ens = rule_ensemble_from_model(model)
    Xs = sp.csr_matrix(X)  # XGBoost: the zeros it does not store are missing
    dense = ens.dense_for_rules(Xs)
    assert np.isnan(dense).sum() == (X == 0).sum()
    check_rule_ensemble(ens, Xs)
    assert not np.array_equal(ens.leaf_table(Xs), ens.leaf_table(X))


def test_pickle_round_trip():
    import pickle

    for name in ("booster_categorical", "clf_multiclass_parallel_trees"):
        _, ens, X, _ = fitted(name)
        ens2 = pickle.loads(pickle.dumps(ens))
        assert ens2.rules == ens.rules
        np.testing.assert_allclose(ens2.predict_raw(X), ens.predict_raw(X))
