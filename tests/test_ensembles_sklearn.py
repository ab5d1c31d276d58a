"""RuleEnsemble from scikit-learn models, plus the library-independent parts
(Condition semantics, bad input, design construction)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.dummy import DummyRegressor
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    IsolationForest,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from threadpoolctl import threadpool_limits

from firecy.ensembles import Condition, RuleEnsemble, rule_ensemble_from_model
from firecy.ensembles._condition import LIGHTGBM_ZERO_THRESHOLD
from firecy.ensembles._testing import (
    check_contiguous_subtrees,
    check_predict_raw,
    check_rule_ensemble,
)

N_TRAIN, N_NEW, N_FEATURES = 300, 200, 6


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
def make_data(task, seed=0, n=N_TRAIN, categorical=()):
    """Regression / binary / multi-class data; ``categorical`` columns hold
    small integer codes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    for j in categorical:
        X[:, j] = rng.integers(0, 5, size=n)
    signal = X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] * (X[:, 3] > 0)
    for j in categorical:
        signal += np.isin(X[:, j], (1, 3)) - 0.5
    if task == "regression":
        y = signal + 0.3 * rng.normal(size=n)
    elif task == "regression2":  # two outputs
        y = np.column_stack([signal, np.sin(X[:, 4]) + 0.1 * rng.normal(size=n)])
    elif task == "poisson":
        y = rng.poisson(np.exp(0.4 * signal.clip(-3, 3)))
    elif task == "binary":
        y = (signal + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    elif task == "multiclass":
        y = np.digitize(signal + 0.3 * rng.normal(size=n), [0.0, 1.0])
    else:
        raise ValueError(task)
    return X, y


def with_missing(X, rng, frac=0.1):
    X = X.copy()
    X[rng.random(X.shape) < frac] = np.nan
    return X


def threshold_rows(ens, n, rng, categorical=()):
    """Rows whose values sit on and right next to the model's thresholds, in
    float64 and in float32: a rule evaluated in the wrong precision or with
    the wrong operator misroutes them."""
    cands = {j: [] for j in range(ens.n_features_in_)}
    for rule in ens.rules:
        for c in rule:
            if not c.is_categorical and math.isfinite(c.threshold):
                t = c.threshold
                f32 = np.float32(t)
                cands[c.feature].extend([
                    t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf),
                    float(f32), float(np.nextafter(f32, np.float32(-np.inf))),
                    float(np.nextafter(f32, np.float32(np.inf))),
                ])
    X = rng.normal(size=(n, ens.n_features_in_))
    for j, vals in cands.items():
        if j in categorical:
            X[:, j] = rng.integers(-1, 7, size=n)
        elif vals:
            X[:, j] = rng.choice(np.asarray(vals), size=n)
    return X


