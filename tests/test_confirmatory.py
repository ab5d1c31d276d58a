"""confirmatory=: terms every fit keeps, unpenalised (R pre's confirmatory).

Checked against independent references: with every other term held at zero
(a huge lam) the confirmatory weights are the unpenalised refit on their
columns alone (numpy lstsq, sklearn's LogisticRegression(penalty=None) and
PoissonRegressor(alpha=0)); at the selected lam the loss's gradient along
each confirmatory column is zero (KKT of an unpenalised coordinate), by a
gradient written out here for each loss.
"""
import json
import pickle
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from firecy import (FIREClassifier, FIREPoissonRegressor, FIRERegressor,
                    FIRESurvivalRegressor)
from firecy.penalties import L1, MCP, BlockwisePenalty, GroupL0, L1Fusion, Unpenalised
from firecy.rules import rules_json

RULE = "x1 > 0.5 and x2 <= 0"
CONF = ["x0", RULE]


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    return X, rng


def _mask(X):
    return ((X[:, 1] > 0.5) & (X[:, 2] <= 0)).astype(float)


def _clipped(x):
    # the linear term's reading: clipped at the training quantiles 2.5% / 97.5%
    # (inverted CDF, as the fit takes them); the centre is the intercept's business
    lo, hi = np.quantile(x, [0.025, 0.975], method="inverted_cdf")
    return np.clip(x, lo, hi)


def _columns(X):
    return np.column_stack([_clipped(X[:, 0]), _mask(X)])


def _forest(kind="regression", n=20):
    cls = RandomForestRegressor if kind == "regression" else RandomForestClassifier
    return cls(n_estimators=n, max_depth=3, random_state=0)


def _regression(n=300, seed=0):
    X, rng = _data(n, seed)
    y = 1.5 * X[:, 0] + 2.0 * _mask(X) + np.sin(3 * X[:, 3]) + 0.3 * rng.normal(size=n)
    return X, y


def _binary(n=400, seed=0):
    X, rng = _data(n, seed)
    eta = 0.8 * X[:, 0] + 1.0 * _mask(X) + np.where(X[:, 3] > 0, 1.0, -1.0)
    return X, (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)


def _multiclass(n=450, seed=0):
    X, rng = _data(n, seed)
    score = X[:, 0] + _mask(X) + 0.5 * X[:, 3] + 0.7 * rng.normal(size=n)
    return X, np.digitize(score, [-0.5, 0.7])


def _counts(n=400, seed=0):
    X, rng = _data(n, seed)
    return X, rng.poisson(np.exp(0.3 * X[:, 0] + 0.6 * _mask(X) + 0.4 * (X[:, 3] > 0)))


def _survival(n=300, seed=0):
    X, rng = _data(n, seed)
    time = rng.exponential(np.exp(-(0.5 * X[:, 0] + 0.8 * _mask(X) + 0.5 * (X[:, 3] > 0))))
    event = rng.random(n) < 0.85
    return X, np.array(list(zip(event, time)), dtype=[("event", bool), ("time", float)])


# --- the penalty -----------------------------------------------------------------
def test_blockwise_fixed_part_dispatches_and_is_unpenalised():
    pen = BlockwisePenalty(MCP(0.3, 3.0), L1(0.3), 2, fixed=Unpenalised(), n_linear_blocks=1)
    # blocks 0, 1 rules (MCP), 2 linear (L1), 3 and on fixed
    assert pen.value_of([1.0], block=2) == pytest.approx(0.3)
    assert pen.value_of([5.0], block=3) == 0.0
    assert pen.prox_of([0.2], block=2)[0] == 0.0
    assert pen.prox_of([0.2], block=4)[0] == 0.2
    assert pen.lambda_max_of([1e-3], block=3) == np.inf
    assert pen.lambda_max_of([1e-3], block=2) == pytest.approx(1e-3)
    assert pen.unpenalised_blocks([0, 2, 4, 5, 6, 7]).tolist() == [3, 4]
    pen.lam = 1.7
    assert (pen.rules.lam, pen.linear.lam, pen.fixed.lam) == (1.7, 1.7, 1.7)
    # the kept blocks of a subset, renumbered: one rule, the linear one, one fixed
    sub = pen.restrict_blocks(np.array([1, 2, 4]))
    assert (sub.n_rule_blocks, sub.n_linear_blocks, sub.n_fixed_start) == (1, 1, 2)
    back = pickle.loads(pickle.dumps(pen))
    assert (back.n_rule_blocks, back.n_linear_blocks, type(back.fixed)) == (2, 1, Unpenalised)
    assert "fixed=Unpenalised" in repr(pen)
    # the old form is unchanged: no fixed blocks, everything after the rules linear
    old = BlockwisePenalty(L1(0.3), L1(0.3), 2)
    assert old.n_fixed_start is None and old.n_linear_blocks is None
    assert old.value_of([1.0], block=9) == pytest.approx(0.3)
    assert old.unpenalised_blocks([0, 1, 2, 3]).size == 0


