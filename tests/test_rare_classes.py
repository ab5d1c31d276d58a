"""Rare classes in FIREClassifier and ``firecy extract`` (issue 23, item 3).

The behaviour (``docs/classification.rst``, "Rare classes"):

* a class with a single row (of positive weight) is a ValueError before
  anything is fitted when lam is chosen on folds, the same for two classes
  or more, integer or string labels; with a fixed lam it is fitted;
* a class with fewer rows than folds: scikit-learn's StratifiedKFold
  warning, and the fit goes on;
* a class some folds train without (a user's splitter): one UserWarning
  naming it; those folds give it no rule and a finite loss;
* a class without any row of positive weight: a UserWarning; its column is
  in ``predict_proba`` with a small probability;
* ``predict_proba`` has one column per ``classes_`` entry, rows summing to
  one, whether or not a class is ever predicted;
* ``scoring="roc_auc"`` with held-out rows lacking a class: the macro
  average over the classes they hold, folds where it is undefined left out.
"""
import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold

from firecy import FIREClassifier
from firecy.cli import main
from firecy.estimators._class_scoring import ClassificationLoss

SINGLE_ROW = "a single row: choosing lam on validation folds needs at least 2 rows"


def _forest():
    return RandomForestClassifier(n_estimators=20, max_depth=3, random_state=0)


def _fire(**kw):
    return FIREClassifier(_forest(), n_lambdas=10, random_state=0, **kw)


@pytest.fixture(scope="module")
def iris():
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def cancer():
    return load_breast_cancer(return_X_y=True)


def _check_proba(fire, X, labels):
    """predict_proba's columns are the sorted labels, rows sum to one, and
    predict is the label of the largest probability."""
    np.testing.assert_array_equal(fire.classes_, np.unique(labels))
    proba = fire.predict_proba(X)
    assert proba.shape == (X.shape[0], np.unique(labels).size)
    assert np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fire.predict(X), fire.classes_[np.argmax(proba, axis=1)])
    return proba


@pytest.fixture
def no_solve(monkeypatch):
    """Fail if the selection (any path solve) starts."""
    import firecy.estimators._fit as base

    def refuse(*args, **kwargs):
        raise AssertionError("a path was solved")

    monkeypatch.setattr(base, "select_on_paths", refuse)


# -- a class with one row -----------------------------------------------------
@pytest.mark.parametrize("labels", ["int", "str"])
@pytest.mark.parametrize("selection", ["cv", "validation"])
def test_single_row_class_is_an_error_before_any_solve(iris, no_solve, labels, selection):
    X, y = iris
    y = y.copy()
    y[0] = 3        # issue 23: iris with one relabelled row gave KeyError: 3
    if labels == "str":
        y = np.array(["setosa", "versicolor", "virginica", "rare"], dtype=object)[y]
    name = "3" if labels == "int" else "'rare'"
    with pytest.raises(ValueError, match=f"^class {name} has {SINGLE_ROW}"):
        _fire(selection=selection).fit(X, y)


def test_binary_single_minority_row_is_an_error(cancer, no_solve):
    X, y = cancer
    y = np.zeros_like(y)
    y[5] = 1
    with pytest.raises(ValueError, match=f"^class 1 has {SINGLE_ROW}"):
        _fire().fit(X, y)


def test_two_single_row_classes_are_named_together(iris, no_solve):
    X, y = iris
    y = y.copy()
    y[0], y[60] = 7, 9
    with pytest.raises(ValueError, match=f"^classes 7, 9 have {SINGLE_ROW}"):
        _fire().fit(X, y)


def test_single_row_of_positive_weight_is_the_same_error(iris, no_solve):
    X, y = iris
    y = y.copy()
    y[[0, 1]] = 3
    sw = np.ones(len(y))
    sw[1] = 0.0     # the second row of class 3 does not count
    with pytest.raises(ValueError, match="^class 3 has a single row of positive sample weight"):
        _fire().fit(X, y, sample_weight=sw)


def test_single_row_class_with_fixed_lam_is_fitted(iris):
    """No selection, no folds: the row is fitted like any other."""
    X, y = iris
    y = y.copy()
    y[0] = 3
    fire = _fire(lam=0.01).fit(X, y)
    proba = _check_proba(fire, X, y)
    # the class has its column; the forest's class-3 rules may give it weight
    assert proba[:, 3].max() > 0


# -- fewer rows than folds ----------------------------------------------------
@pytest.mark.parametrize("labels", ["int", "str"])
def test_class_with_fewer_rows_than_folds_warns_and_fits(iris, labels):
    X, y = iris
    y = y.copy()
    rare = [3, 70, 140]
    y[rare] = 3
    if labels == "str":
        y = np.array(["setosa", "versicolor", "virginica", "rare"], dtype=object)[y]
    with pytest.warns(UserWarning, match=r"least populated class in y has only 3 members"):
        fire = _fire(cv=5).fit(X, y)
    proba = _check_proba(fire, X, y)
    assert np.all(np.isfinite(fire.path_.validation_error[fire.path_.eligible]))
    assert np.isfinite(fire.validation_error_)
    # a class the model never predicts still has its column (here: three rows
    # of other species relabelled, no rule can single them out)
    pred = fire.predict(X)
    assert set(pred) <= set(fire.classes_)
    assert np.all(proba[:, list(fire.classes_).index(y[rare[0]])] > 0)


