"""The multinomial loss minimised by block coordinate descent over the classes
(the formulation: :mod:`~firecy.estimators._logistic_paths`): the state of the
cycles, one path, and the problem the path's refinement solves on."""
import warnings

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning

from firecy._threads import single_blas_thread
from firecy._validation import check_sample_weight
from firecy.estimators._multinomial_polish import SHRUNK, polish_multinomial, row_logsumexp
from firecy.solver import PathResult, SolveResult, lambda_max
from firecy.solver import Problem, check_solver_params

__all__ = ["multinomial_path", "absent_class_margin", "lambda_grid", "path_result",
           "record_point"]

# cycles over the classes per path point before a ConvergenceWarning
_MAX_CYCLES = 100


def absent_class_margin(n_rows):
    """Log-odds of a class no training row (of positive weight) has: the
    probability of half an observation, 1 / (2 n + 1), instead of 0, so that
    a validation fold scores such rows with a finite loss."""
    return -np.log(2.0 * max(n_rows, 1))


def lambda_grid(top, lambdas, n_lambdas, eps):
    """The path's lambdas, decreasing: ``lambdas`` sorted, else ``n_lambdas``
    log-spaced from ``top`` (the path's lambda_max) down to ``eps * top``."""
    if lambdas is None:
        if not np.isfinite(top):
            raise ValueError("lambda_max is infinite for this penalty: pass the grid explicitly")
        return top * np.logspace(0, np.log10(eps), n_lambdas) if top > 0 else np.array([0.0])
    return np.sort(np.asarray(lambdas, dtype=np.float64).ravel())[::-1]


def record_point(rows, i, n_points, lam, coef, b, objective, n_iter, converged,
                 progress, max_rules):
    """Append path point ``i`` to ``rows`` (copies), report it to
    ``progress``; True when its rule count ends the path (over ``max_rules``)."""
    n_rules = int(np.count_nonzero(coef))
    rows.append((float(lam), coef.copy(), b.copy(), objective, n_rules, n_iter, converged))
    if progress is not None:
        progress(i, n_points, SolveResult(coef=coef.copy(), intercept=b.copy(),
                                          objective=objective, n_iter=n_iter,
                                          converged=converged))
    return max_rules is not None and n_rules > max_rules


def path_result(rows, lambda_max):
    """The PathResult of per-point rows ``(lambda, coef, intercepts,
    objective, n_rules, n_iter, converged)``."""
    cols = list(zip(*rows))
    return PathResult(
        lambdas=np.array(cols[0]), coefs=np.array(cols[1]), intercepts=np.array(cols[2]),
        objectives=np.array(cols[3]), n_rules=np.array(cols[4], dtype=np.intp),
        n_iter=np.array(cols[5], dtype=np.intp), converged=np.array(cols[6], dtype=bool),
        lambda_max=float(lambda_max),
    )


def _lse_others(eta, k):
    """log sum_{k' != k} exp(eta[:, k']) per row."""
    return row_logsumexp(np.delete(eta, k, axis=1))


def _multinomial_loss(eta, codes, s):
    """(1 / sum s) sum_i s_i (logsumexp(eta_i) - eta_{i, y_i})."""
    per_row = row_logsumexp(eta) - eta[np.arange(eta.shape[0]), codes]
    return float(np.dot(s, per_row) / s.sum())


def _binary_loss(labels, eta, s):
    return float(np.dot(s, np.logaddexp(0.0, eta) - labels * eta) / s.sum())


def _intercept_newton(labels, offset, s, b):
    """The optimal intercept of a logistic loss with an offset (1-D, safeguarded)."""
    lo, hi = -np.inf, np.inf
    for _ in range(100):
        p = expit(offset + b)
        g = float(np.dot(s, p - labels))
        h = float(np.dot(s, p * (1.0 - p)))
        if g > 0:
            hi = b
        else:
            lo = b
        if abs(g) <= 1e-12 * s.sum():
            break
        step = -g / h if h > 0 else -4.0 * g / s.sum()
        new = b + float(np.clip(step, -10.0, 10.0))
        if not lo < new < hi:              # Newton left the bracket: bisect
            new = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else new
        if new == b:
            break
        b = new
    return b


