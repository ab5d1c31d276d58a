"""RuleEnsemble from CatBoost models (CatBoostRegressor, CatBoostClassifier, CatBoost)."""
import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in nextafter:RuntimeWarning")

cb = pytest.importorskip("catboost")
pd = pytest.importorskip("pandas")

from firecy.ensembles import rule_ensemble_from_model  # noqa: E402
from firecy.ensembles._testing import check_rule_ensemble  # noqa: E402
from firecy.rules import evaluate_parsed, library_reading, parse_rule  # noqa: E402
from test_ensembles_sklearn import (  # noqa: E402
    N_FEATURES, N_NEW, make_data, threshold_rows, with_missing,
)

COMMON = dict(iterations=20, depth=3, verbose=0, thread_count=1, random_seed=0,
              allow_writing_files=False)
COLOURS = np.array(["red", "green", "blue", "cyan", "black"])


def _reg(**kw):
    return lambda X, y: cb.CatBoostRegressor(**{**COMMON, **kw}).fit(X, y)


def _clf(**kw):
    return lambda X, y: cb.CatBoostClassifier(**{**COMMON, **kw}).fit(X, y)


def _early_stopped(use_best_model):
    def build(X, y):
        model = cb.CatBoostRegressor(**{**COMMON, "iterations": 200, "learning_rate": 0.5},
                                     use_best_model=use_best_model, early_stopping_rounds=3)
        return model.fit(X[:200], y[:200], eval_set=(X[200:], y[200:]))
    return build


def _raw(X, y):
    return cb.CatBoost({**COMMON, "loss_function": "RMSE"}).fit(X, y)


def _scaled(X, y):
    model = cb.CatBoostRegressor(**COMMON).fit(X, y)
    model.set_scale_and_bias(0.5, -3.25)
    return model


# id -> (builder(X, y) -> model, task, missing values at fit)
MODELS = {
    "depth1": (_reg(depth=1), "regression", False),
    "depth3_nan_min": (_reg(nan_mode="Min"), "regression", True),
    "depth6_nan_max": (_reg(depth=6, nan_mode="Max"), "regression", True),
    "depth8": (_reg(depth=8, iterations=10), "regression", True),
    "missing_only_in_test": (_reg(depth=4), "regression", False),
    "border_count_1": (_reg(border_count=1), "regression", True),
    "border_count_254": (_reg(depth=5, border_count=254), "regression", True),
    "binary": (_clf(), "binary", True),
    "binary_boost_from_average": (_clf(boost_from_average=True), "binary", True),
    "multiclass": (_clf(loss_function="MultiClass"), "multiclass", True),
    "early_stopped_best_model": (_early_stopped(True), "regression", True),
    "early_stopped_all_trees": (_early_stopped(False), "regression", True),
    "raw_catboost": (_raw, "regression", True),
    "scale_and_bias": (_scaled, "regression", True),
    "poisson": (_reg(loss_function="Poisson"), "poisson", True),
}

_CACHE = {}


def fitted(name):
    if name not in _CACHE:
        build, task, nan_at_fit = MODELS[name]
        rng = np.random.default_rng(1)
        X, y = make_data(task)
        if nan_at_fit:
            X = with_missing(X, rng)
        model = build(X, y)
        ens = rule_ensemble_from_model(model)
        X_new, _ = make_data(task, seed=2, n=N_NEW)
        # values on, and one float64 / float32 step from, every border
        X_new = with_missing(np.vstack([X_new, threshold_rows(ens, N_NEW, rng)]), rng)
        _CACHE[name] = (model, ens, X, X_new)
    return _CACHE[name]


def _leaf_columns(ens, X):
    return ens.leaf_table(X), ens.rule_tree


def check_printed_rules(ens, X):
    """Every printed rule, read back, selects the rows CatBoost sends to its
    leaf (calc_leaf_indexes, through the leaf table)."""
    table, rule_tree = _leaf_columns(ens, X)
    reading = library_reading(ens)
    names = ens.feature_names
    for j in range(ens.n_rules):
        text = ens.rule_text(j, show_missing=True)
        got = evaluate_parsed(parse_rule(text, names), X, **reading)
        expected = table[:, rule_tree[j]] == j
        assert np.array_equal(got, expected), (j, text, int(got.sum()), int(expected.sum()))


