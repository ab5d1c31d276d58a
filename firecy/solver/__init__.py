"""The greedy block coordinate descent solver and its path driver.

The objective it minimises is stated in docs/objective.rst and
docs/datafits.rst.
"""
from firecy.solver._api import lambda_max, solve
from firecy.solver._design import BlockDesign
from firecy.solver._path import fire_path, group_l0_path
from firecy.solver._results import PathResult, SolveResult

__all__ = ["BlockDesign", "solve", "fire_path", "group_l0_path", "lambda_max", "SolveResult", "PathResult"]
