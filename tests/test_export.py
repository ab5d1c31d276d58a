"""Rules that leave the library: the exported Python function and SQL expression.

Each export runs without firecy (the Python in a fresh namespace, and in a
subprocess that cannot import firecy nor numpy; the SQL in SQLite) on data with
missing values and values on, and next to, the thresholds, and must give the
estimator's predictions row by row.
"""
import json
import math
import os
import sqlite3
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits
from sklearn.ensemble import (
    GradientBoostingRegressor, HistGradientBoostingRegressor, RandomForestClassifier,
    RandomForestRegressor,
)

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.rules import float64_comparison, rules_python, rules_sql

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

TOL = 1e-9


# ---------------------------------------------------------------------------
# running the exports
# ---------------------------------------------------------------------------
def records(X):
    """Rows of a DataFrame as dicts (NaN stays NaN, labels stay labels)."""
    cols = list(X.columns)
    return [dict(zip(cols, row)) for row in X.itertuples(index=False, name=None)]


def run_python(source, X, function_name="predict"):
    """The exported function on every row, exec'd in a fresh namespace."""
    namespace = {"__name__": "exported_rules"}
    exec(compile(source, "<exported rules>", "exec"), namespace)
    f = namespace[function_name]
    return np.array([f(r) for r in records(X)], dtype=np.float64)


def run_python_isolated(source, X, tmp_path):
    """The exported function in a subprocess where firecy and numpy cannot be imported."""
    path = tmp_path / "exported_rules.py"
    path.write_text(source)
    rows = [{k: (None if isinstance(v, float) and math.isnan(v) else
                 (v.item() if hasattr(v, "item") else v)) for k, v in r.items()}
            for r in records(X)]
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    driver = (
        "import importlib.util, json, sys\n"
        "assert importlib.util.find_spec('firecy') is None, 'firecy is importable'\n"
        "assert importlib.util.find_spec('numpy') is None, 'numpy is importable'\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from exported_rules import predict\n"
        f"rows = json.load(open({str(tmp_path / 'rows.json')!r}))\n"
        "print(json.dumps([predict(r) for r in rows]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # -I: no PYTHONPATH, no user site; -S: no site-packages (nor firecy's
    # editable install); cwd elsewhere so that the working tree is not on the path
    out = subprocess.run([sys.executable, "-I", "-S", "-c", driver], capture_output=True,
                         text=True, env=env, cwd=str(tmp_path), check=False)
    assert out.returncode == 0, out.stderr
    return np.array(json.loads(out.stdout), dtype=np.float64)


def run_sql(expression, X, types=None):
    """``SELECT <expression> FROM data`` in SQLite; NaN and missing labels as NULL."""
    con = sqlite3.connect(":memory:")
    cols = list(X.columns)
    quoted = ['"' + str(c).replace('"', '""') + '"' for c in cols]
    decl = ", ".join(f"{q} {'TEXT' if (types or {}).get(c) == 'text' else ''}".strip()
                     for q, c in zip(quoted, cols))
    con.execute(f"CREATE TABLE data ({decl})")

    def cell(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        try:
            if v != v:  # pandas NA / NaN in object columns
                return None
        except (TypeError, ValueError):
            return None
        return v.item() if hasattr(v, "item") else v

    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * len(cols))})",
                    [[cell(v) for v in r.values()] for r in records(X)])
    rows = con.execute(f"SELECT {expression} FROM data ORDER BY rowid").fetchall()
    return np.array([r[0] for r in rows], dtype=np.float64)


def check_exports(est, X, tmp_path=None):
    """Python and SQL exports of ``est`` reproduce ``est.predict(X)``."""
    expected = est.predict(X)
    py = rules_python(est)
    np.testing.assert_allclose(run_python(py, X), expected, rtol=TOL, atol=TOL)
    if tmp_path is not None:
        np.testing.assert_allclose(run_python_isolated(py, X, tmp_path), expected,
                                   rtol=TOL, atol=TOL)
    types = {c: "text" for c in X.columns if str(X[c].dtype) in ("category", "object")}
    np.testing.assert_allclose(run_sql(rules_sql(est), X, types), expected, rtol=TOL, atol=TOL)
    return expected


