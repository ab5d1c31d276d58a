"""Intervals after selection (issue 50): the refit's intervals against a hand
computation, the reproducibility of the split, and the refusals."""
import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from firecy import FIREClassifier, FIREPoissonRegressor, FIRERegressor


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, 3))
    y = 3.0 * (X[:, 0] > 5) + 0.4 * X[:, 1] + rng.normal(size=n)
    return X, y


def _ols_by_hand(A, y, level=0.95, robust=False):
    n, p = A.shape
    beta = np.linalg.lstsq(A, y, rcond=None)[0]
    r = y - A @ beta
    XtX_inv = np.linalg.inv(A.T @ A)
    if robust:
        cov = XtX_inv @ (A.T * r ** 2) @ A @ XtX_inv * n / (n - p)
    else:
        cov = (r @ r) / (n - p) * XtX_inv
    se = np.sqrt(np.diag(cov))
    q = stats.t.ppf(0.5 + level / 2, n - p)
    return beta, se, beta - q * se, beta + q * se


@pytest.mark.parametrize("robust", [False, True])
def test_holdout_interval_is_the_refits_ols_interval(robust):
    X, y = _data()
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=3, random_state=0), max_rules=4,
                         cv=3, random_state=0).fit(X[:200], y[:200])
    table = fire.inference(X[200:], y[200:], level=0.9, robust=robust, as_frame=False)
    assert any(r["kind"] == "linear" for r in table) and any(r["kind"] == "rule" for r in table)
    model = fire.model_
    assert [r["term"] for r in table] == sorted([t.name for t in model.terms],
                                                key=[r["term"] for r in table].index)
    assert {r["term"] for r in table} == {t.name for t in model.terms}
    # the columns by hand: a rule's 0/1 indicator, a line's clipped and centred x
    Xh = X[200:]
    cols = []
    for r in table:
        term = next(t for t in model.terms if t.name == r["term"])
        if term.kind == "rule":
            cols.append(fire.ensemble_.rule_mask(term.column, Xh).astype(float))
        else:
            f = term.features[0]
            cols.append(np.clip(Xh[:, f], term.lower, term.upper) - term.center)
    A = np.column_stack([np.ones(200)] + cols)
    beta, se, lo, hi = _ols_by_hand(A, y[200:], 0.9, robust)
    np.testing.assert_allclose([r["estimate"] for r in table], beta[1:], rtol=1e-9)
    np.testing.assert_allclose([r["std_error"] for r in table], se[1:], rtol=1e-9)
    np.testing.assert_allclose([r["lower"] for r in table], lo[1:], rtol=1e-9)
    np.testing.assert_allclose([r["upper"] for r in table], hi[1:], rtol=1e-9)
    # the design the intervals are about, on new rows
    design = fire.inference_design_(Xh)
    np.testing.assert_array_equal(design.Z, A[:, 1:])


def test_split_selects_on_one_part_and_refits_on_the_other():
    from sklearn.base import clone
    from sklearn.utils import check_random_state

    X, y = _data()
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=2, random_state=0), max_rules=1,
                         cv=3, linear_terms=False, random_state=0).fit(X, y)
    table = fire.inference(X, y, method="split", random_state=3, as_frame=False)
    again = fire.inference(X, y, method="split", random_state=3, as_frame=False)
    assert table == again
    order = check_random_state(3).permutation(400)
    pick, rest = order[:200], np.sort(order[200:])
    selector = clone(fire).fit(X[pick], y[pick])
    masks = [selector.ensemble_.rule_mask(int(r["term"].split("_")[1]), X[rest])
             for r in table]
    A = np.column_stack([np.ones(rest.size)] + [m.astype(float) for m in masks])
    beta, se, lo, hi = _ols_by_hand(A, y[rest])
    np.testing.assert_allclose([r["estimate"] for r in table], beta[1:], rtol=1e-9)
    np.testing.assert_allclose([r["upper"] for r in table], hi[1:], rtol=1e-9)


