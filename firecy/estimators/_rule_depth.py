"""The estimators' ``rule_depth``: which nodes of each tree are rules.

``rule_depth="auto"`` (the default) takes each tree's nodes at the largest
depth, at most 3, whose nodes hold a median of at least
``max(10, 1% of the rows)`` training rows (at most 10% of them) (``firecy.ensembles._depth``); an
int cuts at that depth; None keeps every leaf.  A cut at or beyond every
tree's depth is no cut: on the paper's depth-3 forests "auto" is the
leaf-level ensemble, unchanged.
"""
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from firecy._warn import user_stacklevel
from firecy.ensembles import _design
from firecy.ensembles import (
    choose_rule_depth,
    column_weights,
    cut_at_depth,
    min_rows_per_rule,
    tree_depths,
    union_of_cuts,
)
from firecy.ensembles import check_memory

__all__ = ["DepthCut", "check_rule_depth", "rules_at_depth", "warn_small_rules"]

# Bytes per column of the leaf-level ensemble, before the cut: the rows
# (float64) and weights per column (``column_weights``), the depth cut's
# column map and node bookkeeping (int64, float64).
_BYTES_PER_LEAF = 32
# Bytes per design column of a fit, read from the allocation sites (float64
# = 8, intp = 8), checked against tracemalloc by
# tests/test_any_model.py::test_fit_memory_estimate_bounds_the_measured_peak:
# * shared by the tasks: the design's column pointers and leaf values, the
#   problem's column sums, curvatures and steps, the scaling's copy of the
#   values, the penalty's per-column arrays (5 x 8 + 3 x 8 = 64);
# * per solver engine alive, one per worker thread
#   (``firecy/solver/_engine.pyx``, ``GreedyBlockCD.__init__`` and
#   ``solve``): column sums, curvatures, ``gt``, ``w_sync``, ``col_grad``,
#   ``ws_cols``, ``col_index``, ``anderson_w``, the weights (9 x 8), the
#   Anderson snapshots ((ANDERSON_K + 1) x 8 = 48), the active-set
#   solver's ``qp_w``, ``qp_lam``, ``qp_save`` (24), its Newton step's
#   per-column scratch (3 x 8): 168;
# * per path point, dense coefficients (8): the full-data path, its copy in
#   the fitted ``paths_``, and each worker's fold path.
_SHARED_BYTES_PER_COLUMN = 64
_ENGINE_BYTES_PER_COLUMN = 168


def fit_bytes_per_column(est, points=None):
    """Bytes per design column a fit of ``est`` allocates at its peak.

    The dense path coefficients dominate: ``points`` path points (default:
    ``n_lambdas`` plus the refinement's inserted points, at most two per
    rule count up to ``max_rules``), in the full-data path, its copy in
    ``paths_``, and one fold path per worker thread
    (:func:`~firecy._threads.effective_n_jobs`).
    """
    from firecy._threads import effective_n_jobs
    from firecy.estimators._params import rule_budget
    from firecy.solver import MAX_INSERTED

    if points is None:
        points = int(getattr(est, "n_lambdas", None) or 100)
        max_rules = rule_budget(est) if hasattr(est, "max_rules") else None
        if getattr(est, "refine_path", False):
            points += (MAX_INSERTED if max_rules is None
                       else min(MAX_INSERTED, 2 * int(max_rules)))
    workers = effective_n_jobs(getattr(est, "n_jobs", None), 1 << 30)
    workers = 1 if workers is None or workers < 1 else int(workers)
    path = 8 * points
    return (_SHARED_BYTES_PER_COLUMN + 2 * path
            + workers * (_ENGINE_BYTES_PER_COLUMN + path))