# ---------------------------------------------------------------------------
# data on the thresholds
# ---------------------------------------------------------------------------
def make_frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] * (X[:, 3] > 0) + 0.2 * rng.normal(size=n)
    return pd.DataFrame(X, columns=["age", "body mass", "s1", "s2", "bp"]), y


def threshold_frame(est, X, rng, n=800, missing=0.1, zeros=0.0):
    """Rows whose values sit on the kept rules' thresholds and on their float32
    and float64 neighbours, with missing values (and zeros, tiny values)."""
    ens = est.ensemble_
    cands = {j: [] for j in range(X.shape[1])}
    for j in np.flatnonzero(est.coef_):
        for c in ens.rules[j]:
            if not c.is_categorical and math.isfinite(c.threshold):
                t = c.threshold
                f32 = np.float32(t)
                cands[c.feature] += [
                    t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), float(f32),
                    float(np.nextafter(f32, np.float32(-np.inf))),
                    float(np.nextafter(f32, np.float32(np.inf))),
                ]
                op64, t64 = float64_comparison(c.op, t, c.dtype)
                cands[c.feature] += [t64, np.nextafter(t64, -np.inf), np.nextafter(t64, np.inf)]
    out = X.sample(n=n, replace=True, random_state=int(rng.integers(1 << 30))).reset_index(
        drop=True)
    for j, vals in cands.items():
        if vals and str(out.iloc[:, j].dtype) not in ("category", "object"):
            col = out.iloc[:, j].to_numpy(dtype=np.float64).copy()
            pick = rng.random(n) < 0.7
            col[pick] = rng.choice(np.asarray(vals), size=int(pick.sum()))
            col[rng.random(n) < missing] = np.nan
            if zeros:
                col[rng.random(n) < zeros] = 0.0
                col[rng.random(n) < zeros / 3] = rng.choice([1e-36, -1e-36, 1e-40, 1e-35])
            out.iloc[:, j] = col
    return out


def fire(model, X, y, **kw):
    # one OpenMP thread: the machine's cores are shared (HistGradientBoosting)
    with warnings.catch_warnings(), threadpool_limits(1, user_api="openmp"):
        warnings.simplefilter("ignore")
        return FIRERegressor(model, penalty="l1", n_lambdas=15, max_rules=40,
                             random_state=0, **kw).fit(X, y)


def fitted(model, X, y):
    with warnings.catch_warnings(), threadpool_limits(1, user_api="openmp"):
        warnings.simplefilter("ignore")
        return model.fit(X, y)


# ---------------------------------------------------------------------------
# the float64 equivalent of a float32 comparison
# ---------------------------------------------------------------------------
def test_float64_comparison_matches_float32_rounding_on_neighbours():
    rng = np.random.default_rng(3)
    f32max = float(np.finfo(np.float32).max)
    over = f32max + 2.0 ** 103   # rounds to float32 infinity (a tie, to even)
    thresholds = [0.0, -0.0, 1e-45, -1e-45, 1e-300, f32max, -f32max, 1e39, -1e39,
                  math.inf, -math.inf, 0.800000011920929, 26.849999427795410]
    thresholds += list(rng.normal(size=100)) + list(rng.normal(size=100).astype(np.float32))
    a = rng.normal(size=100).astype(np.float32)
    thresholds += list((a.astype(float) + np.nextafter(a, np.float32(np.inf))) / 2)
    ops = {"<=": np.less_equal, "<": np.less, ">": np.greater, ">=": np.greater_equal}
    with np.errstate(over="ignore"):
        _check_thresholds(thresholds, over, ops)


