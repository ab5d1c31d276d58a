"""Counts and survival boosters under the default ``rule_values`` ("auto": "unit").

A user who passes an XGBoost ``count:poisson`` / ``survival:cox`` model or a
LightGBM ``objective="poisson"`` model now gets indicator columns.  Checked
here against the library alone (its leaf routing, its tree dump, its raw
margin), not against firecy's own design or baseline code:

* the fitted ``ensemble_`` with its default weights still gives the
  library's raw margin (``predict(output_margin=True)`` /
  ``predict(raw_score=True)``), and ``predict`` at those weights gives the
  library's own prediction (the rate; the log partial hazard);
* ``predict`` at the fitted weights is ``exp(margin + sum_j 1[row in j]
  (d_j coef_j - v_j) + intercept_ + log exposure)`` (Poisson) or the same
  without ``exp``, intercept and exposure (Cox: ``predict`` is the log
  partial hazard, not XGBoost's ``exp`` of it), with ``v_j`` the library's
  leaf value, ``d_j`` the column's value (1 under "unit", ``v_j`` under
  "leaf") and ``1[row in j]`` the library's own leaf assignment, as a scipy
  sparse matrix.
"""
import copy
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from firecy import FIREPoissonRegressor, FIRESurvivalRegressor

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    exposure = rng.uniform(0.5, 2.0, size=n)
    mu = exposure * np.exp(0.5 * X[:, 0] - 0.7 * (X[:, 1] > 0) + 0.3 * X[:, 2] * (X[:, 3] > 0))
    return X, rng.poisson(mu).astype(float), exposure, rng


def _library_leaves(model, X):
    """Per tree: the library's leaf id of every row, and each leaf's value
    (from the library's own tree dump), as ``(ids (n, T), {(t, id): value})``."""
    if isinstance(model, xgb.XGBModel):
        ids = np.asarray(model.apply(X), dtype=np.int64)
        df = model.get_booster().trees_to_dataframe()
        leaves = df[df.Feature == "Leaf"]
        values = {(int(t), int(k)): float(v)
                  for t, k, v in zip(leaves.Tree, leaves.Node, leaves.Gain)}
    else:
        ids = np.asarray(model.predict(X, pred_leaf=True), dtype=np.int64)
        df = model.booster_.trees_to_dataframe()
        leaves = df[df.left_child.isna()]
        # LightGBM names leaf k of tree t "t-Lk"
        values = {(int(t), int(str(k).split("-L")[1])): float(v)
                  for t, k, v in zip(leaves.tree_index, leaves.node_index, leaves.value)}
    return ids, values


def _margin(model, X):
    if isinstance(model, xgb.XGBModel):
        return model.predict(X, output_margin=True).astype(np.float64)
    return model.predict(X, raw_score=True).astype(np.float64)


def _reference_eta(fire, model, X):
    """The fitted linear predictor (without intercept and offset) from the
    library: its margin, minus each row's leaf values, plus each row's leaf
    columns times their fitted weights, through a scipy indicator matrix.

    LightGBM folds its boost-from-average constant into the first tree's
    leaves; firecy moves it to the baseline (``firecy/ensembles/_lightgbm.py``).
    So a column's default contribution ``w_j`` (its value times its default
    weight: the value under "leaf", the weight under "unit") is the library's
    leaf value minus a constant per tree, checked here, and the reference
    adds those constants back.  Returns ``(eta, w, shift)``.
    """
    ens = fire.ensemble_
    ids, values = _library_leaves(model, X)
    n, T = ids.shape
    assert T == ens.n_trees
    ptr = np.asarray(ens.block_ptr)
    node = np.asarray(ens.leaf_node_ids)
    d = np.asarray(ens.leaf_values, dtype=np.float64)    # the values solved on
    w = d * np.asarray(ens.column_scale, dtype=np.float64)
    rows, cols, v_lib, shift = [], [], np.empty(ens.n_rules), np.zeros(T)
    for t in range(T):
        # the column of each of tree t's leaves: a label, read from the ensemble
        col_of = {int(node[j]): j for j in range(ptr[t], ptr[t + 1])}
        assert len(col_of) == ptr[t + 1] - ptr[t]
        rows.append(np.arange(n))
        cols.append(np.array([col_of[int(k)] for k in ids[:, t]]))
        for k, j in col_of.items():
            v_lib[j] = values[(t, k)]
        diff = v_lib[ptr[t]:ptr[t + 1]] - w[ptr[t]:ptr[t + 1]]
        # one constant per tree (float32 dump): the rules' own values are the library's
        np.testing.assert_allclose(diff, diff.mean(), rtol=0, atol=1e-6)
        shift[t] = diff.mean()
    A = sp.csr_matrix((np.ones(n * T), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n, ens.n_rules))
    if fire.rule_values_ == "unit":
        np.testing.assert_array_equal(d, 1.0)
    else:
        # these boosters have no tree scale: the default weights are 1
        np.testing.assert_array_equal(ens.column_scale, 1.0)
    eta = _margin(model, X) - A @ v_lib + shift.sum() + A @ (d * fire.coef_)
    return eta, w, shift