def test_split_is_the_same_on_any_thread_count():
    X, y = _data()
    est = FIRERegressor(DecisionTreeRegressor(max_depth=3, random_state=0), max_rules=4,
                        cv=3, random_state=0)
    one = est.set_params(n_jobs=1).fit(X, y).inference(X, y, method="split", random_state=0,
                                                        as_frame=False)
    two = est.set_params(n_jobs=2).fit(X, y).inference(X, y, method="split", random_state=0,
                                                        as_frame=False)
    assert one == two


def test_logistic_refit_is_the_maximum_likelihood_fit_with_its_wald_interval():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(800, 2))
    p = 1 / (1 + np.exp(-(1.5 * (X[:, 0] > 5) - 0.8)))
    y = np.where(rng.uniform(size=800) < p, "yes", "no")
    fire = FIREClassifier(DecisionTreeClassifier(max_depth=1, random_state=0), max_rules=1,
                          cv=3, linear_terms=False, random_state=0).fit(X[:400], y[:400])
    table = fire.inference(X[400:], y[400:], as_frame=False)
    assert len(table) >= 1
    Z = fire.inference_design_(X[400:]).Z
    target = (y[400:] == "yes").astype(float)
    ref = LogisticRegression(penalty=None, tol=1e-12, max_iter=10_000).fit(Z, target)
    np.testing.assert_allclose([r["estimate"] for r in table], ref.coef_[0], rtol=1e-5)
    A = np.column_stack([np.ones(400), Z])
    mu = ref.predict_proba(Z)[:, 1]
    se = np.sqrt(np.diag(np.linalg.inv((A * (mu * (1 - mu))[:, None]).T @ A)))
    np.testing.assert_allclose([r["std_error"] for r in table], se[1:], rtol=1e-4)
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose([r["lower"] for r in table],
                               [r["estimate"] - z * r["std_error"] for r in table])


def test_poisson_refit_is_the_maximum_likelihood_fit():
    from sklearn.linear_model import PoissonRegressor

    rng = np.random.default_rng(2)
    X = rng.uniform(0, 10, size=(800, 2))
    y = rng.poisson(np.exp(0.7 * (X[:, 0] > 5)))
    fire = FIREPoissonRegressor(DecisionTreeRegressor(max_depth=1, random_state=0),
                                max_rules=1, cv=3, linear_terms=False, random_state=0
                                ).fit(X[:400], y[:400])
    table = fire.inference(X[400:], y[400:], as_frame=False)
    Z = fire.inference_design_(X[400:]).Z
    ref = PoissonRegressor(alpha=0.0, tol=1e-12, max_iter=10_000).fit(Z, y[400:])
    np.testing.assert_allclose([r["estimate"] for r in table], ref.coef_, rtol=1e-5)


def test_sample_weights_are_the_weighted_least_squares_refit():
    X, y = _data()
    w = np.random.default_rng(5).uniform(0.5, 2.0, size=200)
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=1, random_state=0), max_rules=1,
                         cv=3, linear_terms=False, random_state=0).fit(X[:200], y[:200])
    table = fire.inference(X[200:], y[200:], sample_weight=w, as_frame=False)
    A = np.column_stack([np.ones(200), fire.inference_design_(X[200:]).Z])
    sw = np.sqrt(w)
    beta = np.linalg.lstsq(A * sw[:, None], y[200:] * sw, rcond=None)[0]
    np.testing.assert_allclose([r["estimate"] for r in table], beta[1:], rtol=1e-9)


