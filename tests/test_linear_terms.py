"""Linear terms beside the rules (``linear_terms=True``): the fitted terms,
predict, explain, the tables, the exports (Python, SQLite, DuckDB, JSON),
bad input, every estimator, the Dask refit and the CLI."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from firecy import FIREClassifier, FIREPoissonRegressor, FIRERegressor, FIRESurvivalRegressor
from firecy.rules import rules_json, rules_python, rules_report, rules_sql

from test_export_hostile import (CODE_LIKE, check_module_inert, run_duckdb, run_modules,
                                 run_sqlite)


def linear_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"educ": rng.integers(6, 21, n).astype(float),
                      "age": rng.uniform(20, 60, n),
                      "score": rng.normal(size=n)})
    y = 0.3 * X["educ"] + 2.0 * (X["score"] > 0.5) + 0.02 * X["age"] + 0.3 * rng.normal(size=n)
    return X, y.to_numpy()


def quiet(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


def forest(kind="regression", n=30):
    cls = RandomForestClassifier if kind == "classification" else RandomForestRegressor
    return cls(n_estimators=n, max_depth=3, random_state=0, n_jobs=1)


@pytest.fixture(scope="module")
def fitted():
    X, y = linear_data()
    X["flat"] = 3.0
    X["gone"] = np.nan
    est = quiet(FIRERegressor(forest(), linear_terms=True, random_state=0, n_jobs=1,
                              cv=3, n_lambdas=20), X, y)
    return est, X, y


def manual_raw(est, X):
    """baseline + intercept + rules + sum of slope * (clip(x) - center), by hand."""
    terms = est.linear_terms_
    x = X.iloc[:, terms.features].to_numpy(dtype=float)
    x = np.where(np.isnan(x), terms.center, np.clip(x, terms.lower, terms.upper))
    lin = (x - terms.center) @ np.atleast_2d(est.linear_coef_).T
    raw = np.asarray(est.ensemble_.predict_raw(X, est.coef_)).reshape(len(X), -1)
    return raw + est.intercept_ + lin


def test_the_terms_are_what_the_docs_say(fitted):
    est, X, y = fitted
    terms = est.linear_terms_
    assert terms.names == ["educ", "age", "score"]
    assert terms.not_offered == [("flat", "constant"), ("gone", "all missing")]
    np.testing.assert_allclose(terms.lower, np.quantile(X.iloc[:, :3], 0.025, axis=0,
                                                        method="inverted_cdf"))
    np.testing.assert_allclose(terms.upper, np.quantile(X.iloc[:, :3], 0.975, axis=0,
                                                        method="inverted_cdf"))
    clipped = np.clip(X.iloc[:, :3].to_numpy(), terms.lower, terms.upper)
    np.testing.assert_allclose(terms.center, clipped.mean(axis=0))
    np.testing.assert_allclose(terms.sd, clipped.std(axis=0))
    # the signal is linear in educ: its term is kept, with about the true slope
    assert est.linear_coef_[0] == pytest.approx(0.3, rel=0.2)
    assert est.n_terms_ == est.n_rules_ + np.count_nonzero(est.linear_coef_)
    assert est.n_terms_ <= est.max_rules_ == 14
    np.testing.assert_allclose(est.predict(X), manual_raw(est, X)[:, 0], rtol=1e-12)
    # the path counts terms: the selected point's count is n_terms_ (or more,
    # where equal rules of two trees were merged into one)
    k = int(np.argmin(np.abs(est.path_.lambdas - est.lambda_)))
    assert est.path_.n_rules[k] >= est.n_terms_
    assert est.path_.n_rules[k] - np.count_nonzero(est.path_.coefs[k][:len(est.coef_)]) \
        == np.count_nonzero(est.linear_coef_)
    assert est.path_.coefs.shape[1] == len(est.coef_) + len(terms)
    assert type(est.penalty_).__name__ == "BlockwisePenalty"


def test_explain_sums_to_the_prediction(fitted):
    est, X, _ = fitted
    rows = X.iloc[:20].copy()
    rows.iloc[0, 0] = np.nan           # missing: the term adds 0
    rows.iloc[1, 0] = 1000.0           # beyond the upper bound
    table = est.explain(rows)
    sums = table.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(sums, est.predict(rows), rtol=1e-12)
    lin = table[table["kind"] == "linear"]
    assert set(lin["term"]) == {f"linear_{f}" for f in np.flatnonzero(est.linear_coef_)}
    educ = lin[lin["term"] == "linear_0"].set_index("row")
    terms = est.linear_terms_
    assert educ.loc[0, "contribution"] == 0.0
    assert educ.loc[1, "value"] == pytest.approx(terms.upper[0] - terms.center[0])
    assert "per unit of educ (educ clipped to [" in educ.loc[1, "text"]


def test_rules_table_and_summary(fitted):
    est, X, _ = fitted
    table = est.rules_
    assert list(table["kind"].unique()) == ["rule", "linear"]   # rules first
    lin = table[table["kind"] == "linear"]
    assert len(lin) == np.count_nonzero(est.linear_coef_)
    top = lin.iloc[0]
    slope = est.linear_coef_[0]
    lo, hi = est.linear_terms_.lower[0], est.linear_terms_.upper[0]
    centre = est.linear_terms_.center[0]
    assert top["rule"] == (f"{'+' if slope > 0 else '-'}{abs(slope):.4g} per unit of educ "
                           f"(educ clipped to [{lo:.4g}, {hi:.4g}], centred at {centre:.4g})")
    # a linear term comes from no tree: missing, not a tree index such as -1
    assert top["weight"] == slope and top["tree"] is pd.NA
    text = est.summary()
    assert text.count("not offered as linear terms: flat (constant), gone (all missing)") == 1
    assert f"{est.n_rules_} rules and {np.count_nonzero(est.linear_coef_)} linear terms" in text
    assert top["rule"] in text
    assert "linear term" in repr(table)


def export_rows(X):
    return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
            for r in X.to_dict("records")]


def test_exports_reproduce_predict(fitted, tmp_path):
    est, X, _ = fitted
    rows = X.iloc[:60].copy()
    terms = est.linear_terms_
    # beyond both clip bounds, and missing, on every linear feature
    for q, f in enumerate(terms.features):
        rows.iloc[3 * q, f] = terms.lower[q] - 50.0
        rows.iloc[3 * q + 1, f] = terms.upper[q] + 50.0
        rows.iloc[3 * q + 2, f] = np.nan
    expected = est.predict(rows)
    names = list(X.columns)
    (defined, _, got), = run_modules([rules_python(est)], export_rows(rows), tmp_path)
    check_module_inert(defined)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    sql = rules_sql(est, table="data")
    np.testing.assert_allclose(run_sqlite(sql, export_rows(rows), names)[:, 0], expected,
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(run_duckdb(sql, export_rows(rows), names)[:, 0], expected,
                               rtol=1e-9, atol=1e-9)
    # JSON: the linear entries add what predict adds beyond the rules
    doc = json.loads(json.dumps(rules_json(est)))
    assert doc["n_linear_terms"] == np.count_nonzero(est.linear_coef_)
    assert doc["n_rules"] == est.n_rules_
    added = np.zeros(len(rows))
    for r in doc["rules"]:
        if r["kind"] != "linear":
            continue
        e = r["linear"]
        x = rows[e["feature"]].to_numpy(dtype=float)
        added += np.where(np.isnan(x), 0.0,
                          e["slope"] * (np.minimum(np.maximum(x, e["lower"]), e["upper"])
                                        - e["center"]))
    rules_only = np.asarray(est.ensemble_.predict_raw(rows, est.coef_)) + est.intercept_
    np.testing.assert_allclose(rules_only + added, expected, rtol=1e-9, atol=1e-9)


def test_hostile_names_stay_inert_in_the_exports(tmp_path):
    X, y = linear_data(300, seed=1)
    names = [CODE_LIKE[0], "'); DROP TABLE canary; --", 'a"b\nc']
    X.columns = names
    est = quiet(FIRERegressor(forest(), linear_terms=True, random_state=0, n_jobs=1, cv=3,
                              n_lambdas=15), X, y)
    assert np.any(est.linear_coef_)
    rows = export_rows(X.iloc[:40])
    expected = est.predict(X.iloc[:40])
    (defined, _, got), = run_modules([rules_python(est)], rows, tmp_path)
    check_module_inert(defined)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    got = run_sqlite(rules_sql(est, table="data"), rows, names)
    np.testing.assert_allclose(got[:, 0], expected, rtol=1e-9, atol=1e-9)
    report = rules_report(est)
    assert all(line.isprintable() for line in report.split("\n"))


def test_bad_input():
    X, y = linear_data(200)
    X["score"] = X["score"].astype(float)
    frame = X.copy()
    frame["score"] = frame["score"].replace(frame["score"].iloc[0], np.inf)
    frame["colour"] = pd.Categorical(np.where(y > y.mean(), "red", "blue"))
    from sklearn.ensemble import HistGradientBoostingRegressor

    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype")
    with pytest.raises(ValueError, match="infinity.*'score'"):
        quiet(FIRERegressor(model, linear_terms=True), frame, y)
    # a category column is not a linear term (and not "not offered" either)
    frame["score"] = X["score"]
    est = quiet(FIRERegressor(model, linear_terms=True, cv=3, n_lambdas=10,
                              random_state=0), frame, y)
    assert "colour" not in est.linear_terms_.names
    assert est.linear_terms_.not_offered == []
    np.testing.assert_allclose(est.predict(frame), manual_raw(est, frame)[:, 0], rtol=1e-12)
    with pytest.raises(TypeError, match="linear_terms must be True or False"):
        FIRERegressor(linear_terms="yes").fit(X, y)
    # nothing to offer: a fit of rules alone, and the summary says why
    flat = pd.DataFrame({"a": np.r_[np.zeros(100), np.ones(100)], "b": np.full(200, 2.0)})
    yy = flat["a"].to_numpy() + 0.1 * np.random.default_rng(0).normal(size=200)
    est = quiet(FIRERegressor(forest(), linear_terms=True, cv=3, n_lambdas=10,
                              random_state=0), flat, yy)
    assert est.linear_terms_.names == ["a"]
    assert "b (constant)" in est.summary()


def test_binary_classifier():
    X, y = linear_data(400, seed=2)
    labels = np.where(y > np.median(y), "high", "low")
    est = quiet(FIREClassifier(forest("classification"), linear_terms=True, cv=3,
                               n_lambdas=15, random_state=0, n_jobs=1), X, labels)
    assert est.linear_coef_.shape == (3,) and np.any(est.linear_coef_)
    # classes_[1] is "low": educ lowers its log-odds
    assert est.linear_coef_[0] < 0
    np.testing.assert_allclose(est.decision_function(X), manual_raw(est, X)[:, 0], rtol=1e-12)
    table = est.explain(X.iloc[:5])
    np.testing.assert_allclose(table.groupby("row")["contribution"].sum(),
                               est.decision_function(X.iloc[:5]), rtol=1e-12)
    from firecy.risk import risk_card

    with pytest.raises(ValueError, match="linear term"):
        risk_card(est, X, labels)


def test_multiclass_classifier_has_a_term_per_class():
    X, y = linear_data(450, seed=3)
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    est = quiet(FIREClassifier(forest("classification"), linear_terms=True, cv=3,
                               n_lambdas=15, random_state=0, n_jobs=1, max_rules=20),
                X, labels)
    assert est.linear_coef_.shape == (3, 3)
    assert np.any(est.linear_coef_)
    margins = manual_raw(est, X)
    np.testing.assert_allclose(est.decision_function(X), margins, rtol=1e-10, atol=1e-12)
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert est.n_terms_ == est.n_rules_ + np.count_nonzero(est.linear_coef_) <= 20
    table = est.explain(X.iloc[:4])
    sums = table.groupby(["row", "class"])["contribution"].sum().unstack().to_numpy()
    np.testing.assert_allclose(sums, est.decision_function(X.iloc[:4]), rtol=1e-10)
    lin = est.rules_[est.rules_["kind"] == "linear"]
    assert len(lin) == np.count_nonzero(est.linear_coef_)


def test_counts_and_survival():
    X, _ = linear_data(400, seed=4)
    rng = np.random.default_rng(4)
    counts = rng.poisson(np.exp(0.08 * (X["educ"] - 13) + 0.5 * (X["score"] > 0)))
    est = quiet(FIREPoissonRegressor(forest(), linear_terms=True, cv=3, n_lambdas=15,
                                     random_state=0, n_jobs=1), X, counts)
    assert np.any(est.linear_coef_)
    np.testing.assert_allclose(np.log(est.predict(X)), manual_raw(est, X)[:, 0], rtol=1e-10)
    time = rng.exponential(np.exp(-0.1 * (X["educ"] - 13)))
    y = np.array(list(zip(rng.uniform(size=400) < 0.8, time)),
                 dtype=[("event", bool), ("time", float)])
    est = quiet(FIRESurvivalRegressor(forest(), linear_terms=True, cv=3, n_lambdas=15,
                                      random_state=0, n_jobs=1), X, y)
    np.testing.assert_allclose(est.predict(X), manual_raw(est, X)[:, 0], rtol=1e-10)


@pytest.mark.parametrize("cls", [FIRERegressor, FIREClassifier, FIREPoissonRegressor,
                                 FIRESurvivalRegressor])
def test_linear_terms_are_the_default(cls):
    # benchmarks/linear_terms/RESULTS.md: the default decided by measurement
    assert cls().linear_terms is True
    assert cls().get_params()["linear_terms"] is True


def test_the_default_is_rules_and_lines_and_false_is_rules_only():
    X, y = linear_data(250, seed=5)
    a = quiet(FIRERegressor(forest(), cv=3, n_lambdas=15, random_state=0, n_jobs=1), X, y)
    b = quiet(FIRERegressor(forest(), linear_terms=True, cv=3, n_lambdas=15, random_state=0,
                            n_jobs=1), X, y)
    c = quiet(FIRERegressor(forest(), linear_terms=False, cv=3, n_lambdas=15, random_state=0,
                            n_jobs=1), X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.linear_coef_, b.linear_coef_)
    assert np.any(a.linear_coef_)
    assert len(c.linear_terms_) == 0 and c.linear_coef_.shape == (0,)
    assert c.n_terms_ == c.n_rules_
    assert "linear" not in c.summary()


def test_check_estimator_with_linear_terms():
    from sklearn.utils.estimator_checks import check_estimator

    est = FIRERegressor(
        estimator=RandomForestRegressor(n_estimators=10, max_depth=3, bootstrap=False,
                                        random_state=0),
        selection="cv", cv=3, n_lambdas=15, linear_terms=True)
    check_estimator(est)


def test_dask_refit_carries_the_terms():
    dd = pytest.importorskip("dask.dataframe")
    from firecy.dask import fit_dask

    X, y = linear_data(3000, seed=6)
    est = FIRERegressor(forest(n=20), linear_terms=True, cv=3, n_lambdas=15,
                        random_state=0, n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_dask(est, dd.from_pandas(X, npartitions=3),
                 dd.from_pandas(pd.Series(y), npartitions=3), sample_size=1000)
    assert est.dask_info_["refit"] and np.any(est.linear_coef_)
    # the refit is least squares on the kept terms over every row
    kept = np.flatnonzero(est.coef_)
    lands = np.column_stack([(est.ensemble_.leaf_table(X)[:, t] == j) * est.ensemble_.leaf_values[j]
                             for j, t in zip(kept, np.searchsorted(est.ensemble_.block_ptr, kept,
                                                                   side="right") - 1)])
    lin_cols = np.flatnonzero(est.linear_coef_)
    Z = np.column_stack([lands, est.linear_terms_.centered(X)[:, lin_cols], np.ones(len(y))])
    beta = np.linalg.lstsq(Z, y, rcond=None)[0]
    np.testing.assert_allclose(est.linear_coef_[lin_cols], beta[len(kept):-1], rtol=1e-6)


def test_cli_linear_terms_option(tmp_path, monkeypatch):
    from firecy.cli._job import _make_fire
    from firecy.cli._parser import build_parser

    args = build_parser().parse_args(["extract", "data.csv", "--target", "y",
                                      "--linear-terms"])
    assert _make_fire(None, args, "mcp", 0.5).linear_terms is True
    args = build_parser().parse_args(["extract", "data.csv", "--target", "y",
                                      "--no-linear-terms"])
    assert _make_fire(None, args, "mcp", 0.5).linear_terms is False


def test_interpret_local_explanation_holds_the_terms(fitted):
    pytest.importorskip("interpret")
    from firecy.interpret import explain_local

    est, X, y = fitted
    local = explain_local(est, X.iloc[:5], y[:5])
    for i in range(5):
        row = local.data(i)
        assert row["extra"]["scores"][0] + sum(row["scores"]) == pytest.approx(
            est.predict(X.iloc[[i]])[0], rel=1e-10)
    assert sum(name.startswith("+") or name.startswith("-") for name in local.feature_names) \
        == np.count_nonzero(est.linear_coef_)
