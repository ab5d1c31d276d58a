"""Readable rules: simplification, text and parse-back, tables, antecedent counts."""
import dataclasses
import math

import numpy as np
import pytest

from firecy.ensembles import Condition, rule_ensemble_from_model
from firecy.rules import (
    ALL_ROWS,
    LIGHTGBM_ZERO_THRESHOLD,
    library_reading,
    count_antecedents,
    evaluate_parsed,
    format_conditions,
    parse_rule,
    rules_report,
    rules_table,
    simplify_conditions,
)

# Awkward names: spaces, the word "and", operators, a leading digit.
NAMES = ["age", "blood pressure", "salt and pepper", "x <= y", "2nd dose", "nan_count"]


# ---------------------------------------------------------------------------
# helpers independent of firecy's Condition objects
# ---------------------------------------------------------------------------
def text_mask(text, X, names, dtype, zero_threshold=0.0):
    """Rows satisfying a printed rule, from the TEXT only (own evaluator).

    The input and the thresholds are read in the library's precision
    (LightGBM also reads |x| <= zero_threshold as 0).
    """
    X = np.asarray(X, dtype=np.float64)
    mask = np.ones(X.shape[0], dtype=bool)
    for p in parse_rule(text, names):
        x = X[:, p.feature].astype(dtype).astype(np.float64)
        x[np.abs(x) <= zero_threshold] = 0.0
        miss = np.isnan(x)
        if p.zero_missing:
            miss |= x == 0.0
        xs = np.where(miss, 0.0, x)
        v = float(np.asarray(p.value, dtype=dtype)) if np.isscalar(p.value) else None
        if p.op in ("in", "not in"):
            member = np.isin(np.trunc(xs), np.array(sorted(p.value), dtype=float))
            ok = member if p.op == "in" else ~member
        else:
            ok = {"<=": xs <= v, "<": xs < v, ">": xs > v, ">=": xs >= v}[p.op]
        mask &= np.where(miss, p.missing, ok)
    return mask


def conj(conds, X):
    m = np.ones(X.shape[0], dtype=bool)
    for c in conds:
        m &= c.evaluate(X)
    return m


def leaf_rows(ens, X):
    """Boolean (n, R): row i lands in leaf j (the library's own routing)."""
    table = ens.leaf_table(X)
    out = np.zeros((table.shape[0], ens.n_rules), dtype=bool)
    out[np.arange(table.shape[0])[:, None], table] = True
    return out


# ---------------------------------------------------------------------------
# simplification
# ---------------------------------------------------------------------------
def test_simplify_examples():
    a = Condition(0, "<", 5.0)
    b = Condition(0, "<", 10.0)
    assert simplify_conditions([a, b]) == [a]
    assert format_conditions([a, b], ["x"]) == "x < 5.0"
    # two bounds stay two conditions and print as an interval
    lo, hi = Condition(0, ">", 2.0), Condition(0, "<=", 7.0)
    assert simplify_conditions([hi, lo]) == [lo, hi]
    assert format_conditions([hi, lo], ["x"]) == "2.0 < x <= 7.0"
    # ties: the strict operator is the tighter one
    assert simplify_conditions([Condition(0, "<=", 3.0), Condition(0, "<", 3.0)]) == [
        Condition(0, "<", 3.0)
    ]
    # a merged condition takes a missing value only if all merged ones do
    m = simplify_conditions([Condition(0, "<", 5.0, missing=True), Condition(0, "<", 9.0)])
    assert m == [Condition(0, "<", 5.0, missing=False)]
    # float32 and float64 comparisons are never merged
    mixed = [Condition(0, "<=", 5.0, dtype="float32"), Condition(0, "<=", 4.0)]
    assert len(simplify_conditions(mixed)) == 2
    # categorical sets
    c = simplify_conditions([
        Condition(1, "in", categories=(1, 2, 3)), Condition(1, "not in", categories=(2,)),
        Condition(1, "in", categories=(1, 2, 3, 4)),
    ])
    assert c == [Condition(1, "in", categories=(1, 3))]
    assert simplify_conditions([]) == []
    assert format_conditions([]) == ALL_ROWS


