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
    fire = FIRERegressor(rf, n_lambdas=20, cv=3, random_state=0).fit(X, y)
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
    fire = FIRERegressor(rf, n_lambdas=10, cv=3, random_state=0).fit(X, y, sample_weight=w)
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
    clf = FIREClassifier(rf, n_lambdas=10, cv=3, random_state=0).fit(X, y)
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
