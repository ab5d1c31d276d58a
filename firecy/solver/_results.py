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

    Examples
    --------
    With the squared loss and ``L1(lam)`` on one-column blocks,
    :func:`~firecy.solver.solve` is scikit-learn's ``Lasso(alpha=lam)``:

    >>> import numpy as np
    >>> from sklearn.linear_model import Lasso
    >>> from firecy.penalties import L1
    >>> from firecy.solver import solve
    >>> rng = np.random.default_rng(0)
    >>> M = rng.normal(size=(20, 3))
    >>> y = M @ [1.0, 0.0, -2.0] + 0.5
    >>> res = solve(M, y, L1(0.1), block_ptr=[0, 1, 2, 3], tol=1e-10)
    >>> res.converged, res.n_rules
    (True, 2)
    >>> ref = Lasso(alpha=0.1, tol=1e-12).fit(M, y)
    >>> bool(np.allclose(res.coef, ref.coef_, atol=1e-8))
    True
    >>> bool(np.isclose(res.intercept, ref.intercept_))
    True

    ``objective`` is F at the solution, ``1 / (2 n) ||y - b - M w||^2 + lam ||w||_1``:

    >>> r = y - res.intercept - M @ res.coef
    >>> bool(np.isclose(res.objective, r @ r / 40 + 0.1 * np.abs(res.coef).sum()))
    True
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
    warm_starts : ndarray of int, shape (n_points,), or None
        The point each point was warm-started from (-1: from zero). None
        means the previous point (a plain path); refinement starts an
        inserted point from its neighbour at insertion time, so its
        :meth:`warm_start_chain` need not be the points before it.

    Examples
    --------
    A lasso path over five values of ``lam`` from ``lambda_max`` down:

    >>> import numpy as np
    >>> from firecy.penalties import L1
    >>> from firecy.solver import fire_path, lambda_max
    >>> rng = np.random.default_rng(0)
    >>> M = rng.normal(size=(20, 3))
    >>> y = M @ [1.0, 0.0, -2.0] + 0.5
    >>> path = fire_path(M, y, L1(), block_ptr=[0, 1, 2, 3], n_lambdas=5)
    >>> len(path), path.coefs.shape
    (5, (5, 3))
    >>> bool(np.isclose(path.lambdas[0], lambda_max(M, y, L1(), block_ptr=[0, 1, 2, 3])))
    True
    >>> path.n_rules.tolist(), bool(path.converged.all())
    ([0, 2, 2, 2, 2], True)

    The weights grow as ``lam`` decreases:

    >>> bool(np.all(np.diff(np.abs(path.coefs).sum(axis=1)) > 0))
    True
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
    warm_starts: np.ndarray = None

    def __len__(self):
        return len(self.lambdas)

    def warm_start_chain(self, k):
        """The points whose warm-started solves lead to point ``k``, in order.

        A path over ``lambdas[warm_start_chain(k)]`` (from zero, each point
        warm-started from the one before) solves point ``k`` again, with the
        same warm start at every step, so it returns the same solution: with
        a non-convex penalty (MCP) the solution depends on that chain.

        Parameters
        ----------
        k : int
            A point of the path.

        Returns
        -------
        ndarray of int
            Indices into the path, lambdas decreasing, ending at ``k``.
        """
        k = int(range(len(self))[k])
        if self.warm_starts is None:
            return np.arange(k + 1)
        chain = []
        while k >= 0:
            chain.append(k)
            k = int(self.warm_starts[k])
        return np.array(chain[::-1], dtype=np.intp)