class _Multinomial:
    """The state of the block coordinate descent over classes."""

    def __init__(self, design, y, block_class, n_classes, sample_weight, fit_intercept):
        self.codes = y[:, 0].astype(np.intp)
        self.offsets = np.ascontiguousarray(y[:, 1:], dtype=np.float64)
        n = self.codes.shape[0]
        K = int(n_classes)
        if self.offsets.shape[1] != K:
            raise ValueError(f"the packed target has {self.offsets.shape[1]} offsets, "
                             f"expected one per class ({K})")
        self.K = K
        self.s = check_sample_weight(sample_weight, n)
        self.fit_intercept = bool(fit_intercept)
        self.n_columns = design.n_columns
        present = np.bincount(self.codes[self.s > 0], minlength=K)[:K] > 0
        self.present = present
        self.labels = [(self.codes == k).astype(np.float64) for k in range(K)]
        self.designs = []
        self.class_blocks = []
        for k in range(K):
            blocks = np.flatnonzero(block_class == k)
            self.class_blocks.append(blocks)
            self.designs.append(design.subset_blocks(blocks) if blocks.size else (None, None))
        self.n_pos = int(np.count_nonzero(self.s > 0))
        self.n_rows = n
        self._problems = {}
        self._csc = {}

    def class_problem(self, k, tol, max_iter):
        """Class k's logistic problem, set up once: its design statistics
        (curvatures, Lipschitz bounds) do not depend on the offset, which the
        class steps overwrite in place; the engine re-reads it (``resync``) at
        the start of every solve.  The tolerance scale stays the one of the
        first offset, so that every cycle solves to the same tolerance."""
        if k not in self._problems:
            sub = self.designs[k][0]
            offset = np.zeros(self.codes.shape[0])
            prob = Problem(sub, self.labels[k], self.s, self.fit_intercept,
                           datafit="logistic", offset=offset)
            self._problems[k] = (prob, offset,
                                 check_solver_params(tol, max_iter, sub.n_blocks))
        return self._problems[k]

    def offset_of(self, eta, k):
        return self.offsets[:, k] - _lse_others(eta, k)

    def null_intercepts(self):
        """Intercepts minimising the loss with every weight at zero."""
        K, s = self.K, self.s
        if not self.fit_intercept:
            return np.zeros(K)
        freq = np.bincount(self.codes, weights=s, minlength=K)[:K] / s.sum()
        floor = np.exp(absent_class_margin(self.n_pos))
        # exact when the offsets are constant over rows (one cycle confirms it)
        b = np.log(np.maximum(freq, floor)) - (s @ self.offsets) / s.sum()
        for _ in range(200):
            before = b.copy()
            for k in range(K):
                if self.present[k]:
                    eta = self.offsets + b
                    b[k] = _intercept_newton(self.labels[k], self.offset_of(eta, k), s, b[k])
            if np.max(np.abs(b - before)) <= 1e-10 * (1.0 + np.max(np.abs(b))):
                break
        for k in np.flatnonzero(~self.present):
            b[k] = self._absent_intercept(self.offsets + b, k)
        return b - b.mean()   # the representative of the solves (see _cycles)

    def _absent_intercept(self, eta, k):
        off = self.offset_of(eta, k)
        return float(absent_class_margin(self.n_pos) - np.average(off, weights=self.s))

    def class_penalty(self, pen, k):
        """``pen`` on class k's design (its columns renumbered): a penalty
        with per-column data (SignConstrained's bounds) restricted to them,
        built at each call (it shares the inner penalty, whose ``lam`` the
        path sets); any other penalty as it is."""
        if getattr(pen, "restrict_to", None) is None or self.designs[k][0] is None:
            return pen
        return pen.restrict_to(self.class_blocks[k], self.designs[k][1])

    def class_curvature(self, k):
        """The coordinate curvatures of class k's problem (MCP's scale)."""
        return self._problems[k][0].engine.curvature

    def class_csc(self, k):
        """Class k's design as a CSC matrix (built once)."""
        if k not in self._csc:
            self._csc[k] = self.designs[k][0].tocsc()
        return self._csc[k]

    def class_margin(self, k, wk):
        """``M_k w_k``: only the trees with a rule are read (few, on a path)."""
        sub = self.designs[k][0]
        nz = np.flatnonzero(wk)
        if nz.size == 0:
            return np.zeros(self.n_rows)
        if not sub.is_tree:
            return self.class_csc(k)[:, nz] @ wk[nz]
        blocks = np.unique(np.searchsorted(sub.block_ptr, nz, side="right") - 1)
        return (sub.leaf_values * wk)[sub.leaf_table[:, blocks]].sum(axis=1)

    def margins(self, w, b):
        eta = self.offsets + b
        for k, (sub, cols) in enumerate(self.designs):
            if sub is not None:
                eta[:, k] += self.class_margin(k, np.ascontiguousarray(w[cols]))
        return eta

    def lambda_max(self, template, b):
        eta = self.margins(np.zeros(self.n_columns), b)
        tops = [lambda_max(sub, self.labels[k], self.class_penalty(template, k),
                           datafit="logistic", offset=self.offset_of(eta, k), sample_weight=self.s,
                           fit_intercept=self.fit_intercept)
                for k, (sub, _) in enumerate(self.designs)
                if sub is not None and self.present[k]]
        return max(tops) if tops else 0.0

    def solve(self, pen, w, b, tol, max_iter):
        """Cycle over the classes until a cycle lowers F by at most ``tol``."""
        # one BLAS limit around all the class steps, not one per step
        # (setting it costs milliseconds; the count is reference-counted)
        with single_blas_thread():
            return self._cycles(pen, w, b, tol, max_iter)

    def _cycles(self, pen, w, b, tol, max_iter):
        eta = self.margins(w, b)
        pen_value = np.zeros(self.K)
        n_iter, converged, previous = 0, True, np.inf
        support = w != 0
        polished = False
        for cycle in range(_MAX_CYCLES):
            for k, (sub, cols) in enumerate(self.designs):
                off = self.offset_of(eta, k)
                if not self.present[k]:
                    b[k] = self._absent_intercept(eta, k)
                elif sub is None:
                    if self.fit_intercept:
                        b[k] = _intercept_newton(self.labels[k], off, self.s, b[k])
                else:
                    prob, offset, max_updates = self.class_problem(k, tol, max_iter)
                    offset[:] = off
                    prob.engine.intercept = b[k]
                    wk = np.ascontiguousarray(w[cols], dtype=np.float64)
                    res = prob.solve(self.class_penalty(pen, k), wk, tol, max_updates)
                    w[cols] = res.coef
                    b[k] = res.intercept
                    n_iter += res.n_iter
                    converged &= bool(res.converged)
                    # the penalty's value: the solver's objective minus its datafit
                    margin_k = off + b[k] + self.class_margin(k, res.coef)
                    pen_value[k] = res.objective - _binary_loss(self.labels[k], margin_k, self.s)
                eta[:, k] = self.offsets[:, k] + b[k]
                if sub is not None:
                    eta[:, k] += self.class_margin(k, np.ascontiguousarray(w[cols]))
            objective = _multinomial_loss(eta, self.codes, self.s) + float(pen_value.sum())
            if previous - objective <= tol * max(abs(objective), 1e-300):
                # the confirming cycle moves the weights within the solver's
                # tolerance: a last Newton polish makes the answer the
                # restricted stationary point itself (weighted and repeated
                # rows then agree); weights it stops at zero are confirmed by
                # another cycle
                if not np.any(w):
                    break
                status = polish_multinomial(self, pen, w, b)
                eta = self.margins(w, b)
                objective = self.objective(pen, eta, w)
                if status != SHRUNK:
                    break
                previous, support = objective, w != 0
                continue
            previous = objective
            # the support held over a whole cycle: joint Newton steps on it
            # (the cycles alone converge linearly), then a cycle confirms
            new_support = w != 0
            if np.array_equal(new_support, support) and not polished:
                polished = True
                before = w.copy()
                if polish_multinomial(self, pen, w, b) or not np.array_equal(w, before):
                    eta = self.margins(w, b)
                    previous = self.objective(pen, eta, w)
                new_support = w != 0
            support = new_support
        else:
            converged = False
            warnings.warn(
                f"the multinomial block coordinate descent did not converge in "
                f"{_MAX_CYCLES} cycles over the classes", ConvergenceWarning, stacklevel=5)
        if self.fit_intercept:
            # F is the same when every intercept moves by the same amount:
            # the representative with intercepts summing to zero, so that
            # the margins (decision_function) are defined, not only the
            # probabilities
            b -= b.mean()
        return objective, n_iter, converged

    def objective(self, pen, eta, w):
        """F at margins ``eta`` (weights ``w``)."""
        value = _multinomial_loss(eta, self.codes, self.s)
        for k, (sub, cols) in enumerate(self.designs):
            # a class without a rule adds nothing; one absent from the rows
            # (a CV fold without it) has no solved problem, hence no curvature
            if sub is None or not np.any(w[cols]):
                continue
            wk, ptr, curv = w[cols], sub.block_ptr, self.class_curvature(k)
            pen_k = self.class_penalty(pen, k)
            for t in np.unique(np.searchsorted(ptr, np.flatnonzero(wk), side="right") - 1):
                lo, hi = ptr[t], ptr[t + 1]
                value += pen_k.value_of(wk[lo:hi], curv[lo:hi], columns=np.arange(lo, hi),
                                      block=int(t))
        return float(value)


