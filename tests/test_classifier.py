"""FIREClassifier: the scikit-learn contract, the libraries' margins, the
probabilities, the logistic objective against scikit-learn, bad input."""
import pickle
import warnings

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from scipy.special import expit, log_expit, softmax
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_iris, make_classification
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from firecy import FIREClassifier
from firecy.ensembles._testing import check_predict_raw


@pytest.fixture(scope="module")
def binary():
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4,
                               random_state=0)
    return X, y


@pytest.fixture(scope="module")
def multiclass():
    X, y = load_iris(return_X_y=True)
    return X, y


# --------------------------------------------------------------- contract ---

# A small model for the API checks, one test per check so that pytest-xdist's
# workers share them, nothing declared as an expected failure. Its
# sample-weight equivalence held to 2e-7 only, not the check's 1e-9, while the
# selection could choose points past saturation (the check's data are
# separable: the weights there are unbounded, _selection.saturated_points).
@parametrize_with_checks(
    [FIREClassifier(RandomForestClassifier(n_estimators=10, max_depth=3, bootstrap=False,
                                           random_state=0), cv=3, n_lambdas=15,
                    linear_terms=False)])
def test_check_estimator(estimator, check):
    check(estimator)


# every parameter at its default (linear terms included), the default
# 500-tree forest included: CI's slow step (pytest -m slow), nothing declared
# an expected failure. Integer sample weights are row repetitions for the
# default forest (estimators/_default_forest.py) and for the rule weights,
# whose multinomial solves end on a joint Newton polish (the stationary point
# itself, to rounding). On the check's separable data (15 rows, 30 features)
# the linear terms separate the classes, and past that point the weights
# grow without bound, where they stop decided by rounding: the selection
# leaves such saturated points out (_selection.saturated_points).
@pytest.mark.slow
@parametrize_with_checks([FIREClassifier()])
def test_check_estimator_defaults(estimator, check):
    check(estimator)


def test_clone_and_pickle(binary):
    X, y = binary
    forest = RandomForestClassifier(n_estimators=20, max_depth=3, random_state=0)
    est = FIREClassifier(forest, max_rules=6, selection="validation", random_state=0,
                         linear_terms=False).fit(X, y)
    assert clone(est).get_params()["max_rules"] == 6
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


# ------------------------------------------- the libraries' margins, per row ---

def _library_margin(model, X):
    """The library's own raw score: log-odds (or per-class scores) for
    boosting, the class probabilities for a random forest."""
    if isinstance(model, xgb.XGBClassifier):
        return model.predict(X, output_margin=True)
    if isinstance(model, lgb.LGBMClassifier):
        return model.predict(X, raw_score=True)
    if isinstance(model, (RandomForestClassifier, ExtraTreesClassifier)):
        proba = model.predict_proba(X)
        return proba[:, 1] if proba.shape[1] == 2 else proba
    return model.decision_function(X)


MODELS = {
    "rf": lambda: RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0),
    "et": lambda: ExtraTreesClassifier(n_estimators=8, max_depth=3, random_state=0),
    "gb": lambda: GradientBoostingClassifier(n_estimators=8, max_depth=2, random_state=0),
    "hgb": lambda: HistGradientBoostingClassifier(max_iter=8, max_leaf_nodes=5,
                                                  random_state=0),
    "xgb": lambda: xgb.XGBClassifier(n_estimators=8, max_depth=2, n_jobs=1, random_state=0),
    "lgbm": lambda: lgb.LGBMClassifier(n_estimators=8, num_leaves=5, n_jobs=1, verbose=-1,
                                       random_state=0),
}
BOOSTING = ("gb", "hgb", "xgb", "lgbm")