def test_string_and_integer_labels_give_the_same_model(iris):
    """Labels are names: the same codes under other names fit the same model."""
    X, y = iris
    y = y.copy()
    y[[3, 70, 140]] = 3
    names = np.array(["a", "b", "c", "d"], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        by_int = _fire().fit(X, y)
        by_str = _fire().fit(X, names[y])
    np.testing.assert_array_equal(by_str.classes_, names)
    np.testing.assert_array_equal(by_int.coef_, by_str.coef_)
    np.testing.assert_array_equal(by_int.predict_proba(X), by_str.predict_proba(X))
    np.testing.assert_array_equal(names[by_int.predict(X)], by_str.predict(X))


def test_binary_minority_with_fewer_rows_than_folds(cancer):
    X, y = cancer
    y = np.zeros_like(y)
    y[[5, 200, 400]] = 1
    with pytest.warns(UserWarning, match="least populated class in y has only 3 members"):
        fire = _fire().fit(X, y)
    _check_proba(fire, X, y)
    assert np.isfinite(fire.validation_error_)


# -- a class some folds train without ------------------------------------------
def test_class_absent_from_a_folds_training_rows(iris):
    """Unshuffled 3-fold CV on iris (sorted by species): each fold trains on
    two species and holds the third out."""
    X, y = iris
    with pytest.warns(UserWarning) as record:
        fire = _fire(cv=KFold(3)).fit(X, y)
    texts = [str(w.message) for w in record]
    assert any(re.match(r"classes 0, 1, 2 have no training row in 1 of the 3 validation "
                        r"fold\(s\)", t) for t in texts), texts
    _check_proba(fire, X, y)
    scores = fire.path_.validation_error[fire.path_.eligible]
    assert np.all(np.isfinite(scores))


def test_class_without_positive_weight(iris):
    X, y = iris
    sw = np.ones(len(y))
    sw[y == 2] = 0.0
    with pytest.warns(UserWarning, match=r"^class 2 has no row of positive sample weight"):
        fire = _fire().fit(X, y, sample_weight=sw)
    proba = _check_proba(fire, X, y)
    assert 2 not in fire.predict(X)
    n = int(np.count_nonzero(sw))
    # about 1 / (2n + 1) on average: well below one row's share
    assert proba[sw > 0, 2].mean() < 10.0 / (2 * n + 1)


def test_fold_training_on_a_single_class(iris):
    """Class 2 without weight and unshuffled 3-fold CV: the fold that holds
    class 0 out trains on class 1 alone (it was a ValueError of the logistic
    datafit). It gets no rule, and its intercepts put every other class at
    the log-odds of half an observation against class 1."""
    X, y = iris
    sw = np.ones(len(y))
    sw[y == 2] = 0.0
    with pytest.warns(UserWarning) as record:
        fire = _fire(cv=KFold(3)).fit(X, y, sample_weight=sw)
    texts = [str(w.message) for w in record]
    assert any(t.startswith("class 2 has no row of positive sample weight") for t in texts)
    assert any(t.startswith("classes 0, 1 have no training row in 1 of the 3") for t in texts)
    _check_proba(fire, X, y)
    assert np.all(np.isfinite(fire.path_.validation_error[fire.path_.eligible]))

    from firecy.estimators._logistic_paths import MultinomialPaths, pack_target
    from firecy.solver import BlockDesign

    ens = fire.ensemble_
    rows = np.flatnonzero(y == 1)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X[rows]), ens.leaf_values,
                                         ens.block_ptr)
    fitter = MultinomialPaths(ens.tree_class, 3)
    path = fitter.path(design, pack_target(y[rows], np.zeros((rows.size, 3))), None,
                       lambdas=[1.0, 0.1])
    assert not path.coefs.any()
    p = np.exp(path.intercepts[0]) / np.exp(path.intercepts[0]).sum()
    n = rows.size
    # p_k / p_1 = 1 / (2n) for the two other classes
    np.testing.assert_allclose(p[[0, 2]] / p[1], 1.0 / (2 * n), rtol=1e-12)
    assert path.intercepts[0].sum() == pytest.approx(0.0, abs=1e-12)


# -- ROC AUC on held-out rows lacking a class -----------------------------------
def test_roc_auc_over_the_classes_present():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, 60)
    margins = rng.normal(size=(60, 2, 3))
    loss = ClassificationLoss("roc_auc", np.arange(3))
    proba = np.exp(margins) / np.exp(margins).sum(axis=2, keepdims=True)
    y = np.column_stack([codes, np.zeros((60, 3))])
    got = loss(y, margins, np.ones(60))
    for p in range(2):
        ref = roc_auc_score(codes, proba[:, p], multi_class="ovr", average="macro")
        assert got[p] == pytest.approx(1 - ref, abs=1e-12)
    # class 2 absent: the mean of the one-vs-rest AUCs of classes 0 and 1
    keep = codes != 2
    got = loss(y[keep], margins[keep], np.ones(keep.sum()))
    for p in range(2):
        ref = np.mean([roc_auc_score(codes[keep] == k, proba[keep, p, k]) for k in (0, 1)])
        assert got[p] == pytest.approx(1 - ref, abs=1e-12)
    # a single class: undefined
    one = codes == 0
    assert np.all(np.isnan(loss(y[one], margins[one], np.ones(one.sum()))))