# ---------------------------------------------------------------------------
# the models
# ---------------------------------------------------------------------------
# id -> (factory, task, fit on data with NaN, predict accepts NaN, categorical cols)
SMALL = dict(n_estimators=8, random_state=0)
MODELS = {
    "rf_reg": (lambda: RandomForestRegressor(max_depth=5, **SMALL), "regression", True, True, ()),
    "rf_reg_best_first": (
        lambda: RandomForestRegressor(max_leaf_nodes=12, **SMALL), "regression", False, True, ()),
    "rf_reg_multioutput": (
        lambda: RandomForestRegressor(max_depth=4, **SMALL), "regression2", False, True, ()),
    "et_reg": (lambda: ExtraTreesRegressor(max_depth=5, **SMALL), "regression", True, True, ()),
    "rf_clf_binary": (
        lambda: RandomForestClassifier(max_depth=5, **SMALL), "binary", True, True, ()),
    "rf_clf_multiclass": (
        lambda: RandomForestClassifier(max_leaf_nodes=10, **SMALL), "multiclass", True, True, ()),
    "et_clf_binary": (
        lambda: ExtraTreesClassifier(max_depth=4, **SMALL), "binary", False, True, ()),
    "et_clf_multiclass": (
        lambda: ExtraTreesClassifier(max_depth=4, **SMALL), "multiclass", True, True, ()),
    "gb_reg": (
        lambda: GradientBoostingRegressor(max_depth=3, **SMALL), "regression", False, False, ()),
    "gb_reg_best_first_huber_zero_init": (
        lambda: GradientBoostingRegressor(
            loss="huber", max_leaf_nodes=7, subsample=0.8, init="zero", **SMALL),
        "regression", False, False, ()),
    "gb_reg_linear_init": (
        lambda: GradientBoostingRegressor(max_depth=2, init=LinearRegression(), **SMALL),
        "regression", False, False, ()),
    "gb_reg_median_init": (
        lambda: GradientBoostingRegressor(
            loss="absolute_error", max_depth=2, init=DummyRegressor(strategy="median"), **SMALL),
        "regression", False, False, ()),
    "gb_clf_binary": (
        lambda: GradientBoostingClassifier(max_depth=3, **SMALL), "binary", False, False, ()),
    "gb_clf_binary_logistic_init": (
        lambda: GradientBoostingClassifier(max_depth=2, init=LogisticRegression(), **SMALL),
        "binary", False, False, ()),
    "gb_clf_multiclass": (
        lambda: GradientBoostingClassifier(max_leaf_nodes=5, **SMALL),
        "multiclass", False, False, ()),
    "gb_reg_early_stopping": (
        lambda: GradientBoostingRegressor(
            n_estimators=200, n_iter_no_change=2, validation_fraction=0.3, max_depth=2,
            random_state=0),
        "regression", False, False, ()),
    "hgb_reg": (
        lambda: HistGradientBoostingRegressor(max_iter=10, max_leaf_nodes=8, random_state=0),
        "regression", True, True, ()),
    "hgb_reg_categorical": (
        lambda: HistGradientBoostingRegressor(
            max_iter=10, max_leaf_nodes=8, categorical_features=[4, 5], random_state=0),
        "regression", True, True, (4, 5)),
    "hgb_reg_poisson": (
        lambda: HistGradientBoostingRegressor(
            loss="poisson", max_iter=10, max_depth=3, random_state=0),
        "poisson", True, True, ()),
    "hgb_clf_binary": (
        lambda: HistGradientBoostingClassifier(max_iter=10, max_leaf_nodes=6, random_state=0),
        "binary", True, True, ()),
    "hgb_clf_multiclass_categorical": (
        lambda: HistGradientBoostingClassifier(
            max_iter=6, max_leaf_nodes=6, categorical_features=[5], random_state=0),
        "multiclass", True, True, (5,)),
    "tree_reg_best_first": (
        lambda: DecisionTreeRegressor(max_leaf_nodes=20, random_state=0),
        "regression", True, True, ()),
    "tree_clf_multiclass": (
        lambda: DecisionTreeClassifier(max_depth=4, random_state=0), "multiclass", True, True, ()),
}

_CACHE = {}


