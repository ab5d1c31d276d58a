"""RiskCardClassifier (issue 40): the risk card in one call, a scikit-learn
classifier whose probabilities are the card's."""
import pickle

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

from firecy.risk import RiskCardClassifier


@pytest.fixture(scope="module")
def data():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    return X, np.where(y == 1, "benign", "malignant")


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return RiskCardClassifier(max_rules=6, n_estimators=100, random_state=0).fit(X, y)


def test_the_card_is_the_classifier(data, fitted):
    X, y = data
    card = fitted.card_
    assert list(fitted.classes_) == ["benign", "malignant"]
    assert 0 < len(card.rules) <= 6 and np.abs(card.points).max() <= 5
    # the score by hand: the starting points plus the points of each rule the
    # row satisfies (the rule's own conditions, evaluated on X)
    ens = fitted.model_.ensemble_
    by_hand = card.intercept_points + sum(
        p * ens.rule_mask(j, X) for p, j in zip(card.points, card.columns))
    np.testing.assert_array_equal(fitted.decision_function(X), by_hand)
    # the probabilities are the card's risk of that score, from its table
    proba = fitted.predict_proba(X)
    risk_of = dict(zip(card.scores.tolist(), card.risk.tolist()))
    np.testing.assert_allclose(proba[:, 1], [risk_of[s] for s in by_hand], rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 1], expit(by_hand / card.scale), rtol=1e-12)
    assert np.array_equal(fitted.predict(X), fitted.classes_[(proba[:, 1] > 0.5).astype(int)])
    assert fitted.score(X, y) > 0.9
    assert "RISK CARD" in str(card)


def test_cross_validation_and_grid_search(data):
    X, y = data
    clf = RiskCardClassifier(max_rules=4, n_estimators=50, random_state=0)
    auc = cross_val_score(clf, X, y, cv=3, scoring="roc_auc")
    assert auc.min() > 0.9
    grid = GridSearchCV(clf, {"max_rules": [2, 4]}, cv=3, scoring="roc_auc").fit(X, y)
    assert grid.best_params_["max_rules"] in (2, 4)
    assert len(grid.best_estimator_.card_.rules) <= grid.best_params_["max_rules"]


def test_clone_pickle_and_random_state(data, fitted):
    X, y = data
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict_proba(X), fitted.predict_proba(X))
    twin = clone(fitted).fit(X, y)
    np.testing.assert_array_equal(twin.card_.points, fitted.card_.points)
    assert twin.card_.rules == fitted.card_.rules
    two_threads = clone(fitted).set_params(n_jobs=2).fit(X, y)
    assert two_threads.card_.rules == fitted.card_.rules


def test_bad_input(data):
    X, y = data
    with pytest.raises(ValueError, match="Only binary classification.*y has 3 classes"):
        RiskCardClassifier().fit(X[:90], np.repeat(["a", "b", "c"], 30))
    with pytest.raises(ValueError, match="max_rules must be >= 1"):
        RiskCardClassifier(max_rules=0).fit(X, y)
    with pytest.raises(ValueError, match="two classes|single class"):
        RiskCardClassifier().fit(X, np.zeros(len(y)))


@parametrize_with_checks([RiskCardClassifier(max_rules=4, n_estimators=20, random_state=0)],
                         expected_failed_checks=lambda est: {})
def test_check_estimator(estimator, check):
    check(estimator)
