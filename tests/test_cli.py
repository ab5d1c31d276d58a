"""The command line: ``firecy demo``, ``firecy extract`` and its error messages."""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from firecy.cli import main
from firecy.rules import parse_rule

import firecy

# Where the firecy under test lives (the installed package in CI, the source
# tree in a development build): the subprocesses import that one.
FIRECY_HOME = str(Path(firecy.__file__).resolve().parents[1])
# small settings: the paper's 500 trees are the default, tests use fewer
SMALL = ["--n-trees", "60", "--n-lambdas", "20", "--n-jobs", "1", "--no-progress",
         "--no-linear-terms"]


def _env():
    env = dict(os.environ)
    paths = [FIRECY_HOME] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["MPLBACKEND"] = "Agg"
    return env


def run(args, cwd, timeout=120):
    env = _env()
    return subprocess.run([sys.executable, "-m", "firecy", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_demo_end_to_end(tmp_path):
    out = tmp_path / "pictures"
    t0 = time.perf_counter()
    proc = run(["demo", "--output-dir", str(out), "--seed", "1", "--repeats", "1", *SMALL],
               cwd=tmp_path)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    text = proc.stdout
    lines = text.splitlines()
    rule_lines = [ln for ln in lines if " if " in ln and " then " in ln]
    assert 1 <= len(rule_lines) <= 14
    names = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]
    for ln in rule_lines:
        cond = ln.split(" if ", 1)[1].split(" then ", 1)[0]
        assert parse_rule(cond, names)  # the printed conditions are readable back
    assert any(ln.startswith("intercept: ") for ln in lines)
    assert "distinct antecedents" in text
    for label in ("FIRE MCP", "L1 selection, same budget", "full random forest"):
        assert label in text
    assert "test MSE" in text
    # the test error is cross-validated, never one split's
    assert "Test error by 5-fold cross-validation (5 fits" in text
    assert any(ln.startswith(("FIRE is ahead of L1", "FIRE is not ahead of L1",
                              "FIRE is behind L1")) for ln in lines)
    assert "The budget curve" in text
    for name in ("rules.png", "path.png", "budget.png"):
        png = out / name
        assert png.exists() and png.stat().st_size > 5000
        assert f"saved {png}" in text
    # "done in" is the whole command's time, its imports included (the
    # interpreter's exit after the last line is all it leaves out)
    done = float(re.search(r"^done in ([0-9.]+) s$", text, re.M).group(1))
    assert 0.75 * wall <= done <= wall + 0.05, (done, wall)


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 240
    X = rng.normal(size=(n, 4))
    y = 3 * (X[:, 0] > 0.2) + 2 * (X[:, 1] < -0.5) * (X[:, 2] > 0) + 0.2 * rng.normal(size=n)
    path = tmp_path / "data.csv"
    with open(path, "w") as fh:
        fh.write("id,height cm,weight,flag,noise,price\n")
        for i in range(n):
            a, b, c, t = (float(v) for v in (X[i, 0], X[i, 1], X[i, 3], y[i]))
            fh.write(f"row{i},{a!r},{b!r},{int(X[i, 2] > 0)},{c!r},{t!r}\n")
    return path


def test_extract_writes_json(tmp_path, csv_file, capsys):
    out = tmp_path / "rules.json"
    # exact thresholds: then the printed text is the JSON's
    code = main(["extract", str(csv_file), "--target", "price", "--drop", "id",
                 "--max-rules", "6", "--output", str(out), "--seed", "0",
                 "--exact-thresholds", *SMALL])
    assert code == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["feature_names"] == ["height cm", "weight", "flag", "noise"]
    assert doc["target"] == "price" and doc["model"] == "rf" and doc["max_rules"] == 6
    assert 1 <= doc["n_rules"] == len(doc["rules"]) <= 6
    assert isinstance(doc["intercept"], float)
    contributions = [abs(r["contribution"]) for r in doc["rules"]]
    assert contributions == sorted(contributions, reverse=True)
    for r in doc["rules"]:
        assert r["contribution"] == pytest.approx(r["weight"] * r["leaf_value"])
        parsed = parse_rule(r["rule"], doc["feature_names"])
        # the structured conditions say the same as the text
        assert [(p.feature, p.op) for p in parsed] == [
            (c["feature_index"], c["op"]) for c in r["conditions"]]
        for c in r["conditions"]:
            assert doc["feature_names"][c["feature_index"]] == c["feature"]
        assert r["rule"] in printed
        assert 0 < r["support"] <= 1
    assert f"saved {out}" in printed


@pytest.mark.parametrize("model", ["xgboost", "lightgbm"])
def test_extract_other_models(tmp_path, csv_file, model, capsys):
    pytest.importorskip(model)
    out = tmp_path / "rules.json"
    # "leaf" pinned: under the default ("auto" = "unit" for boosters) the L1 +
    # fusion path of this 20-tree LightGBM at a 4-rule budget selects the empty
    # model on these 240 rows (session 33 report; the test checks the reading)
    code = main(["extract", str(csv_file), "--target", "price", "--drop", "id", "--model",
                 model, "--penalty", "l1", "--max-rules", "4", "--n-trees", "20",
                 "--n-lambdas", "15", "--n-jobs", "1", "--no-progress", "--output", str(out),
                 "--rule-values", "leaf"])
    assert code == 0
    doc = json.loads(out.read_text())
    assert doc["source"] == model and 1 <= doc["n_rules"] <= 4
    op = "<" if model == "xgboost" else "<="
    assert any(c["op"] in (op, ">=" if model == "xgboost" else ">")
               for r in doc["rules"] for c in r["conditions"])


def _bad_csv(tmp_path, kind):
    p = tmp_path / f"{kind}.csv"
    rows = ["a,b,y"] + [f"{i},{i % 3},{i * 0.5}" for i in range(30)]
    if kind == "text":
        # 40 labels: more than a category column holds (firecy.cli._text_columns.MAX_LABELS)
        rows = ["a,city,y"] + [f"{i},town{i % 40},{i}" for i in range(80)]
    elif kind == "typo":
        # a numeric column with one bad cell is not a category
        rows = ["a,b,y"] + [f"{i},{'?' if i == 7 else i % 3},{i * 0.5}" for i in range(30)]
    elif kind == "nan_y":
        rows[5] = "4,1,"
    elif kind == "tiny":
        rows = rows[:4]
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("case, args_fn, status, needle", [
    ("unknown penalty", lambda p: ["extract", p("ok"), "--target", "y", "--penalty", "lasso2"],
     2, "invalid choice"),
    ("missing target", lambda p: ["extract", p("ok"), "--target", "price"], 1,
     "target column 'price' is not in"),
    ("text column of too many labels", lambda p: ["extract", p("text"), "--target", "y"], 1,
     "column 'city' is text with 40 distinct labels; a text column is read as a category "
     "of at most 32 labels: encode it as numbers or leave it out with --drop city"),
    ("bad cell in a numeric column", lambda p: ["extract", p("typo"), "--target", "y"], 1,
     "column 'b' is not numeric (e.g. '?'); fix those cells"),
    ("NaN in y", lambda p: ["extract", p("nan_y"), "--target", "y"], 1,
     "1 missing value"),
    ("budget below 1", lambda p: ["extract", p("ok"), "--target", "y", "--max-rules", "0"], 2,
     "--max-rules must be at least 1"),
    ("budget below 1 (demo)", lambda p: ["demo", "--max-rules", "-3"], 2,
     "--max-rules must be at least 1"),
    ("missing file", lambda p: ["extract", "no/such/file.csv", "--target", "y"], 1,
     "no such file"),
    ("no target option", lambda p: ["extract", p("ok")], 2, "--target"),
    ("bad gamma", lambda p: ["extract", p("ok"), "--target", "y", "--gamma", "0.5"], 2,
     "gamma must be a number greater than 1"),
    ("unknown command", lambda p: ["explode"], 2, "invalid choice"),
    ("output dir is a file", lambda p: ["demo", "--output-dir", p("ok")], 1,
     "cannot create the output directory"),
    ("too few rows", lambda p: ["extract", p("tiny"), "--target", "y"], 1,
     "at least 10 are needed"),
])
def test_bad_input_gives_one_clear_line(tmp_path, capsys, case, args_fn, status, needle):
    args = args_fn(lambda kind: str(_bad_csv(tmp_path, kind)))
    try:
        code = main(args + ["--no-progress"] if args[0] != "explode" else args)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    captured = capsys.readouterr()
    assert code == status, (case, captured.err)
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("firecy: error: ") and needle in err, err
    assert "Traceback" not in captured.err


def test_bad_input_from_the_shell(tmp_path):
    proc = run(["extract", "missing.csv", "--target", "y"], cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "firecy: error: no such file: missing.csv"
    assert proc.stdout == ""


def test_help_and_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("firecy ")
    with pytest.raises(SystemExit) as exc:
        main(["extract", "--help"])
    assert exc.value.code == 0
    assert "--max-rules" in capsys.readouterr().out


class _ReportingEstimator:
    """Stands in for an estimator whose ``fit`` reports path progress."""

    def fit(self, X, y, progress=None):
        from types import SimpleNamespace

        for k in range(4):
            progress(k, 4, SimpleNamespace(n_rules=2 * k))
        return self


@pytest.mark.parametrize("with_tqdm", [True, False])
def test_progress_is_reported(capsys, monkeypatch, with_tqdm):
    from firecy import cli

    from firecy.cli import _progress

    monkeypatch.setattr(_progress, "_isatty", lambda stream: True)  # as on a terminal
    if with_tqdm:
        pytest.importorskip("tqdm")
    else:
        monkeypatch.setitem(sys.modules, "tqdm.auto", None)
        monkeypatch.setattr(cli.time, "perf_counter", iter(range(0, 100, 1)).__next__)
    cli._fit_fire(_ReportingEstimator(), None, None, "FIRE path, test", True)
    err = capsys.readouterr().err
    assert "FIRE path, test" in err and "6 rules" in err
    if not with_tqdm:
        assert "4 points" in err


class _StagedEstimator:
    """Reports a full path (rule counts growing) then validation folds."""

    def fit(self, X, y, progress=None):
        from types import SimpleNamespace

        from firecy.estimators._selection import _stage

        full, folds = _stage(progress, "full path"), _stage(progress, "validation")
        for k in range(5):
            full(k, 5, SimpleNamespace(n_rules=3 * k))
        for k in range(7):
            folds(k, 7, SimpleNamespace(n_rules=0))
        return self


def test_progress_redirected_is_one_line_per_stage_without_carriage_returns(capsys):
    # stderr is not a terminal under capsys: no \r, and the folds' counts and
    # rule numbers do not run on from the full path's
    from firecy import cli

    cli._fit_fire(_StagedEstimator(), None, None, "FIRE", True)
    err = capsys.readouterr().err
    assert "\r" not in err
    # the range of rule counts the points span, not the last point's count
    # (a reader took it for the result)
    assert err.splitlines() == ["FIRE (full path): 5 points, 0 to 12 rules along the path",
                                "FIRE (validation): 7 points, 0 rules along the path"]


def test_progress_on_a_terminal_keeps_stages_apart(capsys, monkeypatch):
    from firecy import cli
    from firecy.cli import _progress

    monkeypatch.setattr(_progress, "_isatty", lambda stream: True)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    monkeypatch.setattr(cli.time, "perf_counter", iter(range(0, 100, 1)).__next__)
    cli._fit_fire(_StagedEstimator(), None, None, "FIRE", True)
    lines = capsys.readouterr().err.split("\n")
    full = [seg for seg in lines[0].split("\r") if seg.strip()]
    folds = [seg for seg in lines[1].split("\r") if seg.strip()]
    assert full[-1].strip() == "FIRE (full path): 5 points, 0 to 12 rules along the path"
    assert folds[-1].strip() == "FIRE (validation): 7 points, 0 rules along the path"


def test_demo_without_optional_dependencies(tmp_path):
    """`pip install .` brings neither pandas, matplotlib nor tqdm: the demo still runs."""
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pandas', 'matplotlib', 'tqdm'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from firecy.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = _env()
    proc = subprocess.run(
        [sys.executable, "-c", script, "demo", "--output-dir", str(tmp_path / "out"),
         "--n-trees", "30", "--n-lambdas", "10", "--n-jobs", "1", "--repeats", "1"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert " then " in proc.stdout and "test MSE" in proc.stdout
    assert "pictures skipped: matplotlib is not installed" in proc.stdout
    assert not list((tmp_path / "out").glob("*.png"))


def test_rules_json_reproduces_predictions_with_a_baseline():
    """The JSON intercept includes the ensemble's baseline (XGBoost's
    base_score): intercept + contributions of satisfied rules = predict."""
    xgb = pytest.importorskip("xgboost")
    from sklearn.datasets import load_diabetes

    from firecy import FIRERegressor
    from firecy.cli import rules_json

    X, y = load_diabetes(return_X_y=True)
    model = xgb.XGBRegressor(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    est = FIRERegressor(model, max_rules=8, random_state=0, linear_terms=False).fit(X, y)
    doc = rules_json(est, [f"x{i}" for i in range(X.shape[1])], X=X)
    ens = est.ensemble_
    pred = np.full(len(y), doc["intercept"])
    for rule in doc["rules"]:
        mask = np.ones(len(y), dtype=bool)
        for cond in ens.rules[rule["column"]]:
            mask &= cond.evaluate(X)
        pred += rule["contribution"] * mask
    np.testing.assert_allclose(pred, est.predict(X), rtol=1e-6, atol=1e-6)
    assert abs(doc["intercept"] - y.mean()) < 0.5 * y.std()


@pytest.mark.parametrize("model", ["rf", "lightgbm"])
def test_extract_formats_python_and_sql_agree_with_json(tmp_path, csv_file, model, capsys):
    # The same fit (same seed) written three ways: the Python function and the
    # SQL expression give, on the CSV's rows, the prediction the JSON rules give.
    import sqlite3

    import pandas as pd

    from firecy.rules import evaluate_parsed

    if model == "lightgbm":
        pytest.importorskip("lightgbm")
    common = ["extract", str(csv_file), "--target", "price", "--drop", "id", "--model",
              model, "--max-rules", "6", "--seed", "0", *SMALL]
    paths = {}
    for fmt in ("json", "python", "sql"):
        paths[fmt] = tmp_path / f"out_{fmt}"
        assert main(common + ["--format", fmt, "--output", str(paths[fmt])]) == 0
    capsys.readouterr()
    doc = json.loads(paths["json"].read_text())
    data = pd.read_csv(csv_file).drop(columns=["id", "price"])
    names = doc["feature_names"]
    X = data[names].to_numpy(dtype=float)
    reading = {"dtype": "float32" if model == "rf" else "float64",
               "zero_threshold": 0.0 if model == "rf" else 1.0000000180025095e-35}
    expected = np.full(len(X), doc["intercept"])
    for r in doc["rules"]:
        expected += r["contribution"] * evaluate_parsed(parse_rule(r["rule"], names), X,
                                                         **reading)
    ns = {}
    exec(paths["python"].read_text(), ns)
    got = np.array([ns["predict"](dict(zip(names, row))) for row in X.tolist()])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE data (" + ", ".join(f'"{n}"' for n in names) + ")")
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * len(names))})", X.tolist())
    sql = paths["sql"].read_text()
    assert sql.rstrip().endswith('AS "prediction"')
    got = np.array([r[0] for r in con.execute(f"SELECT {sql} FROM data ORDER BY rowid")])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_extract_default_output_follows_format(tmp_path, csv_file, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["extract", str(csv_file), "--target", "price", "--drop", "id",
                 "--format", "sql", "--max-rules", "3", *SMALL]) == 0
    assert (tmp_path / "rules.sql").exists() and not (tmp_path / "rules.json").exists()
    assert "saved rules.sql" in capsys.readouterr().out


# ------------------------------------------- data errors, warnings, rounding ---

def test_csv_with_header_and_no_rows(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("a,b,y\n")
    assert main(["extract", str(path), "--target", "y", *SMALL]) == 1
    assert "has a header row but no data rows" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["inf", "-inf"])
def test_csv_with_infinite_feature_names_the_column(tmp_path, capsys, value):
    rng = np.random.RandomState(0)
    rows = ["size of house,b,y"] + [f"{rng.rand():.3f},{rng.rand():.3f},{rng.rand():.3f}"
                                    for _ in range(30)]
    rows[7] = f"{value},0.5,0.5"
    path = tmp_path / "inf.csv"
    path.write_text("\n".join(rows) + "\n")
    assert main(["extract", str(path), "--target", "y", "--model", "xgboost", *SMALL]) == 1
    err = capsys.readouterr().err
    assert "column 'size of house' contains infinite values (CSV line(s) 8)" in err


def test_convergence_warning_speaks_the_commands_language(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["demo", "--output-dir", str(out), "--max-iter", "1", "--tol", "1e-9",
                 "--repeats", "1", *SMALL]) == 0
    err = capsys.readouterr().err
    warn = [ln for ln in err.splitlines() if "warning" in ln]
    assert warn and all(ln.startswith("firecy: warning: ") for ln in warn)
    assert "raise --max-iter, or --tol" in err and "max_iter" not in err
    assert ".py" not in err
    assert len(warn) == len(set(warn))


def _lightgbm_fit(kind="lightgbm"):
    from firecy import FIRERegressor

    rng = np.random.RandomState(0)
    # one-decimal values: LightGBM's thresholds are float64 midpoints such as
    # 27.600000000000005
    X = np.round(rng.uniform(20, 40, size=(300, 3)), 1)
    y = (X[:, 0] > 27.6) * 3.0 + np.sin(X[:, 1]) + 0.1 * rng.randn(300)
    if kind == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMRegressor(n_estimators=40, num_leaves=8, max_depth=3, verbose=-1,
                                  random_state=0)
    elif kind == "xgboost":   # float32 comparisons, x < t
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBRegressor(n_estimators=40, max_depth=3, random_state=0)
    else:                     # scikit-learn: float32 input, x <= t
        from sklearn.ensemble import RandomForestRegressor

        model = RandomForestRegressor(n_estimators=40, max_depth=3, random_state=0)
    fire = FIRERegressor(model, max_rules=10, cv=3, n_lambdas=20, random_state=0,
                         linear_terms=False).fit(X, y)
    return X, fire


def _printed_rules(shown, fire):
    from firecy.rules import rules_table

    return rules_table(shown, fire.coef_, as_frame=False)


@pytest.mark.parametrize("kind", ["lightgbm", "xgboost", "rf"])
def test_short_thresholds_select_the_same_rows(kind):
    from firecy.cli._rounding import display_ensemble
    from firecy.rules import evaluate_parsed

    X, fire = _lightgbm_fit(kind)
    ens = fire.ensemble_
    shown, n_short = display_ensemble(ens, fire.coef_, X)
    rows = _printed_rules(shown, fire)
    exact = _printed_rules(display_ensemble(ens, fire.coef_, X, exact=True)[0], fire)
    if kind == "lightgbm":
        assert n_short > 0 and "27.6 " in " ".join(r["rule"] + " " for r in rows)
        assert "27.600000000000005" in " ".join(r["rule"] for r in exact)
        reading = "float64"
    else:
        # a float32 comparison already prints its shortest float32 text; its
        # exact float64 boundary would read longer, so nothing is replaced
        assert n_short == 0 and [r["rule"] for r in rows] == [r["rule"] for r in exact]
        reading = "float32"
    assert [r["column"] for r in rows] == [r["column"] for r in exact]
    # the data, rows exactly on each threshold, and 15-digit values next to it
    probes = [X]
    for r in rows:
        for c in ens.rules[r["column"]]:
            t = float(c.threshold)
            for v in (t, float(f"{t:.15g}"), float(f"{t:.3g}"), np.nextafter(t, 0),
                      float(f"{t:.15g}") + 1e-13, float(f"{t:.15g}") - 1e-13):
                row = X[:1].copy()
                row[0, c.feature] = float(f"{v:.15g}")   # what a CSV can hold
                probes.append(row)
    Xp = np.vstack(probes)
    for r in rows:
        parsed = parse_rule(r["rule"], list(ens.feature_names))
        np.testing.assert_array_equal(evaluate_parsed(parsed, Xp, dtype=reading),
                                      ens.rule_mask(r["column"], Xp), err_msg=r["rule"])


def test_short_threshold_is_refused_when_a_row_would_move():
    # the value 27.600000000000005 itself (not a 15-digit number; the only
    # float64 between 27.6 and it) in the data shown: that condition keeps
    # its exact threshold
    from firecy.cli._rounding import display_ensemble

    X, fire = _lightgbm_fit()
    ens = fire.ensemble_
    cond = next(c for j in np.flatnonzero(fire.coef_) for c in ens.rules[j]
                if float(c.threshold) == 27.600000000000005)
    trap = X[:1].copy()
    trap[0, cond.feature] = 27.600000000000005
    assert float(f"{trap[0, cond.feature]:.15g}") == 27.6 != trap[0, cond.feature]
    shown, _ = display_ensemble(ens, fire.coef_, np.vstack([X, trap]))
    text = " ".join(r["rule"] for r in _printed_rules(shown, fire))
    assert "27.600000000000005" in text and "27.6 " not in text + " "


def test_extract_prints_short_thresholds_and_says_so(tmp_path, capsys):
    pytest.importorskip("lightgbm")
    X, _ = _lightgbm_fit()
    rng = np.random.RandomState(1)
    y = (X[:, 0] > 27.6) * 3.0 + rng.randn(len(X)) * 0.1
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,c,y",
               comments="", fmt="%.15g")
    args = ["extract", str(path), "--target", "y", "--model", "lightgbm", "--output",
            str(tmp_path / "r.json"), *SMALL]
    assert main(args) == 0
    out = capsys.readouterr().out
    rules = [ln for ln in out.splitlines() if " then " in ln]
    assert "printed short" in out and not any("00000000" in ln for ln in rules)
    assert main(args + ["--exact-thresholds"]) == 0
    rules = [ln for ln in capsys.readouterr().out.splitlines() if " then " in ln]
    assert any("00000000" in ln for ln in rules)


def test_extract_rule_values_unit(tmp_path, csv_file, capsys):
    # --rule-values unit: every kept rule's value is 1, its contribution its weight,
    # and the JSON rules still give the prediction of the Python export
    pytest.importorskip("lightgbm")
    out = tmp_path / "rules.json"
    py = tmp_path / "rules.py"
    common = ["extract", str(csv_file), "--target", "price", "--drop", "id", "--model",
              "lightgbm", "--rule-values", "unit", "--max-rules", "6", "--seed", "0", *SMALL]
    assert main(common + ["--output", str(out)]) == 0
    assert main(common + ["--format", "python", "--output", str(py)]) == 0
    capsys.readouterr()
    doc = json.loads(out.read_text())
    assert doc["n_rules"] >= 1
    for r in doc["rules"]:
        assert r["leaf_value"] == 1.0 and r["contribution"] == pytest.approx(r["weight"])
    import pandas as pd

    from firecy.rules import evaluate_parsed

    names = doc["feature_names"]
    X = pd.read_csv(csv_file)[names].to_numpy(dtype=float)
    expected = np.full(len(X), doc["intercept"])
    for r in doc["rules"]:
        expected += r["contribution"] * evaluate_parsed(parse_rule(r["rule"], names), X,
                                                         zero_threshold=1.0000000180025095e-35)
    ns = {}
    exec(py.read_text(), ns)
    got = np.array([ns["predict"](dict(zip(names, row))) for row in X.tolist()])
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
    with pytest.raises(SystemExit):
        main(common[:-len(SMALL)] + ["--rule-values", "indicator"])
    assert "--rule-values" in capsys.readouterr().err


def test_full_model_rules_are_its_leaves_at_any_rule_depth(tmp_path, csv_file):
    # the comparison's "full model" row counts the forest's leaves; the same
    # forest (same seed) once counted the fit's cut or union columns instead
    counts = {}
    for depth in ("leaves", "2", "1,2"):
        out = tmp_path / f"rules_{depth}.json"
        code = main(["extract", str(csv_file), "--target", "price", "--drop", "id",
                     "--max-depth", "4", "--rule-depth", depth, "--output", str(out),
                     "--seed", "0", "--max-rules", "4", "--n-trees", "8", "--n-lambdas", "10",
                     "--n-jobs", "1", "--no-progress"])
        assert code == 0
        doc = json.loads(out.read_text())
        full = doc["comparison"]["full random forest"]
        counts[depth] = (full["n_rules"], full["test_mse"])
    leaves = counts["leaves"][0]
    assert leaves > 8 * 4   # depth-4 trees: more leaves than the depth-2 cut's nodes
    assert set(counts.values()) == {counts["leaves"]}
