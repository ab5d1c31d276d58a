"""Hostile strings in the data cannot change the exported programs (issue 21, items 1 and 3).

Class labels, category labels and feature names are data: quotes of every
kind, triple quotes, backslashes, line breaks, NUL, SQL comment markers,
bidirectional marks, lone surrogates and text that looks like code.  Through
every exporter (``rules_python``, ``rules_sql``, ``rules_json``, the text
report, ``firecy extract --format``) they must stay data:

* the Python module, written to a file and imported in a subprocess, defines
  its function and nothing else happens (no marker file appears), and it
  gives the estimator's ``predict`` / ``decision_function``;
* the SQL runs in SQLite through ``executescript`` (a canary table
  survives) and in DuckDB, and gives the estimator's predictions; a label
  SQL cannot hold (NUL, a lone surrogate) is a ValueError, never wrong SQL;
* the JSON reads back the exact strings; the report's lines are the rules',
  one each, printable.

And a SQL expression written with ``table=`` fails loudly on a column the
table lacks, in SQLite (which would otherwise read ``"name"`` as a string)
and DuckDB (and PostgreSQL when a server can be started).

Many strings share one fit (many categories in one feature, many features),
so the whole file runs in a few tens of seconds.
"""
import ast
import copy
import json
import math
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestClassifier
from threadpoolctl import threadpool_limits

from firecy import FIREClassifier, FIRERegressor
from firecy.rules import rules_json, rules_python, rules_report, rules_sql
from firecy._escape import (
    display_text, display_value, json_text, python_docstring, python_literal, sql_comment,
    sql_identifier, sql_string,
)

MARKER = "MARKER"
CODE_LIKE = [
    'x""";__import__("os").system("touch MARKER");"""',
    "x''';__import__('os').system('touch MARKER');'''",
    '");open("MARKER", "w");("',
    "');open('MARKER', 'w');('",
    "'); DROP TABLE canary; --",
    '"); DROP TABLE canary; --',
    "*/ DROP TABLE canary; /*",
    "1; DROP TABLE canary",
    "\n__import__('os').system('touch MARKER')\n",
    "\\\n__import__('os').system('touch MARKER')",
    "\r\nimport os; os.system('touch MARKER')  # ",
    "\u2028__import__('os').system('touch MARKER')",
]
WORST = CODE_LIKE + [
    '"', "'", '"""', "'''", '""', "''", "\\", "trailing backslash\\", "\\\\", "\\'", '\\"',
    "\\N{", "\\x4", "\\u12", "{}", "{0}", "{__import__}", "%s", "%(x)s", "--", "/*", "*/",
    "/*/", "*/*", ";", "\n", "\r", "\r\n", "\t", "\x0b", "\x0c", "\x1c", "\x85",
    "\u2028", "\u2029", "\x00", "a\x00b", "\u200f", "\u202e", "\u202eevil\u202c", "\u2066",
    "\ufeff", "\x1b[31mred", "😀", "漢字", "e\u0301", "\u0301", " ", "  x  ", "nan",
    "None", "True", "\ud800", "\udfff", "a\udcffb", "x" * 3000 + '"""', "'" * 500,
]
FRAGMENTS = sorted(set(WORST) - set(CODE_LIKE)) + list("ab Z09_.$#`?:@[]()<>=!|&^~,")


def hostile_strings(n, seed=0):
    """The hand-written worst list, then ``n`` strings made of its fragments (seeded)."""
    rng = random.Random(seed)
    out = list(WORST)
    while len(out) < len(WORST) + n:
        s = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 5)))
        if rng.random() < 0.1:
            s = rng.choice(CODE_LIKE) + s
        out.append(s)
    return list(dict.fromkeys(out))  # unique, in order


def sql_holdable(s):
    """A string a SQL statement can hold (no NUL, valid UTF-8)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in s


STRINGS = hostile_strings(400)
SQL_STRINGS = [s for s in STRINGS if sql_holdable(s)]
ASCII_STRINGS = [s for s in SQL_STRINGS if s.isascii()]


# ---------------------------------------------------------------------------
# the engines: a Python subprocess, SQLite, DuckDB
# ---------------------------------------------------------------------------
def plain(v):
    """A cell as JSON / SQL takes it: NaN as None, numpy scalars as Python ones."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return v.item() if hasattr(v, "item") else v


