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

Not every inserted point is a new candidate for the selection. Bisecting a
jump that does not fill in (3 -> 5 stays 3 -> 5 after 8 halvings) inserts
runs of points with the count of one end, at nearby lambdas and mostly
with the same rules (65 of the 74 such points on the selection tests' two
forests; the others swap a rule): within such a run the last point, the
smallest lambda (the least shrunk fit, right before the count changes), is
the model the grid does not offer; its interior points repeat its count at
more shrinkage.
:func:`candidate_points` keeps every plain point and, of the inserted
points, the last of each run of equal counts, so that every rule count of
the refined path stays a candidate, and the selection's cross-validation
does not solve the rest in every fold.
"""
import copy
import queue

import numpy as np

from firecy.solver._results import PathResult

__all__ = ["refine_jumps", "skipped_counts", "candidate_points", "MIN_LOG_GAP", "MAX_INSERTED"]

MIN_LOG_GAP = 1e-3
MAX_INSERTED = 200


def _jumps(n_a, n_b, lam_a, lam_b, cap, min_log_gap):
    """Whether the interval (a, b) skips counts below the budget and is wide enough."""
    return n_b > n_a + 1 and n_a < cap and np.log(lam_a / lam_b) > min_log_gap


def refine_jumps(problem, template, path, max_rules, tol, max_updates, *, progress=None,
                 strategy="working_set", min_log_gap=MIN_LOG_GAP, max_inserted=MAX_INSERTED,
                 n_jobs=1):
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
    n_jobs : int or None, default=1
        Threads over the path's jumps (``None``: as
        :func:`firecy._threads.effective_n_jobs` resolves it).
        The bisection of one jump of the plain path never reads another's
        points, so the jumps are refined independently, each thread on a
        clone of ``problem`` (``problem.clone()``), when its solves are
        bitwise the problem's (``problem.clone_solves_exactly``: not for the
        active-set solver's penalties, such as L1 or MCP on the squared
        loss); otherwise, or for a problem without clones, in the calling
        thread. The result is bitwise the serial one, and ``progress`` is
        called in the serial order once all jumps are done.

    Returns
    -------
    PathResult
        With ``inserted`` (the new points) and ``skipped_counts`` set.
    """
    cap = np.inf if max_rules is None else max_rules
    pts = [dict(lam=path.lambdas[i], coef=path.coefs[i], intercept=path.intercepts[i],
                objective=path.objectives[i], n_rules=int(path.n_rules[i]),
                n_iter=int(path.n_iter[i]), converged=bool(path.converged[i]),
                inserted=False)
           for i in range(len(path))]
    # who each point was warm-started from (a reference: indices shift)
    for i, pt in enumerate(pts):
        j = i - 1 if path.warm_starts is None else int(path.warm_starts[i])
        pt["parent"] = pts[j] if j >= 0 else None
    # the serial order: each interval of the plain path bisected to the end
    # before the next one (inserted points only ever split that interval)
    jumps = [i for i in range(len(pts) - 1)
             if _jumps(pts[i]["n_rules"], pts[i + 1]["n_rules"], pts[i]["lam"],
                       pts[i + 1]["lam"], cap, min_log_gap)]
    threads = 1
    if len(jumps) > 1 and max_inserted > 0 and hasattr(problem, "clone") \
            and problem.clone_solves_exactly(template, strategy):
        import joblib

        from firecy._threads import effective_n_jobs

        threads = effective_n_jobs(n_jobs, len(jumps))
        # None: a backend of its own (Dask), whose workers are not ours to thread
        threads = 1 if threads is None else joblib.effective_n_jobs(threads)
        threads = max(1, min(int(threads), len(jumps)))
    args = (template, cap, min_log_gap, tol, max_updates, strategy)
    if threads == 1:
        per_jump, budget = [], max_inserted
        for i in jumps:
            if budget <= 0:
                break
            new = _bisect(problem, pts[i], pts[i + 1], budget, *args,
                          progress=progress, counter=(len(path), max_inserted - budget))
            per_jump.append((i, new))
            budget -= len(new)
    else:
        # each thread keeps one problem (the caller's or a clone) for its jumps
        pool = queue.SimpleQueue()
        pool.put(problem)
        for _ in range(threads - 1):
            pool.put(problem.clone())

        def task(i):
            prob = pool.get()
            try:
                return _bisect(prob, pts[i], pts[i + 1], max_inserted, *args)
            finally:
                pool.put(prob)

        from sklearn.utils.parallel import Parallel, delayed

        # threads even under a process backend: the tasks share the problems
        done = Parallel(n_jobs=threads, require="sharedmem")(delayed(task)(i) for i in jumps)
        # the serial result: jumps in order, until max_inserted (a jump's
        # insertions under a smaller budget are the first ones of its own)
        per_jump, budget = [], max_inserted
        for i, new in zip(jumps, done):
            new = new[:budget]
            per_jump.append((i, new))
            budget -= len(new)
            if progress is not None:
                before = max_inserted - budget - len(new)
                for m, pt in enumerate(new, 1):
                    progress(len(path) + before + m - 1, len(path) + before + m, pt["result"])
    # insert each jump's points between its ends, by decreasing lambda
    # (right to left, so that the plain path's indices stay valid)
    for i, new in reversed(per_jump):
        pts[i + 1:i + 1] = sorted(new, key=lambda p: -p["lam"])

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


