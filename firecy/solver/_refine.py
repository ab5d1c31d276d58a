"""Path refinement: bisect in log lambda where the rule count jumps.

A warm-started path on a log grid is a discontinuous function of lambda in
the number of rules: with MCP near gamma = 1 (near-L0 selection) the count
often jumps by 2-5 rules between neighbouring grid points (11 -> 16), so rule
sets of 12-15 rules are never offered to the selection; with L1 the count
moves by one rule at a time only on a fine enough grid.

:func:`refine_jumps` bisects every interval between neighbours
``lam_a > lam_b`` whose counts satisfy ``n_b > n_a + 1`` and
``n_a < max_rules``: the midpoint ``sqrt(lam_a * lam_b)`` is solved
warm-started from the solution at ``lam_a`` (the interval's larger lambda,
as along the path), inserted, and the interval is examined again from its
left end, until no such interval remains or the remaining ones are narrower
than ``min_log_gap`` in natural-log units (1e-3: about 7 halvings of a
50-point grid step over three decades). Grid points are never re-solved, so
the refined path contains the plain path exactly.

A count never visited when refinement stops lies inside a jump narrower than
``min_log_gap`` (or refinement ran out of ``max_inserted`` points): at that
resolution the warm-started path does not produce that rule count; MCP's
solution set jumps at a point, and a finer gap does not change that. Those
counts are reported as ``skipped_counts``.
"""
import copy

import numpy as np

from firecy.solver._results import PathResult

__all__ = ["refine_jumps", "skipped_counts", "MIN_LOG_GAP", "MAX_INSERTED"]

MIN_LOG_GAP = 1e-3
MAX_INSERTED = 200


def _jumps(n_a, n_b, lam_a, lam_b, cap, min_log_gap):
    """Whether the interval (a, b) skips counts below the budget and is wide enough."""
    return n_b > n_a + 1 and n_a < cap and np.log(lam_a / lam_b) > min_log_gap


def refine_jumps(problem, template, path, max_rules, tol, max_updates, *, progress=None,
                 strategy="working_set", min_log_gap=MIN_LOG_GAP, max_inserted=MAX_INSERTED):
    """The path with bisection points inserted wherever the rule count jumps.

    Parameters
    ----------
    problem : Problem
        The problem the path was solved on (``firecy.solver._problem``).
    template : Penalty
        The path's penalty; its ``lam`` is set on a copy.
    path : PathResult
        A warm-started path, lambdas decreasing.
    max_rules : int or None
        Refine jumps that start below this count (None: every jump).
    tol, max_updates, strategy
        As for the path's solves.
    progress : callable, optional
        ``progress(k, n_points, result)`` after each inserted point.
    min_log_gap : float
        Intervals narrower than this in ``log(lambda)`` are not bisected.
    max_inserted : int
        At most this many points are inserted.

    Returns
    -------
    PathResult
        With ``inserted`` (the new points) and ``skipped_counts`` set.
    """
    cap = np.inf if max_rules is None else max_rules
    pen = copy.deepcopy(template)
    pts = [dict(lam=path.lambdas[i], coef=path.coefs[i], intercept=path.intercepts[i],
                objective=path.objectives[i], n_rules=int(path.n_rules[i]),
                n_iter=int(path.n_iter[i]), converged=bool(path.converged[i]),
                inserted=False)
           for i in range(len(path))]
    # who each point was warm-started from (a reference: indices shift)
    for i, pt in enumerate(pts):
        j = i - 1 if path.warm_starts is None else int(path.warm_starts[i])
        pt["parent"] = pts[j] if j >= 0 else None
    n_inserted = 0
    i = 0
    while i < len(pts) - 1 and n_inserted < max_inserted:
        a, b = pts[i], pts[i + 1]
        if not _jumps(a["n_rules"], b["n_rules"], a["lam"], b["lam"], cap, min_log_gap):
            i += 1
            continue
        mid = float(np.sqrt(a["lam"] * b["lam"]))
        pen.lam = mid
        w = a["coef"].copy()
        # from a's intercept too (the engine would keep the last solve's,
        # made at another lambda)
        res = problem.solve(pen, w, tol, max_updates, strategy=strategy,
                            intercept=a["intercept"])
        pts.insert(i + 1, dict(lam=mid, coef=w, intercept=res.intercept,
                               objective=res.objective, n_rules=res.n_rules,
                               n_iter=res.n_iter, converged=res.converged, inserted=True,
                               parent=a))
        n_inserted += 1
        if progress is not None:
            progress(len(path) + n_inserted - 1, len(pts), res)
        # examine (a, mid) again, then (mid, b): i stays

    n_rules = np.array([p["n_rules"] for p in pts], dtype=np.intp)
    index = {id(p): i for i, p in enumerate(pts)}
    warm_starts = np.array([-1 if p["parent"] is None else index[id(p["parent"])]
                            for p in pts], dtype=np.intp)
    return PathResult(
        lambdas=np.array([p["lam"] for p in pts]),
        coefs=np.array([p["coef"] for p in pts]),
        intercepts=np.array([p["intercept"] for p in pts]),
        objectives=np.array([p["objective"] for p in pts]),
        n_rules=n_rules,
        n_iter=np.array([p["n_iter"] for p in pts], dtype=np.intp),
        converged=np.array([p["converged"] for p in pts], dtype=bool),
        lambda_max=path.lambda_max,
        inserted=np.array([p["inserted"] for p in pts], dtype=bool),
        skipped_counts=skipped_counts(n_rules, max_rules),
        warm_starts=warm_starts,
    )


def skipped_counts(n_rules, max_rules):
    """Rule counts in ``1..top`` that no path point has.

    ``top`` is ``max_rules`` when the path goes beyond it, else the largest
    count on the path: only counts the path passes can be skipped.

    Parameters
    ----------
    n_rules : array-like of int
        The counts along the path.
    max_rules : int or None

    Returns
    -------
    ndarray of int
    """
    seen = np.unique(np.asarray(n_rules, dtype=np.intp))
    top = int(seen.max()) if seen.size else 0
    if max_rules is not None:
        top = min(top, int(max_rules))
    return np.setdiff1d(np.arange(1, top + 1), seen).astype(np.intp)
