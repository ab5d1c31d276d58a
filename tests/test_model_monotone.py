"""model_monotone_constraints reads each library's constraints from a fitted model.

The reference is what the user gave the library, in every form it takes; a
model trained without constraints gives None.
"""
import numpy as np
import pytest
from sklearn.ensemble import (
    ExtraTreesRegressor,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from firecy.ensembles import model_monotone_constraints, parse_monotone_list

pd = pytest.importorskip("pandas")

NAMES = ["a", "b", "c"]
EXPECTED = np.array([1, -1, 0], dtype=np.int8)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=200)
    return X, y, pd.DataFrame(X, columns=NAMES)


@pytest.mark.parametrize("form", ["list", "dict"])
def test_hist_gradient_boosting(data, form):
    X, y, frame = data
    cst = [1, -1, 0] if form == "list" else {"a": 1, "b": -1}
    model = HistGradientBoostingRegressor(max_iter=3, monotonic_cst=cst)
    model.fit(frame if form == "dict" else X, y)
    np.testing.assert_array_equal(model_monotone_constraints(model, 3), EXPECTED)


def test_hist_gradient_boosting_classifier(data):
    X, y, _ = data
    model = HistGradientBoostingClassifier(max_iter=3, monotonic_cst=[0, 0, -1])
    model.fit(X, y > 0)
    np.testing.assert_array_equal(model_monotone_constraints(model, 3), [0, 0, -1])


@pytest.mark.parametrize("cls", [RandomForestRegressor, ExtraTreesRegressor])
def test_forests(data, cls):
    X, y, _ = data
    model = cls(n_estimators=3, max_depth=2, monotonic_cst=[1, -1, 0], random_state=0).fit(X, y)
    np.testing.assert_array_equal(model_monotone_constraints(model, 3), EXPECTED)


def test_unconstrained_models_give_none(data):
    X, y, _ = data
    for model in (RandomForestRegressor(3, max_depth=2, random_state=0),
                  GradientBoostingRegressor(n_estimators=3),
                  HistGradientBoostingRegressor(max_iter=3),
                  HistGradientBoostingRegressor(max_iter=3, monotonic_cst=[0, 0, 0])):
        assert model_monotone_constraints(model.fit(X, y), 3) is None


@pytest.mark.parametrize("form", ["text", "tuple", "dict"])
def test_xgboost(data, form):
    xgb = pytest.importorskip("xgboost")
    X, y, frame = data
    cst = {"text": "(1,-1,0)", "tuple": (1, -1), "dict": {"a": 1, "b": -1}}[form]
    model = xgb.XGBRegressor(n_estimators=3, max_depth=2, monotone_constraints=cst)
    model.fit(frame if form == "dict" else X, y)
    np.testing.assert_array_equal(model_monotone_constraints(model, 3), EXPECTED)
    np.testing.assert_array_equal(model_monotone_constraints(model.get_booster(), 3), EXPECTED)
    plain = xgb.XGBRegressor(n_estimators=3, max_depth=2).fit(X, y)
    assert model_monotone_constraints(plain, 3) is None


def test_lightgbm_and_its_model_file(data):
    lgb = pytest.importorskip("lightgbm")
    X, y, _ = data
    model = lgb.LGBMRegressor(n_estimators=3, monotone_constraints=[1, -1, 0], verbose=-1)
    model.fit(X, y)
    np.testing.assert_array_equal(model_monotone_constraints(model, 3), EXPECTED)
    reread = lgb.Booster(model_str=model.booster_.model_to_string())
    np.testing.assert_array_equal(model_monotone_constraints(reread, 3), EXPECTED)
    plain = lgb.LGBMRegressor(n_estimators=3, verbose=-1).fit(X, y)
    assert model_monotone_constraints(plain, 3) is None


@pytest.mark.parametrize("form", ["list", "text", "dict"])
def test_catboost(data, form, tmp_path):
    cb = pytest.importorskip("catboost")
    X, y, frame = data
    cst = {"list": [1, -1, 0], "text": "(1,-1,0)", "dict": {"a": 1, "b": -1}}[form]
    model = cb.CatBoostRegressor(iterations=3, depth=2, monotone_constraints=cst, verbose=0,
                                 allow_writing_files=False)
    model.fit(frame if form == "dict" else X, y)
    np.testing.assert_array_equal(model_monotone_constraints(model, 3), EXPECTED)
    model.save_model(str(tmp_path / "m.cbm"))
    loaded = cb.CatBoost()
    loaded.load_model(str(tmp_path / "m.cbm"))
    np.testing.assert_array_equal(model_monotone_constraints(loaded, 3), EXPECTED)
    plain = cb.CatBoostRegressor(iterations=3, depth=2, verbose=0,
                                  allow_writing_files=False).fit(X, y)
    assert model_monotone_constraints(plain, 3) is None


def test_list_forms_and_errors():
    np.testing.assert_array_equal(parse_monotone_list("()", 2), [0, 0])
    np.testing.assert_array_equal(parse_monotone_list((-1, 1), 2), [-1, 1])
    with pytest.raises(ValueError, match="must be -1, 0 or \\+1, got 2"):
        parse_monotone_list([1, 2], 2)
    with pytest.raises(ValueError, match="3 values for 2 features"):
        parse_monotone_list([1, 0, 1], 2)
    with pytest.raises(ValueError, match="cannot read 'up'"):
        parse_monotone_list("up", 2)
