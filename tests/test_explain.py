"""Per-row explanations (issue 40, item 1): ``explain`` on every FIRE estimator.

The terms of a row must add up to the model's own raw prediction
(``decision_function``; ``predict``; the log of the Poisson rate; the Cox
risk score) to 1e-12 relative, with and without a depth cut, on NumPy,
pandas and sparse input; each rule's ``fires`` must be the rows its
conditions select (``RuleEnsemble.rule_mask``, which evaluates the
conditions, not the trees); and the picture must draw.
"""
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)

from firecy import FIREClassifier, FIREPoissonRegressor, FIRERegressor, FIRESurvivalRegressor

matplotlib.use("Agg")

FAST = dict(n_lambdas=10, cv=3, random_state=0, max_rules=12, linear_terms=False)


def _fit(est, X, y, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **fit_params)


def _regression():
    data = load_diabetes(as_frame=True)
    return data.data.iloc[:300], data.target.iloc[:300].to_numpy()


def _binary():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X.iloc[::2], np.where(y.iloc[::2] == 1, "benign", "malignant")


def _multiclass():
    X, y = load_iris(return_X_y=True, as_frame=True)
    return X, np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]


def _counts(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    rate = np.exp(0.8 * (X["a"] > 0) - 0.5 * (X["b"] > 0.5))
    return X, rng.poisson(rate).astype(float)


def _survival(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=["a", "b", "c", "d"])
    hazard = np.exp(1.0 * (X["a"] > 0) + 0.5 * X["b"])
    time = rng.exponential(1.0 / hazard)
    event = rng.random(n) < 0.8
    return X, np.array(list(zip(event, time)), dtype=[("event", bool), ("time", float)])


def _raw(est, X):
    """The estimator's own raw prediction, per output (n, K)."""
    if isinstance(est, FIREClassifier):
        return est.decision_function(X).reshape(X.shape[0], -1)
    if isinstance(est, FIREPoissonRegressor):
        return np.log(est.predict(X)).reshape(-1, 1)
    return est.predict(X).reshape(-1, 1)


CASES = {
    "regression": (_regression, lambda: FIRERegressor(
        RandomForestRegressor(30, max_depth=4, random_state=0), **FAST)),
    "regression-boosted": (_regression, lambda: FIRERegressor(
        GradientBoostingRegressor(n_estimators=30, max_depth=4, random_state=0), **FAST)),
    "binary": (_binary, lambda: FIREClassifier(
        RandomForestClassifier(30, max_depth=4, random_state=0), **FAST)),
    "binary-boosted": (_binary, lambda: FIREClassifier(
        GradientBoostingClassifier(n_estimators=30, max_depth=4, random_state=0), **FAST)),
    "multiclass": (_multiclass, lambda: FIREClassifier(
        RandomForestClassifier(30, max_depth=4, random_state=0), **FAST)),
    "multiclass-boosted": (_multiclass, lambda: FIREClassifier(
        GradientBoostingClassifier(n_estimators=10, max_depth=4, random_state=0), **FAST)),
    "poisson": (_counts, lambda: FIREPoissonRegressor(
        RandomForestRegressor(30, max_depth=4, random_state=0), **FAST)),
    "cox": (_survival, lambda: FIRESurvivalRegressor(
        RandomForestRegressor(30, max_depth=4, random_state=0), **FAST)),
}


@pytest.fixture(scope="module", params=[(case, depth) for case in CASES
                                        for depth in ("leaves", 2)],
                ids=lambda p: f"{p[0]}-{p[1]}")
def fitted(request):
    case, depth = request.param
    data, make = CASES[case]
    X, y = data()
    est = make().set_params(rule_depth=None if depth == "leaves" else depth)
    _fit(est, X, y)
    assert est.n_rules_ > 0
    if depth == 2:
        assert est.rule_depth_ == 2
    return est, X, y


def _check_sums(est, X, table):
    """Per (row, class), the contributions sum to the raw prediction to 1e-12."""
    raw = _raw(est, X)
    classes = list(pd.unique(table["class"])) if "class" in table else [None]
    assert raw.shape[1] == len(classes)
    for k, label in enumerate(classes):
        part = table if label is None else table[table["class"] == label]
        total = part.groupby("row")["contribution"].sum().to_numpy()
        # the scale of the sum: cancellation between big terms is rounding too
        scale = part.assign(a=part["contribution"].abs()).groupby("row")["a"].sum().to_numpy()
        assert total.shape == (X.shape[0],)
        err = np.abs(total - raw[:, k])
        assert np.all(err <= 1e-12 * np.maximum(np.abs(raw[:, k]), scale)), err.max()


@pytest.mark.parametrize("form", ["pandas", "numpy", "sparse"])
def test_terms_sum_to_the_prediction(fitted, form):
    est, X, y = fitted
    rows = X.iloc[:40]
    given = {"pandas": rows, "numpy": rows.to_numpy(), "sparse": sp.csr_matrix(rows.to_numpy())}
    with warnings.catch_warnings():
        # a model fitted on a DataFrame given an array: scikit-learn's warning
        warnings.simplefilter("ignore", UserWarning)
        table = est.explain(given[form])
        _check_sums(est, given[form], table)
    n_terms = 2 * (1 if not hasattr(est, "classes_") or len(est.classes_) == 2
                   else len(est.classes_)) + est.n_rules_
    assert len(table) == len(rows) * n_terms
    # every kept rule, once per row
    rules = table[table["kind"] == "rule"]
    assert sorted(set(rules["term"])) == sorted(f"rule_{j}" for j in np.flatnonzero(est.coef_))
    assert (rules.groupby("row").size() == est.n_rules_).all()


def test_rules_fire_on_the_rows_their_conditions_select(fitted):
    # rule_mask evaluates the conditions on the data; explain routes the trees
    est, X, y = fitted
    rows = X.iloc[:60]
    table = est.explain(rows)
    rules = table[table["kind"] == "rule"]
    coef = np.asarray(est.coef_)
    leaf = np.asarray(est.ensemble_.leaf_values)
    for term, part in rules.groupby("term"):
        j = int(term.split("_")[1])
        part = part.sort_values("row")
        mask = est.ensemble_.rule_mask(j, rows)
        np.testing.assert_array_equal(part["fires"].to_numpy(), mask)
        np.testing.assert_array_equal(part["value"].to_numpy(), np.where(mask, leaf[j], 0.0))
        assert np.all(np.abs(part["weight"].to_numpy()) == abs(coef[j]))
        # the row's values of the rule's features, from X itself
        features = {c.feature for c in est.ensemble_.rules[j]}
        for i, shown in zip(part["row"], part["features"]):
            assert set(shown) == {X.columns[f] for f in features}
            for f in features:
                assert shown[X.columns[f]] == rows.iloc[i, f]


def test_the_table_matches_rules_and_its_ordering(fitted):
    est, X, y = fitted
    table = est.explain(X.iloc[:5], precision=None)
    text = dict(zip(est.rules_["column"], est.rules_["rule"]))
    contribution = dict(zip(est.rules_["column"], est.rules_["contribution"]))
    for _, r in table[table["kind"] == "rule"].iterrows():
        j = int(r["term"].split("_")[1])
        assert r["text"] == text[j]
        # the same product (class 0's negated in a folded binary model)
        assert abs(r["contribution"]) == (abs(contribution[j]) if r["fires"] else 0.0)
    for _, part in table.groupby(["row"] + (["class"] if "class" in table else [])):
        assert list(part["kind"][:2]) == ["intercept", "baseline"]
        c = np.abs(part["contribution"].to_numpy()[2:])
        assert np.all(np.diff(c) <= 0)
    intercept = table[table["kind"] == "intercept"]["weight"].to_numpy()
    b = np.atleast_1d(est.intercept_)
    expected = b[1:] - b[:1] if b.size == 2 and len(getattr(est, "classes_", [])) == 2 else b
    np.testing.assert_array_equal(np.unique(intercept), np.unique(expected))
    base = table[table["kind"] == "baseline"]
    ref = np.asarray(est.ensemble_.baseline(X.iloc[:5])).reshape(5, -1)
    if ref.shape[1] == 2 and len(getattr(est, "classes_", [])) == 2:
        ref = ref[:, 1:] - ref[:, :1]
    np.testing.assert_array_equal(np.sort(base["contribution"].to_numpy()), np.sort(ref.ravel()))


def test_fired_only_and_the_plain_fallback():
    X, y = _regression()
    est = _fit(FIRERegressor(RandomForestRegressor(30, max_depth=3, random_state=0), **FAST),
               X, y)
    full = est.explain(X.iloc[:20])
    fired = est.explain(X.iloc[:20], fired_only=True)
    assert fired["fires"].all()
    assert len(fired) == int(full["fires"].sum())
    np.testing.assert_allclose(fired.groupby("row")["contribution"].sum(),
                               full.groupby("row")["contribution"].sum(), rtol=1e-13)
    plain = est.explain(X.iloc[:20], as_frame=False)
    assert isinstance(plain, list) and plain == full.to_dict("records")


def test_xgboost_binary_with_a_score_per_class_explains_the_log_odds():
    xgb = pytest.importorskip("xgboost")
    X, y = _binary()
    codes = (y == "malignant").astype(int)
    model = xgb.XGBClassifier(n_estimators=20, max_depth=3, objective="multi:softprob",
                              num_class=2, n_jobs=1, random_state=0)
    est = _fit(FIREClassifier(model, **FAST), X, codes)
    assert est.ensemble_.n_outputs == 2
    table = est.explain(X.iloc[:30])
    assert set(table["class"]) == {1}
    _check_sums(est, X.iloc[:30], table)


def test_categorical_features_show_their_labels():
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
                      "size": rng.normal(size=n)})
    y = np.where(X["colour"] == "red", 2.0, 0.0) + X["size"] + 0.1 * rng.normal(size=n)
    from sklearn.ensemble import HistGradientBoostingRegressor

    model = HistGradientBoostingRegressor(max_iter=20, max_depth=3, random_state=0,
                                          categorical_features="from_dtype")
    est = _fit(FIRERegressor(model, **FAST), X, y)
    table = est.explain(X.iloc[:30])
    _check_sums(est, X.iloc[:30], table)
    shown = [f["colour"] for f in table["features"] if "colour" in f]
    assert shown and set(shown) <= {"red", "green", "blue"}