def test_bad_input_gets_a_clear_message():
    X, y = _data()
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=1, random_state=0), max_rules=1,
                         cv=3, linear_terms=False, random_state=0).fit(X[:200], y[:200])
    with pytest.raises(ValueError, match="rows the model was fitted on"):
        fire.inference(X[:200], y[:200])
    # the naive refit on the training rows is there to be compared with
    assert fire.inference(X[:200], y[:200], method="naive", as_frame=False)
    rule = fire.model_.rules[0]
    inside = fire.ensemble_.rule_mask(rule.column, X[200:])
    with pytest.raises(ValueError, match=f"term {rule.name} .* is constant"):
        fire.inference(X[200:][inside], y[200:][inside])
    with pytest.raises(ValueError, match="sample_weight"):
        fire.inference(X[200:], y[200:], sample_weight=np.zeros(200))
    with pytest.raises(ValueError, match="method must be"):
        fire.inference(X[200:], y[200:], method="bootstrap")
    with pytest.raises(ValueError, match="level"):
        fire.inference(X[200:], y[200:], level=95)
    with pytest.raises(ValueError, match="rows but y has"):
        fire.inference(X[200:], y[:10])
    yc = np.where(y > np.median(y), "hi", "lo")
    clf = FIREClassifier(DecisionTreeClassifier(max_depth=1, random_state=0), max_rules=1,
                         cv=3, linear_terms=False, random_state=0).fit(X[:200], yc[:200])
    with pytest.raises(ValueError, match="one class"):
        fire_rows = yc[200:] == "hi"
        clf.inference(X[200:][fire_rows], yc[200:][fire_rows])
    y3 = np.array(["a", "b", "c"])[np.argmax(X, axis=1)]
    multi = FIREClassifier(DecisionTreeClassifier(max_depth=2, random_state=0), max_rules=2,
                           cv=3, linear_terms=False, random_state=0).fit(X[:200], y3[:200])
    with pytest.raises(ValueError, match=r"no row of the classes \['c'\]"):
        multi.inference(X[200:][y3[200:] != "c"], y3[200:][y3[200:] != "c"])


def test_intervals_are_never_nan_and_cover_a_true_rule_weight():
    # one true rule that the tree finds: its held-out interval holds the truth
    # in about 95% of 200 replications (binomial: 0.95 +- 3 SE)
    hits = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(200):
            rng = np.random.default_rng(seed)
            X = rng.uniform(0, 10, size=(200, 2))
            y = 2.0 * (X[:, 0] > 5) + rng.normal(size=200)
            fire = FIRERegressor(DecisionTreeRegressor(max_depth=1, random_state=0),
                                 max_rules=1, cv=3, linear_terms=False,
                                 random_state=0).fit(X[:100], y[:100])
            table = fire.inference(X[100:], y[100:], as_frame=False)
            assert all(np.isfinite([r["lower"], r["upper"]]).all() for r in table)
            term = fire.model_.rules[0]
            # the population coefficient of the selected indicator (threshold t):
            # E[y | x0 > t] - E[y | x0 <= t] for x0 ~ U(0, 10)
            t = next(c.threshold for c in term.conditions)
            above = term.conditions[0].op == ">"
            lo_mass, hi_mass = t / 10, 1 - t / 10
            mean_hi = 2.0 * (10 - max(t, 5)) / 10 / hi_mass if hi_mass else 0.0
            mean_lo = 2.0 * max(t - 5, 0) / 10 / lo_mass if lo_mass else 0.0
            truth = (mean_hi - mean_lo) * (1 if above else -1)
            hits += table[0]["lower"] <= truth <= table[0]["upper"]
    assert 0.95 - 3 * np.sqrt(0.95 * 0.05 / 200) <= hits / 200 <= 1.0


def test_holdout_intervals_are_shown_beside_the_weights():
    import json

    from firecy.rules import rules_json

    X, y = _data()
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=3, random_state=0), max_rules=4,
                         cv=3, random_state=0).fit(X[:200], y[:200])
    assert "lower" not in fire.rules_.columns and "interval" not in fire.summary()
    table = fire.inference(X[200:], y[200:], as_frame=False)
    by_name = {r["term"]: r for r in table}
    rules = fire.rules_
    text = fire.summary()
    doc = json.loads(json.dumps(rules_json(fire)))
    for term, row, entry in zip(fire.model_.terms, rules.to_dict("records"), doc["rules"]):
        r = by_name[term.name]
        assert (row["lower"], row["upper"], row["p_value"]) == (r["lower"], r["upper"],
                                                                r["p_value"])
        assert (entry["lower"], entry["upper"]) == (r["lower"], r["upper"])
        assert f"[{r['lower']:.4g}, {r['upper']:.4g}]" in text
    assert "the 95% interval of each term's effect" in text
    # a split's intervals are about a clone's terms: not shown beside this model's
    fire.inference(X[:200], y[:200], method="split", random_state=0)
    assert "lower" not in fire.rules_.columns