def _check_thresholds(thresholds, over, ops):
    for t in map(float, thresholds):
        f = np.float32(t)
        x = [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), over, -over,
             np.nextafter(over, 0), np.nextafter(-over, 0), math.inf, -math.inf]
        for g in (np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))):
            g = float(g)
            h = float(np.nextafter(np.float32(g), np.float32(np.inf)))
            x += [g, np.nextafter(g, -np.inf), np.nextafter(g, np.inf)]
            if math.isfinite(h) and math.isfinite(g):
                m = (g + h) / 2
                x += [m, np.nextafter(m, -np.inf), np.nextafter(m, np.inf)]
        x = np.array([v for v in x if not math.isnan(v)])
        x32 = x.astype(np.float32)
        for op, fn in ops.items():
            op64, t64 = float64_comparison(op, t, "float32")
            np.testing.assert_array_equal(ops[op64](x, t64), fn(x32, np.float64(t)),
                                          err_msg=f"{op} {t!r}")
        assert float64_comparison("<=", t, "float64") == ("<=", t)


def test_float64_comparison_rejects_bad_input():
    with pytest.raises(ValueError, match="operator"):
        float64_comparison("==", 1.0)
    with pytest.raises(ValueError, match="dtype"):
        float64_comparison("<=", 1.0, "float16")


# ---------------------------------------------------------------------------
# estimators: Python (fresh namespace and isolated process) and SQLite
# ---------------------------------------------------------------------------
def test_sklearn_random_forest_with_missing_values(tmp_path):
    X, y = make_frame()
    rng = np.random.default_rng(0)
    X.iloc[rng.random(X.shape) < 0.1] = np.nan  # sklearn forests route NaN
    est = fire(RandomForestRegressor(n_estimators=30, max_depth=4, random_state=0), X, y)
    Xt = threshold_frame(est, X, rng)
    check_exports(est, Xt, tmp_path)
    # the rows next to the thresholds do tell float32 from float64: comparing
    # the unrounded input with the threshold selects other rows
    ens = est.ensemble_
    differs = 0
    for j in np.flatnonzero(est.coef_):
        for c in ens.rules[j]:
            x = Xt.iloc[:, c.feature].to_numpy()
            ok = ~np.isnan(x)
            differs += int(np.sum((x[ok].astype(np.float32) <= c.threshold)
                                  != (x[ok] <= c.threshold)))
    assert differs > 0


def test_sklearn_gradient_boosting_baseline_in_intercept():
    X, y = make_frame()
    est = fire(GradientBoostingRegressor(n_estimators=40, max_depth=3, random_state=0), X, y)
    assert est.ensemble_.constant_baseline()[0] != 0.0
    check_exports(est, threshold_frame(est, X, np.random.default_rng(1), missing=0.0))


def test_sklearn_gradient_boosting_with_custom_init_is_refused():
    from sklearn.linear_model import LinearRegression

    X, y = make_frame()
    gb = fitted(GradientBoostingRegressor(n_estimators=10, init=LinearRegression(),
                                          random_state=0), X, y)
    est = fire(gb, X, y)
    with pytest.raises(ValueError, match="varies by row"):
        rules_python(est)


def test_histgradientboosting_categorical(tmp_path):
    X, y = make_frame()
    rng = np.random.default_rng(2)
    colours = np.array(["red", "green", "blue", "o'range"])
    X["colour"] = pd.Categorical(colours[rng.integers(0, 4, len(X))])
    X.loc[rng.random(len(X)) < 0.05, "colour"] = np.nan
    y = y + (X["colour"] == "blue").to_numpy() * 2.0
    X.iloc[rng.random(len(X)) < 0.05, 1] = np.nan
    hgb = HistGradientBoostingRegressor(max_iter=30, max_depth=3, random_state=0,
                                        categorical_features="from_dtype")
    est = fire(hgb, X, y)
    Xt = threshold_frame(est, X, rng)
    check_exports(est, Xt, tmp_path)


def test_xgboost_missing_values_and_float32_splits(tmp_path):
    X, y = make_frame()
    rng = np.random.default_rng(4)
    X.iloc[rng.random(X.shape) < 0.1] = np.nan
    model = fitted(xgb.XGBRegressor(n_estimators=30, n_jobs=1, max_depth=3, random_state=0), X, y)
    est = fire(model, X, y)
    check_exports(est, threshold_frame(est, X, rng), tmp_path)