def test_blockwise_flags_come_from_every_part():
    sep = BlockwisePenalty(L1(1.0), L1(1.0), 1, fixed=Unpenalised(), n_linear_blocks=0)
    assert sep.is_separable
    # the rules' score kind (group-L0: achievable decreases) carries over
    dec = BlockwisePenalty(GroupL0(L1(1.0), lam0=1.0), L1(1.0), 1, fixed=Unpenalised(),
                           n_linear_blocks=0)
    assert dec.flags & 2 and not dec.flags & 1
    assert not BlockwisePenalty(L1Fusion(1.0, 0.5), L1(1.0), 1).is_separable


def test_blockwise_fixed_part_bad_input():
    with pytest.raises(ValueError, match="n_linear_blocks"):
        BlockwisePenalty(L1(1.0), L1(1.0), 2, fixed=Unpenalised())
    with pytest.raises(ValueError, match="give it with fixed="):
        BlockwisePenalty(L1(1.0), L1(1.0), 2, n_linear_blocks=1)
    with pytest.raises(ValueError, match="fixed blocks' penalty must be separable"):
        BlockwisePenalty(L1(1.0), L1(1.0), 2, fixed=L1Fusion(1.0, 0.5), n_linear_blocks=0)


# --- independent references: the other terms at zero -----------------------------
def _zero_elsewhere(fire):
    assert not np.any(fire.coef_)
    assert not np.any(getattr(fire, "linear_coef_", np.zeros(0)))


def test_regression_huge_lambda_is_least_squares_on_the_confirmatory_columns():
    X, y = _regression()
    fire = FIRERegressor(_forest(), lam=1e12, confirmatory=CONF, tol=1e-12,
                         random_state=0).fit(X, y)
    _zero_elsewhere(fire)
    A = np.column_stack([np.ones(len(y)), _columns(X)])
    ref = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(fire.confirmatory_coef_, ref[1:], rtol=1e-6)
    np.testing.assert_allclose(fire.predict(X), A @ ref, rtol=1e-6, atol=1e-8)


def test_binary_huge_lambda_is_the_unpenalised_logistic_fit():
    from sklearn.linear_model import LogisticRegression

    X, y = _binary()
    fire = FIREClassifier(_forest("classification"), lam=1e12, confirmatory=CONF, tol=1e-12,
                          random_state=0).fit(X, y)
    _zero_elsewhere(fire)
    ref = LogisticRegression(penalty=None, tol=1e-12, max_iter=100_000).fit(_columns(X), y)
    np.testing.assert_allclose(fire.confirmatory_coef_, ref.coef_[0], rtol=1e-5)


def test_poisson_huge_lambda_is_the_unpenalised_poisson_fit():
    from sklearn.linear_model import PoissonRegressor

    X, y = _counts()
    fire = FIREPoissonRegressor(_forest(), lam=1e12, confirmatory=CONF, tol=1e-12,
                                random_state=0).fit(X, y)
    _zero_elsewhere(fire)
    ref = PoissonRegressor(alpha=0.0, tol=1e-12, max_iter=100_000).fit(_columns(X), y)
    np.testing.assert_allclose(fire.confirmatory_coef_, ref.coef_, rtol=1e-5)


# --- KKT at the selected lambda --------------------------------------------------
def _relative(grad, cols, resid):
    # the gradient relative to the sizes of what it multiplies
    return np.abs(grad) / (np.linalg.norm(cols, axis=0) * np.linalg.norm(resid))


