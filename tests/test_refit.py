"""Reproducing a selected model from its chosen parameters.

MCP is non-convex: the solution at a lambda depends on the warm start, so
``lam=fire.lambda_`` alone (solved from zero) can give another model. The
warm path through ``warm_lambdas_`` down to ``lambda_`` solves every point
from the same start as the selection's path did, and must give the same
model, to the bit.
"""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

from firecy import FIREClassifier, FIRERegressor
from firecy.ensembles import rule_ensemble_from_model
from firecy.penalties import MCPFusion
from firecy.solver import BlockDesign, fire_path


def _refit(fire, X, y):
    return clone(fire).set_params(lam=fire.lambda_, lambdas=fire.warm_lambdas_,
                                  **fire.best_params_).fit(X, y)


def test_regressor_refit_at_the_chosen_lambda_is_the_same_model():
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=80, max_depth=3, random_state=0).fit(X, y)
    fire = FIRERegressor(rf, gamma=[1.1, 3.0], random_state=0).fit(X, y)
    assert fire.warm_lambdas_[-1] == fire.lambda_
    assert np.all(np.diff(fire.warm_lambdas_) < 0)
    again = _refit(fire, X, y)
    np.testing.assert_array_equal(again.coef_, fire.coef_)
    assert again.intercept_ == fire.intercept_
    np.testing.assert_array_equal(again.predict(X), fire.predict(X))


@pytest.mark.parametrize("loader", [load_breast_cancer, load_iris])
def test_classifier_refit_at_the_chosen_lambda_is_the_same_model(loader):
    X, y = loader(return_X_y=True)
    rf = RandomForestClassifier(n_estimators=40, max_depth=3, random_state=0).fit(X, y)
    clf = FIREClassifier(rf, random_state=0).fit(X, y)
    again = _refit(clf, X, y)
    np.testing.assert_array_equal(again.coef_, clf.coef_)
    np.testing.assert_array_equal(again.intercept_, clf.intercept_)


def test_refined_path_points_are_solved_again_by_their_chain():
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=60, max_depth=3, random_state=1).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    design = BlockDesign.from_leaf_table(np.ascontiguousarray(ens.leaf_table(X), np.int32),
                                         ens.leaf_values, ens.block_ptr)
    pen = MCPFusion(gamma=1.1, fusion=0.5)
    path = fire_path(design, y, pen, n_lambdas=20, max_rules=25, refine_path=True)
    assert path.inserted.any()    # refinement ran, so chains are not prefixes
    not_prefix = 0
    for k in range(len(path)):
        chain = path.warm_start_chain(k)
        assert chain[0] == 0 and chain[-1] == k
        assert np.all(np.diff(path.lambdas[chain]) < 0)
        not_prefix += len(chain) != k + 1
        if path.inserted[k]:
            again = fire_path(design, y, pen, lambdas=path.lambdas[chain])
            np.testing.assert_array_equal(again.coefs[-1], path.coefs[k])
    assert not_prefix > 0


def test_lam_with_lambdas_needs_a_value_above_it():
    X, y = load_diabetes(return_X_y=True)
    rf = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="warm path down to it"):
        FIRERegressor(rf, lam=10.0, lambdas=[1.0, 2.0]).fit(X, y)