def _poisson_models(X, y, e):
    return {
        "xgb-count-poisson": xgb.XGBRegressor(
            objective="count:poisson", n_estimators=30, max_depth=3, learning_rate=0.2,
            n_jobs=1, random_state=0).fit(X, y / e, sample_weight=e),
        # max_depth=3: the default rule_depth="auto" keeps the leaves
        "lgbm-poisson": lgb.LGBMRegressor(
            objective="poisson", n_estimators=30, num_leaves=8, max_depth=3,
            learning_rate=0.2, verbose=-1, n_jobs=1, random_state=0).fit(
            X, y / e, sample_weight=e),
    }


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


@pytest.fixture(scope="module")
def counts():
    X, y, e, _ = _data()
    return X, y, e, _poisson_models(X, y, e)


@pytest.mark.parametrize("name", ["xgb-count-poisson", "lgbm-poisson"])
def test_poisson_booster_default_unit_reproduces_the_library(counts, name):
    X, y, e, models = counts
    model = models[name]
    fire = _fit(FIREPoissonRegressor(model, cv=3, random_state=0, n_jobs=1,
                                     linear_terms=False), X, y, exposure=e)
    ens = fire.ensemble_
    assert fire.rule_values_ == "unit" and ens.is_indicator and ens.rule_depth is None
    np.testing.assert_array_equal(ens.leaf_values, 1.0)
    assert fire.n_rules_ > 0
    margin = _margin(model, X)
    # default weights: the library's raw margin (the log rate), to float32 rounding
    raw = np.asarray(ens.predict_raw(X)).reshape(-1)
    np.testing.assert_allclose(raw, margin, rtol=1e-5, atol=1e-5 * np.abs(margin).max())
    eta, _, shift = _reference_eta(fire, model, X)
    # only LightGBM's first tree moves a constant (boost from average)
    np.testing.assert_allclose(shift[1:], 0.0, atol=1e-6)
    # predict at the default weights, no intercept: the library's rate
    at_default = copy.deepcopy(fire)
    at_default.coef_ = ens.column_scale.copy()
    at_default.intercept_ = 0.0
    np.testing.assert_allclose(at_default.predict(X), model.predict(X), rtol=1e-5)
    # predict at the fitted weights: exp(eta + intercept + log exposure)
    np.testing.assert_allclose(fire.predict(X, exposure=e),
                               np.exp(eta + fire.intercept_ + np.log(e)), rtol=1e-5)
    np.testing.assert_allclose(fire.predict(X), np.exp(eta + fire.intercept_), rtol=1e-5)


@pytest.mark.parametrize("name", ["xgb-count-poisson", "lgbm-poisson"])
def test_poisson_booster_leaf_values_same_reference(counts, name):
    # the old default, against the same library reference (d_j = v_j)
    X, y, e, models = counts
    model = models[name]
    fire = _fit(FIREPoissonRegressor(model, rule_values="leaf", cv=3, random_state=0,
                                     n_jobs=1, linear_terms=False), X, y, exposure=e)
    assert fire.rule_values_ == "leaf" and not fire.ensemble_.is_indicator
    assert fire.n_rules_ > 0
    eta, _, _ = _reference_eta(fire, model, X)
    np.testing.assert_allclose(fire.predict(X, exposure=e),
                               np.exp(eta + fire.intercept_ + np.log(e)), rtol=1e-5)


@pytest.fixture(scope="module")
def survival():
    X, _, _, rng = _data(seed=1)
    time = rng.exponential(np.exp(-(0.8 * X[:, 0] - 0.5 * (X[:, 1] > 0))))
    event = rng.uniform(size=len(time)) < 0.7
    y = np.array(list(zip(event, time)), dtype=[("event", bool), ("time", float)])
    model = xgb.XGBRegressor(objective="survival:cox", n_estimators=30, max_depth=3,
                             learning_rate=0.2, n_jobs=1, random_state=0).fit(
        X, np.where(event, time, -time))
    return X, y, model


@pytest.mark.parametrize("rule_values", ["auto", "leaf"])
def test_cox_booster_predict_is_the_log_partial_hazard(survival, rule_values):
    X, y, model = survival
    fire = _fit(FIRESurvivalRegressor(model, rule_values=rule_values, cv=3, random_state=0,
                                      n_jobs=1, linear_terms=False), X, y)
    ens = fire.ensemble_
    assert fire.rule_values_ == ("unit" if rule_values == "auto" else "leaf")
    assert ens.rule_depth is None and fire.n_rules_ > 0 and fire.intercept_ == 0.0
    margin = _margin(model, X)
    # default weights: XGBoost's margin, the log partial hazard (its predict
    # is exp of it: firecy's predict stays on the log scale)
    np.testing.assert_allclose(np.asarray(ens.predict_raw(X)).reshape(-1), margin,
                               rtol=1e-5, atol=1e-5 * np.abs(margin).max())
    np.testing.assert_allclose(np.exp(margin), model.predict(X), rtol=1e-5)
    at_default = copy.deepcopy(fire)
    at_default.coef_ = ens.column_scale.copy()
    np.testing.assert_allclose(at_default.predict(X), margin, rtol=1e-5,
                               atol=1e-5 * np.abs(margin).max())
    eta, _, _ = _reference_eta(fire, model, X)
    np.testing.assert_allclose(fire.predict(X), eta, rtol=1e-5, atol=1e-5 * np.abs(eta).max())