def multinomial_path(design, y, penalty, *, block_class, n_classes, sample_weight=None,
                     lambdas=None, n_lambdas=50, eps=1e-3, max_rules=None,
                     fit_intercept=True, tol=1e-6, max_iter=None, progress=None,
                     refine_path=False):
    """The warm-started path of the multinomial loss over class-specific blocks.

    Parameters
    ----------
    design : BlockDesign
    y : ndarray of shape (n_samples, 1 + n_classes)
        The packed target (see :func:`pack_target`).
    penalty : Penalty
        Template; its ``lam`` runs over the grid.
    block_class : ndarray of int, shape (n_blocks,)
    n_classes : int
    sample_weight, lambdas, n_lambdas, eps, max_rules, fit_intercept, tol, max_iter, progress
        As in :func:`firecy.solver.fire_path`. ``lambda_max`` is the largest
        class's, at the model without rules (intercepts optimal).
    refine_path : bool, default=False
        Bisect where the rule count (over all classes) jumps, as
        :func:`firecy.solver.fire_path` does (the same
        :func:`~firecy.solver._refine.refine_jumps`).

    Returns
    -------
    PathResult
        ``intercepts`` has shape (n_points, n_classes).
    """

    # one BLAS limit around the whole path (finding the libraries costs
    # milliseconds; nested limits are reference-counted and free)
    with single_blas_thread():
        return _multinomial_path(design, y, penalty, block_class, n_classes, sample_weight,
                                 lambdas, n_lambdas, eps, max_rules, fit_intercept, tol,
                                 max_iter, progress, refine_path)


