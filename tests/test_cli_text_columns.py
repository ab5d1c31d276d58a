"""The command line on CSV files with text columns, rows named by CSV line,
``firecy explain``'s printed terms and ``--stable``'s printout.

Every check compares the printout or the exports with something computed
apart: the estimator's own predictions, the CSV file read line by line, the
linear terms' slopes and centres applied by hand."""
import csv
import json
import re

import numpy as np
import pytest

from firecy.cli import _explain, _extract, main

FAST = ["--n-trees", "30", "--n-lambdas", "12", "--cv", "3", "--n-jobs", "1",
        "--no-progress"]


def _write_insurance(path, n=260, blank_line_at=None):
    """smoker (yes/no), region (3 labels, a few empty cells), age, charges."""
    rng = np.random.default_rng(3)
    smoker = rng.choice(["yes", "no"], n)
    region = rng.choice(["north", "south", "east"], n).astype(object)
    region[[4, 17, 40, 77]] = ""
    age = rng.uniform(20, 60, n).round(1)
    charges = ((smoker == "yes") * 3000 + (region == "south") * 1500 + 20 * age
               + rng.normal(0, 150, n)).round(2)
    lines = ["smoker,region,age,charges"]
    lines += [f"{s},{r},{a},{c}" for s, r, a, c in zip(smoker, region, age, charges)]
    if blank_line_at is not None:
        lines.insert(blank_line_at, "")
    path.write_text("\n".join(lines) + "\n")
    return path


def _file_rows(path):
    """{CSV line number: {column: cell}} read with the csv module (header = line 1)."""
    out = {}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        end = reader.line_num
        for record in reader:
            start, end = end + 1, reader.line_num
            if record:
                out[start] = dict(zip(header, record))
    return out


@pytest.fixture
def keep_job(monkeypatch):
    """The job the command ran (its fitted estimator and data), kept for the test."""
    kept = {}
    fit_job = _extract.fit_job

    def spy(args, X, y):
        kept.update(fit_job(args, X, y), X=X)
        return kept

    monkeypatch.setattr(_extract, "fit_job", spy)
    monkeypatch.setattr(_explain, "fit_job", spy)
    return kept


@pytest.mark.parametrize("model", ["rf", "xgboost", "lightgbm"])
def test_text_columns_end_to_end(tmp_path, capsys, keep_job, model):
    if model != "rf":
        pytest.importorskip(model)
    data = _write_insurance(tmp_path / "insurance.csv")
    out = tmp_path / "rules.py"
    assert main(["extract", str(data), "--target", "charges", "--model", model,
                 "--format", "python", "--output", str(out), *FAST]) == 0
    printed = capsys.readouterr().out
    fire, X = keep_job["fire"], keep_job["X"]
    names = list(X.columns)
    rule_lines = [ln for ln in printed.splitlines() if " if " in ln and " then " in ln]
    if model == "rf":
        # the forest reads indicator columns, named by their labels
        assert names == ["smoker=yes", "region=east", "region=north", "region=south", "age"]
        assert any("smoker=yes" in ln or "region=" in ln for ln in rule_lines), printed
    else:
        # XGBoost and LightGBM read the categories: the rules name the labels
        assert names == ["smoker", "region", "age"]
        assert any(re.search(r"(smoker|region) (not )?in \{'(yes|no|north|south|east)'",
                             ln) for ln in rule_lines), printed
    _check_export(out, fire, X)


def _check_export(path, fire, X):
    """The Python export, applied to the file's rows, is the estimator's prediction."""
    from firecy.cli._text_columns import model_frame

    ns = {}
    exec(path.read_text(encoding="utf-8"), ns)
    rows = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
            for r in X.astype(object).to_dict("records")]
    got = np.array([ns["predict"](r) for r in rows])
    expected = fire.predict(model_frame(X))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("model", ["rf", "xgboost"])