def _random_condition(rng, n_features, thresholds):
    f = int(rng.integers(n_features))
    dtype = "float32" if f % 2 == 0 else str(rng.choice(["float32", "float64"]))
    missing = bool(rng.random() < 0.5)
    zam = bool(f == 2 and rng.random() < 0.5)
    zt = float(np.float32(1e-35)) if f == 2 and rng.random() < 0.7 else 0.0
    if f == 3:
        cats = tuple(sorted(set(rng.integers(0, 6, size=rng.integers(1, 4)).tolist())))
        return Condition(f, str(rng.choice(["in", "not in"])), categories=cats,
                         missing=missing, dtype=dtype)
    return Condition(f, str(rng.choice(["<=", "<", ">", ">="])), float(rng.choice(thresholds)),
                     missing=missing, dtype=dtype, zero_as_missing=zam, zero_threshold=zt)


def test_simplify_is_exact_on_random_conditions():
    rng = np.random.default_rng(0)
    # thresholds: float32 values, midpoints between float32 neighbours, ties
    base = np.float32([-1.5, -0.1, 0.0, 0.3, 0.7, 2.0])
    thresholds = np.concatenate([
        base.astype(np.float64),
        (base.astype(np.float64) + np.nextafter(base, np.float32(np.inf))) / 2,
        [0.3, 0.7],
    ])
    # data: the thresholds themselves and their float32/float64 neighbours,
    # zeros, tiny values, NaN, random values and small integers (categories)
    near = np.concatenate([thresholds, np.nextafter(thresholds, np.inf),
                           np.nextafter(thresholds, -np.inf),
                           np.float32(thresholds).astype(np.float64)])
    n = 4000
    X = rng.choice(np.concatenate([near, [0.0, -0.0, 1e-36, np.nan, np.nan]]), size=(n, 4))
    X[:500] = rng.normal(size=(500, 4))
    X[:, 3] = rng.integers(-1, 7, size=n) + rng.choice([0.0, 0.5], size=n)
    X[rng.random(n) < 0.1, 3] = np.nan
    for trial in range(400):
        conds = [_random_condition(rng, 4, thresholds) for _ in range(rng.integers(1, 9))]
        simple = simplify_conditions(conds)
        assert np.array_equal(conj(conds, X), conj(simple, X)), (conds, simple)
        # at most one condition per (feature, family, dtype, zero-as-missing)
        keys = [(c.feature, c.op in ("<=", "<"), c.op in ("in", "not in"), c.dtype,
                 c.zero_as_missing, c.zero_threshold) for c in simple]
        assert len(keys) == len(set(keys))
        # the text, read back, selects the same rows (one reading per rule)
        readings = {(c.dtype, c.zero_threshold) for c in conds}
        if len(readings) == 1:
            ((dtype, zt),) = readings
            # these data hold float64 values one ulp from the thresholds: only
            # the exact text of a float64 comparison is exact on them (the
            # short one is for 15-digit and float32 inputs: test_threshold_text)
            exact = [dataclasses.replace(c, exact_text=True) for c in conds]
            text = format_conditions(exact, ["a", "b", "c", "d"], show_missing=True)
            assert np.array_equal(text_mask(text, X, ["a", "b", "c", "d"], dtype, zt),
                                  conj(conds, X)), text


def test_threshold_text_is_exact_and_short():
    # sklearn: float32 input, float64 thresholds
    assert format_conditions([Condition(0, ">", float(np.float32(0.8)), dtype="float32")],
                             ["x"]) == "x > 0.8"
    assert format_conditions([Condition(0, ">", 2.5, dtype="float32")], ["x"]) == "x > 2.5"
    # the midpoint of 26.8 and 26.9 lies below float32(26.85): 26.85 is not <= it
    mid = (float(np.float32(26.8)) + float(np.float32(26.9))) / 2
    assert mid < float(np.float32(26.85))
    assert format_conditions([Condition(0, "<=", mid, dtype="float32")], ["bmi"]) == \
        "bmi <= 26.849998"
    # for short decimals the plain decimal comparison agrees with the library
    decimals = np.round(np.arange(26.7, 27.0, 0.01), 2)
    np.testing.assert_array_equal(
        Condition(0, "<=", mid, dtype="float32").evaluate(decimals[:, None]),
        decimals <= 26.849998)
    # XGBoost: x < float32 split value
    assert format_conditions([Condition(0, "<", float(np.float32(4.16)),
                                        dtype="float32")]) == "x0 < 4.16"
    assert format_conditions([Condition(0, ">=", float(np.float32(4.16)),
                                        dtype="float32")]) == "x0 >= 4.16"
    # LightGBM compares in float64: the shortest decimal exact for every
    # 15-digit input; the repr on request (exact for every float64 input)
    lightgbm = dict(zero_threshold=float(np.float32(1e-35)))
    assert format_conditions([Condition(0, "<=", 0.30500000000000005, **lightgbm)]) == \
        "x0 <= 0.305"
    assert format_conditions([Condition(0, "<=", 0.30500000000000005,
                                        exact_text=True)]) == "x0 <= 0.30500000000000005"
    assert format_conditions([Condition(0, "<=", 1.23456, dtype="float32")],
                             precision=3) == "x0 <= 1.23"
    rng = np.random.default_rng(1)
    thresholds = rng.normal(scale=10.0 ** rng.integers(-8, 8, size=300))
    # float32 values, float64 midpoints between float32 neighbours
    f = thresholds.astype(np.float32)
    thresholds = np.concatenate([thresholds, f, (f.astype(float) +
                                 np.nextafter(f, np.float32(np.inf))) / 2])
    for thr in thresholds:
        for op in ("<=", "<", ">", ">="):
            c = Condition(0, op, float(thr), dtype="float32")
            text = format_conditions([c])
            f = np.float32(thr)
            xs = np.array([np.nextafter(f, -np.inf), f, np.nextafter(f, np.inf)])
            xs = np.concatenate([xs, np.nextafter(xs, -np.inf), np.nextafter(xs, np.inf)])
            X = xs.astype(np.float64)[:, None]
            assert np.array_equal(evaluate_parsed(parse_rule(text), X, "float32"),
                                  c.evaluate(X)), (thr, op, text)
            assert np.array_equal(text_mask(text, X, None, "float32"), c.evaluate(X))
            assert len(text.split()[-1]) <= 16
            assert text == c.to_text()  # one convention across the package