@dataclass
class DepthCut:
    """What :func:`rules_at_depth` did.

    Attributes
    ----------
    depth : int, tuple of int or None
        The estimator's ``rule_depth_``: the depth cut at (a tuple: a union of
        cuts), None when every leaf is a rule.
    rows : ndarray of float64
        Training rows (of positive weight) per design column.
    n_rows : int
        Training rows of positive weight.
    note : str
        The line of ``summary()`` that says what was done.
    """

    depth: object
    rows: np.ndarray
    n_rows: int
    note: str


def _is_depth(d):
    return isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 1


def check_rule_depth(rule_depth):
    """``rule_depth`` validated: "auto", None, an int >= 1 or a tuple of them.

    A list or tuple of distinct depths (``(1, 2)``: single conditions and
    pairs) is returned as a sorted tuple; one depth as that int.
    """
    if rule_depth is None or (isinstance(rule_depth, str) and rule_depth == "auto"):
        return rule_depth
    if _is_depth(rule_depth):
        return int(rule_depth)
    if isinstance(rule_depth, (list, tuple)) and rule_depth \
            and all(_is_depth(d) for d in rule_depth) \
            and len(set(int(d) for d in rule_depth)) == len(rule_depth):
        depths = tuple(sorted(int(d) for d in rule_depth))
        return depths[0] if len(depths) == 1 else depths
    raise ValueError("rule_depth must be 'auto', None, an int >= 1 or a tuple of distinct "
                     f"ints >= 1, got {rule_depth!r}")


def rules_at_depth(est, ensemble, X, sample_weight, rule_depth=None):
    """The ensemble of the fit's rules, its leaf table on ``X`` and a
    :class:`DepthCut` that says what was cut.

    ``est`` supplies ``rule_depth`` (unless ``rule_depth`` is given) and
    what the memory estimate reads (``n_lambdas``, ``max_rules``,
    ``refine_path``, ``n_jobs``).

    Raises
    ------
    EnsembleTooLargeError
        Before any leaf id is computed, when the fit's leaf tables would not
        fit in the memory budget; after the cut, before any design is
        built, when the solver's and the paths' state for the kept rules
        would not (:func:`fit_bytes_per_column`).
    """
    rule_depth = check_rule_depth(est.rule_depth if rule_depth is None else rule_depth)
    n = X.shape[0]
    # size first, twice: the leaf table (the cut can shrink the rules, not
    # the table) before it is built, then the solver's and the paths' state
    # for the rules the fit keeps, before any design is built
    n_ids = int(ensemble._src_col.max()) + 1
    check_memory(n, ensemble.n_trees, n_ids, copies=2,
                 extra_bytes=_BYTES_PER_LEAF * ensemble.n_rules,
                 what="the leaf table of this fit (and its fold copies)")
    ensemble, table, cut = _rules_at_depth(est, ensemble, X, sample_weight, rule_depth, n)
    check_memory(n, ensemble.n_trees, 0, copies=2,
                 extra_bytes=fit_bytes_per_column(est) * ensemble.n_rules,
                 what=f"the fit's {ensemble.n_rules:,} rules (their solver state and "
                      "paths) and leaf tables",
                 advice="Use a smaller rule_depth (fewer rules), fewer n_lambdas, "
                        "n_jobs=1 (one fold path at a time), or fewer rows.")
    return ensemble, table, cut