def fitted(name):
    """(model, ensemble, X_train, X_new) for a model id, fitted once per session."""
    if name not in _CACHE:
        factory, task, fit_nan, predict_nan, cat = MODELS[name]
        rng = np.random.default_rng(1)
        X, y = make_data(task, seed=0, categorical=cat)
        if fit_nan:
            X = with_missing(X, rng)
        # One OpenMP thread: HistGradientBoosting's threads crawl on a small,
        # shared machine.
        with threadpool_limits(limits=1, user_api="openmp"):
            model = factory().fit(X, y)
        ens = rule_ensemble_from_model(model)
        X_new, _ = make_data(task, seed=2, n=N_NEW, categorical=cat)
        X_new = np.vstack([X_new, threshold_rows(ens, N_NEW, rng, cat)])
        if predict_nan:
            X_new = with_missing(X_new, rng)
        _CACHE[name] = (model, ens, X, X_new)
    return _CACHE[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_training_data(name):
    model, ens, X, _ = fitted(name)
    assert ens.source == "sklearn"
    assert ens.n_features_in_ == N_FEATURES
    check_rule_ensemble(ens, X)


@pytest.mark.parametrize("name", list(MODELS))
def test_new_data_with_missing_and_thresholds(name):
    model, ens, _, X_new = fitted(name)
    if MODELS[name][3]:
        assert np.isnan(X_new).any()
    check_rule_ensemble(ens, X_new)


@pytest.mark.parametrize("cls", [RandomForestRegressor, ExtraTreesRegressor,
                                 RandomForestClassifier, ExtraTreesClassifier])
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_forest_leaf_ids_are_the_librarys_apply(cls, n_jobs):
    # firecy walks forests itself (``route_tree_float32``); the reference is
    # scikit-learn's own apply, on rows with NaN (trained with NaN, so both
    # missing_go_to_left directions occur), +-1e30, values on and next to the
    # thresholds in float64 and float32, in C and Fortran order, and sparse
    task = "regression" if cls in (RandomForestRegressor, ExtraTreesRegressor) else "binary"
    X, y = make_data(task)
    rng = np.random.default_rng(1)
    X = with_missing(X, rng)
    model = cls(n_estimators=6, n_jobs=n_jobs, random_state=0).fit(X, y)
    mgl = np.concatenate([e.tree_.missing_go_to_left[e.tree_.children_left >= 0]
                          for e in model.estimators_])
    assert mgl.any() and not mgl.all()
    ens = rule_ensemble_from_model(model)
    X_new = with_missing(make_data(task, seed=2)[0], rng, frac=0.2)
    X_new[:5, 0], X_new[5:10, 1] = 1e30, -1e30
    X_new = np.vstack([X_new, threshold_rows(ens, 200, rng)])
    for Z in (X_new, np.asfortranarray(X_new), X_new.tolist()):
        ids = ens.apply(Z)
        assert ids.dtype == model.apply(Z).dtype
        np.testing.assert_array_equal(ids, model.apply(Z))
    Z = sp.csr_matrix(np.nan_to_num(X_new, nan=0.0))
    np.testing.assert_array_equal(ens.apply(Z), model.apply(Z))
    # the library's own validation
    with pytest.raises(ValueError, match="features"):
        ens.apply(X_new[:, :-1])
    X_new[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        ens.apply(X_new)


def test_forest_walk_threads_under_a_process_backend(monkeypatch):
    # the walk's tasks write into one array: under an active process backend
    # (loky) they must still be threads (found by a failing fit under loky)
    from joblib import parallel_backend

    import firecy.ensembles._sklearn as sk

    monkeypatch.setattr(sk, "_MIN_THREADED_WALKS", 0)  # thread even this small walk

    X, y = make_data("regression")
    model = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(model)
    with parallel_backend("loky", n_jobs=2):
        np.testing.assert_array_equal(ens.apply(X), model.apply(X))


def test_forest_walk_refuses_malformed_trees():
    from firecy.ensembles._layout import route_tree_float32

    X = np.zeros((3, 2), dtype=np.float32)
    out = np.empty((3, 1), dtype=np.int64)
    left, right = np.array([1, -1, -1]), np.array([2, -1, -1])
    thr, mgl = np.zeros(3), np.zeros(3, dtype=np.uint8)
    route_tree_float32(X, left, right, np.array([1, -2, -2]), thr, mgl, out, 0)
    assert out.ravel().tolist() == [1, 1, 1]  # 0 <= 0: left
    with pytest.raises(ValueError, match="malformed"):  # a child outside the tree
        route_tree_float32(X, left, np.array([3, -1, -1]), np.array([1, -2, -2]), thr,
                           mgl, out, 0)
    with pytest.raises(ValueError, match="feature"):  # a feature outside X
        route_tree_float32(X, left, right, np.array([2, -2, -2]), thr, mgl, out, 0)
    with pytest.raises(ValueError, match="cycle"):  # node 1 leads back to the root
        route_tree_float32(X, np.array([1, 0, -1]), np.array([2, 0, -1]),
                           np.array([1, 0, -2]), thr, mgl, out, 0)


def test_best_first_leaves_are_not_in_node_id_order():
    # The contiguity check is only meaningful if node ids are out of order.
    _, ens, _, _ = fitted("rf_reg_best_first")
    out_of_order = [
        np.any(np.diff(ens.leaf_node_ids[ens.block_ptr[t]:ens.block_ptr[t + 1]]) < 0)
        for t in range(ens.n_trees)
    ]
    assert any(out_of_order)


def test_multiclass_forest_layout():
    model, ens, X, _ = fitted("rf_clf_multiclass")
    K, n_est = 3, len(model.estimators_)
    assert ens.n_outputs == K and ens.n_trees == K * n_est
    np.testing.assert_array_equal(ens.tree_class, np.tile(np.arange(K), n_est))
    np.testing.assert_allclose(ens.tree_scale, 1.0 / n_est)
    sizes = ens.tree_sizes.reshape(n_est, K)
    assert np.all(sizes == sizes[:, :1])
    # The K class blocks of a tree hold the class fractions of the same leaves.
    vals = [ens.leaf_values[ens.block_ptr[t]:ens.block_ptr[t + 1]] for t in range(ens.n_trees)]
    for e in range(n_est):
        np.testing.assert_allclose(sum(vals[e * K + k] for k in range(K)), 1.0)
    assert ens.rules[0] == ens.rules[ens.tree_sizes[0]]  # same conditions, class 1 copy
    np.testing.assert_allclose(ens.predict_raw(X), model.predict_proba(X))


def test_binary_forest_is_positive_class_fraction():
    model, ens, X, _ = fitted("rf_clf_binary")
    assert ens.n_outputs == 1 and ens.n_trees == len(model.estimators_)
    np.testing.assert_allclose(ens.predict_raw(X), model.predict_proba(X)[:, 1])


def test_gradient_boosting_scale_and_custom_init_baseline():
    model, ens, X, _ = fitted("gb_reg_linear_init")
    np.testing.assert_allclose(ens.tree_scale, model.learning_rate)
    base = ens.baseline(X)
    assert base.shape == (X.shape[0],) and np.ptp(base) > 0  # per-row baseline
    # sklearn hands the init estimator the float32-validated input.
    np.testing.assert_allclose(base, model.init_.predict(X.astype(np.float32)))
    _, ens0, X0, _ = fitted("gb_reg_best_first_huber_zero_init")
    np.testing.assert_array_equal(ens0.baseline(X0), 0.0)
    model, ens, X, _ = fitted("gb_clf_multiclass")
    assert ens.n_outputs == 3 and ens.baseline(X).shape == (X.shape[0], 3)
    np.testing.assert_array_equal(ens.tree_class, np.tile(np.arange(3), model.n_estimators_))


def test_gradient_boosting_early_stopping_uses_kept_stages():
    model, ens, _, _ = fitted("gb_reg_early_stopping")
    assert model.n_estimators_ < 200
    assert ens.n_trees == model.n_estimators_


def test_histgb_categorical_rules_use_category_values():
    model, ens, X, _ = fitted("hgb_reg_categorical")
    cat_conds = [c for r in ens.rules for c in r if c.is_categorical]
    assert cat_conds and all(c.feature in (4, 5) for c in cat_conds)
    assert all(c.category_cast == "exact" for c in cat_conds)
    assert all(set(c.categories) <= {0.0, 1.0, 2.0, 3.0, 4.0} for c in cat_conds)
    # Numeric conditions refer to the original columns, not the reordered ones.
    num_features = {c.feature for r in ens.rules for c in r if not c.is_categorical}
    assert num_features <= {0, 1, 2, 3}


def test_histgb_pandas_string_categories():
    pd = pytest.importorskip("pandas")
    X, y = make_data("regression", categorical=(5,))
    rng = np.random.default_rng(3)
    names = np.array(["red", "green", "blue", "cyan", "black"])
    df = pd.DataFrame(X[:, :5], columns=[f"f{i}" for i in range(5)])
    df["colour"] = pd.Categorical(names[X[:, 5].astype(int)])
    df.loc[rng.random(len(df)) < 0.1, "colour"] = np.nan
    model = HistGradientBoostingRegressor(max_iter=8, max_leaf_nodes=6, random_state=0)
    with threadpool_limits(limits=1, user_api="openmp"):
        model.fit(df, y)
    ens = rule_ensemble_from_model(model)
    assert ens.feature_names == list(df.columns)
    cats = {v for r in ens.rules for c in r if c.is_categorical for v in c.categories}
    assert cats and cats <= set(names)
    check_rule_ensemble(ens, df)
    text = [ens.rule_text(j) for j in range(ens.n_rules)]
    assert any("colour in {" in t or "colour not in {" in t for t in text)


def test_pandas_feature_names_and_override():
    pd = pytest.importorskip("pandas")
    X, y = make_data("regression")
    df = pd.DataFrame(X, columns=[f"col_{i}" for i in range(N_FEATURES)])
    model = RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0).fit(df, y)
    ens = RuleEnsemble.from_model(model)
    assert ens.feature_names == list(df.columns)
    assert ens.rule_text(0).startswith("col_")
    check_rule_ensemble(ens, df)
    names = [f"z{i}" for i in range(N_FEATURES)]
    assert rule_ensemble_from_model(model, feature_names=names).feature_names == names
    with pytest.raises(ValueError, match="feature_names"):
        rule_ensemble_from_model(model, feature_names=["a"])
    _, ens_np, _, _ = fitted("rf_reg")
    assert ens_np.feature_names == [f"x{i}" for i in range(N_FEATURES)]


def test_many_leaves_use_wider_local_index():
    # > 255 leaves per tree: the design goes through the uint16 path.
    X, y = make_data("regression", n=1500)
    model = DecisionTreeRegressor(random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(model)
    assert ens.n_rules > 255
    check_rule_ensemble(ens, X[:400])


def test_design_layout():
    model, ens, X, _ = fitted("rf_reg")
    M = ens.design(X)
    assert isinstance(M, sp.csc_matrix)
    assert M.indices.dtype == np.int32 and M.indptr.dtype == np.int32
    assert M.nnz == X.shape[0] * ens.n_trees
    table = ens.leaf_table(X)
    assert table.dtype == np.int32 and table.flags.c_contiguous
    np.testing.assert_allclose(M @ ens.column_scale + ens.baseline(X), model.predict(X))
    coef = np.random.default_rng(0).normal(size=ens.n_rules)
    np.testing.assert_allclose(ens.predict_raw(X, coef=coef), M @ coef)
    with pytest.raises(ValueError, match="coef"):
        ens.predict_raw(X, coef=np.ones(3))
    with pytest.raises(ValueError):
        ens.design_from_ids(np.zeros((4, 1), dtype=np.int64) + 10**6)
    bad = table.copy()
    bad[0, 1] = 0  # column 0 belongs to tree 0
    with pytest.raises(ValueError, match="outside their tree"):
        ens.design_from_leaf_table(bad)


def test_node_ids_not_leaves_are_rejected():
    _, ens, X, _ = fitted("rf_reg")
    ids = ens.apply(X).copy()
    ids[0, 0] = 0  # the root: not a leaf
    with pytest.raises(ValueError, match="not a leaf"):
        ens.leaf_table_from_ids(ids)
    with pytest.raises(ValueError, match="not a leaf"):
        ens.design_from_ids(ids)


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model",
    [RandomForestRegressor(), ExtraTreesClassifier(), GradientBoostingClassifier(),
     HistGradientBoostingRegressor(), DecisionTreeRegressor()],
    ids=lambda m: type(m).__name__,
)
def test_unfitted_model_raises_value_error(model):
    with pytest.raises(ValueError, match="not fitted"):
        rule_ensemble_from_model(model)


@pytest.mark.parametrize("model", [LinearRegression(), "a string", None])
def test_unknown_model_raises_type_error(model):
    with pytest.raises(TypeError, match=type(model).__name__):
        rule_ensemble_from_model(model)


def test_fitted_unsupported_sklearn_ensemble_raises_type_error():
    X, _ = make_data("regression", n=50)
    with pytest.raises(TypeError, match="IsolationForest"):
        rule_ensemble_from_model(IsolationForest(n_estimators=2).fit(X))


def test_histgb_layout_change_names_sklearn_version(monkeypatch):
    model, _, _, _ = fitted("hgb_reg")
    pred = model._predictors[0][0]
    nodes = pred.nodes
    # a NEW dtype: assigning ``dtype.names`` would rename the field in the
    # dtype object sklearn shares with every predictor (and break later fits)
    dt = nodes.dtype
    renamed_dtype = np.dtype({
        "names": ["num_thr" if n == "num_threshold" else n for n in dt.names],
        "formats": [dt.fields[n][0] for n in dt.names],
        "offsets": [dt.fields[n][1] for n in dt.names],
        "itemsize": dt.itemsize,
    })
    renamed = nodes.view(renamed_dtype).copy()
    monkeypatch.setattr(pred, "nodes", renamed)
    with pytest.raises(TypeError, match=f"scikit-learn {sklearn.__version__}.*num_threshold"):
        rule_ensemble_from_model(model)
    monkeypatch.setattr(pred, "nodes", nodes)
    monkeypatch.delattr(model, "_baseline_prediction")
    with pytest.raises(TypeError, match=f"scikit-learn {sklearn.__version__}.*_baseline_pred"):
        rule_ensemble_from_model(model)


def test_multioutput_classifier_refused():
    X, y = make_data("binary", n=100)
    model = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, np.c_[y, 1 - y])
    with pytest.raises(ValueError, match="multi-output"):
        rule_ensemble_from_model(model)


