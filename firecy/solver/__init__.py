"""The greedy block coordinate descent solver and its path driver."""
from firecy.solver._api import (
    PathResult,
    SolveResult,
    fire_path,
    group_l0_path,
    lambda_max,
    solve,
)
from firecy.solver._design import BlockDesign

__all__ = ["BlockDesign", "solve", "fire_path", "group_l0_path", "lambda_max", "SolveResult", "PathResult"]