def test_hostile_labels_stay_data(tmp_path, capsys, keep_job, model):
    if model != "rf":
        pytest.importorskip(model)
    rng = np.random.default_rng(5)
    n = 240
    labels = np.array(["north", "so'uth \"}{", "<b>east</b>\nx"], dtype=object)
    zone = labels[rng.integers(0, 3, n)]
    age = rng.uniform(20, 60, n).round(1)
    y = (zone == labels[1]) * 3 + (zone == labels[2]) * 1.5 + age / 20 + rng.normal(0, .2, n)
    data = tmp_path / "hostile.csv"
    with open(data, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["zone", "age", "y"])
        writer.writerows(zip(zone, age, y))
    out, report = tmp_path / "rules.py", tmp_path / "report.html"
    assert main(["extract", str(data), "--target", "y", "--model", model, "--format",
                 "python", "--output", str(out), "--report", str(report), *FAST]) == 0
    capsys.readouterr()
    _check_export(out, keep_job["fire"], keep_job["X"])
    document = report.read_text(encoding="utf-8")
    # the label is text wherever the report shows it
    assert "<b>east" not in document


def test_text_column_cells_and_missing_values_as_read(tmp_path):
    """Indicators (the forest) and categories (the boosters) say what the file says;
    an empty cell stays missing in both."""
    import pandas as pd

    from firecy.cli._csv import read_csv

    data = _write_insurance(tmp_path / "insurance.csv")
    cells = _file_rows(data)
    onehot, _, _ = read_csv(data, "charges", [], "regression")
    native, _, _ = read_csv(data, "charges", [], "regression", native_categories=True)
    assert isinstance(native["region"].dtype, pd.CategoricalDtype)
    assert list(native["region"].cat.categories) == ["east", "north", "south"]
    for line, row in cells.items():
        region = row["region"]
        if region == "":
            assert pd.isna(native.loc[line, "region"])
            assert onehot.loc[line, ["region=east", "region=north", "region=south"]
                              ].isna().all()
        else:
            assert native.loc[line, "region"] == region
            for label in ("east", "north", "south"):
                assert onehot.loc[line, f"region={label}"] == float(region == label)
        assert onehot.loc[line, "smoker=yes"] == float(row["smoker"] == "yes")


def _explained_blocks(printed):
    """{CSV line: (prediction, [(value, text), ...])} of ``firecy explain``'s printout."""
    blocks, line = {}, None
    for text in printed.splitlines():
        m = re.match(r"CSV line (\d+): prediction = (\S+)$", text)
        if m:
            line = int(m.group(1))
            blocks[line] = (float(m.group(2)), [])
        elif line is not None and re.match(r"\s+[+-]\S+  ", text):
            value, rest = text.strip().split("  ", 1)
            blocks[line][1].append((float(value), rest.strip()))
        else:
            line = None
    return blocks


# the text columns read (indicators for the forest), and left out (XGBoost:
# a baseline that is not 0)
NUMERIC_ONLY = ["--drop", "smoker", "--drop", "region"]


