"""Predict routes the rows through the kept rules' trees only.

``RuleEnsemble.predict_raw(X, coef)`` and ``leaf_table(X, blocks=...)`` walk
only the trees of the blocks that hold a nonzero ``leaf_values * coef``.
The references are independent of that code: the design built from every
tree's leaf ids (``design(X)``, the full route), the library's own leaf call
(``apply`` / ``pred_leaf``) and, for the estimators, the design columns of
the kept rules.
"""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.ensemble import (
    ExtraTreesClassifier, GradientBoostingClassifier, GradientBoostingRegressor,
    HistGradientBoostingClassifier, HistGradientBoostingRegressor, RandomForestClassifier,
    RandomForestRegressor,
)

from firecy.ensembles import RuleEnsemble
from firecy.ensembles._tree import round_runs


def _data(n=600, seed=0, nan=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    if nan:
        X[rng.random(X.shape) < 0.05] = np.nan
    z = np.nan_to_num(X)
    y = z[:, 0] + (z[:, 1] > 0) + 0.3 * rng.normal(size=n)
    y3 = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    return X, y, y3


def _frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "a": rng.normal(size=n),
        "c": pd.Categorical(rng.choice(["x", "y", "z", "w"], n)),
        "b": rng.normal(size=n),
    })
    df.loc[rng.random(n) < 0.1, "a"] = np.nan
    y = ((df["a"].fillna(0) + 2 * (df["c"] == "x") + 0.3 * rng.normal(size=n)) > 0.5)
    # the same rows with the categories in another order: libraries that
    # re-code by label must route them alike
    df2 = df.copy()
    df2["c"] = df2["c"].cat.reorder_categories(["z", "y", "x", "w"])
    return df, df2, y.astype(int).to_numpy()


def reference_raw(ens, X, coef):
    """design(X) @ coef + baseline, per output: every tree routed."""
    M = ens.design(X)
    base = np.asarray(ens.baseline(X), dtype=np.float64)
    if ens.n_outputs == 1:
        return M @ coef + base
    cls = ens.tree_class[ens.rule_tree]
    return np.column_stack([M[:, cls == k] @ coef[cls == k]
                            for k in range(ens.n_outputs)]) + base


def sparse_coef(ens, seed, n_rules=7):
    rng = np.random.default_rng(seed)
    coef = np.zeros(ens.n_rules)
    coef[rng.choice(ens.n_rules, n_rules, replace=False)] = rng.normal(size=n_rules)
    return coef


class Spy:
    """Records the trees an adapter is asked to route; the full route counts."""

    def __init__(self, adapter, monkeypatch):
        self.sources, self.full = [], 0
        apply_sources, apply = adapter.apply_sources, adapter.apply

        def spy_sources(X, sources):
            self.sources.append(np.asarray(sources).copy())
            return apply_sources(X, sources)

        def spy_apply(X):
            self.full += 1
            return apply(X)

        monkeypatch.setattr(adapter, "apply_sources", spy_sources)
        monkeypatch.setattr(adapter, "apply", spy_apply)


def _models():
    X, y, y3 = _data()
    Xf = np.nan_to_num(X)
    out = {
        "rf_reg": (RandomForestRegressor(40, max_depth=4, random_state=0).fit(X, y), X),
        "et_bin": (ExtraTreesClassifier(30, max_depth=5, random_state=0).fit(X, y > 1), X),
        "rf_multi": (RandomForestClassifier(20, max_depth=4, random_state=0).fit(X, y3), X),
        "gb_reg": (GradientBoostingRegressor(n_estimators=30, max_depth=3,
                                             random_state=0).fit(Xf, y), Xf),
        "gb_multi": (GradientBoostingClassifier(n_estimators=15, max_depth=2,
                                                random_state=0).fit(Xf, y3), Xf),
        "hgb_reg": (HistGradientBoostingRegressor(max_iter=30, max_depth=3).fit(X, y), X),
    }
    return out