def test_lightgbm_zero_as_missing_and_tiny_values(tmp_path):
    X, y = make_frame()
    rng = np.random.default_rng(5)
    X.iloc[rng.random(X.shape) < 0.1] = np.nan
    X.iloc[rng.random(X.shape) < 0.15] = 0.0
    model = fitted(lgb.LGBMRegressor(n_estimators=30, n_jobs=1, num_leaves=8, zero_as_missing=True,
                                     min_child_samples=5, verbose=-1, random_state=0), X, y)
    est = fire(model, X, y)
    kept = [c for j in np.flatnonzero(est.coef_) for c in est.ensemble_.rules[j]]
    assert any(c.zero_as_missing for c in kept)
    check_exports(est, threshold_frame(est, X, rng, zeros=0.15), tmp_path)


def test_lightgbm_missing_type_nan_and_none():
    X, y = make_frame()
    rng = np.random.default_rng(6)
    Xn = X.copy()
    for j in (0, 1):  # missing type NaN on two columns
        Xn.iloc[rng.random(len(X)) < 0.1, j] = np.nan
    model = fitted(lgb.LGBMRegressor(n_estimators=30, n_jobs=1, num_leaves=8, min_child_samples=5,
                                     verbose=-1, random_state=0), Xn, y)
    est = fire(model, Xn, y)
    # NaN in columns trained without NaN: missing type None, read as 0
    check_exports(est, threshold_frame(est, X, rng, zeros=0.1))


def test_categorical_labels_xgboost_and_lightgbm(tmp_path):
    X, y = make_frame()
    rng = np.random.default_rng(7)
    labels = ["red", "green", "blue", "cyan", "pink"]
    X["colour"] = pd.Categorical(np.array(labels)[rng.integers(0, 5, len(X))],
                                 categories=labels)
    y = y + X["colour"].cat.codes.to_numpy() % 3
    for model in (xgb.XGBRegressor(n_estimators=20, n_jobs=1, max_depth=3, enable_categorical=True,
                                   max_cat_to_onehot=1, random_state=0),
                  lgb.LGBMRegressor(n_estimators=20, n_jobs=1, num_leaves=8, min_child_samples=5,
                                    min_data_per_group=5, cat_smooth=1.0, verbose=-1,
                                    random_state=0)):
        est = fire(fitted(model, X, y), X, y)
        Xt = threshold_frame(est, X, rng)
        # another category order, and some categories missing
        Xt["colour"] = Xt["colour"].cat.reorder_categories(labels[::-1])
        check_exports(est, Xt, tmp_path if isinstance(model, lgb.LGBMModel) else None)
        src = rules_python(est)
        assert "'colour'" in src and "'red'" in src or "'blue'" in src


# ---------------------------------------------------------------------------
# ensembles with weights: several outputs, and a classifier's margin
# ---------------------------------------------------------------------------
def test_multiclass_forest_exports_one_margin_per_class():
    X, y = make_frame()
    y = np.digitize(y, [-0.5, 0.5])
    rf = fitted(RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0), X, y)
    ens = rule_ensemble_from_model(rf)
    rng = np.random.default_rng(8)
    coef = np.where(rng.random(ens.n_rules) < 0.3, rng.normal(size=ens.n_rules), 0.0)
    intercept = np.array([0.1, -0.2, 0.3])
    expected = ens.predict_raw(X, coef) + intercept
    ns = {}
    exec(rules_python(ens, coef, intercept), ns)
    got = np.array([ns["predict"](r) for r in records(X)])
    np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL)
    sql = rules_sql(ens, coef, intercept, alias="score")
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE data (" + ", ".join(f'"{c}"' for c in X.columns) + ")")
    con.executemany("INSERT INTO data VALUES (?, ?, ?, ?, ?)", X.to_numpy().tolist())
    got = np.array(con.execute(f"SELECT {sql} FROM data ORDER BY rowid").fetchall())
    np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL)


