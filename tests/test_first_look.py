"""What a user sees first: ``rules_`` (rule, weight, support, importance),
``summary()``, and the transformer's feature names and ``set_output``."""
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from firecy import FIREClassifier, FIRERegressor


@pytest.fixture(scope="module")
def diabetes_fit():
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    rf = RandomForestRegressor(n_estimators=60, max_depth=3, random_state=0).fit(X, y)
    fire = FIRERegressor(rf, n_lambdas=20, cv=3, random_state=0, linear_terms=False).fit(X, y)
    return X, y, fire


def test_rules_support_is_the_training_rows(diabetes_fit):
    X, _, fire = diabetes_fit
    table = fire.rules_
    assert list(table.columns[:4]) == ["rule", "weight", "support", "importance"]
    assert not table["support"].isna().any()
    # independently: the fraction of training rows in each kept leaf
    leaves = fire.ensemble_.leaf_table(X)
    tree = np.searchsorted(fire.ensemble_.block_ptr, table["column"], side="right") - 1
    expected = [(leaves[:, t] == j).mean() for t, j in zip(tree, table["column"])]
    np.testing.assert_allclose(table["support"], expected)
    s = table["support"].to_numpy()
    np.testing.assert_allclose(table["importance"],
                               np.abs(table["contribution"]) * np.sqrt(s * (1 - s)))


def test_rules_support_uses_sample_weights():
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    w = np.random.default_rng(0).uniform(0, 3, size=len(y))
    fire = FIRERegressor(rf, n_lambdas=10, cv=3, random_state=0,
                         linear_terms=False).fit(X, y, sample_weight=w)
    table = fire.rules_
    rows = fire.transform(X) != 0     # columns in design-column order
    by_column = dict(zip(sorted(table["column"]), (w[:, None] * rows).sum(0) / w.sum()))
    np.testing.assert_allclose(table["support"], [by_column[j] for j in table["column"]])


def test_rules_print_whole(diabetes_fit):
    _, _, fire = diabetes_fit
    text = repr(fire.rules_)
    table = fire.rules_
    for rule in table["rule"]:
        assert rule in text            # no rule text cut short
    assert "..." not in text
    head = text.splitlines()[0].split()
    assert head == ["rule", "weight", "support", "importance"]
    assert f"[{len(table)} rules; also: contribution" in text
    # still a DataFrame for everything else
    assert isinstance(table, pd.DataFrame) and len(table.head(2)) == 2
    assert "rule" in fire.summary() or fire.summary().count(" then ") == fire.n_rules_


def test_classifier_rules_have_class_and_training_support():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    rf = RandomForestClassifier(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    clf = FIREClassifier(rf, n_lambdas=10, cv=3, random_state=0, linear_terms=False).fit(X, y)
    table = clf.rules_
    assert table.columns[0] == "class" and not table["support"].isna().any()
    assert set(table["class"]) <= set(clf.classes_)


def test_feature_names_out_and_set_output(diabetes_fit):
    X, _, fire = diabetes_fit
    names = fire.get_feature_names_out()
    Xt = fire.transform(X)
    assert names.shape == (Xt.shape[1],) == (fire.n_rules_,)
    assert list(names) == [f"rule_{j}" for j in sorted(fire.rules_["column"])]
    with pytest.raises(ValueError):
        fire.get_feature_names_out(["not", "the", "names"])
    frame = clone(fire).set_output(transform="pandas")
    frame.fit(X, diabetes_fit[1])
    out = frame.transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    np.testing.assert_array_equal(out.to_numpy(), Xt)


def test_multiclass_summary_gives_each_class_its_own_intercept():
    # issue 37: every class's line printed class 0's "(FIRE intercept ...)"
    from sklearn.datasets import load_iris
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = load_iris(return_X_y=True)
    X, y = X[25:], y[25:]           # unequal classes: a per-class baseline
    gb = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    fire = FIREClassifier(gb, n_lambdas=15, cv=3, random_state=0, n_jobs=1,
                          linear_terms=False).fit(X, y)
    base = np.asarray(fire.ensemble_.baseline(X[:1]))[0]
    assert np.ptp(base) > 0 and np.ptp(fire.intercept_) > 0
    text = fire.summary()
    for k in range(3):
        own = f"(FIRE intercept {fire.intercept_[k]:.4g} + ensemble baseline)"
        total = f"intercept: {fire.intercept_[k] + base[k]:.4g}"
        assert f"{total} {own}" in text, (k, text)
    from firecy.rules import rules_json

    notes = rules_json(fire)["intercept_note"]
    assert notes == [f"FIRE intercept {b:.4g} + ensemble baseline" for b in fire.intercept_]


def test_frozen_estimator_keeps_the_fitted_model_through_cross_validation():
    # the README's advice: a fitted model is used as is by fit, but clone()
    # (cross_val_score, GridSearchCV) refits it unless it is frozen
    from sklearn.frozen import FrozenEstimator
    from sklearn.model_selection import cross_val_score

    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    before = [t.tree_.threshold.copy() for t in rf.estimators_]
    seen = []

    class Spy(FIRERegressor):
        def fit(self, X, y, **kw):
            super().fit(X, y, **kw)
            seen.append(self.estimator_)
            return self

    kw = dict(n_lambdas=8, cv=2, random_state=0, n_jobs=1)
    cross_val_score(Spy(FrozenEstimator(rf), **kw), X, y, cv=2)
    assert all(s is not rf and s.estimator is rf for s in seen)   # the frozen wrapper
    assert all(np.array_equal(a, t.tree_.threshold) for a, t in zip(before, rf.estimators_))
    cross_val_score(Spy(rf, **kw), X, y, cv=2)
    # unfrozen, each fold fits a fresh forest on its own rows
    assert all(s is not rf and not np.array_equal(s.estimators_[0].tree_.threshold,
                                                  before[0]) for s in seen[2:])
