"""Non-finite inputs and intermediates: a right answer or an error naming the problem."""
import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import make_penalty
from firecy.solver import BlockDesign, fire_path, lambda_max, solve


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(n_samples=150, n_features=5, random_state=0)
    forest = RandomForestRegressor(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    return X, y, forest


def _fire(model, **kw):
    return FIRERegressor(model, cv=3, n_lambdas=12, random_state=0, **kw)


@pytest.mark.parametrize("k", [-300, -60, 60, 300])
def test_fit_is_exactly_invariant_to_powers_of_two(data, k):
    # 2**k * y: the rule weights, intercept and lambda scale by 2**k and
    # nothing else changes (y of 1e90 or 1e-90 used to overflow to an
    # all-zero model or fall below the solver's absolute floors)
    X, y, forest = data
    ref = _fire(forest).fit(X, y)
    big = _fire(forest).fit(X, np.ldexp(y, k))
    assert big.n_rules_ == ref.n_rules_ > 0
    np.testing.assert_array_equal(big.coef_, np.ldexp(ref.coef_, k))
    np.testing.assert_array_equal(big.predict(X), np.ldexp(ref.predict(X), k))
    assert big.lambda_ == np.ldexp(ref.lambda_, k)
    np.testing.assert_array_equal(big.path_.objectives, np.ldexp(ref.path_.objectives, 2 * k))


def test_fixed_lam_and_group_l0_in_original_units(data):
    X, y, forest = data
    ref = _fire(forest, lam=0.05, group_l0=0.01, max_rules=None).fit(X, y)
    big = _fire(forest, lam=0.05 * 2.0 ** 40, group_l0=0.01 * 4.0 ** 40, max_rules=None).fit(
        X, np.ldexp(y, 40))
    np.testing.assert_array_equal(big.coef_, np.ldexp(ref.coef_, 40))


def test_target_too_large_for_float64_is_an_error(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="too large or too small for float64"):
        _fire(RandomForestRegressor(n_estimators=5, max_depth=2)).fit(X, y * 1e300)


def test_target_too_small_for_the_trees_is_an_error(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="no split"):
        _fire(RandomForestRegressor(n_estimators=5, max_depth=2)).fit(X, y * 1e-30)


def test_tiny_X_blames_X_not_y(data):
    # scikit-learn's trees treat a feature spanning less than 1e-7 as
    # constant; the message used to blame y's scale
    X, y, _ = data
    with pytest.raises(ValueError, match=r"no split.*every feature of X spans at most "
                                         r"[0-9.]+e-30\d.*treat a feature .* as constant: "
                                         r"rescale X") as info:
        _fire(RandomForestRegressor(n_estimators=5, max_depth=2)).fit(X * 1e-300, y)
    assert "rescale y" not in str(info.value) and "divide y" not in str(info.value)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
def test_lightgbm_without_split_names_lightgbm(data, factor):
    lgb = pytest.importorskip("lightgbm")
    X, y, _ = data
    with pytest.raises(ValueError, match=r"LGBMRegressor has no split.*LightGBM computes "
                                         r"split gains .* rescale y") as info:
        _fire(lgb.LGBMRegressor(n_estimators=5, verbose=-1)).fit(X, y * factor)
    assert "scikit-learn" not in str(info.value)


def test_lightgbm_tiny_X_names_its_zero_threshold(data):
    lgb = pytest.importorskip("lightgbm")
    X, y, _ = data
    with pytest.raises(ValueError, match=r"LightGBM treats values of magnitude below 1e-35 as "
                                         r"zero.*rescale X"):
        _fire(lgb.LGBMRegressor(n_estimators=5, verbose=-1)).fit(X * 1e-300, y)


def test_sample_weight_overflowing_sum_is_an_error(data):
    X, y, forest = data
    with pytest.raises(ValueError, match="sample_weight sums to more"):
        _fire(forest).fit(X, y, sample_weight=np.full(len(y), 1e307))


def test_nan_in_X_blames_the_wrapped_model(data):
    X, y, _ = data
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN.*GradientBoostingRegressor"):
        _fire(GradientBoostingRegressor(n_estimators=5)).fit(Xn, y)
    fitted = _fire(GradientBoostingRegressor(n_estimators=5)).fit(X, y)
    with pytest.raises(ValueError, match="NaN.*GradientBoostingRegressor"):
        fitted.predict(Xn)
    Xi = X.copy()
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        fitted.predict(Xi)


@pytest.mark.parametrize("call", ["solve", "fire_path", "lambda_max"])
def test_solver_entry_points_reject_overflowing_targets(data, call):
    X, y, forest = data
    ens = rule_ensemble_from_model(forest)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X).astype(np.int32),
                                         ens.leaf_values, ens.block_ptr)
    pen = make_penalty("mcp", lam=0.1, gamma=1.1)
    fn = {"solve": solve, "fire_path": fire_path, "lambda_max": lambda_max}[call]
    with pytest.raises(ValueError, match="overflows float64"):
        fn(design, y * 1e300, pen)
    with pytest.raises(ValueError, match="NaN or infinity"):
        fn(design, np.r_[np.nan, y[1:]], pen)
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        fn(design, y, pen, sample_weight=np.r_[np.inf, np.ones(len(y) - 1)])


def test_path_rejects_non_finite_lambdas(data):
    X, y, forest = data
    ens = rule_ensemble_from_model(forest)
    design = BlockDesign.from_leaf_table(ens.leaf_table(X).astype(np.int32),
                                         ens.leaf_values, ens.block_ptr)
    for bad in ([np.inf, 1.0], [np.nan]):
        with pytest.raises(ValueError, match="lambdas must be"):
            fire_path(design, y, make_penalty("l1", lam=1.0), lambdas=bad)
