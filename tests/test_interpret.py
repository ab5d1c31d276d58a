"""A FIRE model as InterpretML explanations (issue 40, item 1).

``explain_global()`` / ``explain_local(X)`` return InterpretML explanation
objects in the format of InterpretML's own EBM (checked against an EBM's on
the same data), whose ``data()`` holds the terms of ``explain`` (summing to
the model's raw prediction) and whose ``visualize()`` builds plotly figures
without touching the network. Skipped without the ``interpret`` extra
(interpret-core and plotly); CI installs it through the ``test`` extra.
"""
import socket
import warnings

import numpy as np
import pytest

interpret = pytest.importorskip("interpret")
from interpret.api.templates import FeatureValueExplanation  # noqa: E402
from test_explain import CASES, _fit, _raw  # noqa: E402

CASE_NAMES = ["regression-boosted", "binary", "multiclass", "poisson", "cox"]


@pytest.fixture(scope="module", params=CASE_NAMES)
def fitted(request):
    data, make = CASES[request.param]
    X, y = data()
    return _fit(make(), X, y), X, y


@pytest.fixture
def offline(monkeypatch):
    """Any attempt to open a network connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _rule_texts(est):
    rules = est.rules_
    multi = "class" in rules and len(est.classes_) > 2
    return [f"{r} [class {c}]" if multi else r
            for r, c in zip(rules["rule"], rules["class"] if "class" in rules else rules["rule"])]


def test_local_explanation_holds_the_terms_of_explain(fitted):
    est, X, y = fitted
    rows = X.iloc[:12]
    y_rows = None if y.dtype.names else y[:12]
    exp = est.explain_local(rows, y_rows, name="fire")
    assert isinstance(exp, FeatureValueExplanation)
    assert exp.explanation_type == "local" and exp.name == "fire"
    assert exp.data() is None and len(exp.data(-1)["specific"]) == len(rows)
    assert exp.feature_names == _rule_texts(est)
    raw = _raw(est, rows)
    multi = raw.shape[1] > 2 or (hasattr(est, "classes_") and len(est.classes_) > 2)
    for i in range(len(rows)):
        d = exp.data(i)
        assert d["names"] == exp.feature_names
        scores = np.array(d["scores"], dtype=float).reshape(len(d["names"]), -1)
        extra = np.array(d["extra"]["scores"], dtype=float).reshape(1, -1)
        total = scores.sum(axis=0) + extra[0]
        scale = np.abs(scores).sum(axis=0) + np.abs(extra[0])
        assert np.all(np.abs(total - raw[i]) <= 1e-12 * np.maximum(np.abs(raw[i]), scale))
        if multi:
            # a rule's score is in the class it speaks for only
            assert all(np.count_nonzero(s) <= 1 for s in scores)
            assert d["meta"]["label_names"] == list(est.classes_)
        # a value shown for every rule the row satisfies: its features'
        for name, value, s in zip(d["names"], d["values"], scores):
            if np.any(s != 0):
                assert " = " in value
    perf = [exp.data(i)["perf"] for i in range(len(rows))]
    if hasattr(est, "classes_"):
        proba = est.predict_proba(rows)
        assert [p["predicted"] for p in perf] == np.argmax(proba, axis=1).tolist()
        np.testing.assert_allclose([p["predicted_score"] for p in perf], proba.max(axis=1))
        assert [p["actual"] for p in perf] == [list(est.classes_).index(v) for v in y[:12]]
        assert list(exp.selector.columns) == ["Actual", "Predicted", "PrScore", "AcScore",
                                              "Resid", "AbsResid"]
    else:
        np.testing.assert_allclose([p["predicted"] for p in perf], est.predict(rows))
        assert list(exp.selector.columns) == ["Actual", "Predicted", "Resid", "AbsResid"]
    assert len(exp.selector) == len(rows)


def test_global_explanation_ranks_the_rules_by_mean_absolute_contribution(fitted):
    est, X, y = fitted
    exp = est.explain_global()
    assert exp.explanation_type == "global"
    overall = exp.data()
    table = est.rules_
    expected = dict(zip(_rule_texts(est), (table["contribution"].abs() * table["support"])))
    assert sorted(overall["names"]) == sorted(expected)
    np.testing.assert_allclose(overall["scores"], [expected[n] for n in overall["names"]],
                               rtol=1e-15)
    assert np.all(np.diff(overall["scores"]) <= 0)
    # the mean over the training rows of |contribution| is that number
    Xtr = X
    contributions = est.explain(Xtr)
    rules = contributions[contributions["kind"] == "rule"]
    mean_abs = rules.assign(a=rules["contribution"].abs()).groupby("term")["a"].mean()
    by_text = {t: mean_abs[f"rule_{j}"] for t, j in zip(_rule_texts(est), table["column"])}
    np.testing.assert_allclose([by_text[n] for n in overall["names"]], overall["scores"],
                               rtol=1e-12)
    for k, name in enumerate(overall["names"]):
        d = exp.data(k)
        assert d["scores"][1] == 0.0
        assert np.isclose(abs(d["scores"][0]) * d["density"]["scores"][0], expected[name])
    assert list(exp.selector["Name"]) == overall["names"]


def test_visualize_draws_offline(fitted, offline):
    go = pytest.importorskip("plotly.graph_objects")
    est, X, y = fitted
    y_rows = None if y.dtype.names else y[:3]
    for exp, keys in [(est.explain_global(), [None, 0]),
                      (est.explain_local(X.iloc[:3], y_rows), [0, 2])]:
        for key in keys:
            fig = exp.visualize(key)
            assert isinstance(fig, go.Figure)
            assert fig.to_json()


def test_hostile_names_are_data_in_data_and_text_in_pictures(offline):
    pytest.importorskip("plotly")
    from sklearn.ensemble import RandomForestRegressor

    from firecy import FIRERegressor

    data, _ = CASES["regression"]
    X, y = data()
    evil = '<a href="https://example.invalid/">x</a><script>alert(1)</script>'
    X = X.rename(columns={X.columns[2]: evil, X.columns[8]: "<b>s5</b>"})
    est = _fit(FIRERegressor(RandomForestRegressor(20, max_depth=3, random_state=0),
                             n_lambdas=8, cv=3, random_state=0, linear_terms=False), X, y)
    local = est.explain_local(X.iloc[:3])
    names = local.feature_names
    assert any(evil in n for n in names) or any("<b>s5</b>" in n for n in names)
    for exp, key in [(est.explain_global(), None), (local, 0)]:
        text = exp.visualize(key).to_json()
        assert "<a href" not in text and "<script" not in text and "<b>" not in text
        assert "&lt;" in text


def test_the_format_is_the_one_of_interprets_ebm():
    from interpret.glassbox import ExplainableBoostingClassifier

    data, make = CASES["binary"]
    X, y = data()
    est = _fit(make(), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ebm = ExplainableBoostingClassifier(interactions=0, outer_bags=1, max_rounds=50,
                                            random_state=0, n_jobs=1).fit(X, y)
    ours, theirs = est.explain_local(X.iloc[:4], y[:4]), ebm.explain_local(X.iloc[:4], y[:4])
    assert set(ours.data(0)) == set(theirs.data(0))
    assert set(ours.data(0)["perf"]) == set(theirs.data(0)["perf"])
    assert ours.data(0)["extra"]["names"] == theirs.data(0)["extra"]["names"] == ["Intercept"]
    assert list(ours.selector.columns) == list(theirs.selector.columns)
    # the same class is predicted as the same index, with the same labels
    assert ours.data(0)["meta"] == theirs.data(0)["meta"]
    g_ours, g_theirs = est.explain_global(), ebm.explain_global()
    assert set(g_ours.data()) <= set(g_theirs.data()) | {"type"}
    assert list(g_ours.selector.columns) == list(g_theirs.selector.columns)


def test_a_clear_error_without_interpret(monkeypatch):
    import builtins

    import firecy.interpret as fi

    real = builtins.__import__

    def no_interpret(name, *args, **kwargs):
        if name.startswith("interpret"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_interpret)
    monkeypatch.setattr(fi, "_EXPLANATION_TYPE", None)
    data, make = CASES["regression"]
    X, y = data()
    est = _fit(make(), X, y)
    with pytest.raises(ImportError, match="firecy\\[interpret\\]"):
        est.explain_global()
