"""firecy as the solver of another rule-learning package (docs/library_use.rst).

A RuleFit-style learner makes a rule of every node of every tree (not only
the leaves): a node's rule holds on the rows that pass through it, so the
rules of one tree overlap (a node and its descendants) and a tree's block of
the design is not diagonal. It hands firecy that design through the public
Python API (``firecy.solver``: a sparse matrix and the blocks) and gets the
lasso's solution, which must be scikit-learn's on the same design.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import Lasso, lasso_path

from firecy.penalties import L1
from firecy.solver import BlockDesign, fire_path, solve


def rulefit_design(model, X):
    """Every non-root node of every tree as a 0/1 rule column; one block per tree.

    Returns the (n_samples, n_rules) CSC matrix and ``block_ptr``."""
    blocks, block_ptr = [], [0]
    for est in np.ravel(model.estimators_):
        path = est.decision_path(X).tocsc()   # row i passes through node j
        rules = path[:, 1:]                    # the root holds everywhere: the intercept's
        blocks.append(rules)
        block_ptr.append(block_ptr[-1] + rules.shape[1])
    return sp.hstack(blocks).tocsc().astype(np.float64), np.array(block_ptr)


@pytest.fixture(scope="module")
def rulefit():
    X, y = load_diabetes(return_X_y=True)
    gb = GradientBoostingRegressor(n_estimators=20, max_depth=3, learning_rate=0.1,
                                   random_state=0).fit(X, y)
    M, block_ptr = rulefit_design(gb, X)
    return M, block_ptr, y


def test_rulefit_blocks_overlap(rulefit):
    M, block_ptr, y = rulefit
    design = BlockDesign.from_matrix(M, block_ptr)
    # a node's rule and its children's share rows: the blocks are not diagonal
    assert not np.any(design.block_is_diagonal)
    assert design.n_blocks == 20 and design.n_columns == M.shape[1]


def lasso_objective(M, y, coef, intercept, alpha):
    r = y - intercept - M @ coef
    return r @ r / (2 * len(y)) + alpha * np.abs(coef).sum()


@pytest.mark.parametrize("alpha", [2.0, 0.5, 0.05])
def test_rulefit_lasso_is_sklearns(rulefit, alpha):
    """A node's rule is the sum of its children's, so the lasso's weights are
    not unique here; its fitted values, objective and L1 norm are."""
    M, block_ptr, y = rulefit
    res = solve(M, y, L1(alpha), block_ptr=block_ptr, tol=1e-12)
    assert res.converged
    dense = M.toarray()
    ref = Lasso(alpha=alpha, tol=1e-14, max_iter=10**6).fit(dense, y)
    f_ref = lasso_objective(dense, y, ref.coef_, ref.intercept_, alpha)
    f_ours = lasso_objective(dense, y, res.coef, res.intercept, alpha)
    assert f_ours == pytest.approx(res.objective, rel=1e-12)
    assert f_ours <= f_ref * (1 + 1e-12)
    assert f_ours == pytest.approx(f_ref, rel=1e-10)
    np.testing.assert_allclose(res.intercept + dense @ res.coef, ref.predict(dense),
                               rtol=0, atol=1e-6 * np.std(y))
    assert np.abs(res.coef).sum() == pytest.approx(np.abs(ref.coef_).sum(), rel=1e-6)


def test_rulefit_path_is_sklearns(rulefit):
    M, block_ptr, y = rulefit
    path = fire_path(M, y, L1(), block_ptr=block_ptr, n_lambdas=8, eps=1e-2, tol=1e-12)
    dense = M.toarray()
    mean = dense.mean(axis=0)
    alphas, coefs, _ = lasso_path(dense - mean, y - y.mean(), alphas=path.lambdas,
                                  tol=1e-11, max_iter=10**6, precompute=False)
    np.testing.assert_allclose(alphas, path.lambdas)
    for k, alpha in enumerate(path.lambdas):
        fitted = path.intercepts[k] + dense @ path.coefs[k]
        fitted_ref = y.mean() + (dense - mean) @ coefs[:, k]
        np.testing.assert_allclose(fitted, fitted_ref, rtol=0, atol=1e-6 * np.std(y))
        ref = lasso_objective(dense - mean, y - y.mean(), coefs[:, k], 0.0, alpha)
        assert path.objectives[k] == pytest.approx(ref, rel=1e-10)
