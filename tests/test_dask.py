"""FIRE on Dask collections (firecy.dask): the exact path equals the in-memory
fit, the sampled path's refit equals an independent solve on the kept rules,
and predict / score / transform on Dask input equal the in-memory results."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from scipy.optimize import minimize  # noqa: E402
from sklearn.datasets import make_friedman1  # noqa: E402
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor  # noqa: E402

from firecy import FIREClassifier, FIRERegressor  # noqa: E402
from firecy.dask import fit_dask, rule_supports  # noqa: E402

N = 600
# 1, 7 and 64 partitions; uneven sizes with an empty partition
CHUNKINGS = [(N,), (100, 50, 0, 150, 100, 120, 80), (N // 64,) * 63 + (N - 63 * (N // 64),)]


def _dd():
    try:
        import dask.dataframe as dd
    except ImportError as err:  # dask.dataframe needs pyarrow (the dask extra)
        pytest.skip(f"dask.dataframe unavailable: {err}")
    return dd


@pytest.fixture(scope="module", autouse=True)
def sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture(scope="module")
def reg():
    X, y = make_friedman1(n_samples=N, random_state=0)
    rf = RandomForestRegressor(10, max_depth=3, random_state=0).fit(X, y)
    kw = dict(random_state=0, n_lambdas=8, selection="validation", linear_terms=False)
    return X, y, rf, kw, FIRERegressor(rf, **kw).fit(X, y)


@pytest.fixture(scope="module")
def cls():
    X, y = make_friedman1(n_samples=N, random_state=1)
    yc = np.where(y > np.median(y), "hi", "lo")
    rf = RandomForestClassifier(10, max_depth=3, random_state=0).fit(X, yc)
    kw = dict(random_state=0, n_lambdas=8, selection="validation", linear_terms=False)
    return X, yc, rf, kw, FIREClassifier(rf, **kw).fit(X, yc)


def _same(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-8)
    assert np.array_equal(np.flatnonzero(a.coef_), np.flatnonzero(b.coef_))
    assert list(a.rules_["rule"]) == list(b.rules_["rule"])
    np.testing.assert_allclose(a.rules_["support"], b.rules_["support"], atol=1e-12)


@pytest.mark.parametrize("chunks", CHUNKINGS, ids=["1", "7-uneven-empty", "64"])
@pytest.mark.parametrize("task", ["squared", "logistic"])
def test_exact_path_equals_in_memory_array(reg, cls, chunks, task):
    X, y, rf, kw, ref = reg if task == "squared" else cls
    Est = FIRERegressor if task == "squared" else FIREClassifier
    Xd = da.from_array(X, chunks=(chunks, 4))   # column chunks are merged too
    yd = da.from_array(y, chunks=(chunks,))
    fire = Est(rf, **kw).fit(Xd, yd)
    assert fire.dask_info_["sampled"] is False
    assert fire.dask_info_["n_partitions"] == len(chunks)
    _same(fire, ref)


@pytest.mark.parametrize("nparts", [1, 7, 64])
@pytest.mark.parametrize("task", ["squared", "logistic"])
def test_exact_path_equals_in_memory_dataframe(reg, cls, nparts, task):
    import pandas as pd

    dd = _dd()
    X, y, rf, kw, _ = reg if task == "squared" else cls
    Est = FIRERegressor if task == "squared" else FIREClassifier
    cols = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    model = type(rf)(10, max_depth=3, random_state=0)   # unfitted: fitted on the rows
    ref = Est(model, **kw).fit(df, y)
    ddf = dd.from_pandas(df, npartitions=nparts, sort=False)
    ys = dd.from_pandas(pd.Series(y), npartitions=nparts, sort=False)
    fire = Est(model, **kw).fit(ddf, ys)
    _same(fire, ref)
    assert list(fire.feature_names_in_) == cols


def test_predict_score_transform_lazy(reg, cls):
    for X, y, rf, kw, ref in (reg, cls):
        Xd = da.from_array(X, chunks=(CHUNKINGS[1], -1))
        yd = da.from_array(y, chunks=(CHUNKINGS[1],))
        methods = ["predict", "transform"] + (
            ["predict_proba", "predict_log_proba", "decision_function"]
            if hasattr(ref, "classes_") else [])
        for m in methods:
            out = getattr(ref, m)(Xd)
            assert dask.is_dask_collection(out), m
            np.testing.assert_allclose(out.compute(), getattr(ref, m)(X), atol=1e-12) \
                if m != "predict" or not hasattr(ref, "classes_") else \
                np.testing.assert_array_equal(out.compute(), ref.predict(X))
        w = np.linspace(0.5, 2.0, len(y))
        wd = da.from_array(w, chunks=(CHUNKINGS[1],))
        assert ref.score(Xd, yd) == pytest.approx(ref.score(X, y), abs=1e-12)
        assert ref.score(Xd, yd, wd) == pytest.approx(ref.score(X, y, w), abs=1e-12)
        sup = rule_supports(ref, Xd, wd)
        assert dask.is_dask_collection(sup)
        np.testing.assert_allclose(sup.compute(), rule_supports(ref, X, w), atol=1e-12)
        np.testing.assert_allclose(rule_supports(ref, X),
                                   ref.rules_.sort_values("column")["support"], atol=1e-12)


def test_predict_dataframe_keeps_index(reg):
    import pandas as pd

    dd = _dd()
    X, y, rf, kw, ref = reg
    df = pd.DataFrame(X, index=np.arange(len(y)) * 3)
    ddf = dd.from_pandas(df, npartitions=5)
    pred = ref.predict(ddf).compute()
    assert isinstance(pred, pd.Series)
    assert pred.index.equals(df.index)
    np.testing.assert_allclose(pred.to_numpy(), ref.predict(X))
    tr = ref.transform(ddf).compute()
    assert list(tr.columns) == list(ref.get_feature_names_out())


def _kept_design(fire, X):
    return np.column_stack([fire.transform(X), np.ones(len(X))])


def test_sampled_squared_refit_is_least_squares_on_all_rows(reg):
    X, y, rf, kw, _ = reg
    chunks = CHUNKINGS[1]
    Xd, yd = da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,))
    fire = fit_dask(FIRERegressor(rf, **kw), Xd, yd, sample_size=300)
    info = fire.dask_info_
    assert info["sampled"] and info["refit"] and 200 < info["sample_rows"] < 400
    Z = _kept_design(fire, X)
    beta = np.linalg.lstsq(Z, y - fire.ensemble_.baseline(X), rcond=None)[0]
    np.testing.assert_allclose(fire.coef_[fire.coef_ != 0], beta[:-1], atol=1e-8)
    assert fire.intercept_ == pytest.approx(beta[-1], abs=1e-8)
    np.testing.assert_allclose(fire.predict(X), Z @ beta + fire.ensemble_.baseline(X),
                               atol=1e-8)
    # the supports are over every row; the sample is independent of partitioning
    np.testing.assert_allclose(fire.rules_.sort_values("column")["support"],
                               rule_supports(fire, X), atol=1e-12)
    # the all-rows pass routes the kept rules' trees only: their columns'
    # supports are every row's, the other trees' columns are not computed
    from firecy.rules._inputs import leaf_support
    kept = np.flatnonzero(fire.coef_)
    expected = leaf_support(fire.ensemble_, X, None, columns=kept)
    known = ~np.isnan(expected)
    assert known.sum() < fire.ensemble_.n_rules
    np.testing.assert_array_equal(np.isnan(fire._train_support), ~known)
    np.testing.assert_allclose(fire._train_support[known], expected[known], atol=1e-12)
    other = fit_dask(FIRERegressor(rf, **kw), da.from_array(X, chunks=(64, -1)),
                     da.from_array(y, chunks=64), sample_size=300)
    np.testing.assert_allclose(other.coef_, fire.coef_, atol=1e-8)


def test_sampled_logistic_refit_is_unpenalised_mle(cls):
    X, yc, rf, kw, _ = cls
    Xd = da.from_array(X, chunks=(100, -1))
    yd = da.from_array(yc, chunks=100)
    fire = fit_dask(FIREClassifier(rf, **kw), Xd, yd, sample_size=300)
    assert fire.dask_info_["refit"]
    Z = _kept_design(fire, X)
    t = (yc == fire.classes_[1]).astype(float)
    off = fire.ensemble_.baseline(X)

    def loss(b):
        eta = off + Z @ b
        return np.sum(np.logaddexp(0, eta) - t * eta), Z.T @ (1 / (1 + np.exp(-eta)) - t)

    ref = minimize(loss, np.zeros(Z.shape[1]), jac=True, method="BFGS",
                   options={"gtol": 1e-10, "maxiter": 10_000}).x
    beta = np.append(fire.coef_[fire.coef_ != 0], fire.intercept_)
    np.testing.assert_allclose(beta, ref, atol=1e-5)
    assert set(fire.predict(Xd).compute()) <= set(fire.classes_)


def test_distributed_client(reg):
    distributed = pytest.importorskip("distributed")
    X, y, rf, kw, ref = reg
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        Xd = client.persist(da.from_array(X, chunks=(CHUNKINGS[1], -1)))
        yd = da.from_array(y, chunks=(CHUNKINGS[1],))
        fire = FIRERegressor(rf, **kw).fit(Xd, yd)
        _same(fire, ref)
        np.testing.assert_allclose(fire.predict(Xd).compute(), ref.predict(X))
        sampled = fit_dask(FIRERegressor(rf, **kw), Xd, yd, sample_size=300)
    with dask.config.set(scheduler="sync"):
        local = fit_dask(FIRERegressor(rf, **kw), da.from_array(X, chunks=100),
                         da.from_array(y, chunks=100), sample_size=300)
    np.testing.assert_allclose(sampled.coef_, local.coef_, atol=1e-8)


def test_errors(reg):
    X, y, rf, kw, _ = reg
    chunks = CHUNKINGS[1]
    y_nan = y.copy()
    y_nan[420] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FIRERegressor(rf, **kw).fit(da.from_array(X, chunks=(chunks, -1)),
                                    da.from_array(y_nan, chunks=(chunks,)))
    with pytest.raises(ValueError, match="row partition 5: Input y contains NaN"):
        fit_dask(FIRERegressor(rf, **kw), da.from_array(X, chunks=(chunks, -1)),
                 da.from_array(y_nan, chunks=(chunks,)), sample_size=300)
    with pytest.raises(ValueError, match="X has 600 rows but y has 599"):
        FIRERegressor(rf, **kw).fit(da.from_array(X, chunks=100), da.from_array(y[:-1]))
    with pytest.raises(ValueError, match="sample_size"):
        fit_dask(FIRERegressor(rf, linear_terms=False), da.from_array(X), da.from_array(y),
                 sample_size=1)


def test_errors_dataframe_partitions(reg):
    import pandas as pd

    dd = _dd()
    X, y, rf, kw, _ = reg
    ddf = dd.from_pandas(pd.DataFrame(X), npartitions=4, sort=False)
    with pytest.raises(ValueError, match="4 row partitions but y has 3"):
        FIRERegressor(rf, **kw).fit(ddf, dd.from_pandas(pd.Series(y), npartitions=3, sort=False))
    ys = da.from_array(y, chunks=((100, 200, 150, 150),))   # 4 blocks, other sizes
    with pytest.raises(ValueError, match="row partition 0: X has 150 rows but y has 100"):
        FIRERegressor(rf, **kw).fit(ddf, ys)


def test_other_estimators_refuse_dask(reg):
    from firecy import FIREPoissonRegressor

    X, y, rf, kw, _ = reg
    with pytest.raises(TypeError, match="does not take Dask"):
        fit_dask(FIREPoissonRegressor(linear_terms=False), da.from_array(X), da.from_array(y))


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_models_trained_with_dask(library):
    """A model trained by xgboost.dask / lightgbm.dask: the rules come from it
    (an xgboost.dask model enters the tasks as its Booster)."""
    distributed = pytest.importorskip("distributed")
    try:
        mod = pytest.importorskip(f"{library}.dask")
    except ImportError as err:  # needs dask.dataframe (pyarrow)
        pytest.skip(str(err))
    X, y = make_friedman1(n_samples=N, random_state=0)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        Xd, yd = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
        if library == "xgboost":
            model = mod.DaskXGBRegressor(n_estimators=10, max_depth=3).fit(Xd, yd)
        else:
            model = mod.DaskLGBMRegressor(n_estimators=10, num_leaves=8, verbose=-1).fit(Xd, yd)
        kw = dict(random_state=0, n_lambdas=8, selection="validation", linear_terms=False)
        fire = fit_dask(FIRERegressor(model, **kw), Xd, yd, sample_size=300)
        assert fire.estimator is model and fire.dask_info_["refit"]
        np.testing.assert_allclose(fire.predict(Xd).compute(), fire.predict(X))


@pytest.mark.parametrize("n_trees, budget, expected", [
    (500, "100G", 50_000),      # the selection's cost binds: 25e6 / 500
    (100, "100G", 250_000),
    (5000, "100G", 10_000),     # the floor
    (500, "640M", 20_000),      # the memory budget binds: 640 MiB / (64 B x 500)
    (500, "none", 50_000),      # no budget: the cost alone
])
def test_auto_sample_size(monkeypatch, n_trees, budget, expected):
    from firecy._dask._fit import default_sample_size

    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", budget)
    est = FIRERegressor(RandomForestRegressor(n_trees), linear_terms=False)
    got = default_sample_size(est)
    if budget == "640M":
        expected = 640 * 2**20 // (64 * n_trees)
    assert got == expected


def test_unit_rule_values_exact_and_sampled(reg):
    # rule_values="unit" on a booster: the Dask paths read the fitted ensemble,
    # whose values are the indicators' 1s (transform, the refit's design)
    xgb = pytest.importorskip("xgboost")
    X, y, _, kw, _ = reg
    model = xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1, random_state=0).fit(X, y)
    mem = FIRERegressor(model, rule_values="unit", **kw).fit(X, y)
    assert mem.rule_values_ == "unit"
    chunks = CHUNKINGS[1]
    Xd, yd = da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=(chunks,))
    _same(FIRERegressor(model, rule_values="unit", **kw).fit(Xd, yd), mem)
    fire = fit_dask(FIRERegressor(model, rule_values="unit", **kw), Xd, yd, sample_size=300)
    assert fire.rule_values_ == "unit"
    Z = _kept_design(fire, X)
    assert set(np.unique(Z[:, :-1])) <= {0.0, 1.0}
    beta = np.linalg.lstsq(Z, y - fire.ensemble_.baseline(X), rcond=None)[0]
    np.testing.assert_allclose(fire.coef_[fire.coef_ != 0], beta[:-1], atol=1e-8)
    np.testing.assert_allclose(fire.predict(Xd).compute(), fire.predict(X), atol=1e-10)


def test_collinear_kept_rules_refit_to_the_minimum_norm_solution():
    # under a union of depths a depth-1 rule, its depth-2 children and the
    # intercept can be kept together: an exactly collinear refit, whose
    # weights are then the minimum-norm least-squares ones (numpy's lstsq on
    # every row), not ones fixed by rounding
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.normal(size=(n, 4))
    y = 2 * (X[:, 0] > 0) + (X[:, 1] > 0.3) + rng.normal(size=n)
    rf = RandomForestRegressor(5, max_depth=4, random_state=0).fit(X[:300], y[:300])
    fire = fit_dask(FIRERegressor(rf, rule_depth=(1, 2), cv=3, n_lambdas=10, n_jobs=1,
                                  random_state=0, max_rules=6, linear_terms=False),
                    da.from_array(X, chunks=500), da.from_array(y, chunks=500),
                    sample_size=400)
    assert fire.dask_info_["refit"]
    Z = _kept_design(fire, X)
    assert np.linalg.matrix_rank(Z) < Z.shape[1]   # the case under test
    beta = np.linalg.lstsq(Z, y - fire.ensemble_.baseline(X), rcond=None)[0]
    np.testing.assert_allclose(fire.coef_[fire.coef_ != 0], beta[:-1], atol=1e-8)
    assert fire.intercept_ == pytest.approx(beta[-1], abs=1e-8)
