"""RuleEnsemble from LightGBM models (sklearn wrapper and raw Booster)."""
import warnings

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from firecy.ensembles import rule_ensemble_from_model  # noqa: E402
from firecy.ensembles._testing import check_rule_ensemble  # noqa: E402
from test_ensembles_sklearn import (  # noqa: E402
    N_FEATURES, N_NEW, make_data, threshold_rows, with_missing,
)

CAT = (5,)
COMMON = dict(n_estimators=8, num_leaves=7, min_child_samples=5, n_jobs=1,
              random_state=0, verbose=-1)


def with_zeros(X, rng, frac=0.15):
    """Exact zeros (and tiny values LightGBM counts as zero) for missing_type Zero."""
    X = X.copy()
    X[rng.random(X.shape) < frac] = 0.0
    X[rng.random(X.shape) < 0.02] = 1e-36
    return X


def _booster(params, task, rounds=8, cat=()):
    X, y = make_data(task, categorical=cat)
    X = with_missing(X, np.random.default_rng(1))
    params = {"num_leaves": 7, "min_data_in_leaf": 5, "num_threads": 1, "seed": 0,
              "verbose": -1, **params}
    ds = lgb.Dataset(X, y, categorical_feature=list(cat) or "auto")
    return lgb.train(params, ds, num_boost_round=rounds)


def _early_stopped_wrapper(X, y):
    model = lgb.LGBMRegressor(learning_rate=0.5, **{**COMMON, "n_estimators": 60})
    with warnings.catch_warnings():
        # LightGBM 4.7 deprecates eval_set in favour of eval_X / eval_y.
        warnings.simplefilter("ignore", category=DeprecationWarning)
        warnings.simplefilter("ignore", category=FutureWarning)
        return model.fit(X[:200], y[:200], eval_set=[(X[200:], y[200:])],
                         callbacks=[lgb.early_stopping(2, verbose=False)])


def _early_stopped_booster(X, y):
    params = {"num_leaves": 7, "min_data_in_leaf": 5, "num_threads": 1, "seed": 0,
              "verbose": -1, "learning_rate": 0.5}
    train = lgb.Dataset(X[:200], y[:200])
    valid = lgb.Dataset(X[200:], y[200:], reference=train)
    return lgb.train(params, train, num_boost_round=60, valid_sets=[valid],
                     callbacks=[lgb.early_stopping(2, verbose=False)],
                     keep_training_booster=True)


def _fit(est, **fit_kw):
    return lambda X, y: est.fit(X, y, **fit_kw)


RF = dict(boosting_type="rf", subsample=0.7, subsample_freq=1, colsample_bytree=0.8)

# id -> (builder(X, y) -> model, task, categorical columns, data transform)
MODELS = {
    "reg_nan": (_fit(lgb.LGBMRegressor(**COMMON)), "regression", (), "nan"),
    "reg_missing_none": (_fit(lgb.LGBMRegressor(use_missing=False, **COMMON)),
                         "regression", (), "nan"),
    "reg_missing_zero": (_fit(lgb.LGBMRegressor(zero_as_missing=True, **COMMON)),
                         "regression", (), "zeros"),
    "reg_no_nan_seen": (_fit(lgb.LGBMRegressor(**COMMON)), "regression", (), "clean"),
    "clf_binary": (_fit(lgb.LGBMClassifier(**COMMON)), "binary", (), "nan"),
    "clf_multiclass": (_fit(lgb.LGBMClassifier(**{**COMMON, "n_estimators": 4})),
                       "multiclass", (), "nan"),
    "rf_regressor": (_fit(lgb.LGBMRegressor(**RF, **COMMON)), "regression", (), "nan"),
    "rf_binary": (_fit(lgb.LGBMClassifier(**RF, **COMMON)), "binary", (), "nan"),
    "rf_multiclass": (_fit(lgb.LGBMClassifier(**RF, **{**COMMON, "n_estimators": 4})),
                      "multiclass", (), "nan"),
    "dart": (_fit(lgb.LGBMRegressor(boosting_type="dart", drop_rate=0.3, **COMMON)),
             "regression", (), "nan"),
    "categorical": (_fit(lgb.LGBMRegressor(min_data_per_group=5, cat_smooth=1.0, **COMMON),
                         categorical_feature=list(CAT)), "regression", CAT, "nan"),
    "categorical_multiclass": (
        _fit(lgb.LGBMClassifier(min_data_per_group=5, cat_smooth=1.0,
                                **{**COMMON, "n_estimators": 4}),
             categorical_feature=list(CAT)), "multiclass", CAT, "nan"),
    "early_stopping": (lambda X, y: _early_stopped_wrapper(X, y), "regression", (), "nan"),
    "booster_early_stopping_keeps_all_trees": (
        lambda X, y: _early_stopped_booster(X, y), "regression", (), "nan"),
    "booster_binary": (lambda X, y: _booster({"objective": "binary"}, "binary"),
                       "binary", (), "nan"),
    "booster_multiclass": (lambda X, y: _booster(
        {"objective": "multiclass", "num_class": 3}, "multiclass", rounds=4),
        "multiclass", (), "nan"),
    "booster_categorical_poisson": (lambda X, y: _booster(
        {"objective": "poisson", "min_data_per_group": 5, "cat_smooth": 1.0},
        "poisson", cat=CAT), "poisson", CAT, "nan"),
}