def test_regression_kkt_and_kept_at_every_path_point():
    X, y = _regression()
    fire = FIRERegressor(_forest(), confirmatory=CONF, tol=1e-12, cv=3,
                         random_state=0).fit(X, y)
    resid = y - fire.predict(X)
    cols = _columns(X)
    assert np.all(_relative(cols.T @ resid, cols, resid) < 1e-6)
    assert np.all(fire.confirmatory_coef_ != 0)
    assert fire.n_terms_ > 0          # the path did select something beside them
    _kept_along_path(fire, 2)


def _kept_along_path(fire, n_columns):
    coefs = np.asarray(fire.path_.coefs)
    assert np.all(coefs[:, -n_columns:] != 0), "a confirmatory term left the path"
    for path in fire.paths_:
        assert np.all(np.asarray(path.coefs)[:, -n_columns:] != 0)


def test_binary_kkt_and_kept():
    X, y = _binary()
    fire = FIREClassifier(_forest("classification"), confirmatory=CONF, tol=1e-12, cv=3,
                          random_state=0).fit(X, y)
    resid = y - fire.predict_proba(X)[:, 1]
    cols = _columns(X)
    assert np.all(_relative(cols.T @ resid, cols, resid) < 1e-6)
    _kept_along_path(fire, 2)


def test_multiclass_one_term_per_class_kkt_and_kept():
    X, y = _multiclass()
    fire = FIREClassifier(_forest("classification"), confirmatory=CONF, tol=1e-12, cv=3,
                          random_state=0).fit(X, y)
    assert fire.confirmatory_coef_.shape == (3, 2)
    P = fire.predict_proba(X)
    cols = _columns(X)
    for k in range(3):
        resid = (y == k) - P[:, k]
        assert np.all(_relative(cols.T @ resid, cols, resid) < 1e-6), k
    # the softmax ignores a shift of a term's weight in every class: the fit may
    # leave one class's at zero, and the term is in the model while any class's
    # is not; the fitted weights are stated summing to zero over the classes
    for path in fire.paths_:
        per_term = np.asarray(path.coefs)[:, -6:].reshape(len(path.coefs), 2, 3)
        assert np.all(np.any(per_term != 0, axis=2))
    np.testing.assert_allclose(fire.confirmatory_coef_.sum(axis=0), 0.0, atol=1e-12)
    assert np.all(fire.confirmatory_coef_ != 0)
    assert fire.model_.n_confirmatory == 6


def test_poisson_kkt_and_kept():
    X, y = _counts()
    fire = FIREPoissonRegressor(_forest(), confirmatory=CONF, tol=1e-12, cv=3,
                                random_state=0).fit(X, y)
    resid = y - fire.predict(X)
    cols = _columns(X)
    assert np.all(_relative(cols.T @ resid, cols, resid) < 1e-6)
    _kept_along_path(fire, 2)


def _cox_gradient(eta, time, event, cols):
    """The Breslow partial likelihood's gradient in each column (ties share
    their risk set): sum over events of x_i - the risk set's weighted mean."""
    w = np.exp(eta - eta.max())
    grad = np.zeros(cols.shape[1])
    for i in np.flatnonzero(event):
        at_risk = time >= time[i]
        mean = (w[at_risk, None] * cols[at_risk]).sum(axis=0) / w[at_risk].sum()
        grad += cols[i] - mean
    return grad


def test_cox_kkt_and_kept():
    X, y = _survival()
    fire = FIRESurvivalRegressor(_forest(), confirmatory=CONF, tol=1e-10, cv=3,
                                 random_state=0).fit(X, y)
    eta = fire.predict(X)
    cols = _columns(X)
    grad = _cox_gradient(eta, y["time"], y["event"], cols)
    scale = np.array([np.abs(_cox_gradient(np.zeros_like(eta), y["time"], y["event"],
                                           cols[:, [q]])).sum() for q in range(2)])
    assert np.all(np.abs(grad) <= 1e-6 * np.maximum(scale, 1.0)), (grad, scale)
    _kept_along_path(fire, 2)


