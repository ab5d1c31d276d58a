"""What a solve and a path return."""
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolveResult", "PathResult"]


@dataclass
class SolveResult:
    """The solution of one solve.

    Attributes
    ----------
    coef : ndarray of shape (n_columns,)
        Rule weights w.
    intercept : float
        The intercept b (on top of the offset, if any).
    objective : float
        F(coef, intercept), the documented objective (docs/objective.rst).
    n_iter : int
        Number of block updates (a convergence sweep counts one per block).
    converged : bool
    objective_trace : ndarray
        F after each accepted step (block update, intercept step, Anderson
        or Newton step); only with ``record_objective=True``.
    """

    coef: np.ndarray
    intercept: float
    objective: float
    n_iter: int
    converged: bool
    objective_trace: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def n_rules(self):
        """Number of nonzero rule weights."""
        return int(np.count_nonzero(self.coef))


@dataclass
class PathResult:
    """A regularisation path, one entry per lambda (largest first).

    Attributes
    ----------
    lambdas : ndarray of shape (n_points,)
    coefs : ndarray of shape (n_points, n_columns)
    intercepts, objectives : ndarray of shape (n_points,)
    n_rules, n_iter : ndarray of int, shape (n_points,)
    converged : ndarray of bool, shape (n_points,)
    lambda_max : float
        The smallest lambda at which w = 0 is stationary.
    inserted : ndarray of bool, shape (n_points,), or None
        Points added between grid points by ``fire_path(refine_path=True)``.
    skipped_counts : ndarray of int or None
        With ``refine_path``: rule counts up to ``max_rules`` that no point
        has (each inside a jump narrower than the refinement's gap).
    """

    lambdas: np.ndarray
    coefs: np.ndarray
    intercepts: np.ndarray
    objectives: np.ndarray
    n_rules: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    lambda_max: float
    inserted: np.ndarray = None
    skipped_counts: np.ndarray = None

    def __len__(self):
        return len(self.lambdas)