# ---------------------------------------------------------------------------
# Condition
# ---------------------------------------------------------------------------
def test_condition_precision():
    t = 0.1  # not a float32
    X = np.array([[np.float64(np.float32(t))], [t], [np.nextafter(t, 1.0)]])
    sk = Condition(0, "<=", t, dtype="float32")
    # float32(0.1) > 0.1, so after rounding to float32 every row is > t.
    np.testing.assert_array_equal(sk.evaluate(X), [False, False, False])
    lg = Condition(0, "<=", t, dtype="float64")
    np.testing.assert_array_equal(lg.evaluate(X), [False, True, False])
    xg = Condition(0, "<", float(np.float32(t)), dtype="float32")
    np.testing.assert_array_equal(xg.evaluate(X), [False, False, False])


def test_condition_missing_and_zero():
    X = np.array([[np.nan], [0.0], [1e-36], [-1.0], [2.0]])
    c = Condition(0, ">", 0.5, missing=True)
    np.testing.assert_array_equal(c.evaluate(X), [True, False, False, False, True])
    z = Condition(0, "<=", 0.5, missing=False, zero_as_missing=True)
    np.testing.assert_array_equal(z.evaluate(X), [False, False, True, True, False])
    # LightGBM reads |x| <= 1e-35 as 0, hence as missing under missing_type Zero.
    lz = Condition(0, "<=", 0.5, missing=False, zero_as_missing=True,
                   zero_threshold=LIGHTGBM_ZERO_THRESHOLD)
    np.testing.assert_array_equal(lz.evaluate(X), [False, False, False, True, False])
    tiny = Condition(0, "<=", -1e-36, zero_threshold=LIGHTGBM_ZERO_THRESHOLD)
    np.testing.assert_array_equal(tiny.evaluate(np.array([[-1e-35], [-1e-34]])), [False, True])


