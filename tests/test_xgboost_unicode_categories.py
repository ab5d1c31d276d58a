"""Category labels that are not ASCII (issue 21): XGBoost, LightGBM, HistGradientBoosting.

XGBoost 3.1 to 3.3 store a pandas frame's string categories with offsets
counted in code points over their UTF-8 bytes, and keep as many bytes as code
points: a label that is not ASCII is stored cut (``"i 数据 🚀 ñ"`` became
``'i 数据'``, the next label ``' 🚀'``...).  firecy then takes the labels from
the training frame (checked against what the model stored) and hands XGBoost
category codes, which it does not re-code.

XGBoost 3.2 even misreads the training frame itself when two labels are cut
to the same bytes ('é' and '数据' below), while it grew its trees on the
frame's codes.  The references are therefore the libraries' own routing of
the codes they were fitted on: XGBoost's ``pred_leaf`` and margin on the
pandas codes of the frame re-coded by pandas to the training categories, in
the training order; LightGBM's ``pred_leaf`` on the frame itself; and each
library's prediction.
"""
import bisect
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.ensembles._testing import check_predict_raw, check_rules_route_rows
from firecy.ensembles._xgboost_categories import decode_categories as _decode_categories
from firecy.rules import evaluate_parsed, library_reading, parse_rule, rule_text
from firecy.rules import rules_python, rules_sql
from test_export import run_python, run_sql

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")

ISSUE_LABEL = "i 数据 🚀 ñ"
# A deterministic set of hard labels, in a training order that is not sorted.
HARD = [
    ISSUE_LABEL,                     # 1-, 2-, 3- and 4-byte UTF-8 in one label
    "ñandú", "é", "e\u0301",         # 2 bytes; precomposed and combining: two labels
    "数据", "€",                      # 3 bytes
    "🚀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",                    # 4 bytes
    "a,b", "a;b|c", "tab\there", "line\nbreak", "",   # separators, the empty label
    "'", '"', "it's", 'say "hi"', "back\\slash", "\\'",
    " lead", "trail ", "  ",
    "'; DROP TABLE data; --", "%_", "NULL", "nan",
    "长" * 200,
    "plain",
]
# Not in HARD, all before its last label in sorted order (XGBoost reads each
# as the next training label).
UNSEEN = ["数据x", "ñ", "zzz", "é!", "e", "a,b,", " ", "𝔘", "line\nbreak\n"]
XGB_BYTE_OFFSETS = tuple(int(v) for v in xgb.__version__.split(".")[:2]) >= (3, 4)


def make_frame(labels=HARD, n=1500, seed=0, missing=0.05):
    rng = np.random.default_rng(seed)
    k = rng.integers(0, len(labels), n)
    k[:len(labels)] = np.arange(len(labels))     # every label is seen in training
    x = rng.normal(size=n)
    X = pd.DataFrame({
        "x": x,
        "c": pd.Categorical(np.array(labels, dtype=object)[k], categories=labels),
        "z": rng.normal(size=n),
    })
    effect = rng.permutation(len(labels)) % 7
    X.loc[rng.random(n) < missing, "c"] = np.nan
    y = effect[k] + (x > 0) * 1.5 + 0.1 * rng.normal(size=n)
    return X, y


def reordered(X, seed=1):
    F = X.copy()
    cats = list(F["c"].cat.categories)
    order = np.random.default_rng(seed).permutation(len(cats))
    F["c"] = F["c"].cat.reorder_categories([cats[i] for i in order])
    return F


def subset(X):
    keep = [ISSUE_LABEL, "é", "e\u0301", "🚀", "", "line\nbreak", "it's"]
    F = X[X["c"].isin(keep) | X["c"].isna()].reset_index(drop=True)
    F["c"] = F["c"].cat.set_categories(keep[::-1])
    return F


def with_unseen(X, seed=2):
    F = X.copy()
    values = F["c"].astype(object).to_numpy().copy()
    rng = np.random.default_rng(seed)
    pick = rng.random(len(F)) < 0.2
    values[pick] = np.array(UNSEEN, dtype=object)[rng.integers(0, len(UNSEEN), pick.sum())]
    cats = list(rng.permutation(np.array(sorted(set(HARD) | set(UNSEEN)), dtype=object)))
    F["c"] = pd.Categorical(values, categories=cats)
    return F


