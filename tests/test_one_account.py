"""One account of a fitted model: every output tells the same counts and terms.

Each output is read back from what it prints or writes (the summary's text,
``rules_``, ``explain``, the JSON export, the HTML report, the InterpretML
global explanation) and compared with ``est.model_`` and with the fitted
attributes (``coef_``, ``linear_coef_``): a count or a weight that one output
computes on its own, wrongly, fails here.
"""
import html
import json
import re
import warnings

import numpy as np
import pytest

from firecy import (FIREClassifier, FIREPoissonRegressor, FIRERegressor,
                    FIRESurvivalRegressor)


def _forest(classifier=False):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    kind = RandomForestClassifier if classifier else RandomForestRegressor
    return kind(30, max_depth=3, random_state=0)


def _data(task, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 4))
    if task == "regression":
        y = 2.0 * (X[:, 0] > 0) + X[:, 1] + 0.3 * rng.normal(size=400)
    elif task == "binary":
        p = 1 / (1 + np.exp(-(2.0 * (X[:, 0] > 0) + X[:, 1] - 1)))
        y = np.where(rng.uniform(size=400) < p, "yes", "no")
    elif task == "multiclass":
        score = np.column_stack([2.0 * (X[:, 0] > 0), X[:, 1], 0.5 * X[:, 2]])
        y = np.array(["a", "b", "c"])[np.argmax(score + rng.gumbel(size=(400, 3)), axis=1)]
    elif task == "poisson":
        y = rng.poisson(np.exp(0.8 * (X[:, 0] > 0) + 0.3 * X[:, 1])).astype(float)
    else:
        time = rng.exponential(np.exp(-1.0 * (X[:, 0] > 0) - 0.3 * X[:, 1]))
        event = rng.uniform(size=400) < 0.8
        y = np.array(list(zip(event, time)), dtype=[("event", bool), ("time", float)])
    return X, y


ESTIMATORS = {"regression": (FIRERegressor, False), "binary": (FIREClassifier, True),
              "multiclass": (FIREClassifier, True), "poisson": (FIREPoissonRegressor, False),
              "survival": (FIRESurvivalRegressor, False)}


@pytest.fixture(scope="module", params=[(task, linear) for task in ESTIMATORS
                                        for linear in (True, False)],
                ids=lambda p: f"{p[0]}-{'linear' if p[1] else 'rules'}")
def fitted(request):
    task, linear = request.param
    X, y = _data(task)
    kind, classifier = ESTIMATORS[task]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = kind(_forest(classifier).fit(X, y if task != "survival" else y["time"]),
                   max_rules=8, cv=3, linear_terms=linear, random_state=0).fit(X, y)
    return task, est, X, y


def _number_of(text, pattern):
    found = re.search(pattern, text)
    return 0 if found is None else int(found.group(1))


def test_the_account_agrees_with_the_fitted_attributes(fitted):
    task, est, X, y = fitted
    model = est.model_
    assert model.n_rules == est.n_rules_ == np.count_nonzero(est.coef_)
    assert model.n_terms == est.n_terms_
    for term in model.rules:
        assert term.weight == est.coef_[term.column]
        assert term.tree is not None and term.leaf_value is not None
    slopes = np.atleast_2d(np.asarray(est.linear_coef_))
    for term in model.linear_terms:
        assert term.tree is None and term.lower <= term.center <= term.upper
        assert term.weight in slopes
        # the text gives the four numbers the term is computed from
        for v in (abs(term.weight), term.lower, term.upper, term.center):
            assert f"{v:.4g}" in term.text
    assert model.n_linear_terms == np.count_nonzero(est.linear_coef_)
    assert model.n_trees == len({t.tree for t in model.rules})
    assert (model.n_linear_terms > 0) == bool(model.linear_terms)


def test_summary_prints_the_accounts_counts_and_every_term(fitted):
    task, est, X, y = fitted
    model = est.model_
    text = est.summary()
    counts = text.strip().splitlines()[-1]
    assert counts == model.counts_text()
    assert _number_of(counts, r"^(\d+) rules? from") == model.n_rules
    assert _number_of(counts, r"from (\d+) trees?") == model.n_trees
    assert _number_of(counts, r"(\d+) distinct antecedents?") == model.n_antecedents
    assert _number_of(counts, r"and (\d+) linear terms?") == model.n_linear_terms
    head = text.splitlines()[0]
    assert _number_of(head, r": (\d+) rules?") == model.n_rules
    assert _number_of(head, r"and (\d+) linear terms?") == model.n_linear_terms
    for term in model.terms:
        assert term.text in text
    # every output block says how its prediction is made, with the linear terms
    # where they are kept
    sentences = [line for line in text.splitlines() if " = intercept" in line]
    assert sentences
    assert any("linear term" in s for s in sentences) == (model.n_linear_terms > 0)


def test_rules_table_and_explain_hold_the_accounts_terms(fitted):
    task, est, X, y = fitted
    model = est.model_
    table = est.rules_
    assert len(table) == model.n_terms
    assert int((table["kind"] == "linear").sum()) == model.n_linear_terms
    assert table["weight"].tolist() == [t.weight for t in model.terms]
    assert table["rule"].tolist() == [t.text for t in model.terms]
    assert table.loc[table["kind"] == "linear", "tree"].isna().all()
    assert not table.loc[table["kind"] == "rule", "tree"].isna().any()
    records = est.explain(X[:3], as_frame=False)
    kept = [r for r in records if r["kind"] in ("rule", "linear") and r["row"] == 0]
    assert sorted((r["term"], r["weight"]) for r in kept) == \
        sorted((t.name, t.weight) for t in model.terms)


