"""The engine's skipped resyncs change nothing.

Along a warm path the engine keeps its state between solves and skips a
resync (and a confirming sweep reads the column gradients it computed) when
the weights and intercept are bitwise those of the last resync.  A fresh
engine has no such state: every point of a warm path must be, bitwise, the
solve of a fresh problem started from the previous point.
"""
import copy

import numpy as np
import pytest

from firecy.penalties import L1, MCP, MCPFusion
from firecy.solver import BlockDesign, fire_path
from firecy.solver._problem import Problem, check_solver_params

PENALTIES = {
    "mcp_fusion": lambda: MCPFusion(gamma=1.1, fusion=0.5),
    "mcp": lambda: MCP(gamma=1.1),
    "l1": lambda: L1(),
}


@pytest.mark.parametrize("datafit", ["quadratic", "logistic"])
@pytest.mark.parametrize("penalty", sorted(PENALTIES))
def test_warm_path_is_the_chain_of_fresh_solves(rf_design, datafit, penalty):
    table, values, block_ptr, X, y, _ = rf_design
    if datafit == "logistic":
        y = (y > np.median(y)).astype(np.float64)
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    template = PENALTIES[penalty]()
    path = fire_path(design, y, template, datafit=datafit, n_lambdas=25, eps=1e-3,
                     tol=1e-8)
    assert path.n_rules[-1] > 3  # the path goes somewhere
    max_updates = check_solver_params(1e-8, None, design.n_blocks)
    for k in range(1, len(path)):
        fresh = Problem(design, y, None, True, datafit=datafit)
        pen = copy.deepcopy(template)
        pen.lam = float(path.lambdas[k])
        w = path.coefs[k - 1].copy()
        res = fresh.solve(pen, w, 1e-8, max_updates, intercept=path.intercepts[k - 1])
        if penalty == "l1" and datafit == "quadratic":
            # the active-set Newton solver (L1 on the squared loss) keeps its
            # own state across solves: equal up to the tolerance only
            np.testing.assert_allclose(w, path.coefs[k], atol=1e-6)
            np.testing.assert_allclose(res.objective, path.objectives[k], rtol=1e-10)
            continue
        assert np.array_equal(w, path.coefs[k]), k
        assert res.intercept == path.intercepts[k]
        assert res.objective == path.objectives[k]


def test_weights_changed_between_solves_are_seen(rf_design):
    """A solve after the caller changed the weights in place starts from them."""
    table, values, block_ptr, X, y, _ = rf_design
    design = BlockDesign.from_leaf_table(table, values, block_ptr)
    problem = Problem(design, y, None, True)
    max_updates = check_solver_params(1e-8, None, design.n_blocks)
    lam = 0.05 * problem.lambda_max(MCP(gamma=1.1))
    w = np.zeros(design.n_columns)
    problem.solve(MCP(lam, gamma=1.1), w, 1e-8, max_updates)
    w_first = w.copy()
    w[:] = 0.0
    w[0] = 5.0  # far from optimal: the state must follow w, not the last solve
    res = problem.solve(MCP(lam, gamma=1.1), w, 1e-8, max_updates)
    fresh = Problem(design, y, None, True)
    w2 = np.zeros(design.n_columns)
    w2[0] = 5.0
    ref = fresh.solve(MCP(lam, gamma=1.1), w2, 1e-8, max_updates)
    assert np.array_equal(w, w2)
    assert res.objective == ref.objective
    assert not np.array_equal(w_first, np.zeros_like(w_first))