def _bisect(problem, a, b, budget, template, cap, min_log_gap, tol, max_updates, strategy,
            progress=None, counter=None):
    """One jump (a, b) of the plain path refined: its inserted points, in the
    order they were solved (at most ``budget``).

    Bisects ``(a, b)``, then examines ``(a, mid)`` again and then
    ``(mid, b)``, left to right, until no sub-interval jumps.
    """
    pen = copy.deepcopy(template)
    seg = [a, b]
    new = []
    j = 0
    while j < len(seg) - 1 and len(new) < budget:
        lo, hi = seg[j], seg[j + 1]
        if not _jumps(lo["n_rules"], hi["n_rules"], lo["lam"], hi["lam"], cap, min_log_gap):
            j += 1
            continue
        mid = float(np.sqrt(lo["lam"] * hi["lam"]))
        pen.lam = mid
        w = lo["coef"].copy()
        # from lo's intercept too (the engine would keep the last solve's,
        # made at another lambda)
        res = problem.solve(pen, w, tol, max_updates, strategy=strategy,
                            intercept=lo["intercept"])
        pt = dict(lam=mid, coef=w, intercept=res.intercept, objective=res.objective,
                  n_rules=res.n_rules, n_iter=res.n_iter, converged=res.converged,
                  inserted=True, parent=lo, result=res)
        seg.insert(j + 1, pt)
        new.append(pt)
        if progress is not None:
            n_path, before = counter
            k = before + len(new)
            progress(n_path + k - 1, n_path + k, res)
        # examine (lo, mid) again, then (mid, hi): j stays
    return new


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


def candidate_points(n_rules, inserted):
    """The points of a refined path the selection chooses among.

    Every point of the plain path, and of the inserted points only those
    that end a run of equal rule counts (the next point along the path,
    lambdas decreasing, has another count, or there is none): an inserted
    point inside a run repeats the run's rule count at a larger lambda than
    the run's last point (a more shrunk fit, mostly of the same rules), and
    no new count. Every rule count of the path keeps a candidate (the last point of
    each of its runs).

    Parameters
    ----------
    n_rules : array-like of int, shape (n_points,)
        The rule counts along the path, lambdas decreasing.
    inserted : array-like of bool, shape (n_points,), or None
        The points refinement inserted (None: none).

    Returns
    -------
    ndarray of bool, shape (n_points,)
        True at the candidates.
    """
    n_rules = np.asarray(n_rules)
    if n_rules.ndim != 1:
        raise ValueError(f"n_rules must be one-dimensional, got shape {n_rules.shape}")
    if inserted is None:
        return np.ones(n_rules.shape[0], dtype=bool)
    inserted = np.asarray(inserted, dtype=bool)
    if inserted.shape != n_rules.shape:
        raise ValueError(f"inserted has shape {inserted.shape}, n_rules {n_rules.shape}")
    run_end = np.ones(n_rules.shape[0], dtype=bool)
    run_end[:-1] = n_rules[1:] != n_rules[:-1]
    return ~inserted | run_end