def test_explain_refuses_what_it_cannot_read():
    X, y = _regression()
    est = FIRERegressor(RandomForestRegressor(10, max_depth=3, random_state=0), **FAST)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        est.explain(X)
    _fit(est, X, y)
    with pytest.raises(ValueError, match="features"):
        est.explain(X.to_numpy()[:, :3])
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(TypeError, match="compute"):
        est.explain(dd.from_pandas(X, npartitions=2))


# ---------------------------------------------------------------------------
# the picture
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["regression-boosted", "binary", "multiclass", "poisson", "cox"])
def test_the_waterfall_draws_from_the_intercept_to_the_prediction(case):
    from firecy.plotting import plot_explanation

    data, make = CASES[case]
    X, y = data()
    est = _fit(make(), X, y)
    x = X.iloc[7]
    fig = plot_explanation(est, x)
    ax = fig.axes[0]
    table = est.explain(X.iloc[[7]])
    raw = _raw(est, X.iloc[[7]])
    if "class" in table and len(est.classes_) > 2:
        label = est.predict(X.iloc[[7]])[0]
        table = table[table["class"] == label]
        raw = raw[:, list(est.classes_).index(label)]
    fired = table[(table["kind"] == "rule") & (table["contribution"] != 0)]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    # start, one bar per rule that fires (none cut at this size), the prediction
    assert len(labels) == len(fired) + 2
    bars = [p for p in ax.patches if p.get_gid() == "firecy-term"]
    assert len(bars) == len(fired)
    ends = [p.get_x() + p.get_width() for p in ax.patches if p.get_gid() == "firecy-total"]
    assert np.isclose(ends[-1], float(np.ravel(raw)[0]), rtol=1e-12, atol=1e-12)
    fig.canvas.draw()
    fig.savefig(__import__("io").BytesIO(), format="svg")


