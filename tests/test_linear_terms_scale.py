"""Linear terms are scale-safe and weight-scale free (issue 47, items 15, 16).

* a column times 1e154 (its square overflows) or 1e-300 (its square
  underflows) gets the term it gets in ordinary units: bounds, centre and
  spread times the factor, the slope divided by it, the same predictions;
* a constant factor on ``sample_weight`` (all weights 1.1 or 7 instead of 1)
  changes no fit of a given model: the same ``lambda_max``, ``lambda_`` and
  predictions (the default forest draws ``sum(sample_weight)`` rows per tree,
  so that an integer weight is a repeated row: there the factor matters).

The references are the fits on the unscaled column and with weights 1.
"""
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import (HistGradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)

from firecy import FIREClassifier, FIREPoissonRegressor, FIRERegressor, FIRESurvivalRegressor
from firecy.estimators._linear_terms import _weighted_quantiles


def quiet_fit(est, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)     # no overflow warning either
        warnings.filterwarnings("ignore", category=UserWarning)
        return est.fit(*args, **kw)


@pytest.fixture(scope="module")
def friedman():
    return make_friedman1(n_samples=300, n_features=5, noise=0.5, random_state=0)


def hgb():
    return HistGradientBoostingRegressor(max_iter=30, max_depth=3, random_state=0)


# ----------------------------------------------------------- item 15: scale ---

@pytest.fixture(scope="module")
def hgb_reference(friedman):
    X, y = friedman
    # tol=1e-10: the solver's own tolerance would otherwise dominate (a factor
    # of 3 on a column moves the default fit by 2e-5 through its rounding alone)
    return quiet_fit(FIRERegressor(hgb(), random_state=0, tol=1e-10), X, y)


@pytest.mark.parametrize("factor", [1e154, 1e-300, 1e300])
def test_a_column_times_a_huge_or_tiny_factor_fits_the_same(friedman, hgb_reference, factor):
    X, y = friedman
    Xc = X.copy()
    Xc[:, 3] *= factor
    ref = hgb_reference
    est = quiet_fit(FIRERegressor(hgb(), random_state=0, tol=1e-10), Xc, y)
    terms, base = est.linear_terms_, ref.linear_terms_
    assert terms.not_offered == [] and list(terms.features) == list(base.features)
    t = list(terms.features).index(3)
    for name in ("lower", "upper", "center", "sd"):
        np.testing.assert_allclose(getattr(terms, name)[t], getattr(base, name)[t] * factor,
                                   rtol=1e-13, err_msg=name)
    # the column was offered with its own slope (it was 0 at 1e154, dropped at 1e-300)
    assert ref.linear_coef_[t] != 0
    np.testing.assert_allclose(est.linear_coef_[t] * factor, ref.linear_coef_[t], rtol=1e-6)
    np.testing.assert_allclose(est.predict(Xc), ref.predict(X), rtol=1e-9, atol=1e-9)
    assert est.lambda_ == pytest.approx(ref.lambda_, rel=1e-12)


def test_the_default_forest_fits_the_same_on_a_scaled_column(friedman):
    # scikit-learn's trees read X as float32 (1e154 is refused, "too large for
    # dtype('float32')") and call a feature spanning under 1e-7 constant, so
    # the default forest is tested at factors inside float32's range
    X, y = friedman
    X = X[:200]
    y = y[:200]
    ref = quiet_fit(FIRERegressor(random_state=0, tol=1e-10), X, y)
    for factor in (1e30, 3.0):
        Xc = X.copy()
        Xc[:, 3] *= factor
        est = quiet_fit(FIRERegressor(random_state=0, tol=1e-10), Xc, y)
        t = list(est.linear_terms_.features).index(3)
        np.testing.assert_allclose(est.linear_terms_.sd[t], ref.linear_terms_.sd[t] * factor,
                                   rtol=1e-13)
        np.testing.assert_allclose(est.predict(Xc), ref.predict(X), rtol=1e-9, atol=1e-9)


def test_a_subnormal_spread_is_not_offered_with_its_reason():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] + (X[:, 1] > 0) + 0.1 * rng.normal(size=200)
    X[:, 2] = rng.normal(size=200) * 1e-310      # subnormal: 1/spread overflows
    est = quiet_fit(FIRERegressor(hgb(), random_state=0, cv=3), X, y)
    assert ("x2", "too small for float64") in est.linear_terms_.not_offered
    assert np.all(np.isfinite(est.predict(X)))


# --------------------------------------------------- item 16: weight scale ---

def test_the_clip_quantiles_do_not_move_with_a_constant_weight_factor():
    # all weights 1.1: the cumulative weights' rounding put the 2.5% quantile
    # one row further than under weights 1
    x = np.random.default_rng(1).normal(size=400)
    ref = _weighted_quantiles(x, np.ones(400), (0.025, 0.975))
    assert ref == [float(np.quantile(x, 0.025, method="inverted_cdf")),
                   float(np.quantile(x, 0.975, method="inverted_cdf"))]
    for factor in (1.1, 7.0, 1e-300, 0.3):
        assert _weighted_quantiles(x, np.full(400, factor), (0.025, 0.975)) == ref


