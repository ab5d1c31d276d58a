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
    fire = FIREClassifier(forest, max_rules=8, selection="validation", random_state=0)
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
