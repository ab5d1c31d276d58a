"""The fit pipeline's own promises (issue 37): sparse X is read as the model's
library reads it, a model given with data it was not fitted on is diagnosed
in words, and warnings name the user's line."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.preprocessing import StandardScaler

from firecy import FIREClassifier, FIREPoissonRegressor, FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.estimators._default_forest import canonical_row_order
from firecy.estimators._diagnostics import MAX_LEAF_SHARE, MAX_REACHED, leaf_concentration

FAST = dict(n_lambdas=15, cv=3, random_state=0, n_jobs=1, linear_terms=False)


def _sparse_problem(n=600, p=30, seed=0, density=0.1):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=density, format="csr", random_state=seed,
                  data_rvs=lambda k: rng.normal(size=k))
    dense = X.toarray()
    y = 3 * dense[:, 0] - 2 * (dense[:, 1] > 0.5) + 0.1 * rng.normal(size=n)
    return X, dense, y


# -- sparse X -------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_x_gives_the_dense_fit_with_the_default_forest(fmt):
    X, dense, y = _sparse_problem()
    est = FIRERegressor(RandomForestRegressor(60, max_depth=3, random_state=0), **FAST)
    a = est.fit(X.asformat(fmt), y)
    coef, pred = a.coef_.copy(), a.predict(X.asformat(fmt))
    b = FIRERegressor(RandomForestRegressor(60, max_depth=3, random_state=0), **FAST)
    b.fit(dense, y)
    # scikit-learn's trees split sparse and dense input alike here (no
    # missing values): the same rules, the same weights
    np.testing.assert_array_equal(coef, b.coef_)
    np.testing.assert_allclose(pred, b.predict(dense), rtol=1e-12, atol=1e-12)
    assert a.transform(X).shape == (X.shape[0], a.n_rules_)
    assert "rules" in a.summary(X=X)


def test_sparse_x_through_xgboost_reads_unstored_entries_as_missing():
    xgboost = pytest.importorskip("xgboost")
    X, dense, y = _sparse_problem(seed=1)
    model = xgboost.XGBRegressor(n_estimators=30, max_depth=3, random_state=0)
    fire = FIRERegressor(model, rule_depth=None, **FAST).fit(X, y)
    # the rules route as XGBoost routes the same sparse rows: the ensemble's
    # raw prediction with every rule at its model weight is the library's
    np.testing.assert_allclose(fire.ensemble_.predict_raw(X), fire.estimator_.predict(X),
                               rtol=1e-5, atol=1e-5)
    # and FIRE's prediction is its intercept plus its kept rules on those rows
    kept = np.flatnonzero(fire.coef_)
    manual = fire.intercept_ + fire.ensemble_.baseline(X) + sum(
        fire.coef_[j] * fire.ensemble_.leaf_values[j] * fire.ensemble_.rule_mask(j, X)
        for j in kept)
    np.testing.assert_allclose(fire.predict(X), manual, rtol=1e-10, atol=1e-10)


def test_sparse_x_classifier_and_poisson():
    X, dense, y = _sparse_problem(seed=2)
    labels = (y > np.median(y)).astype(int)
    clf = FIREClassifier(RandomForestClassifier(40, max_depth=3, random_state=0), **FAST)
    clf.fit(X, labels)
    np.testing.assert_allclose(clf.predict_proba(X), clf.predict_proba(dense), rtol=1e-12)
    counts = np.random.default_rng(0).poisson(np.exp(0.5 * np.tanh(y)))
    pois = FIREPoissonRegressor(RandomForestRegressor(40, max_depth=3, random_state=0),
                                **FAST).fit(X, counts)
    assert np.all(pois.predict(X) > 0)


def test_sparse_canonical_order_is_the_dense_lexsort():
    rng = np.random.default_rng(3)
    for _ in range(20):
        dense = rng.integers(-2, 3, size=(200, 5)).astype(float)
        dense[rng.random(dense.shape) < 0.1] = np.nan
        dense[rng.random(dense.shape) < 0.5] = 0.0
        y = rng.integers(0, 2, 200).astype(float)
        np.testing.assert_array_equal(canonical_row_order(sp.csr_matrix(dense), y),
                                      canonical_row_order(dense, y))


def test_nan_in_sparse_x_is_refused_for_a_model_that_cannot_route_it():
    from sklearn.ensemble import GradientBoostingRegressor as GB

    X, dense, y = _sparse_problem(seed=4)
    X = X.tocsr(copy=True)
    X.data[0] = np.nan
    with pytest.raises(ValueError, match="contains NaN, which the wrapped"):
        FIRERegressor(GB(n_estimators=5), **FAST).fit(X, y)


# -- the data do not fit the model ---------------------------------------------
@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X, y


def test_a_model_given_rescaled_features_is_diagnosed_in_words(diabetes):
    X, y = diabetes
    forest = RandomForestRegressor(100, max_depth=3, random_state=0).fit(X * 100, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FIRERegressor(forest, max_rules=3, n_lambdas=5, selection="validation",
                      random_state=0, n_jobs=1, linear_terms=False).fit(X, y)
    found = [w for w in caught if "does not look like the data" in str(w.message)]
    assert len(found) == 1
    text = str(found[0].message)
    assert "RandomForestRegressor" in text and "R² = " in text
    assert found[0].filename == __file__   # the user's line, not firecy's


def test_the_solves_that_do_not_converge_warn_in_one_text(diabetes):
    # a model used on rescaled data: many solves of the path and its folds run
    # out of budget; they warn with one text (the budget, not the count each
    # reached), so that Python's default filter shows it once per call site
    # instead of once per solve (issue 37: 97-130 warnings)
    X, y = diabetes
    forest = RandomForestRegressor(60, max_depth=3, random_state=0).fit(X * 100 + 50, y)
    Xs = (X - X.mean(axis=0)) / X.std(axis=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FIRERegressor(forest, n_lambdas=10, cv=3, max_iter=20000, random_state=0,
                      n_jobs=1, linear_terms=False).fit(Xs, y)
    texts = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(texts) >= 5 and len(set(texts)) == 1, set(texts)
    assert "within 20000 block updates" in texts[0]


@pytest.mark.parametrize("make", [
    lambda: RandomForestRegressor(50, random_state=0),                 # full depth
    lambda: RandomForestRegressor(50, max_depth=3, random_state=0),
    lambda: GradientBoostingRegressor(n_estimators=50, random_state=0),
    lambda: HistGradientBoostingRegressor(max_iter=50, random_state=0),
])
def test_a_model_on_its_own_data_is_not_flagged(diabetes, make):
    X, y = diabetes
    model = make().fit(X, y)
    ens = rule_ensemble_from_model(model)
    for depth in (None, 3, 2):
        cut = ens if depth is None else ens.cut(depth, X=X)
        shares, reached = leaf_concentration(cut.leaf_table(X), np.asarray(cut.block_ptr),
                                             np.ones(X.shape[0]))
        split = np.diff(cut.block_ptr) > 1
        # the margin of either threshold on models fitted on the data
        assert np.median(shares[split]) < MAX_LEAF_SHARE - 0.1
        assert np.median(reached[split]) > MAX_REACHED + 0.3


def test_a_rare_signal_on_sparse_features_is_not_flagged():
    # one leaf of each tree holds nearly every row, but every leaf holds one
    X, _, _ = _sparse_problem(n=2000, p=200, seed=5, density=0.01)
    X.data = np.abs(X.data)
    y = np.asarray(X[:, :20].sum(axis=1)).ravel()
    forest = RandomForestRegressor(30, max_depth=3, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(forest)
    share, _ = leaf_concentration(ens.leaf_table(X), np.asarray(ens.block_ptr), np.ones(2000))
    assert np.median(share) >= MAX_LEAF_SHARE   # the case the share alone would flag
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", message=".*rarely generalise")
        FIRERegressor(forest, max_rules=3, n_lambdas=5, selection="validation",
                      random_state=0, n_jobs=1, linear_terms=False).fit(X, y)


def test_leaf_concentration_by_hand():
    table = np.array([[0, 2], [0, 3], [1, 3], [0, 3]])
    w = np.array([1.0, 1.0, 2.0, 0.0])
    share, reached = leaf_concentration(table, np.array([0, 2, 5]), w)
    np.testing.assert_allclose(share, [0.5, 0.75])
    np.testing.assert_allclose(reached, [1.0, 2 / 3])


# -- a rule stated once ------------------------------------------------------------
def test_equal_rules_of_different_trees_are_kept_once():
    lightgbm = pytest.importorskip("lightgbm")
    from firecy.ensembles._equal_rules import equal_rule_groups

    rng = np.random.default_rng(0)
    X = rng.poisson(0.5, size=(800, 3)).astype(float)
    y = 2.0 * (X[:, 0] > 0) + 1.0 * (X[:, 1] > 0) + 0.1 * rng.normal(size=800)
    model = lightgbm.LGBMRegressor(n_estimators=40, num_leaves=2, random_state=0,
                                   verbose=-1).fit(X, y)
    ens = rule_ensemble_from_model(model)
    assert equal_rule_groups(ens, range(ens.n_rules)), "stumps repeat their split"
    fire = FIRERegressor(model, penalty="l1", fusion=0.0, rule_depth=None, lam=1e-4,
                         random_state=0, n_jobs=1, linear_terms=False).fit(X, y)
    raw = fire.path_.coefs[-1]
    # the solver kept equal rules of several trees; the model states each once
    assert equal_rule_groups(fire.ensemble_, np.flatnonzero(raw))
    assert equal_rule_groups(fire.ensemble_, np.flatnonzero(fire.coef_)) == []
    texts = list(fire.rules_["rule"])
    assert len(texts) == len(set(texts)) == fire.n_rules_
    # with the same predictions as the solver's weights
    M = fire.ensemble_.design(X)
    np.testing.assert_allclose(M @ fire.coef_, M @ raw, rtol=1e-12, atol=1e-12)


def test_equal_rule_groups_select_the_same_rows():
    xgboost = pytest.importorskip("xgboost")
    from firecy.ensembles._equal_rules import equal_rule_groups

    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(500, 3)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) * (X[:, 1] > 1) + rng.normal(size=500) * 0.1
    model = xgboost.XGBRegressor(n_estimators=30, max_depth=2, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(model)
    groups = equal_rule_groups(ens, range(ens.n_rules))
    assert groups
    Xt = rng.integers(-1, 4, size=(2000, 3)).astype(float)
    Xt[rng.random(Xt.shape) < 0.2] = np.nan
    for g in groups:
        masks = [ens.rule_mask(j, Xt) for j in g]
        assert all(np.array_equal(masks[0], m) for m in masks[1:])