def as_training_categories(F, labels, unseen="next"):
    """F with the training categories in the training order (pandas re-codes
    by label), the frame XGBoost 3.2 reads right.  A label the model was not
    fitted with reads as the next training label in sorted order, as
    XGBoost's re-coder documents it and does for ASCII labels
    (tests/test_categorical_labels.py); LightGBM reads it as missing."""
    ordered = sorted(labels)

    def read(v):
        if not isinstance(v, str) or v in labels or unseen != "next":
            return v
        return ordered[bisect.bisect_left(ordered, v)]

    G = F.copy()
    G["c"] = pd.Categorical([read(v) for v in F["c"].astype(object)], categories=labels)
    return G


def xgboost_on_codes(model, G, output_margin=False):
    """XGBoost's leaf ids (or margin) of the rows of G given as the pandas
    codes of G's categories: XGBoost re-codes nothing, as in its training."""
    booster = model.get_booster()
    codes = np.column_stack([
        G[c].cat.codes.replace(-1, np.nan).to_numpy(dtype=float)   # -1: missing
        if str(G[c].dtype) == "category" else G[c].to_numpy(dtype=float)
        for c in G.columns])
    d = xgb.DMatrix(codes, feature_names=booster.feature_names,
                    feature_types=booster.feature_types, enable_categorical=True)
    if output_margin:
        return booster.predict(d, output_margin=True)
    return booster.predict(d, pred_leaf=True)


def quiet(f, *args, **kw):
    with warnings.catch_warnings(), threadpool_limits(1, user_api="openmp"):
        warnings.simplefilter("ignore")
        return f(*args, **kw)


MODELS = {
    "xgboost_partition": lambda: xgb.XGBRegressor(
        n_estimators=12, max_depth=4, enable_categorical=True, max_cat_to_onehot=1,
        n_jobs=1, random_state=0),
    "xgboost_onehot": lambda: xgb.XGBRegressor(
        n_estimators=12, max_depth=4, enable_categorical=True, max_cat_to_onehot=64,
        n_jobs=1, random_state=0),
    "lightgbm": lambda: lgb.LGBMRegressor(
        n_estimators=12, num_leaves=10, min_child_samples=5, min_data_per_group=5,
        cat_smooth=1.0, max_cat_to_onehot=4, n_jobs=1, verbose=-1, random_state=0),
    "hgb": lambda: HistGradientBoostingRegressor(
        max_iter=12, categorical_features="from_dtype", random_state=0),
}
FRAMES = {"training": lambda X: X, "reordered": reordered, "subset": subset,
          "unseen": with_unseen}
_CACHE = {}


def fitted(name):
    """(model, FIRE estimator, training frame), cached per module."""
    if name not in _CACHE:
        X, y = make_frame()
        model = quiet(MODELS[name]().fit, X, y)
        # every leaf a rule (rule_depth=None): the labels' splits run deep
        est = quiet(FIRERegressor(model, penalty="l1", n_lambdas=15, max_rules=40,
                                  rule_depth=None, random_state=0).fit, X, y)
        _CACHE[name] = (model, est, X)
    return _CACHE[name]


def library_leaves(name, model, est, F):
    """The library's own leaf table of F (None for HistGradientBoosting,
    which has no leaf call)."""
    ens = est.ensemble_
    if name.startswith("xgboost"):
        G = as_training_categories(F, HARD)
        return ens.leaf_table_from_ids(xgboost_on_codes(model, G)), G
    if name == "lightgbm":
        return ens.leaf_table_from_ids(model.predict(F, pred_leaf=True)), F
    return None, F


def check_rules_against(ens, F, table):
    """rule_mask, each condition on the raw frame and the printed rule read
    back all select the rows the table routes to each leaf."""
    check_rules_route_rows(ens, F, table)
    reading = library_reading(ens)
    for j in range(ens.n_rules):
        expected = table[:, ens.rule_tree[j]] == j
        raw = np.ones(len(F), dtype=bool)
        for c in ens.rules[j]:
            raw &= c.evaluate(F)
        np.testing.assert_array_equal(raw, expected, err_msg=f"conditions of rule {j}")
        text = rule_text(ens, j, show_missing=True)
        got = evaluate_parsed(parse_rule(text, ens.feature_names), F, **reading)
        np.testing.assert_array_equal(got, expected, err_msg=f"rule {j}: {text!r}")


# ---------------------------------------------------------------------------
# the labels
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["xgboost_partition", "xgboost_onehot", "lightgbm"])
def test_labels_are_read_exactly(name):
    _, est, _ = fitted(name)
    ens = est.ensemble_
    assert ens._adapter.labels[1] == tuple(HARD)
    cats = [v for r in ens.rules for c in r if c.is_categorical for v in c.categories]
    assert cats and set(cats) <= set(HARD)