def test_the_waterfall_folds_small_terms_and_wraps_long_texts():
    from firecy.plotting import plot_explanation

    X, y = _regression()
    est = _fit(FIRERegressor(RandomForestRegressor(40, max_depth=4, random_state=0),
                             **dict(FAST, max_rules=30, selection="budget")), X, y)
    table = est.explain(X)
    fired = table[(table["kind"] == "rule") & (table["contribution"] != 0)]
    row = int(fired.groupby("row").size().idxmax())
    n_fired = int((fired["row"] == row).sum())
    assert n_fired > 3
    fig = plot_explanation(est, X.iloc[[row]], max_terms=3, wrap=12, max_chars=30)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 3 + 1 + 2
    assert f"{n_fired - 3} other rules" in labels[-2] or any(
        f"{n_fired - 3} other rules" in s for s in labels)
    for s in labels:
        assert all(len(line) <= 30 for line in s.split("\n")), s
    ends = [p.get_x() + p.get_width() for p in fig.axes[0].patches
            if p.get_gid() == "firecy-total"]
    assert np.isclose(ends[-1], est.predict(X.iloc[[row]])[0], rtol=1e-12)
    with pytest.raises(ValueError, match="one row"):
        plot_explanation(est, X.iloc[:2])


# ---------------------------------------------------------------------------
# firecy explain
# ---------------------------------------------------------------------------
CLI_FAST = ["--n-trees", "20", "--n-lambdas", "8", "--cv", "3", "--n-jobs", "1",
            "--no-progress", "--no-linear-terms"]


