"""Issue 22: rules from the model a user already has (rule_depth defaults, the
memory guard)."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.metrics import log_loss, r2_score
from sklearn.model_selection import train_test_split

from firecy import FIREClassifier, FIRERegressor
from firecy.ensembles import EnsembleTooLargeError, memory_budget, rule_ensemble_from_model
from firecy.ensembles._base import RuleEnsemble


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, random_state=0)


def test_auto_depth_beats_full_leaves_on_a_fully_grown_forest(diabetes):
    Xtr, Xte, ytr, yte = diabetes
    rf = RandomForestRegressor(n_estimators=100, random_state=0).fit(Xtr, ytr)
    with pytest.warns(UserWarning, match="rarely generalise"):
        leaves = FIRERegressor(rf, rule_depth=None, random_state=0,
                               linear_terms=False).fit(Xtr, ytr)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "auto" keeps rules that hold enough rows
        auto = FIRERegressor(rf, random_state=0, linear_terms=False).fit(Xtr, ytr)
    assert leaves.rule_depth_ is None and auto.rule_depth_ == 3
    r2_leaves = r2_score(yte, leaves.predict(Xte))
    r2_auto = r2_score(yte, auto.predict(Xte))
    assert r2_auto > r2_leaves + 0.15, (r2_auto, r2_leaves)
    assert r2_auto > 0.2 and auto.n_rules_ <= 14
    assert all(len(auto.ensemble_.rules[j]) <= 3 for j in np.flatnonzero(auto.coef_))
    head = auto.summary().splitlines()[1]
    assert "depth <= 3" in head and "rule_depth='auto'" in head
    assert "every leaf" in leaves.summary().splitlines()[1]


def test_auto_leaves_the_papers_depth3_forest_unchanged(diabetes):
    Xtr, _, ytr, _ = diabetes
    rf = RandomForestRegressor(n_estimators=50, max_depth=3, random_state=0).fit(Xtr, ytr)
    auto = FIRERegressor(rf, random_state=0, linear_terms=False).fit(Xtr, ytr)
    leaves = FIRERegressor(rf, rule_depth=None, random_state=0, linear_terms=False).fit(Xtr, ytr)
    assert auto.rule_depth_ is None
    assert auto.ensemble_.n_rules == leaves.ensemble_.n_rules
    np.testing.assert_array_equal(auto.coef_, leaves.coef_)
    assert auto.intercept_ == leaves.intercept_


def test_explicit_depth_and_prediction_is_the_cut_design(diabetes):
    Xtr, Xte, ytr, _ = diabetes
    rf = RandomForestRegressor(n_estimators=20, random_state=0).fit(Xtr, ytr)
    fire = FIRERegressor(rf, rule_depth=2, random_state=0, linear_terms=False).fit(Xtr, ytr)
    ens = fire.ensemble_
    assert fire.rule_depth_ == 2 and ens.rule_depth == 2
    assert ens.n_rules <= 4 * rf.n_estimators
    np.testing.assert_allclose(fire.predict(Xte),
                               ens.design(Xte) @ fire.coef_ + fire.intercept_, rtol=1e-12)
    # the kept rules as features: the cut columns
    np.testing.assert_allclose(fire.transform(Xte) @ fire.coef_[fire.coef_ != 0],
                               fire.predict(Xte) - fire.intercept_, rtol=1e-9, atol=1e-9)


def test_classifier_auto_on_a_fully_grown_forest():
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0, stratify=y)
    rf = RandomForestClassifier(n_estimators=50, random_state=0).fit(Xtr, ytr)
    auto = FIREClassifier(rf, random_state=0, linear_terms=False).fit(Xtr, ytr)
    leaves = FIREClassifier(rf, rule_depth=None, random_state=0, linear_terms=False).fit(Xtr, ytr)
    assert auto.rule_depth_ == 3 and auto.n_rules_ <= 14
    assert log_loss(yte, auto.predict_proba(Xte)) < log_loss(yte, leaves.predict_proba(Xte))


# -- the memory guard ----------------------------------------------------------
def _refuse_library_call(*args, **kwargs):
    raise AssertionError("the library was asked for leaf ids: the guard came too late")


def test_guard_refuses_before_asking_the_library(monkeypatch):
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = X[:, 0]
    stumps = RandomForestRegressor(n_estimators=2000, max_depth=1, n_jobs=1,
                                   random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(stumps)
    monkeypatch.setattr(ens._adapter, "apply", _refuse_library_call)
    # 2.5 million rows that take no memory
    big = np.broadcast_to(X[:1], (2_500_000, 3))
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "4G")
    assert memory_budget() == 4 << 30
    for build in (ens.leaf_table, ens.design, ens.predict_raw, ens.apply):
        with pytest.raises(EnsembleTooLargeError, match="2,500,000 rows x 2,000 trees") as e:
            build(big)
        assert "FIRECY_MEMORY_BUDGET" in str(e.value) and "fewer rows" in str(e.value)
    assert issubclass(EnsembleTooLargeError, MemoryError)
    # the default budget (half the available memory) refuses 60 GB too
    monkeypatch.delenv("FIRECY_MEMORY_BUDGET")
    budget = memory_budget()
    if budget is not None and budget < 2_500_000 * 2000 * 12:
        with pytest.raises(EnsembleTooLargeError):
            ens.leaf_table(big)


def test_guard_lets_a_fitting_table_through(monkeypatch):
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", str(442 * 5 * 12))  # exactly enough
    assert ens.leaf_table(X).shape == (442, 5)
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", str(442 * 5 * 12 - 1))
    with pytest.raises(EnsembleTooLargeError):
        ens.leaf_table(X)
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "none")
    assert memory_budget() is None
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "lots")
    with pytest.raises(ValueError, match="FIRECY_MEMORY_BUDGET"):
        memory_budget()


def test_estimator_fit_refuses_before_the_leaf_table(monkeypatch):
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    monkeypatch.setattr(RuleEnsemble, "apply", _refuse_library_call)
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "20K")
    with pytest.raises(EnsembleTooLargeError, match="442 rows x 5 trees"):
        FIRERegressor(rf, linear_terms=False).fit(X, y)


# -- the command line ----------------------------------------------------------
def test_cli_rule_depth_option():
    from firecy.cli._job import _make_fire
    from firecy.cli._parser import build_parser

    parser = build_parser()
    base = ["extract", "data.csv", "--target", "y"]
    assert parser.parse_args(base).rule_depth == "auto"
    assert parser.parse_args(base + ["--rule-depth", "leaves"]).rule_depth is None
    args = parser.parse_args(base + ["--rule-depth", "2"])
    assert args.rule_depth == 2
    assert _make_fire(None, args, "mcp", 0.5).rule_depth == 2
    for bad in ("0", "deep", "1.5"):
        with pytest.raises(SystemExit):
            parser.parse_args(base + ["--rule-depth", bad])


def test_cut_estimator_pickles_and_predicts_the_same(diabetes):
    import pickle

    Xtr, Xte, ytr, _ = diabetes
    rf = RandomForestRegressor(n_estimators=10, random_state=0).fit(Xtr, ytr)
    fire = FIRERegressor(rf, rule_depth=2, n_lambdas=10, cv=2, random_state=0,
                         linear_terms=False).fit(Xtr, ytr)
    back = pickle.loads(pickle.dumps(fire))
    np.testing.assert_array_equal(back.predict(Xte), fire.predict(Xte))
    assert back.ensemble_.rule_depth == 2
    assert [back.ensemble_.rule_text(j) for j in range(back.ensemble_.n_rules)] == [
        fire.ensemble_.rule_text(j) for j in range(fire.ensemble_.n_rules)]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fit_memory_estimate_bounds_the_measured_peak(n_jobs):
    # the guard's estimate of a fit against what the fit allocates, measured
    # by tracemalloc (numpy traces its buffers), on a problem whose memory is
    # its columns (10,000 leaves of fully grown trees on 300 rows), so that a
    # new per-column array in the engine or the paths makes the test fail
    # rather than the guard under-count silently; and within 3x, so that it
    # does not refuse fits that fit
    import tracemalloc

    from sklearn.datasets import make_friedman1

    from firecy.estimators._rule_depth import fit_bytes_per_column

    X, y = make_friedman1(n_samples=300, n_features=6, random_state=0)
    rf = RandomForestRegressor(n_estimators=60, random_state=0, n_jobs=1).fit(X, y)
    est = FIRERegressor(rf, rule_depth=None, n_jobs=n_jobs, random_state=0, linear_terms=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        tracemalloc.start()
        try:
            est.fit(X, y)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    R, T = est.ensemble_.n_rules, est.ensemble_.n_trees
    assert R > 10 * T  # the columns dominate
    # the second check of rules_at_depth: two leaf tables and the columns
    table = 2 * X.shape[0] * T * 4
    estimate = table + fit_bytes_per_column(est) * R
    assert peak <= estimate <= 3 * peak, (peak, estimate)
    # with the path's actual number of points, the per-column accounting
    # itself, tighter
    actual = table + fit_bytes_per_column(est, points=len(est.path_)) * R
    assert peak <= actual <= 1.5 * peak, (peak, actual)


def test_fit_refuses_rules_whose_paths_do_not_fit(monkeypatch):
    # a table that fits and rules that do not: refused after the cut, with
    # advice about rules, before any design is built
    from firecy.estimators._rule_depth import fit_bytes_per_column
    from firecy.solver import BlockDesign

    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=20, random_state=0, n_jobs=1).fit(X, y)
    est = FIRERegressor(rf, rule_depth=None, n_jobs=1, linear_terms=False)
    n_leaves = rule_ensemble_from_model(rf).n_rules
    table = 2 * 442 * 20 * 4
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET",
                       str(table + fit_bytes_per_column(est) * n_leaves - 1))
    monkeypatch.setattr(BlockDesign, "from_leaf_table", _refuse_library_call)
    with pytest.raises(EnsembleTooLargeError, match="smaller rule_depth"):
        est.fit(X, y)


def test_guard_counts_the_rows_of_a_dmatrix(monkeypatch):
    xgb = pytest.importorskip("xgboost")
    X, y = load_diabetes(return_X_y=True)
    booster = xgb.XGBRegressor(n_estimators=4, max_depth=2).fit(X, y).get_booster()
    ens = rule_ensemble_from_model(booster)
    assert ens.leaf_table(xgb.DMatrix(X)).shape == (442, 4)
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "1K")
    with pytest.raises(EnsembleTooLargeError, match="442 rows x 4 trees"):
        ens.leaf_table(xgb.DMatrix(X))


def test_exports_of_a_cut_model_reproduce_its_predictions():
    xgb = pytest.importorskip("xgboost")

    from firecy.rules import rules_python

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X.copy()
    X.iloc[::7, 2] = np.nan  # missing values, routed by XGBoost's default directions
    model = xgb.XGBRegressor(n_estimators=30, random_state=0).fit(X, y)  # depth 6
    fire = FIRERegressor(model, random_state=0, n_lambdas=20, cv=3, linear_terms=False).fit(X, y)
    assert fire.rule_depth_ == 3 and fire.n_rules_ > 0
    namespace = {}
    exec(rules_python(fire), namespace)
    rows = X.to_dict("records")
    got = np.array([namespace["predict"](row) for row in rows])
    np.testing.assert_allclose(got, fire.predict(X), rtol=1e-12, atol=1e-9)