def test_the_account_and_the_report_carry_the_intervals():
    pytest.importorskip("matplotlib")
    from firecy.report import report_html

    X, y = _data()
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=3, random_state=0), max_rules=4,
                         cv=3, random_state=0).fit(X[:200], y[:200])
    assert all(t.interval is None for t in fire.model_.terms)
    table = {r["term"]: r for r in fire.inference(X[200:], y[200:], as_frame=False)}
    for term in fire.model_.terms:
        assert term.interval == (table[term.name]["lower"], table[term.name]["upper"])
        assert term.p_value == table[term.name]["p_value"]
    page = report_html(fire, X[:200], y[:200])
    assert "interval (held out)" in page
    first = fire.model_.terms[0]
    assert f"[{first.interval[0]:.4g}, {first.interval[1]:.4g}]" in page


def _three_classes(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    score = np.column_stack([np.zeros(n), 1.0 * (X[:, 0] > 0) + 0.5 * X[:, 1],
                             -1.0 * (X[:, 2] > 0.5)])
    p = np.exp(score)
    p /= p.sum(axis=1, keepdims=True)
    y = (rng.uniform(size=n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return X, np.array(["a", "b", "c"])[y]


def _numerical_information(nll, theta, h=1e-5):
    """The Hessian of ``nll`` at ``theta`` by central differences."""
    p = theta.size
    H = np.empty((p, p))
    for a in range(p):
        for b in range(p):
            e_a, e_b = np.eye(p)[a] * h, np.eye(p)[b] * h
            H[a, b] = (nll(theta + e_a + e_b) - nll(theta + e_a - e_b)
                       - nll(theta - e_a + e_b) + nll(theta - e_a - e_b)) / (4 * h * h)
    return H


def test_multinomial_refit_is_the_maximum_likelihood_fit_with_its_wald_interval():
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    X, y = _three_classes()
    fire = FIREClassifier(DecisionTreeClassifier(max_depth=2, random_state=0), max_rules=4,
                          cv=3, random_state=0).fit(X[:600], y[:600])
    table = fire.inference(X[600:], y[600:], as_frame=False)
    design = fire.inference_design_(X[600:])
    assert len(table) >= 2 and len({r["class"] for r in table}) >= 2
    assert [r["class"] for r in table] == [design.labels[k] for k in design.outputs]
    # an independent fit: every class its own intercept (class a's fixed at 0)
    # and its own terms, the softmax log-likelihood minimised by BFGS
    codes = np.searchsorted(["a", "b", "c"], y[600:])
    Z, owner = design.Z, np.asarray(design.outputs)

    def nll(theta):
        eta = design.offset.copy()
        eta[:, 1:] += theta[:2]
        for q in range(Z.shape[1]):
            eta[:, owner[q]] += theta[2 + q] * Z[:, q]
        return float(np.sum(logsumexp(eta, axis=1) - eta[np.arange(len(codes)), codes]))

    ref = minimize(nll, np.zeros(2 + Z.shape[1]), method="BFGS", options={"gtol": 1e-9})
    np.testing.assert_allclose([r["estimate"] for r in table], ref.x[2:], rtol=1e-4,
                               atol=1e-5)
    se = np.sqrt(np.diag(np.linalg.inv(_numerical_information(nll, ref.x))))[2:]
    np.testing.assert_allclose([r["std_error"] for r in table], se, rtol=1e-3)
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose([r["upper"] for r in table],
                               [r["estimate"] + z * r["std_error"] for r in table])
    frame = fire.inference(X[600:], y[600:], as_frame=True)
    assert list(frame.columns[:2]) == ["term", "class"]
    # shown beside each class's weights
    text = fire.summary()
    for r in table:
        assert f"[{r['lower']:.4g}, {r['upper']:.4g}]" in text


def test_cox_refit_is_the_partial_likelihood_fit_with_its_wald_interval():
    from firecy import FIRESurvivalRegressor
    from scipy.optimize import minimize

    rng = np.random.default_rng(3)
    n = 800
    X = rng.normal(size=(n, 3))
    hazard = np.exp(0.8 * (X[:, 0] > 0) + 0.5 * X[:, 1])
    time = np.round(rng.exponential(1 / hazard), 1) + 0.1     # tied times
    censor = rng.exponential(2.0, size=n)
    event = (time <= censor).astype(float)
    time = np.minimum(time, censor)
    Y = np.column_stack([event, time])
    w = rng.uniform(0.5, 2.0, size=n // 2)
    fire = FIRESurvivalRegressor(DecisionTreeRegressor(max_depth=2, random_state=0),
                                 max_rules=3, cv=3, random_state=0).fit(X[:400], Y[:400])
    table = fire.inference(X[400:], Y[400:], sample_weight=w, as_frame=False)
    assert len(table) >= 2
    Z = fire.inference_design_(X[400:]).Z
    d, t = event[400:], time[400:]

    def nll(beta):
        # Breslow: every event's risk set is every row still at risk at its time
        eta = Z @ beta
        total = 0.0
        for i in np.flatnonzero(d > 0):
            risk = t >= t[i]
            total -= w[i] * (eta[i] - np.log(np.sum(w[risk] * np.exp(eta[risk]))))
        return total

    ref = minimize(nll, np.zeros(Z.shape[1]), method="BFGS", options={"gtol": 1e-9})
    np.testing.assert_allclose([r["estimate"] for r in table], ref.x, rtol=1e-4, atol=1e-5)
    se = np.sqrt(np.diag(np.linalg.inv(_numerical_information(nll, ref.x))))
    np.testing.assert_allclose([r["std_error"] for r in table], se, rtol=1e-3)
    with pytest.raises(ValueError, match="no event"):
        fire.inference(X[400:], np.column_stack([np.zeros(400), time[400:]]))


def test_the_explanation_picture_draws_each_terms_interval():
    pytest.importorskip("matplotlib")
    from firecy.plotting import plot_explanation

    X, y = _data()
    fire = FIRERegressor(DecisionTreeRegressor(max_depth=3, random_state=0), max_rules=4,
                         cv=3, random_state=0).fit(X[:200], y[:200])
    before = plot_explanation(fire, X[0])
    assert not [ln for ln in before.axes[0].lines if ln.get_gid() == "firecy-interval"]
    fire.inference(X[200:], y[200:])
    fig = plot_explanation(fire, X[0], max_terms=50)
    whiskers = [ln for ln in fig.axes[0].lines if ln.get_gid() == "firecy-interval"]
    records = [r for r in fire.explain(X[:1], as_frame=False)
               if r["kind"] in ("rule", "linear") and r["contribution"] != 0]
    assert len(whiskers) == len(records) >= 2
    by_name = {r["term"]: r for r in fire.inference_}
    total = sum(r["contribution"] for r in fire.explain(X[:1], as_frame=False)
                if r["kind"] in ("intercept", "baseline"))
    for line, rec in zip(whiskers, records):
        lo, hi = by_name[rec["term"]]["lower"], by_name[rec["term"]]["upper"]
        if rec["kind"] == "linear":
            lo, hi = sorted((lo * rec["value"], hi * rec["value"]))
        np.testing.assert_allclose(sorted(line.get_xdata()), [total + lo, total + hi])
        total += rec["contribution"]
    assert "whiskers: 95% intervals" in fig._suptitle.get_text()