def test_parse_rule_grammar():
    text = ("0.5 < blood pressure <= 2.0 (or missing) and salt and pepper in {1, 3} and "
            "x <= y > -1e-05 and 2nd dose >= 3.0 (or zero/missing) and nan_count < inf "
            "and age <= 7.0 (not zero/missing)")
    parsed = parse_rule(text, NAMES)
    assert [(p.feature, p.op) for p in parsed] == [
        (1, ">"), (1, "<="), (2, "in"), (3, ">"), (4, ">="), (5, "<"), (0, "<=")]
    assert parsed[0].missing and parsed[1].missing and not parsed[2].missing
    assert parsed[2].value == frozenset({1, 3})
    assert parsed[3].value == -1e-05
    assert parsed[4].missing and parsed[4].zero_missing
    assert parsed[5].value == math.inf
    assert not parsed[6].missing and parsed[6].zero_missing
    assert parse_rule(ALL_ROWS, NAMES) == []
    assert parse_rule("x0 <= 1.0 and x12 > 2.0") == [
        (0, "<=", 1.0, False, False), (12, ">", 2.0, False, False)]
    for bad in ["age <= ", "age => 3", "height <= 3", "age <= 3 or bmi > 2", "age in {1, 2"]:
        with pytest.raises(ValueError):
            parse_rule(bad, NAMES)


# ---------------------------------------------------------------------------
# parse-back against the libraries' own leaf routing
# ---------------------------------------------------------------------------
def _data(seed=0, n=400, nan=True, zeros=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(NAMES)))
    X[:, 4] = rng.integers(0, 5, size=n)  # ties at integer thresholds
    if zeros:
        X[rng.random(n) < 0.3, 2] = 0.0
        X[rng.random(n) < 0.05, 2] = 1e-36  # LightGBM reads it as 0
    if nan:
        X[rng.random(n) < 0.1, 1] = np.nan
        X[rng.random(n) < 0.05, 4] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 1]) * (X[:, 2] > 0) + 0.3 * np.nan_to_num(X[:, 4])
    y = y + 0.1 * rng.normal(size=n)
    return X, y


def _check_parse_back(ens, X, dtype, zero_threshold=0.0):
    names = ens.feature_names
    reading = library_reading(ens)
    assert (reading["dtype"], reading["zero_threshold"]) == (dtype, zero_threshold)
    rows = leaf_rows(ens, X)
    assert rows.any(axis=0).sum() > ens.n_rules // 2  # most leaves are reached
    for j in range(ens.n_rules):
        text = format_conditions(ens.rules[j], names, show_missing=True)
        assert np.array_equal(text_mask(text, X, names, dtype, zero_threshold),
                              rows[:, j]), (j, text)
        parsed = parse_rule(text, names)
        assert np.array_equal(evaluate_parsed(parsed, X, **library_reading(ens)), rows[:, j])
    # without missing values the default text (no suffixes) is exact too
    complete = X[~np.isnan(np.asarray(X, dtype=float)).any(axis=1)]
    crow = leaf_rows(ens, complete)
    tab = rules_table(ens, np.ones(ens.n_rules), as_frame=False)
    for r in tab:
        # no NaN suffix; zero-as-missing conditions always say what zero does
        assert "(or missing)" not in r["rule"]
        assert np.array_equal(text_mask(r["rule"], complete, names, dtype, zero_threshold),
                              crow[:, r["column"]]), r