MODELS = _models()


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("depth", [None, 2, (1, 2)])
def test_sklearn_predict_raw_routes_kept_trees_only(name, depth, monkeypatch):
    model, X = MODELS[name]
    ens = RuleEnsemble.from_model(model)
    if depth is not None:
        ens = ens.cut(depth, X=X)
    spy = Spy(ens._adapter, monkeypatch)
    for seed in range(3):
        coef = sparse_coef(ens, seed)
        got = ens.predict_raw(X, coef)
        np.testing.assert_allclose(got, reference_raw(ens, X, coef), rtol=1e-12, atol=1e-12)
        blocks = np.flatnonzero(np.logical_or.reduceat(ens.leaf_values * coef != 0,
                                                       ens.block_ptr[:-1]))
        # the routed trees: exactly those of the blocks with a nonzero term
        np.testing.assert_array_equal(spy.sources[-1], np.unique(ens._src_col[blocks]))
        assert spy.sources[-1].size < int(ens._src_col.max()) + 1
    n_design = 3  # reference_raw's design(X) routes every tree, once per seed
    assert spy.full == n_design


@pytest.mark.parametrize("name", ["rf_reg", "et_bin", "gb_reg", "gb_multi"])
def test_sklearn_sparse_input(name):
    model, X = MODELS[name]
    Xs = sp.csr_matrix(np.nan_to_num(X))
    ens = RuleEnsemble.from_model(model)
    coef = sparse_coef(ens, 1)
    np.testing.assert_allclose(ens.predict_raw(Xs, coef), reference_raw(ens, Xs, coef),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["rf_reg", "et_bin", "rf_multi", "gb_reg", "gb_multi"])
def test_sklearn_subset_ids_are_the_library_ids(name):
    model, X = MODELS[name]
    ens = RuleEnsemble.from_model(model)
    lib = np.asarray(model.apply(X)).reshape(X.shape[0], -1)
    sources = np.array([0, 3, 4, lib.shape[1] - 1])
    for Xi in (X, sp.csr_matrix(np.nan_to_num(X))):
        lib = np.asarray(model.apply(Xi)).reshape(X.shape[0], -1)
        np.testing.assert_array_equal(ens._adapter.apply_sources(Xi, sources), lib[:, sources])


def test_histgb_categorical_frame():
    df, df2, y = _frame()
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=3,
                                           categorical_features="from_dtype").fit(df, y)
    ens = RuleEnsemble.from_model(model)
    for cut in (ens, ens.cut(2, X=df)):
        for seed in range(3):
            coef = sparse_coef(cut, seed)
            for frame in (df, df2):
                np.testing.assert_allclose(cut.predict_raw(frame, coef),
                                           reference_raw(cut, frame, coef),
                                           rtol=1e-12, atol=1e-12)


def test_leaf_table_blocks():
    model, X = MODELS["rf_multi"]
    ens = RuleEnsemble.from_model(model).cut(2, X=X)
    full = ens.leaf_table(X)
    for blocks in ([5], [7, 2, 7], np.arange(ens.n_trees)[::-1], [ens.n_trees - 1, 0]):
        part = ens.leaf_table(X, blocks=blocks)
        assert part.dtype == np.int32 and part.flags.c_contiguous
        np.testing.assert_array_equal(part, full[:, blocks])
    assert ens.leaf_table(X, blocks=[]).shape == (X.shape[0], 0)
    with pytest.raises(ValueError, match="blocks must lie in"):
        ens.leaf_table(X, blocks=[ens.n_trees])
    with pytest.raises(ValueError, match="blocks must lie in"):
        ens.leaf_table(X, blocks=[-1])
    with pytest.raises(ValueError, match="1-d array of block indices"):
        ens.leaf_table(X, blocks=[0.5])