def test_condition_categorical_casts():
    X = np.array([[np.nan], [-0.5], [1.7], [3.0], [-3.0], [2.0]])
    lgb = Condition(0, "in", categories=(0, 1), missing=False, category_cast="trunc")
    np.testing.assert_array_equal(lgb.evaluate(X), [False, True, True, False, False, False])
    xgb = Condition(0, "in", categories=(0, 1), missing=True, dtype="float32", category_cast="floor")
    np.testing.assert_array_equal(xgb.evaluate(X), [True, False, True, False, False, False])
    notin = Condition(0, "not in", categories=(0, 1), missing=False, dtype="float32",
                      category_cast="floor")
    np.testing.assert_array_equal(notin.evaluate(X), [False, True, False, True, True, True])
    exact = Condition(0, "in", categories=(1.0, 2.0), category_cast="exact")
    np.testing.assert_array_equal(exact.evaluate(X), [False, False, False, False, False, True])
    obj = np.array([["a"], [None], ["b"]], dtype=object)
    s = Condition(0, "not in", categories=("a",), missing=True, category_cast="exact")
    np.testing.assert_array_equal(s.evaluate(obj), [False, True, True])


def test_condition_text_equality_and_hash():
    c = Condition(2, "<=", float(np.float32(0.8)) + 1e-9, dtype="float32")
    assert c.to_text(["a", "b", "petal_width"]) == "petal_width <= 0.8"
    assert Condition(0, "<", 1.5).to_text() == "x0 < 1.5"
    assert Condition(0, "<=", 1 / 3).to_text(precision=3) == "x0 <= 0.333"
    assert Condition(1, "in", categories=(1, 3)).to_text() == "x1 in {1, 3}"
    assert Condition(0, ">", 1.0, missing=True).to_text(show_missing=True) == "x0 > 1.0 (or missing)"
    a = Condition(1, "in", categories=(1, 3), threshold=float("nan"))
    b = Condition(np.int64(1), "in", categories=[1, 3])
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Condition(0, "<=", 1.0) != Condition(0, "<=", 1.0, missing=True)
    with pytest.raises(ValueError):
        Condition(0, "==", 1.0)
    with pytest.raises(ValueError):
        Condition(0, "<=", 1.0, dtype="float16")