@pytest.mark.parametrize("name", list(MODELS))
def test_training_data(name):
    _, ens, X, _ = fitted(name)
    assert ens.source == "catboost" and ens.n_features_in_ == N_FEATURES
    check_rule_ensemble(ens, X)   # raw score == RawFormulaVal to 1e-6, rules route rows


@pytest.mark.parametrize("name", list(MODELS))
def test_new_data_with_missing_and_borders(name):
    _, ens, _, X_new = fitted(name)
    check_rule_ensemble(ens, X_new)


@pytest.mark.parametrize("name", list(MODELS))
def test_printed_rules_read_back_select_the_leaf_rows(name):
    _, ens, X, X_new = fitted(name)
    check_printed_rules(ens, X)
    check_printed_rules(ens, X_new)


def test_raw_score_is_catboost_raw_formula_val():
    # independent of firecy's reference call: CatBoost's own prediction
    for name in ("depth6_nan_max", "multiclass", "scale_and_bias", "binary"):
        model, ens, _, X_new = fitted(name)
        ref = model.predict(X_new, prediction_type="RawFormulaVal")
        np.testing.assert_allclose(ens.predict_raw(X_new), ref, rtol=1e-6, atol=1e-9)


def test_float32_comparison_at_the_border():
    # CatBoost rounds x to float32 and sends x > border right: the next
    # float64 above a border is the border in float32, so it goes left
    model, ens, _, _ = fitted("depth1")
    cond = ens.rules[0][0]
    assert (cond.op, cond.dtype) == ("<=", "float32")
    b = cond.threshold
    assert float(np.float32(b)) == b
    up32 = float(np.nextafter(np.float32(b), np.float32(np.inf)))
    values = [b, np.nextafter(b, np.inf), np.nextafter(b, -np.inf), up32,
              b + 0.49 * (up32 - b), b + 0.51 * (up32 - b)]
    X = np.zeros((len(values), N_FEATURES))
    X[:, cond.feature] = values
    leaf = model.calc_leaf_indexes(X)[:, 0]
    np.testing.assert_array_equal(leaf, [0, 0, 0, 1, 0, 1])
    np.testing.assert_array_equal(cond.evaluate(X), leaf == 0)
    # in float64 the second row would go right
    assert not np.array_equal(X[:, cond.feature] <= b, leaf == 0)


@pytest.mark.parametrize("name, missing_left", [("depth3_nan_min", True),
                                                ("depth6_nan_max", False),
                                                ("missing_only_in_test", True)])
def test_nan_mode_sends_missing_to_the_smallest_or_largest_side(name, missing_left):
    _, ens, _, _ = fitted(name)
    conds = {c for r in ens.rules for c in r}
    assert {c.missing for c in conds if c.op == "<="} == {missing_left}
    assert {c.missing for c in conds if c.op == ">"} == {not missing_left}


def test_nan_mode_forbidden_refuses_missing_values():
    X, y = make_data("regression")
    model = cb.CatBoostRegressor(nan_mode="Forbidden", **COMMON).fit(X, y)
    ens = rule_ensemble_from_model(model)
    check_rule_ensemble(ens, X)
    X_nan = with_missing(X, np.random.default_rng(0))
    for call in (ens.leaf_table, ens.predict_raw, lambda Z: ens.rule_mask(0, Z)):
        with pytest.raises(ValueError, match="nan_mode='Forbidden'.*Impute"):
            call(X_nan)


def test_multiclass_layout():
    model, ens, X, _ = fitted("multiclass")
    assert ens.n_outputs == 3 and ens.n_trees == 3 * model.tree_count_
    np.testing.assert_array_equal(ens.tree_class, np.tile(np.arange(3), model.tree_count_))
    assert ens.predict_raw(X).shape == (X.shape[0], 3)