def test_zero_coef_is_the_baseline_and_still_checks_the_input():
    model, X = MODELS["gb_reg"]
    ens = RuleEnsemble.from_model(model)
    np.testing.assert_array_equal(ens.predict_raw(X, np.zeros(ens.n_rules)), ens.baseline(X))
    with pytest.raises(ValueError, match="features"):
        ens.predict_raw(X[:, :3], np.zeros(ens.n_rules))
    with pytest.raises(ValueError, match="coef must have shape"):
        ens.predict_raw(X, np.zeros(ens.n_rules + 1))


def test_every_tree_kept_is_the_full_route_bitwise():
    model, X = MODELS["rf_reg"]
    ens = RuleEnsemble.from_model(model)
    coef = np.random.default_rng(0).normal(size=ens.n_rules)
    np.testing.assert_array_equal(ens.predict_raw(X, coef),
                                  ens.predict_raw_from_ids(ens.apply(X), X, coef))


def test_nan_weight_routes_its_tree():
    model, X = MODELS["rf_reg"]
    ens = RuleEnsemble.from_model(model)
    coef = np.zeros(ens.n_rules)
    coef[ens.block_ptr[3]] = np.nan  # a NaN weight is not skipped: NaN where it lands
    got = ens.predict_raw(X, coef)
    lands = ens.leaf_table(X)[:, 3] == ens.block_ptr[3]
    assert lands.any() and not lands.all()
    assert np.isnan(got[lands]).all() and not np.isnan(got[~lands]).any()


# -- round runs (XGBoost, LightGBM) -------------------------------------------------
def test_round_runs_cover_and_merge():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n_rounds = int(rng.integers(1, 60))
        rounds = np.unique(rng.choice(n_rounds, int(rng.integers(1, n_rounds + 1))))
        n, tpr, cost = int(rng.integers(1, 500)), int(rng.integers(1, 4)), float(
            rng.integers(0, 3000))
        runs = round_runs(rounds, n_rounds, n, tpr, cost)
        per_round = n * tpr
        routed = n_rounds * per_round + cost
        if runs is None:
            # brute force: the cheapest cover (a run per needed round, merged
            # where the gap is cheaper than a call) is no cheaper than all
            gaps = np.diff(rounds) - 1
            best = rounds.size * per_round + cost + np.minimum(gaps * per_round, cost).sum()
            assert best >= routed
            continue
        covered = np.concatenate([np.arange(a, b) for a, b in runs])
        assert set(rounds.tolist()) <= set(covered.tolist())
        assert all(0 <= a < b <= n_rounds for a, b in runs)
        assert all(b1 < a2 for (_, b1), (a2, _) in zip(runs, runs[1:]))
        assert all(a in rounds and b - 1 in rounds for a, b in runs)
        # kept apart only where the gap costs at least a call
        assert all((a2 - b1) * per_round >= cost for (_, b1), (a2, _) in zip(runs, runs[1:]))
        assert sum(b - a for a, b in runs) * per_round + len(runs) * cost < routed


def _force_runs(monkeypatch, module):
    """Every needed round its own leaf call: the runs and slices get used."""
    monkeypatch.setattr(module, "_LEAF_CALL_COST", 0)