def test_binary_classifier_margin_hook():
    X, y = make_frame()
    yb = (y > 0.5).astype(int)
    model = fitted(xgb.XGBClassifier(n_estimators=15, n_jobs=1, max_depth=3, random_state=0), X, yb)
    ens = rule_ensemble_from_model(model)
    coef = np.zeros(ens.n_rules)
    coef[::3] = 1.0
    margin = ens.predict_raw(X, coef) + 0.25
    ns = {}
    exec(rules_python(ens, coef, 0.25, function_name="margin"), ns)
    got = np.array([ns["margin"](r) for r in records(X)])
    np.testing.assert_allclose(got, margin, rtol=TOL, atol=TOL)
    # the whole model: every leaf at weight 1 is the library's own margin
    full = np.ones(ens.n_rules)
    exec(rules_python(ens, full), ns)
    got = np.array([ns["predict"](r) for r in records(X)])
    np.testing.assert_allclose(got, model.predict(X, output_margin=True), rtol=1e-6, atol=1e-6)


def test_sql_columns_and_bad_input():
    X, y = make_frame(n=200)
    est = fire(RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0), X, y)
    expr = rules_sql(est, columns={"age": "t.a"})
    assert '"age"' not in expr and ("t.a" in expr or "age" not in
                                     [est.feature_names_in_[c.feature] for j in
                                      np.flatnonzero(est.coef_)
                                      for c in est.ensemble_.rules[j]])
    with pytest.raises(ValueError, match="unknown features"):
        rules_sql(est, columns={"nope": "x"})
    with pytest.raises(ValueError, match="identifier"):
        rules_python(est, function_name="not a name")
    with pytest.raises(TypeError, match="coef is required"):
        rules_python(est.ensemble_)


@pytest.mark.parametrize("name", ["class", "_num", "math", "bisect", "not an id"])
def test_rules_python_refuses_function_names_that_break_the_source(name):
    from sklearn.tree import DecisionTreeRegressor

    X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=2).fit(X, y), lam=0.5,
                         fusion=0.0).fit(X, y)
    with pytest.raises(ValueError, match="function_name must be"):
        rules_python(fire, function_name=name)
    with pytest.raises(ValueError, match=r"feature names must be unique: \['a'\]"):
        rules_python(fire, feature_names=["a", "a"])
    with pytest.raises(ValueError, match=r"feature names must be unique"):
        rules_sql(fire, feature_names=["a", "a"])


@pytest.mark.parametrize("model", [
    RandomForestClassifier(20, max_depth=2, random_state=0),
    xgb.XGBClassifier(n_estimators=10, max_depth=2),
], ids=["rf", "xgboost"])
def test_multiclass_exports_give_every_class_margin(model):
    from sklearn.datasets import load_wine

    from firecy import FIREClassifier

    X, y = load_wine(return_X_y=True, as_frame=True)
    model.fit(X, y)
    clf = FIREClassifier(model, max_rules=6, selection="validation", random_state=0).fit(X, y)
    expected = clf.decision_function(X)
    assert expected.shape == (len(X), 3)
    np.testing.assert_allclose(run_python(rules_python(clf), X).reshape(expected.shape),
                               expected, rtol=TOL, atol=TOL)
    con = sqlite3.connect(":memory:")
    cols = ", ".join(f'"{c}"' for c in X.columns)
    con.execute(f"CREATE TABLE data ({cols})")
    con.executemany(f"INSERT INTO data VALUES ({', '.join('?' * X.shape[1])})",
                    X.to_numpy().tolist())
    got = np.array(con.execute(f"SELECT {rules_sql(clf)} FROM data ORDER BY rowid").fetchall())
    np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("make", [
    lambda: xgb.XGBRegressor(n_estimators=30, n_jobs=1, max_depth=3, random_state=0),
    lambda: lgb.LGBMRegressor(n_estimators=30, n_jobs=1, verbose=-1, random_state=0),
], ids=["xgboost", "lightgbm"])
def test_unit_rule_values_export_reproduces_predict(make, tmp_path):
    # rule_values="unit": the exported rules carry the solved-on values (1),
    # not the library's leaf values
    X, y = make_frame()
    rng = np.random.default_rng(5)
    X.iloc[rng.random(X.shape) < 0.1] = np.nan
    model = fitted(make(), X, y)
    est = fire(model, X, y, rule_values="unit")
    assert est.rule_values_ == "unit" and est.n_rules_ > 0
    check_exports(est, threshold_frame(est, X, rng), tmp_path)