@pytest.mark.parametrize("model, drop", [("rf", []), ("xgboost", NUMERIC_ONLY)])
def test_explain_prints_the_intercept_and_each_linear_term(tmp_path, capsys, keep_job,
                                                          model, drop):
    if model != "rf":
        pytest.importorskip(model)
    from firecy.rules._report import estimator_intercept

    data = _write_insurance(tmp_path / "insurance.csv")
    assert main(["explain", str(data), "--target", "charges", "--model", model,
                 "--rows", "2,9,30", "--output", str(tmp_path / "e.csv"), *drop, *FAST]) == 0
    printed = capsys.readouterr().out
    fire, X = keep_job["fire"], keep_job["X"]
    blocks = _explained_blocks(printed)
    assert sorted(blocks) == [2, 9, 30]
    intercept = float(estimator_intercept(fire, keep_job["X_tr"])[0])
    terms = fire.linear_terms_
    slope = dict(zip(terms.features.tolist(), np.ravel(fire.linear_coef_).tolist()))
    kept = {f: s for f, s in slope.items() if s != 0}
    assert kept, "the test needs a fit with linear terms"
    cells = _file_rows(data)
    for line, (prediction, lines) in blocks.items():
        from firecy.cli._text_columns import model_frame

        row = model_frame(X.loc[[line]])
        assert prediction == pytest.approx(float(fire.predict(row)[0]), rel=1e-5)
        # the printed lines add up to the prediction (each printed to 6 digits)
        rounding = sum(abs(v) for v, _ in lines) * 1e-5 + abs(prediction) * 1e-5
        assert sum(v for v, _ in lines) == pytest.approx(prediction, abs=rounding)
        # the first line is the intercept, as the rules' printout gives it
        assert lines[0][1].startswith("intercept")
        assert lines[0][0] == pytest.approx(intercept, rel=1e-5)
        # one line per kept linear term: slope * (clipped x - centre), by hand
        linear = [(v, t) for v, t in lines if " per unit of " in t and not t.startswith("if ")]
        assert len(linear) == len(kept)
        for value, text in linear:
            name = text.split(" per unit of ", 1)[1].split(" (", 1)[0]
            f = X.columns.get_loc(name)
            t = list(terms.features).index(f)
            column, _, label = name.partition("=")
            cell = cells[line][column]
            # an indicator column (the forest's reading of a text column): 1 for its label
            x = (np.nan if cell == "" else float(cell == label)) if label else float(cell)
            by_hand = (0.0 if np.isnan(x) else   # a missing x adds 0
                       kept[f] * (min(max(x, terms.lower[t]), terms.upper[t]) - terms.center[t]))
            assert value == pytest.approx(by_hand, rel=1e-5, abs=1e-9)
            shown = "missing" if np.isnan(x) else f"{x:.6g}"
            assert f"{name} = {shown}, centre {terms.center[t]:.6g}" in text


def test_rows_and_the_report_are_named_by_csv_line(tmp_path, capsys, keep_job):
    """A blank line in the file shifts the lines after it: the names follow the file."""
    data = _write_insurance(tmp_path / "insurance.csv", blank_line_at=50)
    cells = _file_rows(data)
    assert 51 not in cells and 52 in cells
    report = tmp_path / "report.html"
    assert main(["explain", str(data), "--target", "charges", "--rows", "52,200",
                 "--output", str(tmp_path / "e.csv"), "--report", str(report),
                 "--no-linear-terms", *NUMERIC_ONLY, *FAST]) == 0
    printed = capsys.readouterr().out
    X = keep_job["X"]
    for line in (52, 200):
        assert f"CSV line {line}: prediction = " in printed
        assert X.loc[line, "age"] == float(cells[line]["age"])
    assert main(["explain", str(data), "--target", "charges", "--rows", "51",
                 "--output", str(tmp_path / "e.csv"), *NUMERIC_ONLY, *FAST]) == 1
    assert "no data row starts on line 51" in capsys.readouterr().err

    document = report.read_text(encoding="utf-8")
    named = re.findall(r"<h3>(CSV line \d+)</h3>\s*<p>([^<]*)</p>", document)
    assert len(named) == 3
    test_lines = set(keep_job["lines_te"].tolist())
    for heading, facts in named:
        line = int(heading.split()[-1])
        assert line in test_lines
        observed = float(facts.split("observed: ")[1])
        assert observed == float(cells[line]["charges"])