def test_early_stopping_keeps_the_trees_catboost_predicts_with():
    model, ens, _, _ = fitted("early_stopped_best_model")
    assert 0 < model.best_iteration_ < 199
    assert ens.n_trees == model.tree_count_ == model.best_iteration_ + 1
    model, ens, _, _ = fitted("early_stopped_all_trees")
    # without use_best_model CatBoost keeps and predicts with every tree
    assert model.best_iteration_ + 1 < model.tree_count_ == ens.n_trees


def test_scale_and_bias_are_tree_scale_and_baseline():
    model, ens, X, _ = fitted("scale_and_bias")
    np.testing.assert_array_equal(ens.tree_scale, 0.5)
    np.testing.assert_array_equal(ens.constant_baseline(), [-3.25])
    np.testing.assert_array_equal(ens.baseline(X[:3]), np.full(3, -3.25))
    # boost_from_average: the regression bias is CatBoost's starting value
    model, ens, X, _ = fitted("depth1")
    assert ens.constant_baseline()[0] == pytest.approx(model.get_scale_and_bias()[1])
    y = make_data("regression")[1]
    assert ens.constant_baseline()[0] == pytest.approx(y.mean(), abs=0.05 * y.std())
    # a classifier boosts from the base rate's log-odds only when asked to
    _, ens, _, _ = fitted("binary")
    np.testing.assert_array_equal(ens.constant_baseline(), [0.0])
    _, ens, _, _ = fitted("binary_boost_from_average")
    y = make_data("binary")[1]
    assert ens.constant_baseline()[0] == pytest.approx(np.log(y.mean() / (1 - y.mean())),
                                                      abs=0.05)


def test_leaf_index_bit_k_is_split_k():
    # a depth-3 tree: leaf at left-to-right position p has CatBoost index
    # bitreverse(p), bit k being the split of level k
    _, ens, _, _ = fitted("depth3_nan_min")
    ids = ens.leaf_node_ids[ens.block_ptr[0]:ens.block_ptr[1]]
    np.testing.assert_array_equal(ids, [0, 4, 2, 6, 1, 5, 3, 7])


# -- categorical features ----------------------------------------------------
def _colour_frame(seed=0, n=300, categories=None, as_category=True):
    rng = np.random.default_rng(seed)
    X, _ = make_data("regression", seed=seed, n=n)
    df = pd.DataFrame(X[:, :4], columns=["a", "b", "c", "d"])
    colour = COLOURS[rng.integers(0, 4, n)]   # "black" is never seen at fit
    df.insert(1, "colour", pd.Categorical(colour, categories=categories)
              if as_category else colour)
    y = X[:, 0] + 2.0 * (colour == "red") - 1.5 * (colour == "blue") \
        + 0.2 * rng.normal(size=n)
    return df, y


def _one_hot_model(df, y, **kw):
    return cb.CatBoostRegressor(cat_features=("colour",), one_hot_max_size=10,
                                **{**COMMON, **kw}).fit(df, y)


@pytest.mark.parametrize("as_category", [True, False])
def test_one_hot_splits_read_by_label(as_category):
    df, y = _colour_frame(as_category=as_category)
    df.loc[::9, "b"] = np.nan   # a float feature after the categorical column, with NaN
    model = _one_hot_model(df, y, depth=4)
    ens = rule_ensemble_from_model(model, X=df)
    assert ens.feature_names == list(df.columns)
    cats = {c for r in ens.rules for c in r if c.is_categorical}
    assert cats and all(c.feature == 1 and len(c.categories) == 1 for c in cats)
    assert {c.categories[0] for c in cats} <= {"red", "green", "blue", "cyan"}
    assert any("colour in {'red'}" in ens.rule_text(j) for j in range(ens.n_rules))
    check_rule_ensemble(ens, df)
    check_printed_rules(ens, df)
    # new data: an unseen label, and the categories in another order
    new, _ = _colour_frame(seed=3, n=200, as_category=as_category)
    new.loc[::5, "b"] = np.nan
    new.loc[::7, "colour"] = "black" if not as_category else None
    if as_category:
        new["colour"] = pd.Categorical(
            np.where(new["colour"].isna(), "black", new["colour"].astype(object)),
            categories=["black", "cyan", "blue", "green", "red"])
    assert (new["colour"] == "black").any()
    check_rule_ensemble(ens, new)
    check_printed_rules(ens, new)