def _rules_at_depth(est, ensemble, X, sample_weight, rule_depth, n):
    table = np.ascontiguousarray(ensemble.leaf_table(X), dtype=np.int32)
    # the rows a rule holds are the rows of positive weight: a zero weight is
    # as good as a dropped row (the solver never sees it), so the depth too
    # must not depend on it
    if sample_weight is not None and not np.all(np.asarray(sample_weight) > 0):
        counted = table[np.asarray(sample_weight) > 0]
    else:
        counted = table
    rows = column_weights(counted, None, ensemble.n_rules)
    n = counted.shape[0]
    deepest = int(tree_depths(ensemble).max(initial=0))
    if isinstance(rule_depth, tuple):
        # a depth at or beyond every tree's depth is the leaves themselves
        depths = tuple(sorted({min(d, max(deepest, 1)) for d in rule_depth}))
        if len(depths) > 1:
            return _rules_at_depths(est, ensemble, table, rows, sample_weight, depths, n)
        rule_depth = depths[0]
    columns = None
    if rule_depth == "auto":
        depth, _, columns = choose_rule_depth(ensemble, rows, n, return_columns=True)
        how = "rule_depth='auto'"
    else:
        depth = deepest if rule_depth is None else rule_depth
        how = f"rule_depth={rule_depth!r}"
    if depth < deepest:
        weights = rows if sample_weight is None else column_weights(
            table, sample_weight, ensemble.n_rules)
        ensemble = cut_at_depth(ensemble, depth, weights, columns=columns)
        cmap = ensemble.column_map.astype(np.int32)
        chunk = _design.row_chunk(table.shape[1])
        for r0 in range(0, table.shape[0], chunk):  # in place: one table alive
            table[r0:r0 + chunk] = cmap[table[r0:r0 + chunk]]
        rows = np.bincount(ensemble.column_map, weights=rows, minlength=ensemble.n_rules)
        what = f"each tree's nodes at depth <= {depth}"
    else:
        depth = None
        what = f"every leaf (trees of depth <= {deepest})"
    note = (f"rules: {what} ({how}), a median of {np.median(rows):.4g} of {n} training "
            "rows per rule")
    return ensemble, table, DepthCut(depth, rows, n, note)


def _rules_at_depths(est, ensemble, table, rows, sample_weight, depths, n):
    """:func:`rules_at_depth` for several depths: the union of the cuts."""
    l0 = getattr(est, "group_l0", 0.0)
    if np.any(np.asarray(l0 if isinstance(l0, (list, tuple)) else [l0], dtype=float) > 0):
        # the engine's groups are the design's blocks, one per (depth, tree)
        warnings.warn(
            f"group_l0 prices each block of the fit's design; under rule_depth={depths!r} "
            "every depth's copy of a tree is its own block, so a tree whose rules "
            "come from two depths pays group_l0 twice", UserWarning,
            stacklevel=user_stacklevel())
    weights = rows if sample_weight is None else column_weights(
        table, sample_weight, ensemble.n_rules)
    union = union_of_cuts(ensemble, depths, weights)
    out = np.empty((table.shape[0], union.n_trees), dtype=np.int32)
    T = table.shape[1]
    shift = 0
    for k, cmap in enumerate(union.column_maps):
        out[:, k * T:(k + 1) * T] = cmap.astype(np.int32)[table] + shift
        shift += int(cmap[-1]) + 1
    union_rows = np.concatenate([
        np.bincount(cmap, weights=rows, minlength=int(cmap[-1]) + 1)
        for cmap in union.column_maps])
    note = (f"rules: each tree's nodes at depth <= d for d in {list(depths)} (rule_depth="
            f"{depths!r}, one block per depth and tree), a median of "
            f"{np.median(union_rows):.4g} of {n} training rows per rule")
    return union, out, DepthCut(depths, union_rows, n, note)


def warn_small_rules(cut, coef):
    """Warn when the kept rules (nonzero rows of ``coef``) hold too few
    training rows to generalise."""
    n_rows = cut.n_rows
    kept = np.asarray(coef).reshape(len(cut.rows), -1).any(axis=1)
    if not kept.any():
        return
    median = float(np.median(cut.rows[kept]))
    need = min_rows_per_rule(n_rows)
    if median < need:
        warnings.warn(
            f"the {int(kept.sum())} kept rules hold a median of {median:.3g} of "
            f"{n_rows} training rows (fewer than {need:.3g}): rules this small rarely "
            "generalise. Use a smaller rule_depth (each tree's nodes at that depth "
            "are then the rules), or a model with shallower trees.",
            UserWarning, stacklevel=user_stacklevel(),
        )