# --- the budget ------------------------------------------------------------------
def test_confirmatory_terms_are_not_counted_against_max_rules():
    X, y = _regression(n=400)
    # selection="budget": the path point at the budget, 3 selected terms
    fire = FIRERegressor(_forest(), confirmatory=CONF, max_rules=3, selection="budget",
                         random_state=0).fit(X, y)
    selected = int(np.count_nonzero(fire.coef_)) + int(np.count_nonzero(fire.linear_coef_))
    assert selected == fire.n_terms_ == 3
    # the confirmatory terms come on top: the model holds more than max_rules terms
    assert fire.n_confirmatory_ == 2 and selected + 2 > 3
    assert np.all(np.asarray(fire.path_.n_rules)[fire.path_.eligible] <= 3)
    # the same budget under cross-validation holds too
    cv = FIRERegressor(_forest(), confirmatory=CONF, max_rules=3, cv=3,
                       random_state=0).fit(X, y)
    assert cv.n_terms_ <= 3 and np.all(cv.confirmatory_coef_ != 0)
    # path_.n_rules counts the selected terms only
    coefs = np.asarray(fire.path_.coefs)
    np.testing.assert_array_equal(fire.path_.n_rules,
                                  np.count_nonzero(coefs[:, :-2], axis=1))
    assert "(the confirmatory terms on top)" in fire.model_.budget_text()
    # a refined path's skipped counts are of the selected terms too
    seen = set(np.asarray(cv.path_.n_rules).tolist())
    skipped = cv.path_.skipped_counts
    assert skipped is not None and not set(skipped.tolist()) & seen
    assert set(range(1, min(max(seen), 3) + 1)) <= seen | set(skipped.tolist())


@pytest.mark.parametrize("linear_terms", [True, False])
def test_stable_mode_keeps_the_confirmatory_terms(linear_terms):
    # with linear terms the pool's rules are kept (a fixed ridge) and the path
    # chooses the linear terms; without, it selects in the pool: either way the
    # confirmatory terms are fitted beside
    X, y = _regression(n=300)
    fire = FIRERegressor(RandomForestRegressor(100, max_depth=2, random_state=0),
                         stable=True, confirmatory=CONF, max_rules=4, cv=3,
                         linear_terms=linear_terms, random_state=0).fit(X, y)
    assert np.all(fire.confirmatory_coef_ != 0)
    assert fire.n_rules_ <= 4
    resid = y - fire.predict(X)
    cols = _columns(X)
    assert np.all(_relative(cols.T @ resid, cols, resid) < 1e-5)


# --- every output ----------------------------------------------------------------
@pytest.fixture(scope="module")
def fitted():
    X, y = _regression()
    return FIRERegressor(_forest(), confirmatory=CONF, cv=3, random_state=0).fit(X, y), X


def test_every_output_shows_the_terms_as_confirmatory(fitted):
    fire, X = fitted
    table = fire.rules_
    assert table["confirmatory"].tolist().count(True) == 2
    conf = table[table["confirmatory"]]
    assert conf["rule"].iloc[1] == RULE and conf["kind"].tolist() == ["linear", "rule"]
    assert conf["rule"].iloc[0].startswith(f"{fire.confirmatory_coef_[0]:+.4g} per unit of x0")
    model = fire.model_
    assert [t.confirmatory for t in model.terms].count(True) == 2
    assert model.n_terms == fire.n_terms_ and model.n_confirmatory == 2
    assert model.counts()["n_confirmatory"] == 2
    text = fire.summary()
    listed = [line for line in text.splitlines() if re.match(r"\s*\d+\. ", line)]
    assert [line for line in listed if "(confirmatory" in line] == listed[-2:]
    assert listed[-2].endswith("(confirmatory)") and "+ 2 confirmatory" in text
    assert f"if {RULE} then" in text
    doc = json.loads(json.dumps(rules_json(fire)))
    rows = [r for r in doc["rules"] if r.get("confirmatory")]
    assert [r["kind"] for r in rows] == ["linear", "rule"]
    assert rows[1]["conditions"][0] == {"feature": "x1", "feature_index": 1, "op": ">",
                                        "threshold": 0.5, "missing": False,
                                        "dtype": "float64"}
    assert doc["n_confirmatory"] == 2
    from firecy.report import report_html

    html = report_html(fire, X)
    assert "confirmatory terms (kept at every lambda, unpenalised)" in html
    assert "+ 2 confirmatory" in html
    # the rules table's tree column names them
    assert html.count(">confirmatory<") == 2