def _multinomial_path(design, y, penalty, block_class, n_classes, sample_weight, lambdas,
                      n_lambdas, eps, max_rules, fit_intercept, tol, max_iter, progress,
                      refine_path):
    import copy

    state = _Multinomial(design, y, block_class, n_classes, sample_weight, fit_intercept)
    b0 = state.null_intercepts()
    top = state.lambda_max(penalty, b0)
    grid = lambda_grid(top, lambdas, n_lambdas, eps)
    pen = copy.deepcopy(penalty)
    w = np.zeros(design.n_columns)
    b = b0.copy()
    null_objective = _multinomial_loss(state.margins(w, b0), state.codes, state.s)
    rows = []
    for i, lam in enumerate(grid):
        pen.lam = float(lam)
        if lam >= top:
            w[:] = 0.0
            b = b0.copy()
            objective, n_iter, converged = null_objective, 0, True
        else:
            objective, n_iter, converged = state.solve(pen, w, b, tol, max_iter)
        if record_point(rows, i, len(grid), lam, w, b, objective, n_iter, converged,
                        progress, max_rules):
            break
    path = path_result(rows, top)
    if refine_path:
        from firecy.solver import refine_jumps

        path = refine_jumps(_RefineProblem(state, path), penalty, path, max_rules, tol,
                            max_iter, progress=progress)
    return path


class _RefineProblem:
    """The ``problem`` :func:`~firecy.solver._refine.refine_jumps` solves on:
    a multinomial solve warm-started from the coefficients it is given and
    the intercepts of the path point they come from."""

    def __init__(self, state, path):
        self.state = state
        self._intercepts = {path.coefs[i].tobytes(): path.intercepts[i]
                            for i in range(len(path))}

    def solve(self, pen, w, tol, max_updates, strategy="working_set", intercept=None):
        if intercept is None:
            intercept = self._intercepts.get(w.tobytes(), self.state.null_intercepts())
        b = np.array(intercept, dtype=np.float64)
        objective, n_iter, converged = self.state.solve(pen, w, b, tol, max_updates)
        self._intercepts[w.tobytes()] = b.copy()
        return SolveResult(coef=w, intercept=b.copy(), objective=objective, n_iter=n_iter,
                           converged=converged)