def test_parse_back_sklearn():
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

    X, y = _data(0)
    import pandas as pd

    df = pd.DataFrame(X, columns=NAMES)
    rf = RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0).fit(df, y)
    _check_parse_back(rule_ensemble_from_model(rf), df, "float32")
    gb = GradientBoostingRegressor(n_estimators=4, max_depth=3, random_state=0).fit(
        np.nan_to_num(X), y)
    ens = rule_ensemble_from_model(gb, feature_names=NAMES)
    _check_parse_back(ens, np.nan_to_num(X), "float32")


def test_parse_back_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = _data(1)
    model = xgb.XGBRegressor(n_estimators=4, max_depth=3, n_jobs=1, random_state=0)
    model.fit(X, y)
    ens = rule_ensemble_from_model(model, feature_names=NAMES)
    assert ens.feature_names == NAMES
    assert any(c.op == "<" for r in ens.rules for c in r)
    _check_parse_back(ens, X, "float32")


def test_parse_back_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    import pandas as pd

    X, y = _data(2, zeros=True)
    df = pd.DataFrame(X, columns=NAMES)
    # the model is fitted on a DataFrame with plain names (LightGBM rewrites
    # special characters); the ensemble gets the real ones
    plain = df.set_axis([f"f{i}" for i in range(len(NAMES))], axis=1)
    for params in (dict(), dict(zero_as_missing=True), dict(categorical_feature=[4])):
        params = dict(params)
        cat = params.pop("categorical_feature", None)
        model = lgb.LGBMRegressor(n_estimators=4, num_leaves=6, min_child_samples=5,
                                  min_data_per_group=5, cat_smooth=1.0, n_jobs=1, verbose=-1,
                                  random_state=0, **params)
        model.fit(plain, y, **({"categorical_feature": cat} if cat else {}))
        ens = rule_ensemble_from_model(model, feature_names=NAMES)
        if cat:
            assert any(c.is_categorical for r in ens.rules for c in r)
        if params:
            assert any(c.zero_as_missing for r in ens.rules for c in r)
        _check_parse_back(ens, X, "float64", LIGHTGBM_ZERO_THRESHOLD)


# ---------------------------------------------------------------------------
# tables, reports, antecedents
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def forest():
    import pandas as pd
    from sklearn.ensemble import RandomForestRegressor

    X, y = _data(3, nan=False)
    df = pd.DataFrame(X, columns=NAMES)
    rf = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(df, y)
    ens = rule_ensemble_from_model(rf)
    rng = np.random.default_rng(0)
    coef = np.zeros(ens.n_rules)
    # a few leaves of tree 0 (shared parents) and scattered others
    coef[[0, 1, 3]] = [0.5, -0.2, 0.1]
    coef[rng.choice(np.arange(8, ens.n_rules), 9, replace=False)] = rng.normal(size=9)
    return rf, ens, coef, df, y


def test_rules_table(forest):
    rf, ens, coef, df, _ = forest
    tab = rules_table(ens, coef, X=df)
    assert list(tab.columns) == ["rule", "weight", "support", "importance", "contribution",
                                 "leaf_value", "tree", "n_conditions", "column", "kind"]
    assert len(tab) == np.count_nonzero(coef)
    assert np.all(np.diff(np.abs(tab["contribution"].to_numpy())) <= 0)
    np.testing.assert_allclose(tab["contribution"], tab["weight"] * tab["leaf_value"])
    np.testing.assert_allclose(tab["weight"], coef[tab["column"]])
    np.testing.assert_allclose(tab["leaf_value"], ens.leaf_values[tab["column"]])
    rows = leaf_rows(ens, df)
    np.testing.assert_allclose(tab["support"], rows[:, tab["column"]].mean(axis=0))
    for r in tab.itertuples():
        assert ens.block_ptr[r.tree] <= r.column < ens.block_ptr[r.tree + 1]
        assert r.n_conditions == len(simplify_conditions(ens.rules[r.column]))
        assert r.n_conditions <= 3
    # no X: support is NaN; list-of-dicts form; weighted support
    plain = rules_table(ens, coef, as_frame=False)
    assert isinstance(plain, list) and math.isnan(plain[0]["support"])
    assert [r["rule"] for r in plain] == list(tab["rule"])
    w = np.arange(len(df), dtype=float)
    tw = rules_table(ens, coef, X=df, sample_weight=w, as_frame=False)
    j = tw[0]["column"]
    assert tw[0]["support"] == pytest.approx(w[rows[:, j]].sum() / w.sum())
    with pytest.raises(ValueError, match="coef"):
        rules_table(ens, coef[:-1])