def test_explain_sums_to_the_prediction_with_the_confirmatory_terms(fitted):
    fire, X = fitted
    table = fire.explain(X[:5])
    conf = table[table["kind"] == "confirmatory"]
    assert len(conf) == 2 * 5
    assert conf["text"].str.endswith("(confirmatory)").all()
    sums = table.groupby("row")["contribution"].sum().to_numpy()
    np.testing.assert_allclose(sums, fire.predict(X[:5]), rtol=1e-10)
    # the rule's term fires exactly on the rows its text selects
    rule = conf[conf["text"] == f"{RULE} (confirmatory)"]
    np.testing.assert_array_equal(rule["fires"].to_numpy(), _mask(X[:5]).astype(bool))


def test_prediction_adds_the_confirmatory_terms(fitted):
    fire, X = fitted
    # the prediction without them, from the ensemble, the intercept and the linear terms
    raw = np.asarray(fire.ensemble_.predict_raw(X, fire.coef_)) + fire.intercept_
    raw = raw + np.ravel(fire._linear_part(X))
    col = X[:, 0].copy()
    conf = fire.confirmatory_
    lin = (np.clip(col, conf.lower[0], conf.upper[0]) - conf.center[0])
    expected = raw + fire.confirmatory_coef_[0] * lin + fire.confirmatory_coef_[1] * _mask(X)
    np.testing.assert_allclose(fire.predict(X), expected, rtol=1e-10)


def test_a_confirmatory_feature_is_not_also_a_penalised_linear_term(fitted):
    fire, _ = fitted
    assert 0 not in fire.linear_terms_.features.tolist()
    assert ("x0", "confirmatory") in fire.linear_terms_.not_offered


def test_feature_index_and_names_of_a_frame():
    pd = pytest.importorskip("pandas")
    X, y = _regression()
    frame = pd.DataFrame(X, columns=["age", "bmi", "bp", "s1"])
    fire = FIRERegressor(_forest(), confirmatory=["age", "bmi > 0.5 and bp <= 0"], cv=3,
                         random_state=0).fit(frame, y)
    by_index = FIRERegressor(_forest(), confirmatory=[0, "bmi > 0.5 and bp <= 0"], cv=3,
                             random_state=0).fit(frame, y)
    np.testing.assert_allclose(fire.confirmatory_coef_, by_index.confirmatory_coef_)
    assert fire.confirmatory_.texts == ["age", "bmi > 0.5 and bp <= 0"]


# --- signs -----------------------------------------------------------------------
def test_a_sign_constraint_holds_and_binds():
    X, rng = _data(300)
    y = -1.0 * X[:, 0] + 2.0 * _mask(X) + 0.3 * rng.normal(size=300)
    free = FIRERegressor(_forest(), lam=1e12, linear_terms=False, confirmatory=CONF,
                         tol=1e-12, random_state=0).fit(X, y)
    # the data push x0's weight below zero and the rule's above
    assert free.confirmatory_coef_[0] < -0.5 and free.confirmatory_coef_[1] > 0.5
    signed = FIRERegressor(_forest(), linear_terms=False, confirmatory={"x0": +1, RULE: +1},
                           tol=1e-12, cv=3, random_state=0).fit(X, y)
    assert signed.confirmatory_coef_[0] == 0.0      # pushed the other way: held at 0
    assert signed.confirmatory_coef_[1] > 0.5
    # KKT of a bound held at 0: the loss would fall by moving it down, not up
    resid = y - signed.predict(X)
    cols = _columns(X)
    assert cols[:, 0] @ resid < 0
    assert _relative(cols[:, 1:].T @ resid, cols[:, 1:], resid)[0] < 1e-6
    # the outputs still show the term held at zero, as confirmatory
    shown = signed.rules_[signed.rules_["confirmatory"]]
    assert shown["weight"].tolist()[0] == 0.0 and len(shown) == 2
    assert signed.confirmatory_.signs.tolist() == [1, 1]
    down = FIRERegressor(_forest(), lam=1e12, linear_terms=False,
                         confirmatory={"x0": -1, RULE: 0}, tol=1e-12,
                         random_state=0).fit(X, y)
    np.testing.assert_allclose(down.confirmatory_coef_, free.confirmatory_coef_, rtol=1e-6)