def test_one_hot_splits_on_integer_categories():
    df, y = _colour_frame(as_category=False)
    df["colour"] = df["colour"].map({c: k for k, c in enumerate(COLOURS)})
    model = _one_hot_model(df, y)
    ens = rule_ensemble_from_model(model, X=df)
    cats = {c.categories[0] for r in ens.rules for c in r if c.is_categorical}
    assert cats and all(isinstance(v, int) for v in cats)
    check_rule_ensemble(ens, df)
    check_printed_rules(ens, df)


def test_one_hot_splits_need_the_training_data():
    df, y = _colour_frame()
    model = _one_hot_model(df, y)
    with pytest.raises(ValueError, match="'colour'.*only a hash.*X=X"):
        rule_ensemble_from_model(model)
    other = df.assign(colour=pd.Categorical(["purple"] * len(df)))
    with pytest.raises(ValueError, match="category of 'colour'"):
        rule_ensemble_from_model(model, X=other)


def test_ctr_splits_are_refused_naming_the_feature():
    df, y = _colour_frame()
    model = cb.CatBoostRegressor(cat_features=("colour",), one_hot_max_size=2,
                                 **COMMON).fit(df, y)
    with pytest.raises(ValueError, match=r"CTRs\) of 'colour'.*one_hot_max_size.*"
                                         r"X holds 4 labels of 'colour'"):
        rule_ensemble_from_model(model, X=df)
    with pytest.raises(ValueError, match=r"CTRs\) of 'colour'.*one_hot_max_size"):
        rule_ensemble_from_model(model)


def test_non_symmetric_trees_are_refused():
    X, y = make_data("regression")
    model = cb.CatBoostRegressor(grow_policy="Depthwise", **COMMON).fit(X, y)
    with pytest.raises(ValueError, match="grow_policy='Depthwise'.*SymmetricTree"):
        rule_ensemble_from_model(model)


def test_unfitted_raises_value_error():
    with pytest.raises(ValueError, match="not fitted"):
        rule_ensemble_from_model(cb.CatBoostRegressor())


def test_pickle_round_trip():
    import pickle

    _, ens, X, _ = fitted("multiclass")
    ens2 = pickle.loads(pickle.dumps(ens))
    assert ens2.rules == ens.rules
    np.testing.assert_allclose(ens2.predict_raw(X), ens.predict_raw(X))


# -- FIRE on CatBoost ----------------------------------------------------------
def _check_fire_rules(est, X):
    ens = est.ensemble_
    full = ens.leaf_table(X)
    names = ens.feature_names
    table = est.rules_
    rules = table[table["kind"] == "rule"] if "kind" in table else table
    assert len(rules) > 0
    for text, j in zip(rules["rule"], rules["column"]):
        t = int(ens.rule_tree[j])
        got = evaluate_parsed(parse_rule(text, names), X, **library_reading(ens))
        np.testing.assert_array_equal(got, full[:, t] == j)


def test_fire_regressor_on_catboost():
    from firecy import FIRERegressor

    X, y = make_data("regression")
    est = FIRERegressor(cb.CatBoostRegressor(**COMMON), random_state=0,
                        linear_terms=False).fit(X, y)
    assert est.ensemble_.source == "catboost" and est.n_rules_ > 0
    assert est.predict(X).shape == (X.shape[0],)
    assert np.corrcoef(est.predict(X), y)[0, 1] > 0.7
    _check_fire_rules(est, X)


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_fire_classifier_on_catboost(task):
    from firecy import FIREClassifier

    X, y = make_data(task)
    loss = "MultiClass" if task == "multiclass" else "Logloss"
    est = FIREClassifier(cb.CatBoostClassifier(loss_function=loss, **COMMON),
                         random_state=0, linear_terms=False).fit(X, y)
    assert est.ensemble_.source == "catboost" and est.n_rules_ > 0
    proba = est.predict_proba(X)
    assert proba.shape == (X.shape[0], np.unique(y).size)
    assert np.mean(est.predict(X) == y) > 0.6
    _check_fire_rules(est, X)