def test_rule_text_and_contiguity_helper():
    _, ens, _, _ = fitted("tree_reg_best_first")
    from firecy.rules import parse_rule, rule_text, simplify_conditions

    for j in range(ens.n_rules):
        # one rule text: the ensemble's method is the rules module's function
        text = ens.rule_text(j)
        assert text == rule_text(ens, j)
        simplified = simplify_conditions(ens.rules[j])
        assert len(parse_rule(text)) == len(simplified) <= len(ens.rules[j])
    check_contiguous_subtrees(ens)


def test_prediction_check_catches_a_wrong_scale():
    _, ens, X, _ = fitted("gb_reg")
    ens.tree_scale = ens.tree_scale * 1.001
    try:
        with pytest.raises(AssertionError, match="mismatch"):
            check_predict_raw(ens, X)
    finally:
        ens.tree_scale = ens.tree_scale / 1.001


@pytest.mark.parametrize("name", ["rf_clf_multiclass", "gb_clf_multiclass", "hgb_reg"])
def test_design_in_small_slabs_and_chunks(monkeypatch, name):
    # Force several tree slabs and row chunks on these small models.
    from firecy.ensembles import _design

    _, ens, X, X_new = fitted(name)
    X = np.vstack([X, X_new])
    full = (ens.design(X), ens.leaf_table(X))
    monkeypatch.setattr(_design, "_MAX_SLAB", 3)
    monkeypatch.setattr(_design, "_SCRATCH_ELEMENTS", 8)
    assert _design._slab_width(X.shape[0], ens.n_trees) == 1 and _design.row_chunk(ens.n_trees) == 256
    check_rule_ensemble(ens, X)
    np.testing.assert_array_equal(ens.leaf_table(X), full[1])
    assert (ens.design(X) != full[0]).nnz == 0
    monkeypatch.setattr(_design, "_SCRATCH_ELEMENTS", 3 * X.shape[0])
    assert _design._slab_width(X.shape[0], 100) == 3
    assert (ens.design(X) != full[0]).nnz == 0
    assert (ens.design_from_leaf_table(full[1]) != full[0]).nnz == 0


