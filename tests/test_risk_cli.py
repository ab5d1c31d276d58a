"""``firecy extract --rule-depth``: one depth, several (a tuple), errors."""
import numpy as np
import pytest

from firecy.cli._job import _make_fire
from firecy.cli._parser import build_parser

BASE = ["extract", "data.csv", "--target", "y"]


@pytest.mark.parametrize("text, depth", [("1,2", (1, 2)), ("2,1", (1, 2)), ("1,3,2", (1, 2, 3)),
                                         ("2", 2), ("leaves", None), ("auto", "auto")])
def test_rule_depth_reaches_the_estimator(text, depth):
    args = build_parser().parse_args(BASE + ["--rule-depth", text])
    assert args.rule_depth == depth
    assert _make_fire(None, args, "mcp", 0.5).rule_depth == depth


@pytest.mark.parametrize("bad", ["0", "1,0", "1,1", "1,x", "1,", ",", "1.5,2", "deep", ""])
def test_bad_rule_depth_is_a_one_line_error(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(BASE + ["--rule-depth", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--rule-depth must be 'auto', 'leaves', an integer >= 1 or distinct integers" in err
    assert repr(bad) in err


def test_selection_budget_reaches_the_estimator_and_is_described():
    args = build_parser().parse_args(BASE + ["--selection", "budget", "--max-rules", "7"])
    fire = _make_fire(None, args, "mcp", 0.5)
    assert fire.selection == "budget" and fire.max_rules == 7


# -- firecy card (issue 40): RiskCardClassifier from a CSV file -------------------
def test_card_command_writes_the_classifiers_card(tmp_path, capsys):
    import json

    import pandas as pd
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from firecy.cli import main
    from firecy.risk import RiskCardClassifier

    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :8]
    frame = X.assign(**{"tumour 'kind'": np.where(y == 1, "benign", "malignant")})
    path = tmp_path / "bc.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "card.json"
    code = main(["card", str(path), "--target", "tumour 'kind'", "--max-rules", "4",
                 "--output", str(out), "--n-jobs", "1"])
    assert code == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    # the same card as the classifier fitted on the same training rows
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, frame["tumour 'kind'"].to_numpy(), test_size=0.25,
        stratify=frame["tumour 'kind'"].to_numpy(), random_state=0)
    clf = RiskCardClassifier(max_rules=4, random_state=0, n_jobs=1).fit(X_tr, y_tr)
    assert [r["points"] for r in doc["rules"]] == clf.card_.points.tolist()
    assert [r["rule"] for r in doc["rules"]] == clf.card_.rules
    assert doc["event"] == "malignant" and doc["test"]["n"] == len(y_te)
    assert "RISK CARD" in printed and "held-out rows: AUC" in printed
    # every rule's exact conditions read back to its rows
    from firecy.ensembles._simplify import simplify_conditions

    for r, j in zip(doc["rules"], clf.card_.columns):
        assert len(r["conditions"]) == len(simplify_conditions(clf.model_.ensemble_.rules[j]))


def test_card_command_refuses_a_target_of_three_values(tmp_path):
    import pandas as pd

    from firecy.cli import main

    path = tmp_path / "three.csv"
    pd.DataFrame({"x": np.arange(30.0), "y": np.repeat(["a", "b", "c"], 10)}).to_csv(
        path, index=False)
    assert main(["card", str(path), "--target", "y", "--output",
                 str(tmp_path / "c.json")]) != 0