# --- bad input, parameters -------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    (["x9 > 1"], "'x9 > 1' is neither a feature name nor a rule"),
    (["x1 >> 2"], "'x1 >> 2' is neither a feature name nor a rule"),
    (["x1 > 100"], "'x1 > 100' selects no training row"),
    (["x1 > -100"], "'x1 > -100' holds on every training row"),
    (["x3"], "'x3': the feature is constant"),
    ([7], "confirmatory term 7: X has 4 features"),
    ("x0", "got the string 'x0': use \\['x0'\\]"),
    ({"x0": 2}, "sign of confirmatory term 'x0' must be \\+1, -1 or 0"),
    (["x0", "x0"], "'x0' is given twice"),
    (["x0", 0], "'x0' and 'x0' are the same linear term"),
    ([1.5], "a confirmatory term is a feature name or index or a rule text, got 1.5"),
])
def test_bad_confirmatory_terms_are_named(spec, message):
    X, y = _regression(n=120)
    X[:, 3] = 1.0
    with pytest.raises(ValueError, match=message):
        FIRERegressor(_forest(n=5), confirmatory=spec, cv=2, random_state=0).fit(X, y)


def test_clone_and_get_params_round_trip():
    for est in (FIRERegressor(confirmatory=CONF), FIREClassifier(confirmatory={"x0": 1}),
                FIREPoissonRegressor(confirmatory=[0]),
                FIRESurvivalRegressor(confirmatory=[RULE])):
        params = est.get_params()
        assert "confirmatory" in params
        copy = clone(est)
        assert copy.get_params()["confirmatory"] == params["confirmatory"]
        assert type(copy)(**params).get_params() == params
    assert FIRERegressor().confirmatory is None


def test_without_confirmatory_nothing_changes():
    X, y = _regression(n=200)
    plain = FIRERegressor(_forest(), cv=3, random_state=0).fit(X, y)
    assert plain.confirmatory_ is None and plain.confirmatory_coef_ is None
    assert "confirmatory" not in plain.rules_.columns
    assert "confirmatory" not in plain.summary()
    assert plain.model_.n_confirmatory == 0 and "n_confirmatory" not in plain.model_.counts()
    assert not re.search("confirmatory", json.dumps(rules_json(plain)))