def test_sparse_input_implicit_zeros_are_zeros():
    X, y = make_data("regression")
    X[np.random.default_rng(0).random(X.shape) < 0.5] = 0.0
    model = RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(model)
    Xs = sp.csr_matrix(X)
    np.testing.assert_array_equal(ens.leaf_table(Xs), ens.leaf_table(X))
    check_rule_ensemble(ens, Xs)
    with pytest.raises(TypeError, match="dense"):
        ens.rules[0][0].evaluate(Xs)


@pytest.mark.parametrize(
    "name", ["rf_clf_multiclass", "gb_reg_linear_init", "hgb_clf_multiclass_categorical"]
)
def test_pickle_round_trip(name):
    import pickle

    _, ens, X, _ = fitted(name)
    ens2 = pickle.loads(pickle.dumps(ens))
    assert ens2.rules == ens.rules
    np.testing.assert_array_equal(ens2.leaf_table(X), ens.leaf_table(X))
    np.testing.assert_allclose(ens2.predict_raw(X), ens.predict_raw(X))


def test_meta_estimators_are_refused_with_what_to_pass():
    # a Pipeline, a search or a calibration wrapper holds a tree model but is
    # not one: refused, and the message says what to pass instead
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = make_data("regression", n=120)
    yb = (y > np.median(y)).astype(int)
    tree = DecisionTreeRegressor(max_depth=2, random_state=0)
    cases = [
        (make_pipeline(StandardScaler(), tree).fit(X, y), "last step"),
        (GridSearchCV(tree, {"max_depth": [1, 2]}, cv=2).fit(X, y), "best_estimator_"),
        (TransformedTargetRegressor(tree, func=np.exp, inverse_func=np.log).fit(X, y),
         "inner model"),
        (CalibratedClassifierCV(DecisionTreeClassifier(max_depth=2), cv=2).fit(X, yb),
         "inner model"),
    ]
    for model, hint in cases:
        with pytest.raises(TypeError, match=f"cannot extract rules.*{hint}"):
            rule_ensemble_from_model(model)