def test_fire_on_catboost_with_one_hot_categories():
    from firecy import FIRERegressor

    df, y = _colour_frame()
    est = FIRERegressor(
        cb.CatBoostRegressor(cat_features=("colour",), one_hot_max_size=10, **COMMON),
        random_state=0, linear_terms=False).fit(df, y)
    assert any("colour" in r for r in est.rules_["rule"])
    assert est.predict(df).shape == (len(df),)
    _check_fire_rules(est, df)


def test_fire_on_catboost_ctr_model_is_refused_naming_the_feature():
    from firecy import FIRERegressor

    df, y = _colour_frame()
    with pytest.raises(ValueError, match="CTRs.*'colour'.*one_hot_max_size"):
        FIRERegressor(cb.CatBoostRegressor(cat_features=("colour",), **COMMON),
                      random_state=0).fit(df, y)


# -- the "any model" benchmark's CatBoost row ----------------------------------
def test_any_model_benchmark_cb_is_catboost_at_its_defaults():
    import importlib.util
    import pathlib

    path = (pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "any_model"
            / "any_model.py")
    spec = importlib.util.spec_from_file_location("any_model_bench_cb", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # fitted only when named: the default list (every older command) is unchanged
    assert "cb" not in bench.models("regression", 0, noise_floor=True)
    for task, cls in (("regression", cb.CatBoostRegressor),
                      ("classification", cb.CatBoostClassifier)):
        model = bench.models(task, 7, n_jobs=1, optional=("cb",))["cb"]
        assert type(model) is cls
        # the seed, the threads and the silence are the only parameters set
        assert model.get_params() == {**cls().get_params(), "random_seed": 7,
                                      "thread_count": 1, "verbose": 0,
                                      "allow_writing_files": False}


def test_trees_without_splits_and_sparse_input():
    import scipy.sparse as sp

    X, y = make_data("regression")
    ens = rule_ensemble_from_model(cb.CatBoostRegressor(**{**COMMON, "depth": 0}).fit(X, y))
    assert ens.tree_sizes.tolist() == [1] * ens.n_trees and ens.rule_text(0) == "(all rows)"
    check_rule_ensemble(ens, X)
    X[np.random.default_rng(0).random(X.shape) < 0.5] = 0.0
    for nan_mode in ("Min", "Forbidden"):
        model = cb.CatBoostRegressor(nan_mode=nan_mode, **COMMON).fit(X, y)
        ens = rule_ensemble_from_model(model)
        Xs = sp.csr_matrix(X)   # implicit entries are 0 to CatBoost, as to the rules
        np.testing.assert_array_equal(ens.leaf_table(Xs), ens.leaf_table(X))
        check_rule_ensemble(ens, Xs)
    Xs.data[0] = np.nan
    with pytest.raises(ValueError, match="Forbidden"):
        ens.rule_mask(0, Xs)


def test_predict_raw_with_weights_routes_the_chosen_trees_only():
    # a few nonzero weights in two distant trees: one CatBoost call over the
    # range of trees that holds them (apply_sources), the same sums as the
    # full design
    _, ens, _, X_new = fitted("depth6_nan_max")
    coef = np.zeros(ens.n_rules)
    for t in (3, 15):
        lo, hi = ens.block_ptr[t], ens.block_ptr[t + 1]
        coef[lo:hi:5] = np.linspace(-1.0, 2.0, len(range(lo, hi, 5)))
    expected = ens.design(X_new) @ coef + ens.baseline(X_new)
    np.testing.assert_allclose(ens.predict_raw(X_new, coef), expected, rtol=1e-12)
    np.testing.assert_array_equal(ens.leaf_table(X_new, blocks=[15, 3]),
                                  ens.leaf_table(X_new)[:, [15, 3]])


def test_model_shrink_keeps_the_first_trees():
    X, y = make_data("regression")
    model = cb.CatBoostRegressor(model_shrink_rate=0.05, **COMMON).fit(X, y)
    model.shrink(7)
    ens = rule_ensemble_from_model(model)
    assert ens.n_trees == model.tree_count_ == 7
    check_rule_ensemble(ens, X)
