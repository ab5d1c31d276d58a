"""The rules table's support routes only the kept rules' trees.

Checked against each kept rule's own row mask (``rule_mask``, the library's
routing) and against the every-tree support, for scikit-learn, XGBoost and
LightGBM ensembles, leaves and depth cuts, with sample weights.
"""
import numpy as np
import pytest
from sklearn.datasets import make_regression
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor

from firecy import FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.rules import rules_table
from firecy.rules._inputs import leaf_support, tree_of

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def _models():
    return {
        "forest": RandomForestRegressor(30, max_depth=5, random_state=0),
        "gb": GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0),
        "xgboost": xgb.XGBRegressor(n_estimators=30, max_depth=4, n_jobs=1),
        "lightgbm": lgb.LGBMRegressor(n_estimators=30, n_jobs=1, verbose=-1, random_state=0),
    }


@pytest.mark.parametrize("name", ["forest", "gb", "xgboost", "lightgbm"])
@pytest.mark.parametrize("cut", [None, 2])
def test_support_of_kept_columns_equals_their_row_masks(name, cut):
    X, y = make_regression(400, 5, noise=3.0, random_state=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    ens = rule_ensemble_from_model(_models()[name].fit(X, y))
    if cut is not None:
        ens = ens.cut(cut, X=X)
    rng = np.random.default_rng(2)
    cols = np.sort(rng.choice(ens.n_rules, 7, replace=False))
    got = leaf_support(ens, X, w, columns=cols)
    full = leaf_support(ens, X, w)
    for j in cols.tolist():
        mask = ens.rule_mask(j, X)
        assert got[j] == pytest.approx(np.sum(w[mask]) / np.sum(w), rel=1e-12)
    routed = np.isin(tree_of(ens, np.arange(ens.n_rules)), tree_of(ens, cols))
    np.testing.assert_allclose(got[routed], full[routed], rtol=1e-12)
    assert np.all(np.isnan(got[~routed]))
    assert np.all(np.isnan(leaf_support(ens, X, w, columns=[])))


def test_rules_table_support_is_the_kept_rules_row_fraction():
    X, y = make_regression(300, 5, noise=3.0, random_state=3)
    model = RandomForestRegressor(50, max_depth=4, random_state=0).fit(X, y)
    fire = FIRERegressor(model, cv=3, random_state=0, n_jobs=1, linear_terms=False).fit(X, y)
    table = rules_table(fire, X=X, as_frame=False)
    assert len(table) == fire.n_rules_ > 0
    kept = np.flatnonzero(fire.coef_)
    assert sorted(r["column"] for r in table) == kept.tolist()
    for r in table:
        frac = fire.ensemble_.rule_mask(r["column"], X).mean()
        assert r["support"] == pytest.approx(frac, rel=1e-12)


def test_columns_must_be_indices():
    # a boolean mask would read as the indices 0 and 1; out-of-range indices
    # would name trees that do not exist: both refused, naming the columns
    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 3))
    forest = RandomForestRegressor(3, max_depth=2, random_state=0).fit(X, X[:, 0])
    ens = rule_ensemble_from_model(forest)
    mask = np.zeros(ens.n_rules, dtype=bool)
    mask[5] = True
    for bad in (mask, [ens.n_rules], [-1], [0.0, 5.0]):
        with pytest.raises(ValueError, match="columns must be indices"):
            leaf_support(ens, X, None, columns=bad)
    full = leaf_support(ens, X, None)
    part = leaf_support(ens, X, None, columns=np.flatnonzero(mask))
    assert part[5] == full[5]
    assert np.isnan(leaf_support(ens, X, None, columns=[])).all()