def run_modules(sources, rows, tmp_path):
    """Import each source as a module in one subprocess (cwd ``tmp_path``) and
    call its ``predict`` on ``rows``; also return what each module defines."""
    for i, source in enumerate(sources):
        # written as bytes: the source must be UTF-8 whatever it holds
        (tmp_path / f"exported_{i}.py").write_bytes(source.encode("utf-8"))
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    driver = (
        "import importlib, json, sys\n"
        "sys.path.insert(0, '.')\n"
        "rows = json.load(open('rows.json'))\n"
        "out = []\n"
        f"for i in range({len(sources)}):\n"
        "    m = importlib.import_module(f'exported_{i}')\n"
        "    names = sorted(k for k in vars(m) if not k.startswith('__'))\n"
        "    out.append([names, m.__doc__, [m.predict(r) for r in rows]])\n"
        "print(json.dumps(out))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = subprocess.run([sys.executable, "-I", "-S", "-c", driver], capture_output=True,
                         text=True, env=env, cwd=str(tmp_path), check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    assert not (tmp_path / MARKER).exists(), "importing the exported rules ran code"
    return json.loads(res.stdout)


def check_module_inert(names, function_name="predict"):
    """What the module defines: the function, its helpers, the imports, label tables."""
    helpers = {"_num", "_label", "_xgboost_label", "bisect", "math", function_name}
    extra = [n for n in names if n not in helpers and not n.startswith(("_LABELS_", "_KNOWN_"))]
    assert not extra, f"the module defines {extra}"


def sqlite_table(rows, names, text_columns=()):
    con = sqlite3.connect(":memory:")
    quoted = ['"' + n.replace('"', '""') + '"' for n in names]
    decl = ", ".join(f"{q} {'TEXT' if n in text_columns else 'REAL'}"
                     for q, n in zip(quoted, names))
    con.execute(f"CREATE TABLE data ({decl})")
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * len(names))})",
                    [[r[n] for n in names] for r in rows])
    con.execute("CREATE TABLE canary (x)")
    return con


def run_sqlite(sql, rows, names, text_columns=()):
    """``SELECT <sql> FROM data`` in SQLite, after running it through
    ``executescript`` next to a canary table that must survive."""
    con = sqlite_table(rows, names, text_columns)
    con.executescript(f"SELECT {sql} FROM data;")
    assert con.execute("SELECT name FROM sqlite_master WHERE name = 'canary'").fetchall(), \
        "the SQL dropped the canary table"
    return np.array(con.execute(f"SELECT {sql} FROM data ORDER BY rowid").fetchall(),
                    dtype=np.float64)


def run_duckdb(sql, rows, names, text_columns=()):
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    quoted = ['"' + n.replace('"', '""') + '"' for n in names]
    decl = ", ".join(f"{q} {'VARCHAR' if n in text_columns else 'DOUBLE'}"
                     for q, n in zip(quoted, names))
    con.execute(f"CREATE TABLE data (i INTEGER, {decl})")
    con.executemany(f"INSERT INTO data VALUES (?, {', '.join('?' * len(names))})",
                    [[i] + [r[n] for n in names] for i, r in enumerate(rows)])
    return np.array(con.execute(f"SELECT {sql} FROM data ORDER BY i").fetchall(),
                    dtype=np.float64)


def quiet_fit(model, X, y):
    # one OpenMP thread: the machine's cores are shared
    with warnings.catch_warnings(), threadpool_limits(1, user_api="openmp"):
        warnings.simplefilter("ignore")
        return model.fit(X, y)


# ---------------------------------------------------------------------------
# the escaping functions, on every string
# ---------------------------------------------------------------------------
def test_python_literals_read_back_and_stay_on_one_line():
    for s in STRINGS:
        lit = python_literal(s)
        assert ast.literal_eval(lit) == s and type(ast.literal_eval(lit)) is str
        assert lit.isprintable(), repr(lit)
        lit.encode("utf-8")
    # numpy scalars as Python ones; non-finite floats without an import
    no_builtins = {"__builtins__": {"float": float}}
    for v in [0, -3, 2.5, True, None, np.int64(4), np.float32(0.5), np.str_("a'b"), math.inf,
              -math.inf]:
        back = eval(python_literal(v), no_builtins)
        assert back == v and type(back) is type(v.item() if hasattr(v, "item") else v)
    assert math.isnan(eval(python_literal(float("nan")), no_builtins))
    for bad in [object(), (1, 2), b"bytes", [1], {"a": 1}]:
        with pytest.raises(ValueError, match="str, int, float, bool or None"):
            python_literal(bad)