@pytest.mark.parametrize("forced", [False, True])
def test_xgboost(forced, monkeypatch):
    xgb = pytest.importorskip("xgboost")
    import firecy.ensembles._xgboost as mod

    if forced:
        _force_runs(monkeypatch, mod)
    X, y, y3 = _data()
    df, df2, yc = _frame()
    cases = [
        (xgb.XGBRegressor(n_estimators=40, max_depth=3, n_jobs=1).fit(X, y),
         [X, X[:3], sp.csr_matrix(np.nan_to_num(X))]),
        (xgb.XGBClassifier(n_estimators=15, max_depth=3, n_jobs=1).fit(X, y3), [X]),
        (xgb.XGBClassifier(n_estimators=30, max_depth=3, n_jobs=1, enable_categorical=True,
                           max_cat_to_onehot=1).fit(df, yc), [df, df2]),
        (xgb.XGBRegressor(booster="dart", n_estimators=20, max_depth=3, rate_drop=0.3,
                          n_jobs=1, random_state=0).fit(X, y), [X]),
        (xgb.XGBRFRegressor(n_estimators=5, max_depth=3, n_jobs=1).fit(X, y), [X]),
        (xgb.train({"max_depth": 3, "nthread": 1}, xgb.DMatrix(X, label=y), 25),
         [xgb.DMatrix(X)]),
    ]
    # early stopping: the model predicts with the best rounds only
    es = xgb.XGBRegressor(n_estimators=60, max_depth=3, n_jobs=1, early_stopping_rounds=3)
    es.fit(X[:400], y[:400], eval_set=[(X[400:], y[400:])], verbose=False)
    cases.append((es, [X]))
    for model, inputs in cases:
        ens = RuleEnsemble.from_model(model)
        spy = Spy(ens._adapter, monkeypatch)
        for cut in (ens, ens.cut(2)):
            for seed in range(3):
                coef = sparse_coef(cut, seed)
                for Xi in inputs:
                    np.testing.assert_allclose(cut.predict_raw(Xi, coef),
                                               reference_raw(cut, Xi, coef),
                                               rtol=1e-12, atol=1e-12)
        indptr = ens._adapter._indptr
        if forced and indptr is not None and indptr.size > 2:
            # only the references routed every tree (a one-round model, the
            # random forest, is one leaf call either way)
            assert spy.full == len(inputs) * 6
    # the library's own leaf call, columns picked
    model, inputs = cases[0]
    ens = RuleEnsemble.from_model(model)
    sources = np.array([1, 2, 17, 39])
    np.testing.assert_array_equal(ens._adapter.apply_sources(X, sources),
                                  model.apply(X)[:, sources])


def test_xgboost_unpickled_adapter_without_indptr_routes_every_tree(monkeypatch):
    xgb = pytest.importorskip("xgboost")
    X, y, _ = _data()
    model = xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1).fit(X, y)
    ens = RuleEnsemble.from_model(model)
    del ens._adapter._indptr  # as an adapter pickled before apply_sources
    spy = Spy(ens._adapter, monkeypatch)
    coef = sparse_coef(ens, 0)
    np.testing.assert_allclose(ens.predict_raw(X, coef), reference_raw(ens, X, coef),
                               rtol=1e-12, atol=1e-12)
    assert spy.full == 2


@pytest.mark.parametrize("forced", [False, True])
def test_lightgbm(forced, monkeypatch):
    lgb = pytest.importorskip("lightgbm")
    import firecy.ensembles._lightgbm as mod

    if forced:
        _force_runs(monkeypatch, mod)
    X, y, y3 = _data()
    df, df2, yc = _frame()
    kw = dict(n_jobs=1, verbose=-1, num_leaves=8)
    cases = [
        (lgb.LGBMRegressor(n_estimators=40, **kw).fit(X, y),
         [X, X[:3], sp.csr_matrix(np.nan_to_num(X))]),
        (lgb.LGBMClassifier(n_estimators=15, **kw).fit(X, y3), [X]),
        (lgb.LGBMClassifier(n_estimators=30, **kw).fit(df, yc), [df, df2]),
        (lgb.LGBMRegressor(boosting_type="rf", n_estimators=15, bagging_freq=1,
                           bagging_fraction=0.5, **kw).fit(X, y), [X]),
    ]
    for model, inputs in cases:
        ens = RuleEnsemble.from_model(model)
        spy = Spy(ens._adapter, monkeypatch)
        for cut in (ens, ens.cut(2)):
            for seed in range(3):
                coef = sparse_coef(cut, seed)
                for Xi in inputs:
                    np.testing.assert_allclose(cut.predict_raw(Xi, coef),
                                               reference_raw(cut, Xi, coef),
                                               rtol=1e-12, atol=1e-12)
        if forced:
            assert spy.full == len(inputs) * 6
    model, inputs = cases[1]  # multi-class: 3 trees per iteration
    ens = RuleEnsemble.from_model(model)
    sources = np.array([0, 4, 5, 30, 44])
    np.testing.assert_array_equal(ens._adapter.apply_sources(X, sources),
                                  model.predict(X, pred_leaf=True)[:, sources])