def test_report_reproduces_the_prediction(forest):
    """intercept + contributions of the satisfied rules (read from the TEXT) = model."""
    rf, ens, coef, df, _ = forest
    b = 12.5
    tab = rules_table(ens, coef, as_frame=False)
    pred = np.full(len(df), b)
    for r in tab:
        pred += r["contribution"] * text_mask(r["rule"], df, NAMES, "float32")
    np.testing.assert_allclose(pred, ens.predict_raw(df, coef) + b)

    report = rules_report(ens, coef, intercept=b, X=df)
    lines = report.splitlines()
    assert lines[0] == "intercept: 12.5"
    rule_lines = [ln for ln in lines if " if " in ln]
    assert len(rule_lines) == len(tab)
    for ln, r in zip(rule_lines, tab):
        assert f"if {r['rule']} then " in ln
        sign = "+" if r["contribution"] >= 0 else "-"
        assert f" then {sign}{abs(r['contribution']):.4g}" in ln
    n_trees = len({r["tree"] for r in tab})
    assert lines[-1].startswith(
        f"{len(tab)} rules from {n_trees} trees, {count_antecedents(ens, coef)} distinct "
        "antecedents")


def test_report_accepts_a_fitted_estimator(forest):
    """Duck-typed: anything with ensemble_, coef_, intercept_ (and feature names)."""
    rf, ens, coef, df, _ = forest

    class Fitted:
        ensemble_, coef_, intercept_ = ens, coef, -3.0
        feature_names_in_ = np.array([f"v{i}" for i in range(len(NAMES))])

    rep = rules_report(Fitted())
    assert rep.startswith("intercept: -3\n") and "v0" in rep and "age" not in rep
    assert rules_table(Fitted(), as_frame=False)[0]["rule"].startswith(("v", "0", "-"))


def _brute_force_antecedents(rf, ens, coef):
    """Distinct (tree, node) pairs on kept paths, from sklearn's own arrays."""
    seen = set()
    for j in np.flatnonzero(coef):
        t = int(np.searchsorted(ens.block_ptr, j, side="right") - 1)
        tree = rf.estimators_[t].tree_
        parent = {}
        for node in range(tree.node_count):
            for child in (tree.children_left[node], tree.children_right[node]):
                if child >= 0:
                    parent[int(child)] = node
        node = int(ens.leaf_node_ids[j])
        assert tree.children_left[node] < 0  # a leaf
        while node in parent:
            node = parent[node]
            seen.add((t, node))
    return len(seen)


def test_count_antecedents_matches_brute_force(forest):
    rf, ens, coef, _, _ = forest
    assert count_antecedents(ens, coef) == _brute_force_antecedents(rf, ens, coef)
    # leaves 0, 1 of tree 0 are siblings (depth 3): they share all 3 splits;
    # leaf 3 shares the root and one more
    c = np.zeros(ens.n_rules)
    c[0] = 1
    assert count_antecedents(ens, c) == _brute_force_antecedents(rf, ens, c)
    c[1] = 1
    assert count_antecedents(ens, c) == _brute_force_antecedents(rf, ens, c)
    assert count_antecedents(ens, np.zeros(ens.n_rules)) == 0
    rng = np.random.default_rng(5)
    for _ in range(5):
        c = (rng.random(ens.n_rules) < 0.1).astype(float)
        assert count_antecedents(ens, c) == _brute_force_antecedents(rf, ens, c)


def test_rules_json_names_default_and_metadata_cannot_replace_its_keys():
    from sklearn.tree import DecisionTreeRegressor

    from firecy import FIRERegressor
    from firecy.rules import rules_json

    X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=2).fit(X, y), lam=0.5,
                         fusion=0.0).fit(X, y)
    doc = rules_json(fire, note="kept")
    assert doc["feature_names"] == ["x0", "x1"] and doc["note"] == "kept"
    assert rules_json(fire, ["a", "b"])["feature_names"] == ["a", "b"]
    for key in ("rules", "intercept", "firecy_version"):
        with pytest.raises(ValueError, match=f"metadata keys \\['{key}'\\]"):
            rules_json(fire, **{key: 1})