def test_docstring_text_cannot_close_the_docstring(tmp_path):
    # every string in one module's docstring, and in a second docstring
    # after code: the module must define X and nothing else
    text = " | ".join(STRINGS)
    doc = python_docstring(text)
    source = f'"""{doc}"""\nX = 1\ndef f():\n    """{doc}"""\n'
    ns = {}
    exec(compile(source.encode("utf-8"), "<docstring>", "exec"), ns)
    assert sorted(k for k in ns if not k.startswith("__")) == ["X", "f"]
    assert ns["__doc__"] == display_text(text) == ns["f"].__doc__
    assert "\n" not in ns["__doc__"] and ns["__doc__"].isprintable()
    for s in STRINGS:  # one string at a time: its end meets the closing quotes
        ns = {}
        exec(f'"""{python_docstring(s)}"""', ns)
        assert ns["__doc__"] == display_text(s)


def test_display_text_is_one_printable_line():
    for s in STRINGS:
        for shown in (display_text(s), display_value(s)):
            assert shown.isprintable() and "\n" not in shown, repr(shown)
            shown.encode("utf-8")
    assert display_text("body mass") == "body mass"
    assert display_text("a\nb\u202e\x00") == "a\\nb\\u202e\\x00"
    assert display_value(np.int64(3)) == "3" and display_value("x") == "'x'"


def test_sql_literals_and_identifiers_read_back_in_sqlite_and_duckdb():
    duckdb = pytest.importorskip("duckdb")
    con, dcon = sqlite3.connect(":memory:"), duckdb.connect()
    for s in SQL_STRINGS:
        assert con.execute(f"SELECT {sql_string(s)}").fetchone()[0] == s
        assert dcon.execute(f"SELECT {sql_string(s)}").fetchone()[0] == s
    # SQLite's and DuckDB's names are case-insensitive: one of each case-folded name
    names = list({s.casefold(): s for s in SQL_STRINGS if s}.values())
    decl = ", ".join(sql_identifier(n) for n in names)
    con.execute(f"CREATE TABLE t ({decl})")
    assert [d[0] for d in con.execute("SELECT * FROM t").description] == names
    dcon.execute(f"CREATE TABLE t ({', '.join(sql_identifier(n) + ' INTEGER' for n in names)})")
    assert [d[0] for d in dcon.execute("SELECT * FROM t").description] == names
    for bad in [s for s in STRINGS if not sql_holdable(s)]:
        with pytest.raises(ValueError, match="NUL|surrogate"):
            sql_string(bad)
        with pytest.raises(ValueError, match="NUL|surrogate"):
            sql_identifier(bad)
    with pytest.raises(ValueError, match="empty"):
        sql_identifier("")
    for bad in [True, object(), math.inf]:
        with pytest.raises(ValueError):
            sql_string(bad)


def test_sql_comments_end_where_they_should():
    # each comment is followed by a statement that must run: n rows, canary kept
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE canary (x)")
    script = "".join(f"{sql_comment(s)} INSERT INTO canary VALUES ({i});\n"
                     for i, s in enumerate(STRINGS))
    con.executescript(script)
    assert con.execute("SELECT COUNT(*) FROM canary").fetchone()[0] == len(STRINGS)
    script.encode("utf-8")
    # DuckDB rewrites Unicode spaces outside what it takes for quotes, comments
    # included: a comment must leave the literals after it alone
    duckdb = pytest.importorskip("duckdb")
    dcon = duckdb.connect()
    spaces = "\ufeff\u3000x\u00a0\u2028"
    for s in STRINGS:
        got = dcon.execute(f"{sql_comment(s)} SELECT {sql_string(spaces)}").fetchone()[0]
        assert got == spaces, repr(s)