@pytest.mark.parametrize("task", ["binary", "multiclass"])
@pytest.mark.parametrize("name", list(MODELS))
def test_design_reproduces_library_margin(name, task, binary, multiclass):
    X, y = binary if task == "binary" else multiclass
    model = MODELS[name]().fit(X, y)
    fire = FIREClassifier(model, lam=1.0, fusion=0.0, rule_depth=None,
                          rule_values="leaf", linear_terms=False).fit(X, y)
    ens = fire.ensemble_
    K = len(fire.classes_)
    assert ens.n_outputs == (1 if K == 2 else K)
    # the design times the trees' scales plus the baseline, row by row
    check_predict_raw(ens, X, rtol=1e-5)
    # the classifier's own margin with every rule at its weight in the model
    fire.coef_ = ens.column_scale.copy()
    fire.intercept_ = 0.0 if K == 2 else np.zeros(K)
    ref = _library_margin(model, X)
    np.testing.assert_allclose(fire.decision_function(X), ref, rtol=1e-5, atol=1e-5)
    if name in BOOSTING:
        # for boosting, the margin is the log-odds: the library's probabilities
        np.testing.assert_allclose(fire.predict_proba(X), model.predict_proba(X),
                                   rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------ probabilities ---

def _independent_margin(fire, X):
    """baseline + b + M w from the ensemble's design, class by class."""
    ens = fire.ensemble_
    M = ens.design(X).tocsc()
    base = np.asarray(ens.baseline(X), dtype=float)
    if ens.n_outputs == 1:
        return base + fire.intercept_ + M @ fire.coef_
    out = base + fire.intercept_
    for k in range(ens.n_outputs):
        cols = ens.tree_class[ens.rule_tree] == k
        out[:, k] += M[:, cols] @ fire.coef_[cols]
    return out


@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_predict_proba_agrees_with_independent_computation(task, binary, multiclass):
    X, y = binary if task == "binary" else multiclass
    labels = np.array(["a", "b", "c"])[y]       # string labels
    forest = RandomForestClassifier(n_estimators=15, max_depth=3, random_state=0)
    fire = FIREClassifier(forest, max_rules=8, selection="validation", random_state=0,
                          linear_terms=False)
    fire.fit(X, labels)
    assert 0 < fire.n_rules_ <= 8
    eta = _independent_margin(fire, X)
    if task == "binary":
        p1 = expit(eta)
        expected = np.column_stack([1 - p1, p1])
        np.testing.assert_allclose(fire.decision_function(X), eta, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(fire.predict_log_proba(X),
                                   np.column_stack([log_expit(-eta), log_expit(eta)]),
                                   rtol=1e-10, atol=1e-12)
    else:
        expected = softmax(eta, axis=1)
    proba = fire.predict_proba(X)
    np.testing.assert_allclose(proba, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(fire.predict(X), fire.classes_[np.argmax(expected, axis=1)])
    assert list(fire.classes_) == sorted(set(labels))
    # the rules table names the label each rule speaks for
    table = fire.rules_
    assert set(table["class"]) <= set(fire.classes_)
    if task == "binary":
        assert set(table["class"]) == {"b"}


def test_binary_reaches_sklearn_logistic_objective(binary):
    X, y = binary
    forest = RandomForestClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    fire = FIREClassifier(forest, penalty="l1", fusion=0.0, lam=0.01, tol=1e-10, linear_terms=False)
    fire.fit(X, y)
    M = fire.ensemble_.design(X).toarray()
    n, lam = X.shape[0], 0.01

    def objective(w, b):
        eta = M @ w + b
        return float(np.mean(np.logaddexp(0.0, eta) - y * eta) + lam * np.abs(w).sum())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = LogisticRegression(l1_ratio=1.0, C=1.0 / (n * lam), solver="saga", tol=1e-12,
                                 max_iter=200_000).fit(M, y)
    ours = objective(fire.coef_, fire.intercept_)
    theirs = objective(ref.coef_.ravel(), float(ref.intercept_[0]))
    assert ours <= theirs * (1 + 1e-6)
    assert abs(ours - theirs) <= 1e-6 * theirs
    # the model's own objective is the one in the path
    assert ours == pytest.approx(float(fire.path_.objectives[0]), rel=1e-9)


def test_multiclass_selection_under_budget_and_refined(multiclass):
    X, y = multiclass
    forest = RandomForestClassifier(n_estimators=10, max_depth=2, random_state=0)
    fire = FIREClassifier(forest, max_rules=5, cv=3, random_state=0, linear_terms=False).fit(X, y)
    assert 0 < fire.n_rules_ <= 5
    assert fire.intercept_.shape == (3,)
    assert fire.path_.inserted is not None
    # the candidates (the budget, less inserted points inside a run of one
    # count) are all scored
    eligible = fire.path_.eligible
    assert np.all(fire.path_.n_rules[eligible] <= 5)
    assert set(fire.path_.n_rules[eligible]) == set(fire.path_.n_rules[fire.path_.n_rules <= 5])
    assert np.all(np.isfinite(fire.path_.validation_error[eligible]))
    assert fire.score(X, y) > 0.8


def test_multiclass_l1_stationary_to_rounding(multiclass):
    # the multinomial solve ends on a joint Newton polish: at a fixed lam the
    # fitted weights satisfy the L1 optimality conditions of the softmax loss
    # (computed here independently from the design and the probabilities) to
    # rounding on the support, not only to the solver's tolerance; with
    # weights, and the intercepts sum to zero
    X, y = multiclass
    sw = np.random.RandomState(0).randint(1, 4, size=y.shape[0]).astype(float)
    forest = RandomForestClassifier(n_estimators=20, max_depth=3, random_state=0)
    lam = 2e-3
    est = FIREClassifier(forest, penalty="l1", fusion=0.0, lam=lam, max_rules=None,
                         random_state=0, linear_terms=False)
    est.fit(X, y, sample_weight=sw)
    M = est.ensemble_.design(X).tocsc()
    col_class = np.repeat(np.asarray(est.ensemble_.tree_class),
                          np.diff(np.asarray(est.ensemble_.block_ptr)))
    P = softmax(est.decision_function(X), axis=1)
    Y = (y[:, None] == np.arange(3)).astype(float)
    R = (sw / sw.sum())[:, None] * (P - Y)
    grad = np.asarray(M.multiply(R[:, col_class]).sum(axis=0)).ravel()
    w = est.coef_
    nz = w != 0
    assert 0 < nz.sum() < 200
    np.testing.assert_allclose(grad[nz] + lam * np.sign(w[nz]), 0.0, atol=1e-10)
    assert np.all(np.abs(grad[~nz]) <= lam * (1 + 1e-4))
    np.testing.assert_allclose(R.sum(axis=0), 0.0, atol=1e-10)
    assert abs(est.intercept_.sum()) <= 1e-12


@pytest.mark.parametrize("model", [
    GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0),
    RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0)],
    ids=["gb", "rf"])
def test_multiclass_union_of_depths_is_stationary_and_selects(multiclass, model):
    # rule_depth=(1, 2) repeats the trees once per depth: the solver must
    # see every block's class (it once read the trees' classes before the
    # cut: a broadcast error under CV, and the depth-2 blocks silently
    # unused at a fixed lam); checked here by the L1 optimality conditions
    # of the softmax loss on every column, computed from the design
    X, y = multiclass
    model = clone(model).fit(X, y)
    lam = 1e-3
    est = FIREClassifier(model, rule_depth=(1, 2), penalty="l1", fusion=0.0, lam=lam,
                         max_rules=None, random_state=0, linear_terms=False).fit(X, y)
    ens = est.ensemble_
    assert ens.n_trees == 2 * ens.uncut.n_trees   # one block per class, tree and depth
    M = ens.design(X).tocsc()
    col_class = np.repeat(np.asarray(ens.tree_class), np.diff(np.asarray(ens.block_ptr)))
    P = softmax(est.decision_function(X), axis=1)
    Y = (y[:, None] == np.arange(3)).astype(float)
    R = (P - Y) / len(y)
    grad = np.asarray(M.multiply(R[:, col_class]).sum(axis=0)).ravel()
    w = est.coef_
    nz = w != 0
    depth2 = np.arange(w.size) >= ens.block_ptr[ens.n_trees // 2]
    assert nz[depth2].any() and nz[~depth2].any()
    np.testing.assert_allclose(grad[nz] + lam * np.sign(w[nz]), 0.0, atol=1e-8)
    assert np.all(np.abs(grad[~nz]) <= lam * (1 + 1e-4))
    # and the default selection runs on the union, within its budget
    cv = FIREClassifier(model, rule_depth=(1, 2), cv=3, random_state=0,
                        linear_terms=False).fit(X, y)
    assert 0 < cv.n_rules_ <= 14 and cv.rule_depth_ == (1, 2)


def test_breast_cancer_default_forest():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    fire = FIREClassifier(random_state=0, linear_terms=False).fit(X, y)
    assert 0 < fire.n_rules_ <= 14
    assert fire.score(X, y) > 0.9
    assert list(fire.rules_.columns)[0] == "class"


# --------------------------------------------------------------- bad input ---

def test_regressor_passed(binary):
    X, y = binary
    with pytest.raises(TypeError, match="regressor RandomForestRegressor"):
        FIREClassifier(RandomForestRegressor(n_estimators=3), linear_terms=False).fit(X, y)
    fitted = RandomForestRegressor(n_estimators=3, max_depth=2).fit(X, y)
    with pytest.raises(TypeError, match="use FIRERegressor"):
        FIREClassifier(fitted, linear_terms=False).fit(X, y)


def test_one_class(binary):
    X, _ = binary
    with pytest.raises(ValueError, match="at least two classes; y has a single class"):
        FIREClassifier(linear_terms=False).fit(X, np.zeros(X.shape[0]))


@pytest.mark.parametrize("missing", [None, np.nan])
def test_missing_label_is_a_clear_error(binary, missing):
    # None among string labels used to be NumPy's TypeError from sorting
    # None with str; a missing label is a ValueError before anything is fitted
    X, y = binary
    labels = np.where(y == 1, "yes", "no").astype(object)
    labels[5] = missing
    what = "None" if missing is None else "NaN"
    with pytest.raises(ValueError, match=f"Input y contains {what}"):
        FIREClassifier(RandomForestClassifier(n_estimators=3), linear_terms=False).fit(X, labels)
    with pytest.raises(ValueError, match=r"Input y contains None: 1 missing label\(s\), "
                                         r"the first at row 5"):
        FIREClassifier(RandomForestClassifier(n_estimators=3),
                       linear_terms=False).fit(X, list(labels[:5]) + [None]
                                                                   + list(labels[6:]))


def test_one_class_among_weighted_rows(binary):
    X, y = binary
    w = (y == 1).astype(float)
    with pytest.raises(ValueError, match="positive sample weight"):
        FIREClassifier(linear_terms=False).fit(X, y, sample_weight=w)


def test_continuous_target(binary):
    X, _ = binary
    with pytest.raises(ValueError, match="Unknown label type"):
        FIREClassifier(linear_terms=False).fit(X, np.linspace(0, 1, X.shape[0]))


def test_labels_unseen_by_the_fitted_model(binary):
    X, y = binary
    model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    y3 = y.copy()
    y3[:5] = 2
    with pytest.raises(ValueError, match=r"label\(s\) \[2\] the model never saw"):
        FIREClassifier(model, linear_terms=False).fit(X, y3)


def test_unseen_labels_at_score(binary):
    X, y = binary
    forest = RandomForestClassifier(n_estimators=10, max_depth=2, random_state=0)
    fire = FIREClassifier(forest, lam=0.01, linear_terms=False).fit(X, y)
    from firecy.risk import risk_card

    card = risk_card(fire, X, y)
    with pytest.raises(ValueError, match=r"labels \[7\] that are not among"):
        card.evaluate(X, np.where(y == 1, 7, 0))


@pytest.mark.parametrize("method", ["predict_proba", "predict", "decision_function"])
def test_predict_before_fit(binary, method):
    X, _ = binary
    with pytest.raises(NotFittedError):
        getattr(FIREClassifier(linear_terms=False), method)(X)


def test_bad_scoring(binary):
    X, y = binary
    with pytest.raises(ValueError, match="scoring must be one of"):
        FIREClassifier(scoring="auc", linear_terms=False).fit(X, y)


def test_class_count_mismatch_with_booster(multiclass):
    X, y = multiclass
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 2},
                        xgb.DMatrix(X, label=(y == 1).astype(float)), num_boost_round=3)
    with pytest.raises(ValueError, match="1 output"):
        FIREClassifier(booster, linear_terms=False).fit(X, y)


