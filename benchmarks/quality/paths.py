"""Warm-started lambda paths, and their refinement where the rule count jumps.

A path is a sequence of solutions of the FIRE problem at decreasing lambda,
each warm-started from the previous one (papers/000, section 3.3.1). With
MCP near gamma = 1 the number of rules is a discontinuous function of
lambda along such a path: on a log grid of 50 points it often jumps by 2-5
rules between neighbours (11 -> 16), so rule sets of 12-15 rules are never
offered to the selection.

Refinement (:func:`refined_path`): after the grid path, every interval
between neighbours ``lam_hi > lam_lo`` whose counts satisfy
``c_lo > c_hi + 1`` and ``c_hi < max_rules`` is bisected in log lambda: the
midpoint ``sqrt(lam_hi * lam_lo)`` is solved warm-started from the solution
at ``lam_hi`` (the interval's left end), inserted, and both halves are
examined again, until no such interval remains or an interval is narrower
than ``min_log_gap`` (in natural-log units). The grid points are never
re-solved, so the refined path contains the plain grid path exactly (a
refined and an unrefined selection can be compared on the same solutions).
A count never visited when refinement stops lies inside a jump narrower than
``min_log_gap``: at that resolution the warm path does not produce it.
"""
import time
from dataclasses import dataclass, field

import numpy as np

from firecy.solver import lambda_max, solve

__all__ = ["Path", "grid", "warm_path", "refined_path", "missing_counts"]


@dataclass
class Path:
    """Points of a path, sorted by decreasing lambda.

    ``base[i]`` marks points of the plain grid path; ``seconds[i]`` is the
    time of the solve that produced point i.
    """

    lambdas: np.ndarray
    coefs: np.ndarray          # (n_points, n_columns)
    intercepts: np.ndarray
    n_rules: np.ndarray
    base: np.ndarray
    seconds: np.ndarray
    lambda_max: float
    stats: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.lambdas)

    def restrict(self, mask):
        return Path(self.lambdas[mask], self.coefs[mask], self.intercepts[mask],
                    self.n_rules[mask], self.base[mask], self.seconds[mask],
                    self.lambda_max, dict(self.stats))

    @property
    def time(self):
        return float(self.seconds.sum())


def grid(lam_max, n_lambdas=50, eps=1e-3):
    """``n_lambdas`` log-spaced values from lam_max down to eps * lam_max."""
    return lam_max * np.logspace(0, np.log10(eps), n_lambdas)


def _solve(design, y, template, lam, w0, tol):
    pen = template
    pen.lam = float(lam)
    t0 = time.perf_counter()
    res = solve(design, y, pen, coef_init=w0, tol=tol)
    return res.coef, res.intercept, time.perf_counter() - t0


def warm_path(design, y, template, lambdas, max_rules=None, tol=1e-6, lam_max=None):
    """Solve along ``lambdas`` (decreasing), each point warm-started from the
    previous one; stop after the first point with more than ``max_rules``."""
    import copy

    pen = copy.deepcopy(template)
    if lam_max is None:
        lam_max = lambda_max(design, y, pen)
    w = np.zeros(design.n_columns)
    rows = []
    for lam in lambdas:
        if lam >= lam_max:
            # w = 0 is the solution at the top; the intercept is the mean
            w, b, dt = np.zeros(design.n_columns), float(np.mean(y)), 0.0
        else:
            w, b, dt = _solve(design, y, pen, lam, w, tol)
        c = int(np.count_nonzero(w))
        rows.append((lam, w.copy(), b, c, dt))
        if max_rules is not None and c > max_rules:
            break
    lam_, coefs, b_, c_, dt_ = zip(*rows)
    return Path(np.array(lam_), np.array(coefs), np.array(b_), np.array(c_, dtype=int),
                np.ones(len(rows), dtype=bool), np.array(dt_), float(lam_max))


def refined_path(design, y, template, n_lambdas=50, eps=1e-3, max_rules=14,
                 min_log_gap=1e-3, max_extra=200, tol=1e-6):
    """The grid path plus bisection points wherever the rule count jumps by
    more than one below ``max_rules`` (see the module docstring).

    ``stats``: ``extra`` (number of inserted points), ``missing`` (counts in
    1..max_rules never visited), ``jumps_before`` / ``jumps_after`` (number
    of intervals still jumping).
    """
    import copy

    pen = copy.deepcopy(template)
    lam_max = lambda_max(design, y, pen)
    path = warm_path(design, y, pen, grid(lam_max, n_lambdas, eps), max_rules, tol, lam_max)
    # points as a list: (lam, coef, b, count, base, seconds)
    pts = [(path.lambdas[i], path.coefs[i], path.intercepts[i], int(path.n_rules[i]), True,
            path.seconds[i]) for i in range(len(path))]

    def jumping(a, b):
        return (b[3] > a[3] + 1 and a[3] < max_rules
                and np.log(a[0] / b[0]) > min_log_gap)

    jumps_before = int(sum(jumping(pts[i], pts[i + 1]) for i in range(len(pts) - 1)))
    extra = 0
    i = 0
    while i < len(pts) - 1 and extra < max_extra:
        a, b = pts[i], pts[i + 1]
        if not jumping(a, b):
            i += 1
            continue
        mid = np.sqrt(a[0] * b[0])
        w, b0, dt = _solve(design, y, pen, mid, a[1].copy(), tol)
        pts.insert(i + 1, (mid, w, b0, int(np.count_nonzero(w)), False, dt))
        extra += 1
        # re-examine (a, mid) first, then (mid, b): i stays
    # jumps left (narrower than min_log_gap, or cut by max_extra)
    jumps_after = sum(pts[i + 1][3] > pts[i][3] + 1 and pts[i][3] < max_rules
                      for i in range(len(pts) - 1))
    lam_, coefs, b_, c_, base_, dt_ = zip(*pts)
    out = Path(np.array(lam_), np.array(coefs), np.array(b_), np.array(c_, dtype=int),
               np.array(base_, dtype=bool), np.array(dt_), float(lam_max))
    out.stats = dict(extra=extra, jumps_before=jumps_before, jumps_after=int(jumps_after),
                     missing=missing_counts(out, max_rules),
                     missing_base=missing_counts(out.restrict(out.base), max_rules))
    return out


def missing_counts(path, max_rules):
    """Counts in 1..max(visited <= max_rules, up to max_rules) never visited.

    Only counts below the largest count the path reaches within the budget, or
    below max_rules when the path crosses it, can be missing.
    """
    seen = set(int(c) for c in path.n_rules)
    top = max_rules if any(c > max_rules for c in seen) else max(
        [c for c in seen if c <= max_rules], default=0)
    return [k for k in range(1, top + 1) if k not in seen]
