"""``firecy extract`` on a classification target: detection, --task, the
class each rule speaks for, the comparison against the fitted model."""
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split

from firecy.cli import main

SMALL = ["--n-trees", "15", "--n-lambdas", "15", "--cv", "3", "--n-jobs", "1",
         "--no-progress", "--seed", "0", "--no-linear-terms"]


@pytest.fixture(scope="module")
def iris_csv(tmp_path_factory):
    X, y = load_iris(return_X_y=True, as_frame=True)
    X["species"] = np.array(["setosa", "versicolor", "virginica"])[y]
    path = tmp_path_factory.mktemp("data") / "iris.csv"
    X.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def cancer_csv(tmp_path_factory):
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X.iloc[:, :6].copy()
    X["malignant"] = 1 - y        # numeric 0/1: detected as classification
    path = tmp_path_factory.mktemp("data") / "cancer.csv"
    X.to_csv(path, index=False)
    return path


def test_text_labels_are_detected_as_classification(tmp_path, iris_csv, capsys):
    out = tmp_path / "rules.json"
    assert main(["extract", str(iris_csv), "--target", "species", "--output", str(out),
                 *SMALL]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["task"] == "classification"
    assert len(doc["intercept"]) == 3
    assert 1 <= doc["n_rules"] <= 14
    assert {r["class"] for r in doc["rules"]} <= {"setosa", "versicolor", "virginica"}
    assert "score of class '" in printed and "accuracy" in printed and "AUC" in printed


def test_two_valued_numeric_target_and_reported_accuracy(tmp_path, cancer_csv, capsys):
    out = tmp_path / "rules.json"
    assert main(["extract", str(cancer_csv), "--target", "malignant", "--output", str(out),
                 "--test-size", "0.25", *SMALL]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["task"] == "classification"
    assert {r["class"] for r in doc["rules"]} == {1}
    assert "log-odds of class 1" in printed
    # the forest's accuracy in the table is the forest refitted the same way
    df = pd.read_csv(cancer_csv)
    y = df.pop("malignant").to_numpy()
    X_tr, X_te, y_tr, y_te = train_test_split(df.to_numpy(float), y, test_size=0.25,
                                              random_state=0, stratify=y)
    forest = RandomForestClassifier(n_estimators=15, max_depth=3, random_state=0,
                                    n_jobs=1).fit(X_tr, y_tr)
    acc = accuracy_score(y_te, forest.predict(X_te))
    assert doc["comparison"]["full random forest"]["test_accuracy"] == pytest.approx(acc)


def test_task_regression_refuses_labels(iris_csv, capsys):
    assert main(["extract", str(iris_csv), "--target", "species", "--task", "regression",
                 *SMALL]) != 0
    assert "--task classification" in capsys.readouterr().err


def test_task_classification_refuses_fractional_numbers(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=30), "y": rng.normal(size=30)})
    df.to_csv(tmp_path / "c.csv", index=False)
    assert main(["extract", str(tmp_path / "c.csv"), "--target", "y", "--task",
                 "classification", *SMALL]) != 0
    assert "non-integer" in capsys.readouterr().err


def test_single_class_target(tmp_path, capsys):
    df = pd.DataFrame({"a": np.arange(30.0), "y": ["x"] * 30})
    df.to_csv(tmp_path / "one.csv", index=False)
    assert main(["extract", str(tmp_path / "one.csv"), "--target", "y", *SMALL]) != 0
    assert "at least two" in capsys.readouterr().err


def test_multiclass_python_and_sql_give_each_class_margin(tmp_path, iris_csv, capsys):
    # The same fit written three ways: on the CSV's rows the Python function's
    # list and the SQL's columns are the per-class margins the JSON rules give,
    # in the class order their headers state.
    import sqlite3

    from firecy.rules import evaluate_parsed, parse_rule

    paths = {}
    for fmt in ("json", "python", "sql"):
        paths[fmt] = tmp_path / f"out_{fmt}"
        assert main(["extract", str(iris_csv), "--target", "species", "--format", fmt,
                     "--output", str(paths[fmt]), *SMALL]) == 0
    capsys.readouterr()
    doc = json.loads(paths["json"].read_text())
    names = doc["feature_names"]
    X = pd.read_csv(iris_csv)[names].to_numpy(dtype=float)
    classes = ["setosa", "versicolor", "virginica"]
    expected = np.tile(np.asarray(doc["intercept"], dtype=float), (len(X), 1))
    for r in doc["rules"]:
        expected[:, classes.index(r["class"])] += r["contribution"] * evaluate_parsed(
            parse_rule(r["rule"], names), X, dtype="float32")
    source = paths["python"].read_text()
    assert "0 = 'setosa', 1 = 'versicolor', 2 = 'virginica'" in source
    ns = {}
    exec(source, ns)
    got = np.array([ns["predict"](dict(zip(names, row))) for row in X.tolist()])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    sql = paths["sql"].read_text()
    # the SQL's comment has typographic quotes (see firecy._escape.sql_comment)
    assert "0 = \u2019setosa\u2019" in sql and 'AS "margin_2"' in sql
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE data (" + ", ".join(f'"{n}"' for n in names) + ")")
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * len(names))})", X.tolist())
    got_sql = np.array(con.execute(f"SELECT {sql} FROM data").fetchall(), dtype=float)
    np.testing.assert_allclose(got_sql, expected, rtol=1e-9, atol=1e-9)