def test_json_text_reads_back_every_string():
    doc = {"strings": STRINGS, **{f"k{i}": s for i, s in enumerate(STRINGS[:50])}}
    text = json_text(doc)
    assert text.isascii()
    assert json.loads(text) == doc


# ---------------------------------------------------------------------------
# categorical labels and feature names through the fitted models' exports
# ---------------------------------------------------------------------------
def categorical_frame(pools, n=2500, seed=0):
    """Categorical features whose categories are the pools' strings, one numeric
    feature; y gives each category its own effect, so that many are split on."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"num": rng.normal(size=n)})
    y = X["num"].to_numpy().copy()
    for k, pool in enumerate(pools):
        codes = rng.integers(0, len(pool), n)
        values = np.array(pool, dtype=object)[codes]
        values[rng.random(n) < 0.03] = None
        # from codes, with object categories: with pyarrow installed, pandas >= 3
        # infers Arrow strings from strings, which cannot hold lone surrogates
        X[f"c{k}"] = pd.Categorical.from_codes(
            np.where(pd.isna(values), -1, codes), categories=pd.Index(pool, dtype=object))
        y += np.where(codes % 2 == 0, 1.0, -1.0) * (1 + codes % 5) * np.where(
            pd.isna(values), 0.0, 1.0)
    return X, y + 0.05 * rng.normal(size=n)


def model_for(kind):
    if kind == "hist":
        return HistGradientBoostingRegressor(max_iter=25, max_depth=4, random_state=0,
                                             categorical_features="from_dtype")
    if kind == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        return lgb.LGBMRegressor(n_estimators=25, num_leaves=12, min_child_samples=5,
                                 min_data_per_group=5, cat_smooth=1.0, max_cat_threshold=64,
                                 n_jobs=1, verbose=-1, random_state=0)
    xgb = pytest.importorskip("xgboost")
    return xgb.XGBRegressor(n_estimators=25, max_depth=4, enable_categorical=True,
                            max_cat_to_onehot=1, n_jobs=1, random_state=0)


def export_rows(X, names):
    return [{name: plain(v) for name, v in zip(names, row)}
            for row in X.itertuples(index=False, name=None)]


def check_every_export(est, X, names, tmp_path, expected, sql_ok):
    """rules_python / rules_sql / rules_json / rules_report of ``est`` with the
    features renamed ``names`` (hostile too), against ``expected``; ``sql_ok``:
    every string is one SQL can hold, so the SQL must run (else it may refuse)."""
    rows = export_rows(X, names)
    source = rules_python(est, feature_names=names)
    (names_defined, _, got), = run_modules([source], rows, tmp_path)
    check_module_inert(names_defined)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)

    text_columns = {n for n, c in zip(names, X.columns) if str(X[c].dtype) == "category"}
    try:
        sql = rules_sql(est, feature_names=names, table="data", alias="prediction")
    except ValueError as exc:
        # a name or label SQL cannot hold: said, never written
        assert re.search("NUL|surrogate", str(exc)), exc
        assert not sql_ok, "a holdable model could not be written in SQL"
    else:
        sql.encode("utf-8")
        if all(sql_holdable(v) for r in rows for v in r.values() if isinstance(v, str)):
            np.testing.assert_allclose(run_sqlite(sql, rows, names, text_columns)[:, 0],
                                       expected, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(run_duckdb(sql, rows, names, text_columns)[:, 0],
                                       expected, rtol=1e-9, atol=1e-9)
        else:
            assert not sql_ok

    doc = json.loads(json_text(rules_json(est, feature_names=names, X=X)))
    assert doc["feature_names"] == names
    kept = np.flatnonzero(est.coef_)
    for rule in doc["rules"]:
        for cond in rule["conditions"]:
            assert cond["feature"] == names[cond["feature_index"]]
            if "categories" in cond:
                pool = set(X.iloc[:, cond["feature_index"]].cat.categories)
                assert cond["categories"] and set(cond["categories"]) <= pool
    assert {r["column"] for r in doc["rules"]} == set(kept.tolist())

    report = rules_report(est, feature_names=names, X=X)
    lines = report.split("\n")
    # intercept, "prediction = ...", one line per rule, the counts
    assert len(lines) == 3 + len(kept), report
    assert all(line.isprintable() for line in lines)
    assert all(line.lstrip().startswith(f"{i}. if ") for i, line in enumerate(lines[2:-1], 1))
    report.encode("utf-8")
    return source


@pytest.mark.parametrize("kind, pool", [
    ("hist", "any"), ("hist", "sql"), ("lightgbm", "any"), ("lightgbm", "sql"),
    # XGBoost itself refuses a category holding NUL (an assertion when it
    # fits), so its widest pool is the SQL-safe one: non-ASCII included
    ("xgboost", "ascii"), ("xgboost", "sql"),
])
def test_hostile_categories_and_feature_names(kind, pool, tmp_path):
    strings = {"any": STRINGS, "sql": SQL_STRINGS, "ascii": ASCII_STRINGS}[pool]
    # three categorical features of 60 labels each, then the feature names
    pools = [strings[k * 60:(k + 1) * 60] for k in range(3)]
    X, y = categorical_frame(pools)
    model = quiet_fit(model_for(kind), X, y)
    with warnings.catch_warnings(), threadpool_limits(1, user_api="openmp"):
        warnings.simplefilter("ignore")
        est = FIRERegressor(model, penalty="l1", n_lambdas=12, max_rules=40,
                            random_state=0, linear_terms=False).fit(X, y)
    names = [s for s in strings[180:] if s][:X.shape[1]]
    source = check_every_export(est, X, names, tmp_path, est.predict(X), pool != "any")
    # the test reached the labels: many hostile ones are written in the code
    written = [v for v in set().union(*pools) if python_literal(v) in source]
    assert len(written) >= 20, len(written)


def test_hostile_column_names_of_a_dataframe(tmp_path):
    # scikit-learn keeps the DataFrame's names (feature_names_in_): the exports read them
    pools = [SQL_STRINGS[:40]]
    X, y = categorical_frame(pools, n=1500, seed=1)
    names = ['x""";__import__("os").system("touch MARKER");"""', "'); DROP TABLE canary; --"]
    X.columns = names
    model = quiet_fit(model_for("hist"), X, y)
    est = quiet_fit(FIRERegressor(model, penalty="l1", n_lambdas=10, max_rules=20,
                                  random_state=0, linear_terms=False), X, y)
    assert list(est.feature_names_in_) == names
    rows = export_rows(X, names)
    (defined, _, got), = run_modules([rules_python(est)], rows, tmp_path)
    check_module_inert(defined)
    np.testing.assert_allclose(got, est.predict(X), rtol=1e-9, atol=1e-9)
    got = run_sqlite(rules_sql(est, table="data"), rows, names, {names[1]})
    np.testing.assert_allclose(got[:, 0], est.predict(X), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------
# class labels
# ---------------------------------------------------------------------------
def classifier_data(n_classes, n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    score = X["a"].to_numpy() + 0.5 * X["b"].to_numpy() ** 2
    codes = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, codes


@pytest.mark.parametrize("n_classes", [2, 4])
def test_hostile_class_labels(n_classes, tmp_path):
    # one fit with the worst labels; then every hostile string as a class
    # label, n_classes at a time, in copies of the fitted model (the labels
    # only name the margins: the predictions must not change)
    X, codes = classifier_data(n_classes)
    first = np.array(CODE_LIKE[:n_classes], dtype=object)
    y = first[codes]
    rf = quiet_fit(RandomForestClassifier(n_estimators=15, max_depth=3, random_state=0), X, y)
    clf = quiet_fit(FIREClassifier(rf, max_rules=10, n_lambdas=10, random_state=0,
                                   linear_terms=False), X, y)
    assert list(clf.classes_) == sorted(first)
    expected = clf.decision_function(X).reshape(len(X), -1)
    models = []
    for k in range(0, len(STRINGS) - n_classes + 1, n_classes):
        m = copy.copy(clf)
        m.classes_ = np.array(STRINGS[k:k + n_classes], dtype=object)
        models.append(m)
    models = [clf] + models
    rows = export_rows(X, list(X.columns))
    results = run_modules([rules_python(m) for m in models], rows, tmp_path)
    for m, (defined, doc, got) in zip(models, results):
        check_module_inert(defined)
        np.testing.assert_allclose(np.reshape(got, expected.shape), expected,
                                   rtol=1e-9, atol=1e-9)
        # the docstring names every class, one line each, escaped
        assert all(display_value(c) in doc for c in m.classes_)
        assert all(line.isprintable() for line in doc.split("\n"))
    con = sqlite_table(rows, list(X.columns))
    for m in models:
        sql = rules_sql(m, table="data")   # labels in the comment only: any label
        con.executescript(f"SELECT {sql} FROM data;")
        got = np.array(con.execute(f"SELECT {sql} FROM data ORDER BY rowid").fetchall())
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
        report = rules_report(m, X=X)
        assert all(line.isprintable() for line in report.split("\n"))
        assert len(report.split("\n")) == (3 + m.n_rules_ if n_classes == 2 else
                                           report.count("intercept:") * 3 + m.n_rules_ + 1)
    assert con.execute("SELECT name FROM sqlite_master WHERE name = 'canary'").fetchall()


# ---------------------------------------------------------------------------
# firecy extract --format json|python|sql
# ---------------------------------------------------------------------------
def test_cli_exports_hostile_labels_and_column_names(tmp_path, monkeypatch, capsys):
    import firecy.cli._extract as extract
    from firecy.cli import main

    # what a CSV can carry (UTF-8 text, no NUL)
    labels = ['x""";__import__("os").system("touch MARKER");"""', "'); DROP TABLE canary; --",
              "*/ \u202eevil\r\nline"]
    names = ["a\"'\\", "b\n--", "c\u2028/*"]
    X, codes = classifier_data(3, n=300, seed=2)
    X.columns = names
    frame = X.copy()
    frame["target"] = np.array(labels, dtype=object)[codes]
    csv = tmp_path / "data.csv"
    frame.to_csv(csv, index=False)
    fitted = []
    original = extract.rules_json

    def keep_model(est, *args, **kwargs):
        fitted.append(est)
        return original(est, *args, **kwargs)

    monkeypatch.setattr(extract, "rules_json", keep_model)
    run = tmp_path / "run"
    run.mkdir()
    out = {}
    for fmt in ("json", "python", "sql"):
        out[fmt] = tmp_path / f"rules_{fmt}"
        args = ["extract", str(csv), "--target", "target", "--format", fmt, "--output",
                str(out[fmt]), "--n-trees", "10", "--n-lambdas", "8", "--cv", "2",
                "--max-rules", "8", "--n-jobs", "1", "--no-progress", "--seed", "0"]
        assert main(args + (["--sql-table", "data"] if fmt == "sql" else [])) == 0
        printed = capsys.readouterr()
        assert all(line.isprintable() for line in printed.out.split("\n")), printed.out
    est = fitted[-1]
    assert sorted(est.classes_) == sorted(labels)
    expected = est.decision_function(X.to_numpy()).reshape(len(X), -1)
    rows = export_rows(X, names)
    source = out["python"].read_bytes().decode("utf-8")
    (defined, _, got), = run_modules([source], rows, run)
    check_module_inert(defined)
    np.testing.assert_allclose(np.reshape(got, expected.shape), expected, rtol=1e-9, atol=1e-9)
    sql = out["sql"].read_bytes().decode("utf-8")
    got = run_sqlite(sql, rows, names)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    doc = json.loads(out["json"].read_text())
    assert doc["feature_names"] == names
    assert {r["class"] for r in doc["rules"]} <= set(labels)


def test_cli_says_in_one_line_what_sql_cannot_hold(tmp_path, capsys):
    # a column name with a NUL (a CSV can carry it): the SQL is refused with
    # the usual one-line error; the Python export is written, and inert
    from firecy.cli import main

    rng = np.random.default_rng(3)
    x = rng.normal(size=60)
    lines = ['"a\x00b\');open(\'MARKER\',\'w\');#",y']
    lines += [f"{v!r},{2.0 * (v > 0) + 0.1 * w!r}"
              for v, w in zip(x.tolist(), rng.normal(size=60).tolist())]
    csv = tmp_path / "nul.csv"
    csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    common = ["--target", "y", "--n-trees", "5", "--n-lambdas", "5", "--cv", "2",
              "--n-jobs", "1", "--no-progress", "--seed", "0"]
    out = tmp_path / "rules.sql"
    assert main(["extract", str(csv), "--format", "sql", "--output", str(out), *common]) == 1
    err = capsys.readouterr().err
    assert err.startswith("firecy: error: cannot write the rules as sql: ")
    assert "NUL" in err and err.count("\n") == 1 and err[:-1].isprintable(), err
    assert not out.exists()
    out = tmp_path / "rules.py"
    assert main(["extract", str(csv), "--format", "python", "--output", str(out), *common]) == 0
    capsys.readouterr()
    run = tmp_path / "run"
    run.mkdir()
    name = "a\x00b');open('MARKER','w');#"
    (defined, _, got), = run_modules([out.read_text(encoding="utf-8")],
                                     [{name: v} for v in x.tolist()], run)
    check_module_inert(defined)
    assert len(set(got)) > 1   # the rules read the column


# ---------------------------------------------------------------------------
# a column the table lacks
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_feature_model():
    from sklearn.tree import DecisionTreeRegressor

    X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=2).fit(X, y), lam=0.5,
                         fusion=0.0, linear_terms=False).fit(X, y)
    return fire, X


def test_missing_column_is_an_error_in_sqlite(two_feature_model):
    fire, X = two_feature_model
    sql = rules_sql(fire, feature_names=["age", "dose"])   # table="data" by default
    assert sql == rules_sql(fire, feature_names=["age", "dose"], table="data")
    con = sqlite3.connect(":memory:")
    con.execute('CREATE TABLE data ("age" REAL, "dosage" REAL)')   # misspelled
    con.executemany("INSERT INTO data VALUES (?, ?)", X.tolist())
    with pytest.raises(sqlite3.OperationalError, match="no such column"):
        con.execute(f"SELECT {sql} FROM data")
    # why: unqualified, SQLite reads "dose" as the string 'dose', and answers
    unqualified = rules_sql(fire, feature_names=["age", "dose"], table=None)
    wrong = np.array(con.execute(f"SELECT {unqualified} FROM data").fetchall())[:, 0]
    assert not np.allclose(wrong, fire.predict(X))
    con.execute('ALTER TABLE data RENAME COLUMN "dosage" TO "dose"')
    got = np.array(con.execute(f"SELECT {sql} FROM data").fetchall())[:, 0]
    np.testing.assert_allclose(got, fire.predict(X))


def test_missing_column_is_an_error_in_duckdb(two_feature_model):
    duckdb = pytest.importorskip("duckdb")
    fire, X = two_feature_model
    con = duckdb.connect()
    con.execute('CREATE TABLE data ("age" DOUBLE, "dosage" DOUBLE)')
    con.executemany("INSERT INTO data VALUES (?, ?)", X.tolist())
    for table in ("data", None):
        sql = rules_sql(fire, feature_names=["age", "dose"], table=table)
        with pytest.raises(duckdb.Error, match="dose"):
            con.execute(f"SELECT {sql} FROM data")
    con.execute('ALTER TABLE data RENAME COLUMN "dosage" TO "dose"')
    sql = rules_sql(fire, feature_names=["age", "dose"], table="data")
    # DuckDB reads decimal literals as DECIMAL: its sum is a Decimal
    got = np.array(con.execute(f"SELECT {sql} FROM data").fetchall(), dtype=float)[:, 0]
    np.testing.assert_allclose(got, fire.predict(X))


@pytest.fixture(scope="module")
def postgres():
    """A throw-away PostgreSQL server on a Unix socket, in the C locale (binary
    string order, as the other engines); skipped without the binaries or
    psycopg, or when it cannot start."""
    psycopg = pytest.importorskip("psycopg")
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if not (initdb and pg_ctl):
        pytest.skip("PostgreSQL's initdb / pg_ctl are not on the PATH")
    prefix = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run it as postgres
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a postgres user")
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser")
        prefix = [shutil.which("runuser"), "-u", "postgres", "--"]
    # under /tmp itself: pytest's own temporary directories are closed to other users
    root = Path(tempfile.mkdtemp(prefix="firecy-pg-"))
    if prefix:
        shutil.chown(root, "postgres")
    data = root / "data"
    env = {**os.environ, "LC_ALL": "C"}

    def pg(*args):
        return subprocess.run(prefix + list(args), check=True, capture_output=True, env=env,
                              timeout=120)

    try:
        try:
            pg(initdb, "-D", str(data), "-A", "trust", "-U", "firecy", "-E", "UTF8",
               "--locale=C", "--no-sync")
            pg(pg_ctl, "-D", str(data), "-w", "-l", str(root / "log"), "-o",
               f"-k {root} -h '' -F", "start")
            con = psycopg.connect(host=str(root), user="firecy", dbname="postgres",
                                  autocommit=True)
        except (subprocess.SubprocessError, OSError, psycopg.Error) as exc:
            pytest.skip(f"cannot start PostgreSQL: {exc}")
        with con:
            yield con
    finally:
        if data.exists():
            subprocess.run(prefix + [pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                           capture_output=True, env=env, timeout=120, check=False)
        shutil.rmtree(root, ignore_errors=True)


def test_missing_column_is_an_error_in_postgresql(two_feature_model, postgres):
    import psycopg

    fire, X = two_feature_model
    con = postgres
    con.execute('DROP TABLE IF EXISTS data; '
                'CREATE TABLE data ("age" DOUBLE PRECISION, "dosage" DOUBLE PRECISION)')
    with con.cursor() as cur:
        cur.executemany("INSERT INTO data VALUES (%s, %s)", X.tolist())
    sql = rules_sql(fire, feature_names=["age", "dose"], table="data")
    for expr in (sql, rules_sql(fire, feature_names=["age", "dose"])):
        with pytest.raises(psycopg.errors.UndefinedColumn):
            con.execute(f"SELECT {expr} FROM data")
    con.execute('ALTER TABLE data RENAME COLUMN "dosage" TO "dose"')
    got = np.array(con.execute(f"SELECT {sql} FROM data").fetchall(), dtype=float)[:, 0]
    np.testing.assert_allclose(got, fire.predict(X))


def test_postgresql_reads_hostile_labels(postgres):
    # PostgreSQL nests /* */ comments and has its own string rules: every
    # holdable string, as a literal, an identifier and inside a comment
    con = postgres
    for s in SQL_STRINGS:
        got = con.execute(f"{sql_comment(s)} SELECT CAST({sql_string(s)} AS text)").fetchone()
        assert got[0] == s
    names = list({s: s for s in SQL_STRINGS if s and len(s.encode()) < 64}.values())
    con.execute(f"CREATE TABLE names ({', '.join(sql_identifier(n) + ' int' for n in names)})")
    cur = con.execute("SELECT * FROM names")
    assert [d.name for d in cur.description] == names


def test_postgresql_runs_the_rules_of_hostile_categories(postgres):
    import psycopg

    pools = [SQL_STRINGS[k * 50:(k + 1) * 50] for k in range(2)]
    X, y = categorical_frame(pools, n=1500, seed=4)
    model = quiet_fit(model_for("hist"), X, y)
    est = quiet_fit(FIRERegressor(model, penalty="l1", n_lambdas=10, max_rules=30,
                                  random_state=0, linear_terms=False), X, y)
    names = [s for s in SQL_STRINGS[100:] if s and len(s.encode()) < 64][:X.shape[1]]
    rows = export_rows(X, names)
    con = postgres
    types = ["text" if str(X[c].dtype) == "category" else "double precision" for c in X.columns]
    con.execute("DROP TABLE IF EXISTS data; CREATE TABLE data (i int, "
                + ", ".join(f"{sql_identifier(n)} {t}" for n, t in zip(names, types)) + ")")
    with con.cursor() as cur:
        cur.executemany(f"INSERT INTO data VALUES (%s{', %s' * len(names)})",
                        [[i] + [r[n] for n in names] for i, r in enumerate(rows)])
    sql = rules_sql(est, feature_names=names, table="data", alias="prediction")
    got = np.array(con.execute(f"SELECT {sql} FROM data ORDER BY i").fetchall(), dtype=float)
    np.testing.assert_allclose(got[:, 0], est.predict(X), rtol=1e-9, atol=1e-9)
    with pytest.raises(psycopg.errors.UndefinedColumn):
        con.execute(f"SELECT {sql} FROM (SELECT i FROM data) AS data")