def test_command_line_confirmatory(tmp_path, capsys):
    pytest.importorskip("pandas")
    from firecy.cli import main

    X, y = _regression(n=200)
    path = tmp_path / "data.csv"
    with open(path, "w") as fh:
        fh.write("x0,x1,x2,x3,y\n")
        for row, t in zip(X, y):
            fh.write(",".join(repr(float(v)) for v in row) + f",{float(t)!r}\n")
    out = tmp_path / "rules.json"
    code = main(["extract", str(path), "--target", "y", "--confirmatory", "x0",
                 "--confirmatory", RULE, "--max-rules", "4", "--n-trees", "30",
                 "--n-lambdas", "15", "--n-jobs", "1", "--no-progress", "--seed", "0",
                 "--output", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    conf = [r for r in doc["rules"] if r.get("confirmatory")]
    assert [r["kind"] for r in conf] == ["linear", "rule"] and conf[1]["rule"] == RULE
    assert doc["n_confirmatory"] == 2
    assert "+ 2 confirmatory" in printed and f"if {RULE} then" in printed
    # firecy explain: a row's printed terms add up to its prediction, the
    # confirmatory rule printed where it holds (two rows where it does, two not)
    picked = np.r_[np.flatnonzero(_mask(X))[:2], np.flatnonzero(_mask(X) == 0)[:2]]
    picked.sort()
    code = main(["explain", str(path), "--target", "y", "--confirmatory", "x0",
                 "--confirmatory", RULE, "--max-rules", "4", "--n-trees", "30",
                 "--n-lambdas", "15", "--n-jobs", "1", "--no-progress", "--seed", "0",
                 "--rows", ",".join(str(i + 2) for i in picked),
                 "--output", str(tmp_path / "e.csv")])
    assert code == 0
    printed = capsys.readouterr().out
    blocks = re.split(r"(?m)^CSV line \d+: prediction = ", printed)[1:]
    assert len(blocks) == 4
    holds = _mask(X[picked])
    for block, rule_holds in zip(blocks, holds):
        head, *lines = block.splitlines()
        values = [float(m.group(1)) for m in
                  (re.match(r"\s+([+-]\S+)  ", line) for line in lines) if m]
        assert sum(values) == pytest.approx(float(head), rel=1e-4, abs=1e-4)
        assert any(f"{RULE} (confirmatory)" in line for line in lines) == bool(rule_holds)
        assert any("per unit of x0" in line and "(confirmatory)" in line for line in lines)
    # a bad term: one clear line, nonzero status
    code = main(["extract", str(path), "--target", "y", "--confirmatory", "x9 > 1",
                 "--n-trees", "10", "--n-jobs", "1", "--no-progress"])
    assert code != 0
    assert "x9 > 1" in capsys.readouterr().err


def test_what_does_not_take_confirmatory_terms_says_so(fitted):
    fire, X = fitted
    with pytest.raises(NotImplementedError, match="confirmatory terms"):
        fire.inference(X, fire.predict(X))
    Xb, yb = _binary()
    clf = FIREClassifier(_forest("classification"), linear_terms=False,
                         confirmatory=[RULE], cv=3, random_state=0).fit(Xb, yb)
    from firecy.risk import risk_card

    with pytest.raises(ValueError, match="confirmatory terms"):
        risk_card(clf, Xb, yb)


def test_a_category_column_takes_a_rule_not_a_slope():
    pd = pytest.importorskip("pandas")
    from sklearn.ensemble import HistGradientBoostingRegressor

    X, y = _regression(n=300)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
    frame["colour"] = pd.Categorical(np.where(X[:, 3] > 0, "red", "blue"))
    model = HistGradientBoostingRegressor(max_iter=10, categorical_features="from_dtype")
    with pytest.raises(ValueError, match="'colour' is a categorical feature: give a rule"):
        FIRERegressor(model, confirmatory=["colour"], cv=3).fit(frame, y)
    fire = FIRERegressor(model, confirmatory=["colour in {'red'}"], cv=3, n_lambdas=10,
                         random_state=0).fit(frame, y)
    assert fire.confirmatory_.support[0] == pytest.approx(np.mean(X[:, 3] > 0))
    np.testing.assert_array_equal(fire.confirmatory_.values(frame)[:, 0], X[:, 3] > 0)


def test_signs_for_each_loss_and_the_stable_pool():
    X, y = _binary()
    # the data push the rule's weight up (eta has +1.0 on it): held at 0 under -1
    free = FIREClassifier(_forest("classification"), confirmatory=CONF, cv=3,
                          random_state=0).fit(X, y)
    assert free.confirmatory_coef_[1] > 0.3
    held = FIREClassifier(_forest("classification"), confirmatory={"x0": 0, RULE: -1},
                          cv=3, random_state=0).fit(X, y)
    assert held.confirmatory_coef_[1] == 0.0 and held.confirmatory_coef_[0] > 0.3
    Xm, ym = _multiclass()
    multi = FIREClassifier(_forest("classification"), confirmatory={"x0": +1, RULE: 0},
                           cv=3, random_state=0).fit(Xm, ym)
    assert np.all(multi.confirmatory_coef_[:, 0] >= 0.0)
    assert multi.confirmatory_coef_[0, 0] == 0.0      # class 0 falls with x0
    Xc, yc = _counts()
    pois = FIREPoissonRegressor(_forest(), confirmatory={"x0": -1, RULE: +1}, cv=3,
                                random_state=0).fit(Xc, yc)
    assert pois.confirmatory_coef_[0] == 0.0 and pois.confirmatory_coef_[1] > 0.2
    Xr, yr = _regression()
    stable = FIRERegressor(RandomForestRegressor(100, max_depth=2, random_state=0),
                           stable=True, confirmatory={"x0": -1, RULE: +1}, max_rules=4,
                           cv=3, random_state=0).fit(Xr, yr)
    assert stable.confirmatory_coef_[0] == 0.0 and stable.confirmatory_coef_[1] > 0.5


def test_blockwise_passes_on_the_sign_bound_flag_and_restricts_the_bounds():
    from firecy.penalties import SignConstrained

    inf = np.inf
    signs = SignConstrained(Unpenalised(), lower=[0.0, -inf, -inf], upper=[inf, inf, 0.0])
    pen = BlockwisePenalty(L1(0.1), L1(0.1), 2, fixed=signs, n_linear_blocks=1)
    assert pen.flags & 4 and not BlockwisePenalty(L1(0.1), L1(0.1), 2).flags & 4
    # fixed blocks 3, 4, 5 are the bounds' columns 0, 1, 2, whatever their design columns
    assert pen.prox_of([-2.0], block=3)[0] == 0.0
    assert pen.prox_of([-2.0], block=4)[0] == -2.0
    assert pen.prox_of([2.0], block=5)[0] == 0.0
    sub = pen.restrict_blocks(np.array([0, 2, 5]))   # keeps the third bound only
    assert sub.n_fixed_start == 2
    np.testing.assert_array_equal(sub.fixed.upper, [0.0])
    assert sub.prox_of([2.0], block=2)[0] == 0.0


def test_the_parameter_is_checked_before_the_model_is_fitted():
    class Refuses(RandomForestRegressor):
        def fit(self, X, y, sample_weight=None):
            raise AssertionError("the model was fitted before confirmatory= was checked")

    X, y = _regression(n=60)
    with pytest.raises(ValueError, match="sign of confirmatory term 'x0'"):
        FIRERegressor(Refuses(), confirmatory={"x0": 5}).fit(X, y)


def test_interpretml_explanations_hold_the_confirmatory_terms(fitted):
    pytest.importorskip("interpret")
    fire, X = fitted
    names = fire.explain_global().data()["names"]
    assert RULE in names
    local = fire.explain_local(X[:3])
    for i in range(3):
        row = local.data(i)
        total = sum(row["scores"]) + row["extra"]["scores"][0]
        assert total == pytest.approx(fire.predict(X[i:i + 1])[0], rel=1e-10)
        assert row["names"][-1] == RULE
        rule = fire.confirmatory_coef_[1] * _mask(X[i:i + 1])[0]
        assert row["scores"][-1] == pytest.approx(rule)


def test_dask_collections_refuse_confirmatory_terms():
    da = pytest.importorskip("dask.array")
    X, y = _regression(n=100)
    with pytest.raises(NotImplementedError, match="confirmatory= is not available for Dask"):
        FIRERegressor(confirmatory=CONF).fit(da.from_array(X, chunks=(50, 4)),
                                             da.from_array(y, chunks=(50,)))


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_exported_python_and_sql_predict_with_the_confirmatory_terms(kind):
    """rules_python and rules_sql carry the confirmatory rule and linear term:
    on fresh rows with missing values (and on the rule's threshold itself),
    each output equals the model's raw prediction; the header counts them."""
    import sqlite3

    from firecy.rules import rules_python, rules_sql

    names = ["x0", "x1", "x2", "x3"]
    if kind == "regression":
        X, y = _regression()
        fire = FIRERegressor(_forest(), confirmatory=CONF, cv=3, random_state=0).fit(X, y)
    else:
        X, y = _multiclass()
        fire = FIREClassifier(_forest("classification"), confirmatory=CONF, cv=3,
                              random_state=0).fit(X, y)
    Z, _ = _data(200, seed=5)
    Z[:5, 1] = 0.5                       # on the rule's threshold
    Z[5:10, 2] = 0.0
    Z[10:20, 0] = np.nan                 # a missing linear feature: it adds 0
    Z[20:30, 1] = np.nan                 # a missing rule feature: the rule does not hold
    raw = (fire.predict(Z) if kind == "regression" else fire.decision_function(Z))
    raw = np.asarray(raw, dtype=np.float64).reshape(len(Z), -1)
    source = rules_python(fire, feature_names=names)
    assert "plus 2 confirmatory terms" in source or "plus 6 confirmatory terms" in source
    namespace = {}
    exec(source, namespace)
    py = np.asarray([namespace["predict"](dict(zip(names, map(float, row)))) for row in Z],
                    dtype=np.float64).reshape(len(Z), -1)
    np.testing.assert_allclose(py, raw, rtol=1e-12, atol=1e-12)
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE data (i INTEGER, " + ", ".join(f'"{n}" REAL' for n in names)
                + ")")
    con.executemany("INSERT INTO data VALUES (?" + ", ?" * len(names) + ")",
                    [(i, *[None if np.isnan(v) else float(v) for v in row])
                     for i, row in enumerate(Z)])
    expr = rules_sql(fire, feature_names=names, alias="m", table="data")
    sql = np.asarray(con.execute(f"SELECT {expr} FROM data ORDER BY i").fetchall(),
                     dtype=np.float64)
    np.testing.assert_allclose(sql, raw, rtol=1e-12, atol=1e-12)