@pytest.mark.parametrize("name", ["xgboost_partition", "xgboost_onehot"])
def test_xgboost_splits_on_the_hard_labels(name):
    _, est, _ = fitted(name)
    split = {v for r in est.ensemble_.rules for c in r if c.is_categorical for v in c.categories}
    # the model's splits do involve labels of 2, 3 and 4 bytes per character
    assert any(max(map(ord, v), default=0) > 0xFFFF for v in split)
    assert any(0x7F < max(map(ord, v), default=0) <= 0xFFFF for v in split)


@pytest.mark.skipif(XGB_BYTE_OFFSETS, reason="XGBoost >= 3.4 stores UTF-8 labels exactly")
def test_xgboost_before_3_4_stores_the_labels_cut_and_needs_the_frame():
    model, _, X = fitted("xgboost_partition")
    # what the model stores is not the labels: firecy cannot read them alone
    with pytest.raises(ValueError, match="cut short.*as X"):
        rule_ensemble_from_model(model)
    # a frame whose categories are not the stored ones is refused
    with pytest.raises(ValueError, match="not the ones XGBoost stored"):
        rule_ensemble_from_model(model, X=reordered(X))
    F = X.copy()
    F["c"] = F["c"].cat.rename_categories({ISSUE_LABEL: ISSUE_LABEL + "!"})
    with pytest.raises(ValueError, match="not the ones XGBoost stored"):
        rule_ensemble_from_model(model, X=F)
    ens = rule_ensemble_from_model(model, X=X)
    assert ens._adapter.labels[1] == tuple(HARD)
    # Why firecy gives XGBoost codes: XGBoost 3.2's own re-coding misreads
    # the training frame ('é' and '数据' are both stored as 'ñ'), and a
    # reordered frame (wrongly or not at all)
    truth = xgboost_on_codes(model, X)
    assert not np.array_equal(model.apply(X), truth)
    try:
        own = model.apply(reordered(X))
    except xgb.core.XGBoostError:
        own = None
    assert own is None or not np.array_equal(own, truth)
    np.testing.assert_array_equal(ens.leaf_table(X), ens.leaf_table_from_ids(truth))