# -- estimators ---------------------------------------------------------------------
def _check_estimator(est, X, raw_method):
    """The estimator's raw prediction and transform against the kept columns
    of the full-route design."""
    ens = est.ensemble_
    Xm = est._validate_predict_data(X)
    coef = np.asarray(est.coef_, dtype=np.float64)
    blocks = ens._active_blocks(ens.leaf_values * coef)
    assert 0 < blocks.size < ens.n_trees  # the test would not tell otherwise
    ref = reference_raw(ens, Xm, coef) + est.intercept_
    got = raw_method(X)
    np.testing.assert_allclose(got, ref.reshape(got.shape), rtol=1e-12, atol=1e-12)
    kept = est._kept_columns()
    np.testing.assert_array_equal(est.transform(X), ens.design(Xm)[:, kept].toarray())


@pytest.mark.parametrize("rule_depth", [None, 2])
def test_regressor(rule_depth):
    from firecy import FIRERegressor

    X, y, _ = _data()
    est = FIRERegressor(RandomForestRegressor(40, max_depth=4, random_state=0),
                        rule_depth=rule_depth, random_state=0, cv=3, linear_terms=False).fit(X, y)
    _check_estimator(est, X, est.predict)


def test_classifier_binary_and_multiclass():
    from firecy import FIREClassifier

    X, y, y3 = _data()
    Xf = np.nan_to_num(X)
    binary = FIREClassifier(GradientBoostingClassifier(n_estimators=30, max_depth=2,
                                                       random_state=0),
                            random_state=0, cv=3, linear_terms=False).fit(Xf, y > 1)
    _check_estimator(binary, Xf, binary.decision_function)
    multi = FIREClassifier(RandomForestClassifier(20, max_depth=3, random_state=0),
                           random_state=0, cv=3, linear_terms=False).fit(X, y3)
    assert multi.ensemble_.n_outputs == 3
    _check_estimator(multi, X, multi.decision_function)


def test_classifier_on_a_categorical_frame():
    lgb = pytest.importorskip("lightgbm")
    from firecy import FIREClassifier

    df, df2, y = _frame()
    est = FIREClassifier(lgb.LGBMClassifier(n_estimators=40, num_leaves=8, n_jobs=1,
                                            verbose=-1),
                         random_state=0, cv=3, linear_terms=False).fit(df, y)
    _check_estimator(est, df, est.decision_function)
    _check_estimator(est, df2, est.decision_function)


def test_counts_and_survival():
    from firecy import FIREPoissonRegressor, FIRESurvivalRegressor

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    e = rng.uniform(0.5, 2.0, size=400)
    y = rng.poisson(e * np.exp(0.8 * (X[:, 0] > 0) - 0.5 * (X[:, 1] > 0.5)))
    forest = RandomForestRegressor(40, max_depth=3, random_state=0)
    pois = FIREPoissonRegressor(forest, random_state=0, cv=3,
                                linear_terms=False).fit(X, y, exposure=e)
    _check_estimator(pois, X, lambda Z: np.log(pois.predict(Z)))
    time = rng.exponential(np.exp(-1.0 * (X[:, 0] > 0)))
    event = rng.uniform(size=400) < 0.8
    ys = np.array(list(zip(event, time)), dtype=[("event", bool), ("time", float)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        surv = FIRESurvivalRegressor(forest, random_state=0, cv=3, linear_terms=False).fit(X, ys)
    _check_estimator(surv, X, surv.predict)