def test_roc_auc_selection_with_a_rare_binary_class(cancer):
    """Three minority rows, five folds: two folds hold none of them out (AUC
    undefined there); the mean is over the three others, not NaN."""
    X, y = cancer
    y = np.zeros_like(y)
    y[[5, 200, 400]] = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fire = _fire(scoring="roc_auc").fit(X, y)
    assert np.isfinite(fire.validation_error_)
    assert np.all(np.isfinite(fire.path_.validation_error[fire.path_.eligible]))


# -- the command line ------------------------------------------------------------
SMALL = ["--n-trees", "15", "--n-lambdas", "10", "--cv", "3", "--n-jobs", "1",
         "--no-progress", "--seed", "0"]


def _iris_csv(path, rare_rows, label="rare"):
    X, y = load_iris(return_X_y=True, as_frame=True)
    species = np.array(["setosa", "versicolor", "virginica"], dtype=object)[y]
    species[rare_rows] = label
    frame = X.copy()
    frame["species"] = species
    frame.to_csv(path, index=False)
    return path


def _one_line_error(err, start):
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(start), err
    assert "Traceback" not in err


def test_cli_single_row_class_is_one_line(tmp_path, capsys):
    data = _iris_csv(tmp_path / "iris.csv", [0])
    status = main(["extract", str(data), "--target", "species",
                   "--output", str(tmp_path / "r.json"), *SMALL])
    assert status == 1
    _one_line_error(capsys.readouterr().err,
                    "firecy: error: class 'rare' of the target has a single row in the data")


def test_cli_integer_single_row_class(tmp_path, capsys):
    X, y = load_iris(return_X_y=True, as_frame=True)
    y = y.copy()
    y[10] = 7
    frame = X.copy()
    frame["kind"] = y
    frame.to_csv(tmp_path / "iris.csv", index=False)
    status = main(["extract", str(tmp_path / "iris.csv"), "--target", "kind",
                   "--task", "classification", "--output", str(tmp_path / "r.json"), *SMALL])
    assert status == 1
    _one_line_error(capsys.readouterr().err,
                    "firecy: error: class 7 of the target has a single row in the data")


def test_cli_single_training_row_after_the_split(tmp_path, capsys):
    """Two rows, half the data held out: one of them is left to train on."""
    data = _iris_csv(tmp_path / "iris.csv", [0, 75])
    status = main(["extract", str(data), "--target", "species", "--test-size", "0.5",
                   "--output", str(tmp_path / "r.json"), *SMALL])
    assert status == 1
    _one_line_error(capsys.readouterr().err,
                    "firecy: error: class 'rare' of the target has a single row among the "
                    "training rows (--test-size 0.5")


def test_cli_class_with_fewer_rows_than_folds_warns_once(tmp_path, capsys):
    data = _iris_csv(tmp_path / "iris.csv", [0, 60, 120])
    out = tmp_path / "r.json"
    status = main(["extract", str(data), "--target", "species", "--test-size", "0",
                   "--output", str(out), *SMALL])
    assert status == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    warned = [ln for ln in err.splitlines() if "least populated class" in ln]
    assert warned == ["firecy: warning: The least populated class in y has only 3 "
                      "members, which is less than n_splits=3."] or not warned
    import json

    doc = json.loads(out.read_text())
    assert len(doc["intercept"]) == 4


def test_cli_rare_class_absent_from_the_test_rows(tmp_path, capsys):
    """The test rows hold no row of the rare class: the AUC is the macro
    average over the classes they hold, no warning about it."""
    data = _iris_csv(tmp_path / "iris.csv", [0, 60, 120])
    status = main(["extract", str(data), "--target", "species", "--test-size", "0.25",
                   "--output", str(tmp_path / "r.json"), *SMALL])
    assert status == 0
    captured = capsys.readouterr()
    assert "ROC AUC score is not defined" not in captured.err
    assert "Traceback" not in captured.err
    assert "nan" not in captured.out.split("AUC", 1)[1].splitlines()[1]


def test_single_row_class_fits_at_the_rule_budget(iris):
    # selection="budget" has no validation folds: a class of one row is no
    # reason to refuse the fit (RiskCardClassifier's sample-weight checks met it)
    X, y = iris
    y = y.copy()
    y[0] = 3
    fire = _fire(selection="budget", max_rules=4).fit(X, y)
    assert list(fire.classes_) == [0, 1, 2, 3]
    assert fire.predict_proba(X).shape == (len(y), 4)
