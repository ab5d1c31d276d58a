"""FIRERegressor: the scikit-learn contract, selection, weights, pandas, errors."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_friedman1
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from firecy.estimators import FIREPath, FIRERegressor


def _has_penalty(name):
    import firecy.penalties as P

    return hasattr(P, name)


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(n_samples=160, n_features=6, noise=0.5, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    return RandomForestRegressor(n_estimators=40, max_depth=3, random_state=0).fit(X, y)


# --------------------------------------------------------------- contract ---

# bootstrap=False and selection by CV: then integer sample weights are
# exactly row repetitions for the forest and for FIRE (the check swaps in its
# own CV splits), so check_sample_weight_equivalence passes too. The forest is
# seeded: the check seeds FIRE only, and an unseeded forest breaks ties
# between equal splits differently on the two fits, which reorders leaves,
# and fusion (on by default) acts on the leaf order
SMALL = FIRERegressor(
    estimator=RandomForestRegressor(n_estimators=10, max_depth=3, bootstrap=False,
                                    random_state=0),
    selection="cv", cv=3, n_lambdas=15, linear_terms=False
)


# one test per scikit-learn check (every check of check_estimator), so that
# they run side by side on pytest-xdist's workers
@parametrize_with_checks([SMALL])
def test_check_estimator(estimator, check):
    check(estimator)


# every parameter at its default (linear terms included), the default
# 500-tree forest included (what issues 13 and 47 ask), nothing declared an
# expected failure: each check fits the forest and six paths, so it runs in
# CI's slow step (pytest -m slow)
@pytest.mark.slow
@parametrize_with_checks([FIRERegressor()])
def test_check_estimator_defaults(estimator, check):
    check(estimator)


def test_default_sample_weight_equivalence():
    # the default forest bootstraps; it draws sum(sample_weight) rows by
    # weight, in a canonical row order, so integer weights are exactly row
    # repetitions (the check shuffles the weighted rows and repeats others)
    from sklearn.utils.estimator_checks import (
        check_sample_weight_equivalence_on_dense_data,
    )

    check_sample_weight_equivalence_on_dense_data("FIRERegressor", FIRERegressor())


def test_default_forest_bootstrap_size():
    # weights summing to 1 still get a bootstrap of one draw per row (not one
    # draw in all), and the fit does not depend on the order of the rows
    from firecy.estimators._default_forest import fit_default_forest

    rng = np.random.RandomState(0)
    X, y = rng.rand(40, 3), rng.rand(40)
    sw = np.full(40, 1 / 40)
    rf = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0)
    fitted = fit_default_forest(clone(rf), X, y, sw, lambda Z: Z)
    assert fitted.max_samples == 40
    perm = rng.permutation(40)
    again = fit_default_forest(clone(rf), X[perm], y[perm], sw[perm], lambda Z: Z)
    np.testing.assert_array_equal(fitted.predict(X), again.predict(X))


def test_clone_and_pickle(data, forest):
    X, y = data
    est = FIRERegressor(forest, max_rules=8, gamma=1.5, random_state=0,
                        linear_terms=False).fit(X, y)
    params = clone(est).get_params()
    assert params["max_rules"] == 8 and params["gamma"] == 1.5
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    np.testing.assert_array_equal(again.coef_, est.coef_)


def test_fitted_estimator_used_as_is(data, forest):
    X, y = data
    before = forest.predict(X)
    est = FIRERegressor(forest, max_rules=5, random_state=0, linear_terms=False).fit(X, y)
    assert est.estimator_ is forest and est.estimator is forest
    np.testing.assert_array_equal(forest.predict(X), before)


def test_unfitted_estimator_is_cloned_and_fitted(data):
    X, y = data
    rf = RandomForestRegressor(n_estimators=15, max_depth=2, random_state=0)
    est = FIRERegressor(rf, max_rules=5, random_state=0, linear_terms=False).fit(X, y)
    assert not hasattr(rf, "estimators_")  # the parameter is untouched
    assert est.estimator_ is not rf and len(est.estimator_.estimators_) == 15


def test_frozen_estimator_survives_clone(data, forest):
    from sklearn.frozen import FrozenEstimator

    X, y = data
    est = clone(FIRERegressor(FrozenEstimator(forest), max_rules=5, random_state=0,
                              linear_terms=False))
    est.fit(X[:100], y[:100])  # a refit would change the forest
    assert est.estimator_.estimator is forest
    assert est.ensemble_.n_rules == sum(t.tree_.n_leaves for t in forest.estimators_)


def test_default_forest_and_random_state(data):
    X, y = data
    X, y = X[:80], y[:80]
    a = FIRERegressor(max_rules=4, n_lambdas=10, random_state=3, linear_terms=False).fit(X, y)
    b = FIRERegressor(max_rules=4, n_lambdas=10, random_state=3, linear_terms=False).fit(X, y)
    rf = a.estimator_
    assert (rf.n_estimators, rf.max_depth, rf.random_state) == (500, 3, 3)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    assert list(a.rules_["rule"]) == list(b.rules_["rule"])


# -------------------------------------------------------------- selection ---

@pytest.mark.parametrize("selection", ["validation", "cv"])
@pytest.mark.parametrize("max_rules", [1, 6])
def test_rule_budget_respected(data, forest, selection, max_rules):
    X, y = data
    est = FIRERegressor(forest, max_rules=max_rules, selection=selection, cv=3,
                        random_state=0, linear_terms=False).fit(X, y)
    assert 0 <= est.n_rules_ <= max_rules
    assert est.n_rules_ == np.count_nonzero(est.coef_)
    p = est.path_
    assert isinstance(p, FIREPath)
    assert len(p.lambdas) == len(p.n_rules) == len(p.objectives) == len(p.validation_error)
    # the selected point is the best eligible one, and it is the full-data path
    k = int(np.flatnonzero(p.lambdas == est.lambda_)[0])
    assert p.n_rules[k] == est.n_rules_
    assert p.validation_error[k] == np.min(p.validation_error[p.n_rules <= max_rules])
    np.testing.assert_array_equal(p.coefs[k], est.coef_)
    assert np.all(np.isinf(p.validation_error[p.n_rules > max_rules]))
    assert np.all(np.diff(p.lambdas) < 0)


def test_predict_is_predict_raw_plus_intercept(data, forest):
    X, y = data
    est = FIRERegressor(forest, max_rules=10, random_state=0, linear_terms=False).fit(X, y)
    np.testing.assert_allclose(
        est.predict(X), est.ensemble_.predict_raw(X, est.coef_) + est.intercept_
    )
    assert est.score(X, y) > 0.5


def test_gradient_boosting_baseline(data):
    X, y = data
    gb = GradientBoostingRegressor(n_estimators=30, max_depth=2, random_state=0).fit(X, y)
    est = FIRERegressor(gb, max_rules=10, random_state=0, linear_terms=False).fit(X, y)
    base = est.ensemble_.baseline(X)
    assert np.ptp(base) == 0 and base[0] != 0
    np.testing.assert_allclose(
        est.predict(X), est.ensemble_.predict_raw(X, est.coef_) + est.intercept_
    )
    # the intercept is on top of the baseline: with no rules the model is the mean
    empty = FIRERegressor(gb, lam=1e9, linear_terms=False).fit(X, y)
    assert empty.n_rules_ == 0
    np.testing.assert_allclose(empty.predict(X), np.mean(y))


def test_fixed_lambda(data, forest):
    X, y = data
    ref = FIRERegressor(forest, max_rules=6, random_state=0, linear_terms=False).fit(X, y)
    est = FIRERegressor(forest, lam=ref.lambda_, linear_terms=False).fit(X, y)
    assert est.lambda_ == ref.lambda_ and len(est.path_.lambdas) == 1
    assert np.isnan(est.validation_error_)
    assert est.n_rules_ >= 1
    with pytest.warns(UserWarning, match="more than max_rules"):
        FIRERegressor(forest, lam=ref.path_.lambdas[-1] * 1e-3, max_rules=1,
                      linear_terms=False).fit(X, y)


def test_grid_over_gamma(data, forest):
    X, y = data
    est = FIRERegressor(forest, gamma=[1.1, 3.0, 30.0], max_rules=6, selection="cv",
                        cv=3, random_state=0, linear_terms=False).fit(X, y)
    assert [p.params["gamma"] for p in est.paths_] == [1.1, 3.0, 30.0]
    best = min(np.min(p.validation_error) for p in est.paths_)
    assert est.validation_error_ == best
    assert est.best_params_["gamma"] in (1.1, 3.0, 30.0)
    assert est.penalty_.lam == est.lambda_


def test_penalty_objects_and_l1(data, forest):
    from firecy.penalties import L1

    X, y = data
    # a tight tolerance: the two fits take different routes (their lambda
    # grids differ by a scale), so they agree only to the solver's tolerance
    by_name = FIRERegressor(forest, penalty="l1", max_rules=6, random_state=0,
                            tol=1e-10, linear_terms=False).fit(X, y)
    by_obj = FIRERegressor(forest, penalty=L1(0.5), max_rules=6, random_state=0,
                           tol=1e-10, linear_terms=False).fit(X, y)
    np.testing.assert_allclose(by_obj.coef_, by_name.coef_)
    assert by_name.paths_[0].params["gamma"] is None

    class PyL1:  # the Python penalty protocol
        is_convex = True

        def __init__(self, lam=1.0):
            self.lam = lam

        def value(self, w, curv):
            return self.lam * np.abs(w).sum()

        def prox(self, z, step, curv):
            thr = np.divide(self.lam, step, out=np.full_like(z, np.inf), where=step > 0)
            return np.sign(z) * np.maximum(np.abs(z) - thr, 0.0)

        def subdiff(self, w, curv):
            lo = np.where(w == 0, -self.lam, self.lam * np.sign(w))
            hi = np.where(w == 0, self.lam, self.lam * np.sign(w))
            return lo, hi

        def lambda_max(self, grad, curv):
            return float(np.max(np.abs(grad)))

    py = FIRERegressor(forest, penalty=PyL1(), max_rules=6, random_state=0,
                       tol=1e-10, linear_terms=False).fit(X, y)
    np.testing.assert_allclose(py.coef_, by_name.coef_, atol=1e-8)


@pytest.mark.skipif(not _has_penalty("MCPFusion"), reason="MCPFusion not built yet")
def test_fusion_and_group_l0(data, forest):
    X, y = data
    est = FIRERegressor(forest, fusion=[0.0, 0.5], max_rules=8, random_state=0,
                        linear_terms=False).fit(X, y)
    assert [p.params["fusion"] for p in est.paths_] == [0.0, 0.5]
    assert est.n_rules_ <= 8
    if _has_penalty("GroupL0"):
        est = FIRERegressor(forest, group_l0=0.01, max_rules=8, random_state=0,
                            linear_terms=False).fit(X, y)
        assert est.n_rules_ <= 8


# ---------------------------------------------------------------- weights ---

def test_integer_weights_equal_row_repetition(data, forest):
    X, y = data
    sw = np.random.default_rng(0).integers(0, 4, size=len(y))
    ref = FIRERegressor(forest, max_rules=8, random_state=0, linear_terms=False).fit(X, y)
    a = FIRERegressor(forest, lam=ref.lambda_, tol=1e-10,
                      linear_terms=False).fit(X, y, sample_weight=sw)
    b = FIRERegressor(forest, lam=ref.lambda_, tol=1e-10, linear_terms=False).fit(
        np.repeat(X, sw, axis=0), np.repeat(y, sw)
    )
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-6)
    # and the weights matter
    c = FIRERegressor(forest, lam=ref.lambda_, tol=1e-10, linear_terms=False).fit(X, y)
    assert not np.allclose(a.coef_, c.coef_)


def test_weights_reach_the_default_forest_and_validation(data):
    X, y = data
    X, y = X[:60], y[:60]
    sw = np.r_[np.zeros(30), np.ones(30)]
    est = FIRERegressor(
        RandomForestRegressor(n_estimators=5, max_depth=2, bootstrap=False, random_state=0),
        max_rules=3, random_state=0, linear_terms=False
    ).fit(X, y, sample_weight=sw)
    ref = RandomForestRegressor(n_estimators=5, max_depth=2, bootstrap=False,
                                random_state=0).fit(X[30:], y[30:])
    np.testing.assert_allclose(est.estimator_.predict(X), ref.predict(X))


# ----------------------------------------------------------------- pandas ---

def test_dataframe_names(data, forest):
    pd = pytest.importorskip("pandas")
    X, y = data
    cols = [f"feat_{c}" for c in "abcdef"]
    df = pd.DataFrame(X, columns=cols)
    # model fitted by FIRE on the DataFrame
    est = FIRERegressor(
        RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0),
        max_rules=5, random_state=0, linear_terms=False
    ).fit(df, y)
    assert list(est.feature_names_in_) == cols
    assert est.ensemble_.feature_names == cols
    # prefit on an array: the DataFrame's names override x0, x1, ...
    est2 = FIRERegressor(forest, max_rules=5, random_state=0, linear_terms=False).fit(df, y)
    assert est2.ensemble_.feature_names == cols
    rules = est2.rules_
    assert len(rules) == est2.n_rules_ and est2.n_rules_ > 0
    assert all(any(c in r for c in cols) for r in rules["rule"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name warnings from FIRE or the forest
        pred = est2.predict(df)
        est.predict(df)
    with pytest.warns(UserWarning, match="valid feature names"):
        np.testing.assert_array_equal(est2.predict(X), pred)


def test_non_numeric_column_named(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    df["city"] = np.where(X[:, 3] > 0.5, "Paris", "Lyon")
    with pytest.raises(ValueError, match="'city'"):
        FIRERegressor(max_rules=3, linear_terms=False).fit(df, y)
    df["city"] = df["city"].astype("category")
    with pytest.raises(ValueError, match="'city'"):
        FIRERegressor(max_rules=3, linear_terms=False).fit(df, y)


def test_native_categorical_passthrough(data):
    pd = pytest.importorskip("pandas")
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = data
    df = pd.DataFrame(X[:, :4], columns=["a", "b", "c", "d"])
    df["g"] = pd.Categorical(np.where(X[:, 4] > 0.5, "hi", "lo"))
    hgb = HistGradientBoostingRegressor(max_iter=20, max_depth=2, random_state=0,
                                        categorical_features="from_dtype")
    est = FIRERegressor(hgb, max_rules=6, random_state=0, linear_terms=False).fit(df, y)
    np.testing.assert_allclose(
        est.predict(df), est.ensemble_.predict_raw(df, est.coef_) + est.intercept_
    )
    with pytest.raises(TypeError, match="DataFrame"):
        est.predict(df.to_numpy())


# ------------------------------------------------------------- bad inputs ---

@pytest.mark.parametrize(
    "params, exc, match",
    [
        ({"penalty": "lasso2"}, ValueError, "unknown penalty 'lasso2'"),
        ({"max_rules": 0}, ValueError, "max_rules must be >= 1"),
        ({"gamma": 1.0}, ValueError, "gamma must be > 1"),
        ({"gamma": [1.1, 0.5]}, ValueError, "gamma must be > 1"),
        ({"lam": -0.1}, ValueError, "lam must be >= 0"),
        ({"fusion": -1.0}, ValueError, "fusion must be >= 0"),
        ({"group_l0": -1.0}, ValueError, "group_l0 must be >= 0"),
        ({"selection": "aic"}, ValueError, "selection must be"),
        ({"eps": 2.0}, ValueError, "eps must be in"),
        ({"validation_fraction": 1.0}, ValueError, "validation_fraction"),
        ({"penalty": object()}, TypeError, "no method"),
        ({"max_rules": 2.5}, TypeError, "max_rules must be an integer"),
    ],
)
def test_bad_parameters(data, forest, params, exc, match):
    X, y = data
    with pytest.raises(exc, match=match):
        FIRERegressor(forest, **params).fit(X, y)


def test_bad_data(data, forest):
    X, y = data
    y_nan = y.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="y contains NaN"):
        FIRERegressor(forest, linear_terms=False).fit(X, y_nan)
    with pytest.raises(NotFittedError):
        FIRERegressor(forest, linear_terms=False).predict(X)
    est = FIRERegressor(forest, max_rules=3, random_state=0, linear_terms=False).fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features"):
        est.predict(X[:, :4])
    with pytest.raises(ValueError, match="X has 4 features"):
        FIRERegressor(forest, linear_terms=False).fit(X[:, :4], y)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        FIRERegressor(forest, linear_terms=False).fit(X, y, sample_weight=-np.ones(len(y)))
    from sklearn.ensemble import RandomForestClassifier

    with pytest.raises(TypeError, match="classifier"):
        FIRERegressor(RandomForestClassifier(n_estimators=3), linear_terms=False).fit(X, y > 0)
    with pytest.raises(TypeError, match="cannot extract rules"):
        from sklearn.linear_model import Ridge

        FIRERegressor(Ridge(), linear_terms=False).fit(X, y)


# ------------------------------------------------------------------- dask ---

def test_dask_equals_serial(data, forest):
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_backend

    X, y = data
    grid = dict(gamma=[1.1, 3.0], fusion=[0.0, 0.5] if _has_penalty("MCPFusion") else 0.0)
    params = dict(max_rules=6, selection="cv", cv=3, random_state=0, **grid)
    serial = FIRERegressor(forest, n_jobs=1, **params).fit(X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with parallel_backend("dask"):
            par = FIRERegressor(forest, n_jobs=-1, **params).fit(X, y)
    np.testing.assert_array_equal(par.coef_, serial.coef_)
    assert par.lambda_ == serial.lambda_ and par.best_params_ == serial.best_params_
    for a, b in zip(par.paths_, serial.paths_):
        np.testing.assert_array_equal(a.validation_error, b.validation_error)


@pytest.mark.parametrize("lib", ["xgboost", "lightgbm"])
def test_xgboost_lightgbm(data, lib):
    mod = pytest.importorskip(lib)
    pd = pytest.importorskip("pandas")
    X, y = data
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    if lib == "xgboost":
        model = mod.XGBRegressor(n_estimators=15, max_depth=2, n_jobs=1, random_state=0)
    else:
        model = mod.LGBMRegressor(n_estimators=15, num_leaves=4, n_jobs=1, random_state=0,
                                  verbose=-1)
    est = FIRERegressor(model, max_rules=6, random_state=0, linear_terms=False).fit(df, y)
    assert est.n_rules_ <= 6 and est.ensemble_.source == lib
    assert est.ensemble_.feature_names == list(df.columns)
    np.testing.assert_allclose(
        est.predict(df), est.ensemble_.predict_raw(df, est.coef_) + est.intercept_
    )
    # a fitted booster works too, and gives the same rules
    booster = est.estimator_.get_booster() if lib == "xgboost" else est.estimator_.booster_
    est_b = FIRERegressor(booster, max_rules=6, random_state=0, linear_terms=False).fit(X, y)
    np.testing.assert_allclose(est_b.coef_, est.coef_, rtol=1e-6, atol=1e-9)


def test_process_backend_equals_serial(data, forest):
    # tasks and their results cross process boundaries (pickling)
    from joblib import parallel_backend

    X, y = data
    params = dict(gamma=[1.1, 3.0], max_rules=6, selection="cv", cv=2, random_state=0)
    serial = FIRERegressor(forest, n_jobs=1, **params).fit(X, y)
    with parallel_backend("loky", n_jobs=2):
        par = FIRERegressor(forest, n_jobs=2, **params).fit(X, y)
    np.testing.assert_array_equal(par.coef_, serial.coef_)
    assert par.lambda_ == serial.lambda_


def test_constant_target(data, forest):
    X, _ = data
    y = np.full(X.shape[0], 2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = FIRERegressor(forest, random_state=0, linear_terms=False).fit(X, y)
    assert est.n_rules_ == 0
    np.testing.assert_allclose(est.predict(X), 2.5)


def test_fit_reports_progress_per_path_point():
    import pickle
    import threading

    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    from firecy import FIRERegressor

    X, y = make_friedman1(n_samples=200, random_state=0)
    calls = []
    lock = threading.Lock()

    def progress(k, n_points, result):
        with lock:
            calls.append((k, n_points, result.n_rules))

    est = FIRERegressor(RandomForestRegressor(n_estimators=10, max_depth=3, random_state=0),
                        n_lambdas=12, max_rules=8, random_state=0, linear_terms=False)
    est.fit(X, y, progress=progress)
    # one call per solved point: the full-data path (refined points included)
    # plus one path per CV fold (5 by default) over the eligible points
    assert len(calls) == len(est.path_.lambdas) + 5 * int(np.sum(est.path_.eligible))
    assert all(0 <= k < n for k, n, _ in calls)
    pickle.dumps(est)  # the callback did not stay on the model


# ------------------------------------------- lambdas, transform, summary ---

class _Ridge:
    """A plug-in ridge: lambda_max is infinite (no lambda zeroes every weight)."""

    lam = 1.0
    is_separable = True

    def value(self, w, curvature):
        return 0.5 * self.lam * w @ w

    def prox(self, z, step, curvature):
        return step * z / (step + self.lam)

    def subdiff(self, w, curvature):
        return self.lam * w, self.lam * w

    def lambda_max(self, grad, curvature):
        return np.inf if grad.any() else 0.0


def test_lambdas_grid_lets_an_unbounded_penalty_select(data, forest):
    X, y = data
    with pytest.raises(ValueError, match="grid explicitly"):
        FIRERegressor(forest, penalty=_Ridge(), max_rules=None, cv=3, linear_terms=False).fit(X, y)
    grid = [3.0, 1.0, 0.3]
    est = FIRERegressor(forest, penalty=_Ridge(), lambdas=grid, max_rules=None, cv=3,
                        random_state=0, linear_terms=False).fit(X, y)
    np.testing.assert_array_equal(est.path_.lambdas, sorted(grid, reverse=True))
    # the selected point is the lowest CV error of the three
    k = int(np.argmin(est.path_.validation_error))
    assert est.lambda_ == est.path_.lambdas[k]
    # ridge's closed form at the selected lambda (on the weighted mean-centred
    # design: (M^T M / n + lam I) w = M^T (y - ybar) / n)
    from firecy.ensembles import rule_ensemble_from_model

    ens = rule_ensemble_from_model(forest)
    M = ens.design(X).toarray() if hasattr(ens.design(X), "toarray") else ens.design(X)
    Mc, yc = M - M.mean(axis=0), y - y.mean()
    n = len(y)
    w = np.linalg.solve(Mc.T @ Mc / n + est.lambda_ * np.eye(M.shape[1]), Mc.T @ yc / n)
    np.testing.assert_allclose(est.path_.coefs[k], w, atol=1e-3 * np.abs(w).max())
    # coef_ states each rule once: equal leaves of two trees (ridge keeps
    # both) merged, with the same predictions
    np.testing.assert_allclose(M @ est.coef_, M @ w, atol=1e-3 * np.abs(M @ w).max())


def test_lambdas_are_checked_and_lam_needs_one_above_it(data, forest):
    # with lam, lambdas are the warm path down to it (tests/test_refit.py)
    X, y = data
    with pytest.raises(ValueError, match="warm path down to it"):
        FIRERegressor(forest, lam=2.0, lambdas=[1.0, 0.5], linear_terms=False).fit(X, y)
    for bad in ([], [1.0, np.nan], [-1.0], [[1.0]]):
        with pytest.raises(ValueError, match="lambdas must be"):
            FIRERegressor(forest, lambdas=bad, linear_terms=False).fit(X, y)


def test_lambdas_give_the_same_path_as_the_default_grid(data, forest):
    X, y = data
    ref = FIRERegressor(forest, n_lambdas=12, refine_path=False, random_state=0,
                        linear_terms=False).fit(X, y)
    again = FIRERegressor(forest, lambdas=ref.paths_[0].lambdas, refine_path=False,
                          random_state=0, linear_terms=False).fit(X, y)
    np.testing.assert_allclose(again.coef_, ref.coef_, rtol=1e-10, atol=1e-12)


def test_transform_gives_the_kept_rules_design_columns(data, forest):
    X, y = data
    est = FIRERegressor(forest, max_rules=6, random_state=0, linear_terms=False).fit(X, y)
    T = est.transform(X[:50])
    assert T.shape == (50, est.n_rules_)
    kept = est.coef_ != 0
    pred = est.ensemble_.baseline(X[:50]).ravel() + est.intercept_ + T @ est.coef_[kept]
    np.testing.assert_allclose(pred, est.predict(X[:50]), rtol=1e-12, atol=1e-10)
    cols = np.flatnonzero(kept)
    # the rule's own conditions select the rows where its column is nonzero
    for k, j in enumerate(cols):
        np.testing.assert_array_equal(est.ensemble_.rule_mask(j, X[:50]), T[:, k] != 0)


def test_summary_lists_the_rules_and_repr_stays_sklearns(data, forest):
    X, y = data
    est = FIRERegressor(forest, max_rules=5, random_state=0, linear_terms=False).fit(X, y)
    text = est.summary()
    assert text.startswith(f"FIRERegressor: {est.n_rules_} rules")
    assert text.count(" then ") == est.n_rules_
    assert repr(est) == repr(clone(est))   # parameters only, as in scikit-learn


def test_fit_from_two_threads(data, forest):
    # one object fitted from two threads, and two objects with progress
    # callbacks: no AttributeError, and the results equal a sequential fit
    import threading

    X, y = data
    ref = FIRERegressor(forest, max_rules=5, cv=3, n_lambdas=12, random_state=0,
                        linear_terms=False).fit(X, y)
    shared = clone(ref)
    pair = [clone(ref), clone(ref)]
    errors, calls = [], []

    def run(est, progress):
        try:
            est.fit(X, y, progress=progress)
        except Exception as exc:   # pragma: no cover - the failure being tested
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(shared, None)) for _ in range(2)]
    threads += [threading.Thread(target=run, args=(e, lambda *a: calls.append(1)))
                for e in pair]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for est in [shared] + pair:
        np.testing.assert_array_equal(est.coef_, ref.coef_)
    assert calls and not hasattr(pair[0], "_progress")


def test_zero_weights_equal_dropped_rows_with_mcp():
    # MCP with a fixed lam: zero-weight rows used to reach the solver, where
    # they changed the rounding of the column curvatures (sums over more
    # rows), which broke ties between duplicate rules differently and led
    # MCP to another local minimum (coefficients 0.7 apart here)
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    forest = RandomForestRegressor(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    drop = np.random.RandomState(0).rand(len(y)) < 0.2
    sw = np.where(drop, 0.0, 1.0)
    # a dropped row's target must not set the scale either
    y_w = y.copy()
    y_w[np.flatnonzero(drop)[0]] = 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # more rules than max_rules
        for y_fit in (y, y_w):
            a = FIRERegressor(forest, lam=3.0, linear_terms=False).fit(X, y_fit, sample_weight=sw)
            b = FIRERegressor(forest, lam=3.0, linear_terms=False).fit(X[~drop], y[~drop])
            assert a.n_rules_ == b.n_rules_ > 14
            np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-9)
            np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-12)