def test_issue_label_regression():
    """The issue's label, read whole: in the rules, the exports and rule_mask
    on the training frame.  XGBoost 3.2 stores these four labels as 'i 数据',
    ' 🚀', ' ñ' and 'h', which firecy read as the labels."""
    labels = [ISSUE_LABEL, "hello", "abc", "d"]
    X, y = make_frame(labels, n=600)
    y = y + 3.0 * (X["c"] == ISSUE_LABEL).to_numpy()
    # one-hot splits: the split on the issue's label lists it
    model = quiet(xgb.XGBRegressor(n_estimators=5, max_depth=2, enable_categorical=True,
                                   max_cat_to_onehot=8, n_jobs=1, random_state=0).fit, X, y)
    est = quiet(FIRERegressor(model, penalty="l1", n_lambdas=10, max_rules=20,
                              random_state=0).fit, X, y)
    ens = est.ensemble_
    assert ens._adapter.labels[1] == tuple(labels)
    texts = [rule_text(ens, j) for j in range(ens.n_rules)]
    assert any(repr(ISSUE_LABEL) in t for t in texts)
    assert not any("'i 数据'" in t for t in texts)
    table = ens.leaf_table_from_ids(xgboost_on_codes(model, X))
    check_rules_against(ens, X, table)
    F = reordered(X)
    np.testing.assert_array_equal(
        ens.leaf_table(F),
        ens.leaf_table_from_ids(xgboost_on_codes(model, as_training_categories(F, labels))))
    for G in (X, F):
        expected = est.predict(G)
        np.testing.assert_allclose(run_python(rules_python(est), G), expected,
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(run_sql(rules_sql(est), G, {"c": "text"}), expected,
                                   rtol=1e-9, atol=1e-9)


def test_xgboost_3_4_byte_offsets_are_decoded_exactly():
    """XGBoost >= 3.4 stores the UTF-8 bytes with byte offsets (as Arrow does):
    every label is read whole, with no frame."""
    data = [s.encode("utf-8") for s in HARD]
    offsets = np.cumsum([0] + [len(b) for b in data]).tolist()
    values = np.frombuffer(b"".join(data), dtype=np.int8).tolist()   # UBJSON int8
    cats = {"enc": [{"offsets": offsets, "values": values}]}
    labels, from_frame = _decode_categories(cats, 1, ["c"], (3, 4, 0))
    assert labels == {0: tuple(HARD)} and not from_frame
    # the same container from XGBoost 3.2 could be its cut form of other labels
    with pytest.raises(ValueError, match="cut short"):
        _decode_categories(cats, 1, ["c"], (3, 2, 0))
    X, _ = make_frame(n=60)
    labels, from_frame = _decode_categories(cats, 1, ["c"], (3, 2, 0), X=X[["c"]])
    assert labels == {0: tuple(HARD)} and from_frame == {0}


# ---------------------------------------------------------------------------
# routing and exports, frame by frame
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("frame", sorted(FRAMES))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_rules_and_exports_route_as_the_library(name, frame):
    model, est, X = fitted(name)
    ens = est.ensemble_
    F = FRAMES[frame](X)
    with warnings.catch_warnings():
        # XGBoost: unseen labels read as the next label, and firecy says so
        warnings.simplefilter("ignore")
        table, G = library_leaves(name, model, est, F)
        if table is None:   # HistGradientBoosting: firecy's routing, checked
            table = ens.leaf_table(F)   # against its prediction below
        np.testing.assert_array_equal(ens.leaf_table(F), table)
        check_rules_against(ens, F, table)
        check_predict_raw(ens, F, table=table)
        expected = est.predict(F)
        if name.startswith("xgboost"):
            # the estimator's prediction is the library's margin on the frame,
            # whatever its category order
            np.testing.assert_allclose(ens.reference_predict_raw(F),
                                       xgboost_on_codes(model, G, output_margin=True),
                                       rtol=1e-6)
        python = run_python(rules_python(est), F)
        sql = run_sql(rules_sql(est), F, {"c": "text"})
    np.testing.assert_allclose(python, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sql, expected, rtol=1e-9, atol=1e-9)


def random_labels(n, seed):
    """n distinct strings of 0 to 12 code points from ASCII, Latin, combining
    marks, CJK and the astral planes (no surrogates, no NUL)."""
    rng = np.random.default_rng(seed)
    ranges = [(0x01, 0x7F), (0x80, 0x7FF), (0x300, 0x36F), (0x800, 0xD7FF),
              (0xE000, 0xFFFD), (0x10000, 0x10FFFF)]
    out = set()
    while len(out) < n:
        picks = rng.integers(0, len(ranges), rng.integers(0, 13))
        out.add("".join(chr(int(rng.integers(ranges[r][0], ranges[r][1] + 1))) for r in picks))
    return list(rng.permutation(np.array(sorted(out), dtype=object)))


@pytest.mark.parametrize("seed", [0, 1])
def test_xgboost_random_unicode_labels_read_exactly(seed):
    labels = random_labels(60, seed)
    X, y = make_frame(labels, n=400, seed=seed)
    model = quiet(xgb.XGBRegressor(n_estimators=3, max_depth=3, enable_categorical=True,
                                   max_cat_to_onehot=1, n_jobs=1, random_state=0).fit, X, y)
    ens = rule_ensemble_from_model(model, X=X)
    assert ens._adapter.labels[1] == tuple(labels)
    F = reordered(X)
    table = ens.leaf_table_from_ids(xgboost_on_codes(model, as_training_categories(F, labels)))
    check_rules_route_rows(ens, F, table)


def test_xgboost_booster_from_saved_model_with_the_training_frame():
    model, est, X = fitted("xgboost_partition")
    booster = xgb.Booster()
    booster.load_model(bytearray(model.get_booster().save_raw("ubj")))
    ens = rule_ensemble_from_model(booster, X=X)
    assert ens._adapter.labels == est.ensemble_._adapter.labels
    assert [rule_text(ens, j) for j in range(ens.n_rules)] == [
        rule_text(est.ensemble_, j) for j in range(ens.n_rules)]
    F = with_unseen(reordered(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = ens.leaf_table_from_ids(xgboost_on_codes(model, as_training_categories(F, HARD)))
        np.testing.assert_array_equal(ens.leaf_table(F), table)
        check_predict_raw(ens, F, table=table)
    with pytest.warns(UserWarning, match="reads them as the next of its categories"):
        ens.leaf_table(F)


@pytest.mark.parametrize("name", ["xgboost_partition", "xgboost_onehot"])
def test_xgboost_unseen_label_after_the_last_is_refused(name):
    model, est, X = fitted(name)
    F = X.iloc[:5].copy()
    last = max(HARD)
    F["c"] = pd.Categorical([last + "!"] * 5, categories=HARD + [last + "!"])
    with pytest.raises(ValueError, match="XGBoost refuses"):
        est.predict(F)
    with pytest.raises(ValueError, match="XGBoost refuses"):
        est.ensemble_.rule_mask(0, F)