def test_json_export_holds_the_accounts_counts(fitted):
    from firecy.rules import rules_json

    task, est, X, y = fitted
    model = est.model_
    doc = json.loads(json.dumps(rules_json(est)))
    for key, value in model.counts().items():
        assert doc[key] == value, key
    assert [r["weight"] for r in doc["rules"]] == pytest.approx([t.weight for t in model.terms])
    assert ("slope" in doc["prediction"]) == (model.n_linear_terms > 0)


def test_report_tells_the_accounts_counts(fitted):
    pytest.importorskip("matplotlib")
    from firecy.report import report_html

    task, est, X, y = fitted
    model = est.model_
    page = report_html(est, X, y)
    assert html.escape(model.counts_text(), quote=False) in page
    facts = dict(re.findall(r"<tr><td>([^<]+)</td><td[^>]*>([^<]*)</td></tr>", page))
    assert int(facts["rules kept"]) == model.n_rules
    assert int(facts["linear terms kept"]) == model.n_linear_terms
    assert int(facts["trees holding a rule"]) == model.n_trees
    assert int(facts["antecedents (split nodes to read)"]) == model.n_antecedents
    assert "<thead><tr><th></th><th></th></tr></thead>" not in page
    assert f"<title>{type(est).__name__}: {model.terms_text()}</title>" in page


def test_explain_global_lists_every_term_without_nan(fitted):
    pytest.importorskip("interpret")
    task, est, X, y = fitted
    model = est.model_
    overall = est.explain_global().data()
    assert len(overall["names"]) == model.n_terms
    scores = np.asarray(overall["scores"], dtype=float)
    assert np.all(np.isfinite(scores)) and np.all(scores >= 0)
    assert list(scores) == sorted(scores, reverse=True)
    if model.n_linear_terms:
        # a linear term's mean |contribution| on the training rows, recomputed
        term = model.linear_terms[0]
        f = term.features[0]
        x = np.clip(np.asarray(X)[:, f], term.lower, term.upper)
        expected = np.mean(np.abs(term.weight * (x - term.center)))
        assert term.mean_abs_contribution == pytest.approx(expected, rel=1e-12)
        assert np.min(np.abs(scores - expected)) <= 1e-9 * expected


def test_path_plot_counts_what_the_account_counts(fitted):
    pytest.importorskip("matplotlib")
    from firecy.plotting import plot_path

    task, est, X, y = fitted
    model = est.model_
    label = plot_path(est).axes[0].get_xlabel()
    if model.linear_offered:
        assert label == "number of terms (rules and linear terms)"
    else:
        assert label == "number of rules"
    # the selected point of the path counts the account's terms
    k = int(np.argmin(np.abs(np.asarray(est.path_.lambdas) - est.lambda_)))
    assert int(est.path_.n_rules[k]) == model.n_terms


@pytest.mark.parametrize("task", ["regression", "binary", "multiclass"])
@pytest.mark.parametrize("linear", [True, False])
def test_command_line_text_and_json_tell_the_same_counts(tmp_path, capsys, task, linear):
    pd = pytest.importorskip("pandas")
    from firecy.cli import main

    X, y = _data(task, seed=1)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["target"] = y
    data = tmp_path / "data.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "rules.json"
    args = ["extract", str(data), "--target", "target", "--output", str(out), "--n-trees",
            "30", "--max-depth", "3", "--max-rules", "8", "--n-lambdas", "15", "--n-jobs",
            "1", "--no-progress", "--seed", "0"]
    assert main(args + ([] if linear else ["--no-linear-terms"])) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    # the printed counts line is the JSON's counts, said as every output says them
    from firecy.rules._account import counts_sentence

    assert counts_sentence(doc["n_rules"], doc["n_trees"], doc["n_antecedents"],
                           doc["n_linear_terms"]) in printed
    assert doc["n_terms"] == doc["n_rules"] + doc["n_linear_terms"] == len(doc["rules"])
    assert (doc["n_linear_terms"] > 0) <= linear
    # the comparison row of FIRE: the same terms, rules and lines, in the text and the JSON
    fire = next(v for k, v in doc["comparison"].items() if k.startswith("FIRE"))
    assert (fire["n_terms"], fire["n_rules"], fire["n_linear_terms"], fire["n_antecedents"]) \
        == (doc["n_terms"], doc["n_rules"], doc["n_linear_terms"], doc["n_antecedents"])
    row = next(line for line in printed.splitlines() if line.startswith("FIRE "))
    name = next(k for k in doc["comparison"] if k.startswith("FIRE"))
    assert row.startswith(name)
    terms, rules, lines, antecedents = row[len(name):].split()[:4]
    assert [int(terms), int(rules), int(lines), int(antecedents)] == [
        doc["n_terms"], doc["n_rules"], doc["n_linear_terms"], doc["n_antecedents"]]