@pytest.mark.parametrize("loader, model", [
    (load_breast_cancer, RandomForestClassifier),
    (load_iris, GradientBoostingClassifier),
])
def test_zero_weights_equal_dropped_rows(loader, model):
    # a zero-weight row is as good as absent (the solver never sees it)
    X, y = loader(return_X_y=True)
    fitted = model(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    drop = np.random.RandomState(1).rand(len(y)) < 0.2
    sw = np.where(drop, 0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        a = FIREClassifier(fitted, lam=0.003, linear_terms=False).fit(X, y, sample_weight=sw)
        b = FIREClassifier(fitted, lam=0.003, linear_terms=False).fit(X[~drop], y[~drop])
    assert a.n_rules_ == b.n_rules_ > 0
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-12)


# ------------------------------------------------ saturation (issue 47, 7) ---

def test_default_sample_weight_equivalence_with_linear_terms():
    # the failure: FIREClassifier() (linear terms on) gave decision
    # values -236.4 with integer weights and -213.3 with the rows repeated
    from sklearn.utils.estimator_checks import (
        check_sample_weight_equivalence_on_dense_data,
    )

    check_sample_weight_equivalence_on_dense_data("FIREClassifier", FIREClassifier())


@pytest.mark.parametrize("n_classes", [2, 3])
def test_saturated_points_are_not_selected(n_classes):
    # 20 rows of 30 features: the linear terms separate any labels, and past
    # that point the weights run off to thousands where the log-loss is ~0.
    # Each fold holds out a copy of the rows it trains on (as the check's
    # folds do), so its validation loss falls with the training loss and the
    # lowest one was a saturated point
    from sklearn.metrics import log_loss

    from firecy.estimators._selection import SATURATED

    rng = np.random.RandomState(0)
    X = np.vstack([rng.rand(20, 30)] * 2)
    y = np.tile(np.arange(20) % n_classes, 2)
    halves = [(np.arange(20), np.arange(20, 40)), (np.arange(20, 40), np.arange(20))]
    forest = RandomForestClassifier(n_estimators=20, max_depth=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FIREClassifier(forest, cv=halves, random_state=0).fit(X, y)
    path = est.path_
    # the path reaches saturation, and those points are no candidates
    frac = np.bincount(y) / y.size
    null = log_loss(y, np.tile(frac, (y.size, 1)))
    saturated = ~path.eligible & np.isinf(path.validation_error)
    assert saturated.any()
    # the chosen model (scored independently, by scikit-learn) is not saturated
    assert log_loss(y, est.predict_proba(X)) > SATURATED * null
    assert np.max(np.abs(est.decision_function(X))) < 100