_CACHE = {}


def _prepare(X, how, rng):
    if how == "nan":
        return with_missing(X, rng)
    if how == "zeros":
        return with_missing(with_zeros(X, rng), rng, frac=0.05)
    return X


def fitted(name):
    if name not in _CACHE:
        build, task, cat, how = MODELS[name]
        rng = np.random.default_rng(1)
        X, y = make_data(task, categorical=cat)
        X = _prepare(X, how, rng)
        model = build(X, y)
        ens = rule_ensemble_from_model(model)
        X_new, _ = make_data(task, seed=2, n=N_NEW, categorical=cat)
        X_new = np.vstack([X_new, threshold_rows(ens, N_NEW, rng, cat)])
        # New data always gets NaN and zeros, whatever the model saw.
        X_new = with_missing(with_zeros(X_new, rng), rng)
        _CACHE[name] = (model, ens, X, X_new)
    return _CACHE[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_training_data(name):
    _, ens, X, _ = fitted(name)
    assert ens.source == "lightgbm" and ens.n_features_in_ == N_FEATURES
    check_rule_ensemble(ens, X)


@pytest.mark.parametrize("name", list(MODELS))
def test_new_data_with_missing_and_thresholds(name):
    _, ens, _, X_new = fitted(name)
    check_rule_ensemble(ens, X_new)


@pytest.mark.parametrize(
    "name, expected",
    [("reg_nan", {"zero_as_missing": False}), ("reg_missing_zero", {"zero_as_missing": True})],
)
def test_missing_types_are_represented(name, expected):
    _, ens, _, _ = fitted(name)
    conds = [c for r in ens.rules for c in r if not c.is_categorical]
    assert conds and {c.op for c in conds} == {"<=", ">"}
    assert all(c.dtype == "float64" for c in conds)
    assert any(c.zero_as_missing == expected["zero_as_missing"] for c in conds)


def test_missing_type_none_routes_nan_as_zero():
    model, ens, _, _ = fitted("reg_missing_none")
    for rule in ens.rules:
        for c in rule:
            # NaN goes where 0.0 goes.
            assert c.missing == bool(c.evaluate(np.zeros((1, N_FEATURES)))[0])


def test_leaf_index_order_differs_from_left_to_right():
    _, ens, _, _ = fitted("reg_nan")
    assert any(
        np.any(np.diff(ens.leaf_node_ids[ens.block_ptr[t]:ens.block_ptr[t + 1]]) < 0)
        for t in range(ens.n_trees)
    )


def test_rf_mode_averages():
    model, ens, X, _ = fitted("rf_regressor")
    n_iter = model.booster_.current_iteration()
    np.testing.assert_allclose(ens.tree_scale, 1.0 / n_iter)
    np.testing.assert_allclose(ens.predict_raw(X), model.predict(X), rtol=1e-9)


def test_multiclass_layout():
    model, ens, X, _ = fitted("clf_multiclass")
    assert ens.n_outputs == 3
    np.testing.assert_array_equal(ens.tree_class, np.arange(ens.n_trees) % 3)
    assert ens.predict_raw(X).shape == (X.shape[0], 3)


def test_categorical_splits_send_listed_categories_left():
    _, ens, X, _ = fitted("categorical")
    cat_conds = [c for r in ens.rules for c in r if c.is_categorical]
    assert cat_conds and all(c.feature == 5 and c.category_cast == "trunc" for c in cat_conds)
    assert all((c.op == "in") == (not c.missing) for c in cat_conds)
    X_bad = np.tile(X[:12], (4, 1))
    # Negative values go right, -0.5 truncates to category 0, fractions truncate.
    X_bad[:, 5] = np.repeat([-1.0, -0.5, 1.7, 77.0], 12)
    check_rule_ensemble(ens, X_bad)


def test_early_stopping_uses_best_iteration():
    model, ens, _, _ = fitted("early_stopping")
    assert model.best_iteration_ > 0
    assert ens.n_trees == model.best_iteration_
    # A booster that kept training state keeps every tree but predicts with
    # best_iteration; so does its RuleEnsemble.
    booster, ens, _, _ = fitted("booster_early_stopping_keeps_all_trees")
    assert 0 < booster.best_iteration < booster.current_iteration()
    assert ens.n_trees == booster.best_iteration


def test_single_leaf_tree():
    X, _ = make_data("regression", n=100)
    model = lgb.LGBMRegressor(n_estimators=3, verbose=-1).fit(X, np.full(100, 2.5))
    ens = rule_ensemble_from_model(model)
    assert ens.tree_sizes.min() == 1 and ens.rules[0] == []
    assert ens.rule_text(0) == "(all rows)"
    check_rule_ensemble(ens, X)


def test_pandas_categorical_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = make_data("regression", categorical=(5,))
    names = np.array(["red", "green", "blue", "cyan", "black"])
    df = pd.DataFrame(X[:, :5], columns=[f"f{i}" for i in range(5)])
    df["colour"] = pd.Categorical(names[X[:, 5].astype(int)], categories=sorted(names))
    model = lgb.LGBMRegressor(min_data_per_group=5, cat_smooth=1.0, **COMMON).fit(df, y)
    ens = rule_ensemble_from_model(model)
    assert ens.feature_names == list(df.columns)
    assert any(c.is_categorical for r in ens.rules for c in r)
    check_rule_ensemble(ens, df)


def test_linear_tree_refused():
    X, y = make_data("regression", n=100)
    model = lgb.LGBMRegressor(linear_tree=True, n_estimators=2, verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match="linear_tree"):
        rule_ensemble_from_model(model)
    with pytest.raises(ValueError, match="linear_tree"):
        rule_ensemble_from_model(lgb.Booster(model_str=model.booster_.model_to_string()))


@pytest.mark.parametrize("cls", [lgb.LGBMRegressor, lgb.LGBMClassifier])
def test_unfitted_raises_value_error(cls):
    with pytest.raises(ValueError, match="not fitted"):
        rule_ensemble_from_model(cls())


def test_sparse_input():
    sp = pytest.importorskip("scipy.sparse")
    X, y = make_data("regression")
    X[np.random.default_rng(0).random(X.shape) < 0.4] = 0.0
    for kw in ({}, {"zero_as_missing": True}):
        model = lgb.LGBMRegressor(**kw, **COMMON).fit(X, y)
        ens = rule_ensemble_from_model(model)
        Xs = sp.csr_matrix(X)
        np.testing.assert_array_equal(ens.leaf_table(Xs), ens.leaf_table(X))
        check_rule_ensemble(ens, Xs)


def test_pickle_round_trip():
    import pickle

    for name in ("categorical", "booster_multiclass"):
        _, ens, X, _ = fitted(name)
        ens2 = pickle.loads(pickle.dumps(ens))
        assert ens2.rules == ens.rules
        np.testing.assert_allclose(ens2.predict_raw(X), ens.predict_raw(X))


@pytest.mark.parametrize("fitted_first", [True, False])
def test_fire_regressor_with_columns_lightgbm_renames(fitted_first):
    # LightGBM replaces spaces by "_" in the feature names it keeps:
    # FIRERegressor must accept its fitted model on the user's frame, and
    # print the user's names
    import pandas as pd

    from firecy import FIRERegressor
    from firecy.rules import evaluate_parsed, library_reading, parse_rule

    X, y = make_data("regression")
    cols = ["age years", "body mass", "s 1", "blood-pressure (mm)", "plain", "x5", "x6", "x7"]
    X = pd.DataFrame(X, columns=cols[:X.shape[1]])
    model = lgb.LGBMRegressor(**COMMON)
    if fitted_first:
        model.fit(X, y)
        assert model.booster_.feature_name()[:4] == [
            "age_years", "body_mass", "s_1", "blood-pressure_(mm)"]
    est = FIRERegressor(model, penalty="l1", n_lambdas=10, random_state=0,
                        linear_terms=False).fit(X, y)
    names = list(X.columns)
    assert est.ensemble_.feature_names == names
    table = est.rules_
    assert len(table) == est.n_rules_ > 0
    assert any(" " in r for r in table["rule"])
    full = est.ensemble_.leaf_table(X)
    for rule, j in zip(table["rule"], table["column"]):
        assert "_" not in rule.replace("x_", "")  # the user's names, not LightGBM's
        t = int(est.ensemble_.rule_tree[j])
        parsed = parse_rule(rule, names)
        np.testing.assert_array_equal(
            evaluate_parsed(parsed, X, **library_reading(est.ensemble_)), full[:, t] == j)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # an array has no feature names
        np.testing.assert_allclose(est.predict(X), est.predict(X.to_numpy()))
    # other names than the model's are still refused
    with pytest.raises(ValueError, match="differ"):
        FIRERegressor(model if fitted_first else model.fit(X, y), linear_terms=False).fit(
            X.rename(columns={"plain": "other"}), y)


def test_control_characters_in_names_give_a_clear_error():
    import pandas as pd

    X, y = make_data("regression")
    X = pd.DataFrame(X, columns=["a\tb"] + [f"x{j}" for j in range(1, X.shape[1])])
    model = lgb.LGBMRegressor(**COMMON).fit(X, y)
    with pytest.raises(ValueError, match="control characters"):
        rule_ensemble_from_model(model)


def _first_tree_values(ens, t=0):
    return np.asarray(ens.leaf_values)[ens.block_ptr[t]:ens.block_ptr[t + 1]]


@pytest.mark.parametrize("name", ["reg_nan", "dart", "early_stopping",
                                  "booster_categorical_poisson"])
def test_boost_from_average_moves_to_the_baseline(name):
    # LightGBM folds a regression target's location into the first tree; the
    # adapter moves it to the baseline, exactly (the check routes every row
    # through LightGBM itself), so that the first tree's leaves are on the
    # scale of the other trees'
    model, ens, X, _ = fitted(name)
    check_rule_ensemble(ens, X)
    base = ens.constant_baseline()
    assert base.shape == (1,) and base[0] != 0
    np.testing.assert_array_equal(ens.baseline(X[:3]), np.full(3, base[0]))
    later = np.abs(np.asarray(ens.leaf_values)[ens.block_ptr[1]:]).max()
    assert np.abs(_first_tree_values(ens)).max() < 5 * later


@pytest.mark.parametrize("name", ["clf_binary", "clf_multiclass", "booster_binary",
                                  "rf_regressor", "rf_binary"])
def test_classification_and_rf_mode_keep_a_zero_baseline(name):
    # the classification objectives' constant is on the margin's scale, and a
    # random forest's trees all carry the mean: nothing moves
    _, ens, X, _ = fitted(name)
    np.testing.assert_array_equal(ens.constant_baseline(), np.zeros(ens.n_outputs))
    assert np.all(ens.baseline(X[:4]) == 0)


def test_boost_from_average_is_the_mean_target():
    # least squares boosts from the training mean (independent of the trees),
    # and the first tree's root output is 0 there (the residuals sum to 0);
    # LightGBM's dump prints the root value to 6 significant digits
    X, y = make_data("regression")
    y = y + 1000.0
    model = lgb.LGBMRegressor(**COMMON).fit(X, y)
    ens = rule_ensemble_from_model(model)
    np.testing.assert_allclose(ens.constant_baseline(), [y.mean()], rtol=1e-5)
    assert np.abs(_first_tree_values(ens)).max() < 10.0
    check_rule_ensemble(ens, X)


def test_fire_on_lightgbm_is_shift_equivariant():
    # a shift of the target only changes LightGBM's initial score (and the
    # leaf values by rounding: float32 gradients, and a dump that prints the
    # root value to 6 digits); with the score in the baseline FIRE sees the
    # same design up to that rounding and keeps the same rules
    from firecy import FIRERegressor

    X, y = make_data("regression")
    a, b = (FIRERegressor(lgb.LGBMRegressor(**COMMON).fit(X, y + shift), random_state=0,
                          n_jobs=1, linear_terms=False).fit(X, y + shift)
            for shift in (0.0, 1000.0))
    np.testing.assert_array_equal(np.flatnonzero(a.coef_), np.flatnonzero(b.coef_))
    np.testing.assert_allclose(b.predict(X) - 1000.0, a.predict(X), atol=0.01 * y.std())


def _huge_thresholds_model():
    # a feature spanning +-1e301: LightGBM's thresholds on it lie beyond
    # +-1e300, which dump_model clamps to +-1e300 (predict does not)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (2000, 2))
    X[:, 0] *= 1e301
    y = 3.0 * (X[:, 0] < -4e300) + 2.0 * (X[:, 0] > 4e300) + X[:, 1]
    y = y + 0.1 * rng.standard_normal(2000)
    model = lgb.LGBMRegressor(n_estimators=20, num_leaves=4, n_jobs=1, verbose=-1,
                              random_state=0).fit(X, y)
    return model, X, y


def test_thresholds_beyond_1e300_are_read_exactly(tmp_path):
    import sqlite3

    from firecy import FIRERegressor
    from firecy.rules import evaluate_parsed, library_reading, parse_rule, rules_python
    from firecy.rules import rules_sql

    model, X, y = _huge_thresholds_model()
    booster = model.booster_
    text = [float(v) for line in booster.model_to_string().splitlines()
            if line.startswith("threshold=") for v in line[10:].split()]
    assert max(abs(v) for v in text) > 1e300  # the case: dump_model says 1e300
    ens = rule_ensemble_from_model(model)
    check_rule_ensemble(ens, X)
    # every rule, as held and as printed then parsed back, selects the rows
    # LightGBM routes to its leaf
    leaves = booster.predict(X, pred_leaf=True)
    reading = library_reading(ens)
    for j in range(ens.n_rules):
        routed = leaves[:, ens.rule_tree[j]] == ens.leaf_node_ids[j]
        np.testing.assert_array_equal(ens.rule_mask(j, X), routed)
        parsed = parse_rule(ens.rule_text(j), ens.feature_names)
        np.testing.assert_array_equal(evaluate_parsed(parsed, X, **reading), routed)
    # FIRE's design (one column per leaf) and its exports agree on every row
    est = FIRERegressor(model, linear_terms=False, max_rules=None, lam=1e-4,
                        random_state=0).fit(X, y)
    names = ["a", "b"]
    namespace = {}
    exec(rules_python(est, feature_names=names), namespace)
    exported = [namespace["predict"](dict(zip(names, row))) for row in X.tolist()]
    np.testing.assert_allclose(exported, est.predict(X), rtol=1e-12, atol=1e-12)
    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE data ("a" REAL, "b" REAL)')
    con.executemany("INSERT INTO data VALUES (?, ?)", X.tolist())
    sql = rules_sql(est, feature_names=names, table="data", alias="p")
    got = [r[0] for r in con.execute(f"SELECT {sql} FROM data ORDER BY rowid")]
    np.testing.assert_allclose(got, est.predict(X), rtol=1e-12, atol=1e-12)