def _exported(tmp_path, csv, target, extra=()):
    """``firecy extract --format python`` with the same options: its function."""
    from firecy.cli import main

    source = tmp_path / "rules.py"
    assert main(["extract", str(csv), "--target", target, "--format", "python",
                 "--output", str(source), *CLI_FAST, *extra]) == 0
    namespace = {}
    exec(compile(source.read_text(encoding="utf-8"), str(source), "exec"), namespace)
    return namespace["predict"]


@pytest.mark.parametrize("kind", ["regression", "binary"])
def test_cli_explain_sums_to_the_extracted_rules(tmp_path, capsys, kind):
    from firecy.cli import main

    if kind == "regression":
        frame = load_diabetes(as_frame=True).frame
        target = "target"
    else:
        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        frame = X.iloc[:, :8].assign(diagnosis=np.where(y == 1, "benign", "malignant"))
        target = "diagnosis"
    csv = tmp_path / "data.csv"
    frame.to_csv(csv, index=False)
    out, pictures = tmp_path / "explanations.csv", tmp_path / "pictures"
    # --rows takes CSV lines: data rows 9, 0 and 5
    status = main(["explain", str(csv), "--target", target, "--rows", "11,2,7",
                   "--output", str(out), "--plot-dir", str(pictures), *CLI_FAST])
    printed = capsys.readouterr().out
    assert status == 0
    assert "CSV line 11: " in printed and "intercept" in printed
    table = pd.read_csv(out)
    assert list(pd.unique(table["row"])) == [9, 0, 5]
    assert (table["csv_line"] == table["row"] + 2).all()
    # the same rules as firecy extract with the same options: its exported function
    predict = _exported(tmp_path, csv, target)
    features = frame.drop(columns=[target])
    for row, part in table.groupby("row"):
        expected = predict({k: float(v) for k, v in features.iloc[row].items()})
        assert np.isclose(part["contribution"].sum(), expected, rtol=1e-12, atol=1e-12)
        fired = part[(part["kind"] == "rule") & part["fires"]]
        for text, shown in zip(fired["text"], fired["features"]):
            values = __import__("json").loads(shown)
            assert values and all(k in text for k in values)
            assert all(v == features.iloc[row][k] for k, v in values.items())
    assert sorted(p.name for p in pictures.iterdir()) == [
        "explanation_line11.png", "explanation_line2.png", "explanation_line7.png"]


def test_cli_explain_errors(tmp_path, capsys):
    from firecy.cli import main

    csv = tmp_path / "data.csv"
    load_diabetes(as_frame=True).frame.to_csv(csv, index=False)
    # 442 data rows: CSV lines 2 to 443
    assert main(["explain", str(csv), "--target", "target", "--rows", "444", *CLI_FAST]) == 1
    assert (f"--rows takes CSV line numbers: the data rows of {csv} are on lines 2 to 443; "
            "no data row starts on line 444") in capsys.readouterr().err
    for bad in ("a,2", "1", "0,5"):
        with pytest.raises(SystemExit) as exit_:
            main(["explain", str(csv), "--target", "target", "--rows", bad])
        assert exit_.value.code == 2
        assert "--rows must be CSV line numbers" in capsys.readouterr().err


def test_a_label_pandas_cannot_hold_as_a_string_stays_a_python_str():
    # pandas' Arrow strings refuse a lone surrogate: explain's frame keeps it
    X, y = _multiclass()
    labels = np.array(["\ud800", "b", "<c>"], dtype=object)[
        np.searchsorted(["setosa", "versicolor", "virginica"], y)]
    est = _fit(FIREClassifier(RandomForestClassifier(20, max_depth=3, random_state=0),
                              **FAST), X, labels)
    table = est.explain(X.iloc[:6])
    assert set(table["class"]) == {"\ud800", "b", "<c>"}
    assert table["row"].dtype == np.int64 and table["fires"].dtype == bool
    _check_sums(est, X.iloc[:6], table)