def test_stable_printout_gives_stability_budget_and_linear_terms(tmp_path, capsys):
    data = _write_insurance(tmp_path / "insurance.csv")
    out = tmp_path / "rules.json"
    assert main(["extract", str(data), "--target", "charges", "--stable", "--output",
                 str(out), *NUMERIC_ONLY, "--n-lambdas", "10", "--cv", "3", "--n-jobs", "1",
                 "--no-progress"]) == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    rules = [r for r in doc["rules"] if r.get("kind", "rule") == "rule"]
    n_linear = doc["n_linear_terms"]
    assert n_linear > 0, "the test needs a fit with linear terms"
    # each printed rule carries the JSON's stability
    for r in rules:
        shown = [ln for ln in printed.splitlines() if f"if {r['rule']} then " in ln]
        assert shown and f"stability {100 * r['stability']:.0f}%)" in shown[0], r
    from firecy.rules._account import prediction_sentence

    assert prediction_sentence("prediction", True) in printed
    assert "FIRE stable pool + MCP (gamma 1.1) + fusion 0.5" in printed
    assert printed.startswith("Rules extracted by FIRE (") and \
        "linear term, stable pool + MCP" in printed.splitlines()[0] or \
        "linear terms, stable pool + MCP" in printed.splitlines()[0]
    term = "linear term" if n_linear == 1 else "linear terms"
    assert (f"(budget: a stable pool of {doc['max_rules']} rules (at most "
            f"{doc['max_rules']}), {len(rules)} kept, plus {n_linear} {term};") in printed
    fire_row = [ln for ln in printed.splitlines() if ln.startswith("FIRE stable pool")][0]
    # terms, rules, linear terms, antecedents, test MSE, test R2
    terms, n_rules, lines = (int(v) for v in fire_row.split()[-6:-3])
    assert (terms, n_rules, lines) == (len(rules) + n_linear, len(rules), n_linear)


def test_card_reads_a_yes_no_column(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 300
    smoker = rng.choice(["yes", "no"], n)
    age = rng.uniform(20, 70, n).round()
    risk = 1 / (1 + np.exp(-(2.0 * (smoker == "yes") + 0.05 * (age - 45) - 1)))
    event = (rng.uniform(size=n) < risk).astype(int)
    data = tmp_path / "d.csv"
    data.write_text("smoker,age,event\n" + "".join(
        f"{s},{a},{e}\n" for s, a, e in zip(smoker, age, event)))
    out = tmp_path / "card.json"
    assert main(["card", str(data), "--target", "event", "--max-rules", "4", "--n-jobs", "1",
                 "--no-progress", "--output", str(out)]) == 0
    doc = json.loads(out.read_text())
    features = {c["feature"] for r in doc["rules"] for c in r["conditions"]}
    assert "smoker=yes" in features


@pytest.mark.parametrize("args, message", [
    (["--task", "survival", "--time", "age", "--event", "smoker"],
     "--event column 'smoker' is text; it must hold numbers"),
    (["--task", "poisson", "--target", "age", "--exposure", "region"],
     "--exposure column 'region' is text; it must hold numbers"),
])
def test_a_text_column_where_numbers_are_needed(tmp_path, capsys, args, message):
    data = _write_insurance(tmp_path / "insurance.csv")
    assert main(["extract", str(data), *args, "--output", str(tmp_path / "r.json"),
                 *FAST]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"firecy: error: {message}"


def test_csv_lines_count_blank_lines_and_multi_line_cells(tmp_path):
    import pandas as pd

    from firecy.cli._csv import csv_lines

    path = tmp_path / "f.csv"
    # lines: 1 header, 2 a row, 3 blank, 4-5 one row (a quoted cell on two
    # lines), 6 a row, 7 blank (the end)
    path.write_bytes(b'a,note\r\n1,x\r\n\r\n2,"two\r\nlines"\r\n3,y\r\n\r\n')
    frame = pd.read_csv(path)
    assert list(frame["a"]) == [1, 2, 3]
    assert csv_lines(path, len(frame)).tolist() == [2, 4, 6]
    # a file the csv module reads otherwise than pandas: positions + 2
    assert csv_lines(path, 5).tolist() == [2, 3, 4, 5, 6]
