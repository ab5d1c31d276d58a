"""The greedy block coordinate descent solver and its path driver.

The objective it minimises is stated in docs/objective.rst and
docs/datafits.rst.
"""
from firecy.solver._api import lambda_max, solve
from firecy.solver._design import BlockDesign
from firecy.solver._path import fire_path, group_l0_path
from firecy.solver._path import unpenalised_start  # noqa: F401  (shared, not public)
from firecy.solver._results import PathResult, SolveResult

# shared with firecy's other packages (not public API: see __all__)
from firecy.solver._irls import IRLSProblem, irls_path, irls_refine  # noqa: F401
from firecy.solver._problem import Problem, check_penalty, check_solver_params  # noqa: F401
from firecy.solver._refine import MAX_INSERTED, candidate_points, refine_jumps  # noqa: F401

__all__ = ["BlockDesign", "solve", "fire_path", "group_l0_path", "lambda_max", "SolveResult", "PathResult"]