def _same_fits(fits, predict):
    first = fits[0]
    for est in fits[1:]:
        assert est.path_.lambda_max == pytest.approx(first.path_.lambda_max, rel=1e-12)
        assert est.lambda_ == pytest.approx(first.lambda_, rel=1e-12)
        assert est.n_terms_ == first.n_terms_
        np.testing.assert_allclose(predict(est), predict(first), rtol=1e-9, atol=1e-12)


# all given (no weights and weights of ones differ in the libraries: a
# scikit-learn forest given weights draws its bootstrap through another sampler)
FACTORS = (1.0, 1.1, 7.0)


def _weights(n, factor):
    return np.full(n, factor)


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(1)
    n = 400
    X = rng.normal(size=(n, 6))
    e = rng.uniform(0.5, 2, n)
    y = rng.poisson(e * np.exp(0.8 * (X[:, 0] > 0) + 0.3 * X[:, 1] - 0.2 * X[:, 2]))
    return X, y, e


@pytest.mark.parametrize("model", ["forest", "hgb"])
def test_poisson_does_not_move_with_a_constant_weight_factor(counts, model):
    # before: weights 1.1 moved lambda_max 1.12464 -> 1.12457, lambda_ 0.089 -> 0.102
    # and the log-rate by 0.15 (forest); weights 7 the log-rate by 0.05
    X, y, e = counts
    make = {"forest": lambda: RandomForestRegressor(100, max_depth=3, random_state=0),
            "hgb": lambda: HistGradientBoostingRegressor(loss="poisson", max_iter=50,
                                                         random_state=0)}[model]
    fits = [quiet_fit(FIREPoissonRegressor(make(), random_state=0), X, y,
                      sample_weight=_weights(len(y), f), exposure=e) for f in FACTORS]
    assert np.any(fits[0].linear_coef_)
    _same_fits(fits, lambda est: np.log(est.predict(X, exposure=e)))


def test_regressor_does_not_move_with_a_constant_weight_factor(friedman):
    X, y = friedman
    fits = [quiet_fit(FIRERegressor(RandomForestRegressor(50, max_depth=3, random_state=0),
                                    random_state=0), X, y,
                      sample_weight=_weights(len(y), f)) for f in FACTORS]
    assert np.any(fits[0].linear_coef_)
    _same_fits(fits, lambda est: est.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_does_not_move_with_a_constant_weight_factor(n_classes):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=300, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=n_classes, random_state=0)
    fits = [quiet_fit(FIREClassifier(RandomForestClassifier(50, max_depth=3, random_state=0),
                                     random_state=0), X, y,
                      sample_weight=_weights(len(y), f)) for f in FACTORS]
    assert np.any(fits[0].linear_coef_)
    _same_fits(fits, lambda est: est.decision_function(X))


def test_survival_does_not_move_with_a_constant_weight_factor():
    rng = np.random.default_rng(3)
    n = 300
    X = rng.normal(size=(n, 4))
    t = rng.exponential(np.exp(-(0.7 * (X[:, 0] > 0) + 0.4 * X[:, 1])))
    event = rng.uniform(size=n) < 0.8
    y = np.rec.fromarrays([event, t], names="event,time")
    fits = [quiet_fit(FIRESurvivalRegressor(RandomForestRegressor(50, max_depth=3,
                                                                  random_state=0),
                                            random_state=0), X, y,
                      sample_weight=_weights(n, f)) for f in FACTORS]
    assert np.any(fits[0].linear_coef_)
    _same_fits(fits, lambda est: est.predict(X))


def test_the_typical_rule_spread_of_huge_leaf_values_is_finite():
    # the spread a term's scale is set against: leaf values of 1e200 squared to inf
    from firecy.estimators._linear_terms import _typical_rule_sd

    rng = np.random.default_rng(0)
    leaves = rng.integers(0, 4, size=(100, 1)).astype(np.int32)
    values = rng.normal(size=4)
    base = _typical_rule_sd(leaves, values, np.ones(100))
    for factor in (1e200, 1e-200):
        assert _typical_rule_sd(leaves, values * factor, np.ones(100)) == pytest.approx(
            base * factor, rel=1e-14)


@pytest.mark.parametrize("sparse", [False, True])
def test_the_default_forest_names_a_feature_beyond_float32(friedman, sparse):
    # it stopped in scikit-learn with "Input X contains infinity or a value
    # too large for dtype('float32')", naming nothing (X held no infinity)
    import scipy.sparse as sps

    X, y = friedman
    X = X.copy()
    X[:, 3] *= 1e154
    X[5, 1] = np.nan
    top = f"{np.max(np.abs(X[:, 3])):.3g}".replace("+", r"\+")
    with pytest.raises(ValueError, match=rf"'x3' \(\|x\| up to {top}\).*float32"):
        FIRERegressor(n_jobs=1).fit(sps.csr_matrix(X) if sparse else X, y)
