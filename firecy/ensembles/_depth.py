"""Rules at a chosen depth: every tree of a :class:`RuleEnsemble` cut at depth ``d``.

Every node of a tree is a rule: the conjunction of the splits above it.  The
nodes at depth at most ``d`` that are leaves of the tree cut at depth ``d``
(a leaf of depth <= d, or an internal node of depth exactly d) partition the
rows like the tree's leaves do, so a cut keeps everything the engine
exploits: disjoint supports within a tree, the left-to-right (depth-first)
order the fusion penalty reads, one block per tree for group-L0.

The cut is done once, generically, on top of the leaf-level ensemble: each
leaf is mapped to its ancestor at depth ``d`` (itself if shallower).  Leaves
in depth-first order under one ancestor are consecutive, so a cut column is
a run of leaf columns and the order is kept.  Its lookup table sends the
library's leaf id of a row to the column of that leaf's ancestor: routing
stays the library's own (missing values and categoricals included), and the
conditions of a cut rule are its node's path, a prefix of its leaves' paths.

The value of a cut column is the training-weighted mean of the model's leaf
values over the rows in the node (``docs/objective.rst``): with the default
weights it reproduces the tree's prediction averaged over each node.
"""
from __future__ import annotations

import copy
import numbers

import numpy as np

import firecy.ensembles._design as _design
from firecy.ensembles._layout import ancestors_at_depth
from firecy.ensembles._lazy import NodePathList, RuleList

__all__ = [
    "AUTO_MAX_DEPTH", "choose_rule_depth", "column_weights", "cut_at_depth",
    "min_rows_per_rule", "node_depths", "rule_depths", "tree_depths", "union_of_cuts",
]

# "auto" never goes deeper than the paper's depth-3 trees (rules of at most
# three conditions) ...
AUTO_MAX_DEPTH = 3
# ... nor to nodes that hold, at the median, fewer rows than this or than
# AUTO_MIN_ROW_FRACTION of the data: rules on a handful of rows do not
# generalise (a fully grown tree's leaves hold 1-5 rows).
AUTO_MIN_ROWS = 10
AUTO_MIN_ROW_FRACTION = 0.01


def min_rows_per_rule(n_rows) -> float:
    """Rows a rule should hold: ``max(10, 1% of n)``, but never above 10% of n.

    The cap keeps small data sets (where 10 rows is a large share) from
    counting every rule as small.
    """
    return min(max(AUTO_MIN_ROWS, AUTO_MIN_ROW_FRACTION * n_rows), 0.1 * n_rows)


def node_depths(tree) -> np.ndarray:
    """Depth of every node of a laid-out tree (root 0), int64; cached.

    :func:`firecy.ensembles._tree.depth_first_layout` sets the cache from its
    own walk; a tree laid out otherwise gets it from its parents here.
    """
    depth = getattr(tree, "_node_depth", None)
    if depth is not None:
        return depth
    parent = np.asarray(tree.parent, dtype=np.int64)
    depth = np.zeros(parent.shape[0], dtype=np.int64)
    cur = parent.copy()
    live = cur >= 0
    while live.any():  # one pass per level, vectorised over the nodes
        depth[live] += 1
        cur[live] = parent[cur[live]]
        live = cur >= 0
    tree._node_depth = depth
    return depth


def rule_depths(ensemble) -> np.ndarray:
    """Depth of each column's node (number of conditions of each rule), shape (R,)."""
    out = np.empty(ensemble.n_rules, dtype=np.int64)
    bp = ensemble.block_ptr
    for t, blk in enumerate(ensemble._blocks):
        nodes = ensemble._leaf_nodes[bp[t]:bp[t + 1]]
        out[bp[t]:bp[t + 1]] = node_depths(blk.tree)[nodes]
    return out


def tree_depths(ensemble) -> np.ndarray:
    """Depth of each block's tree (its deepest column), shape (T,)."""
    depths = rule_depths(ensemble)
    return np.maximum.reduceat(depths, ensemble.block_ptr[:-1]) if depths.size else depths


def _ancestors(ensemble, depth):
    """Local node id of each column's ancestor at ``depth`` (itself if shallower)."""
    leaf_nodes = np.ascontiguousarray(ensemble._leaf_nodes, dtype=np.int64)
    anc = np.empty_like(leaf_nodes)
    bp = ensemble.block_ptr
    for t, blk in enumerate(ensemble._blocks):
        lo, hi = bp[t], bp[t + 1]
        # compiled: one walk up per leaf (a level-by-level numpy walk gathers
        # every level at random, 0.6 s on the 1.7-million-leaf forest)
        anc[lo:hi] = ancestors_at_depth(
            leaf_nodes[lo:hi], np.ascontiguousarray(blk.tree.parent, dtype=np.int64),
            node_depths(blk.tree), depth)
    return anc


def cut_columns(ensemble, depth):
    """Cut column of each column of ``ensemble`` and the cut's nodes and block_ptr.

    Returns
    -------
    column_map : ndarray of int64, shape (R,)
        Non-decreasing; column ``j`` of ``ensemble`` lies in cut column
        ``column_map[j]``.
    nodes : ndarray of int64, shape (R_cut,)
        Local node id of each cut column.
    block_ptr : ndarray of int64, shape (T + 1,)
    """
    anc = _ancestors(ensemble, depth)
    R = ensemble.n_rules
    # a new cut column starts at each block start and where the ancestor changes
    starts = np.zeros(R, dtype=bool)
    starts[ensemble.block_ptr[:-1]] = True  # every tree has a leaf
    starts[1:] |= anc[1:] != anc[:-1]
    counts = np.cumsum(starts)
    column_map = counts - 1
    nodes = anc[starts]
    block_ptr = np.concatenate(([0], counts[ensemble.block_ptr[1:] - 1]))
    return column_map.astype(np.int64), nodes, block_ptr.astype(np.int64)


def column_weights(leaf_table, sample_weight=None, n_rules=None) -> np.ndarray:
    """Training weight in each column: ``sum_i s_i [row i lands in column j]``.

    Parameters
    ----------
    leaf_table : ndarray of int32, shape (n, T)
    sample_weight : ndarray of shape (n,), optional
        Default: every row weighs 1 (the weights are row counts).
    n_rules : int, optional
        Length of the result (default: the largest column + 1).

    Returns
    -------
    ndarray of float64, shape (n_rules,)
    """
    n, T = leaf_table.shape
    R = int(n_rules) if n_rules is not None else int(leaf_table.max(initial=-1)) + 1
    out = np.zeros(R)
    chunk = _design.row_chunk(T)
    for r0 in range(0, n, chunk):
        r1 = min(r0 + chunk, n)
        w = None if sample_weight is None else np.repeat(
            np.asarray(sample_weight[r0:r1], dtype=np.float64), T)
        out += np.bincount(leaf_table[r0:r1].ravel(), weights=w, minlength=R)
    return out


def cut_at_depth(ensemble, depth, column_weight=None, columns=None):
    """The ensemble with every tree cut at ``depth`` (see :meth:`RuleEnsemble.cut`).

    ``columns``: ``cut_columns(ensemble, depth)`` when the caller has it
    already (:func:`choose_rule_depth` computes it for the depth it picks).
    """
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 0:
        raise ValueError(f"depth must be an integer >= 0, got {depth!r}")
    depth = int(depth)
    column_map, nodes, block_ptr = (cut_columns(ensemble, depth) if columns is None
                                    else columns)
    R_cut = int(block_ptr[-1])
    values = np.asarray(ensemble.leaf_values, dtype=np.float64)
    # the node's value: the weighted mean of its leaves' values (the plain
    # mean where no training row reaches the node)
    n_leaves = np.bincount(column_map, minlength=R_cut)
    first = np.searchsorted(column_map, np.arange(R_cut))  # a leaf of each cut column
    plain = np.bincount(column_map, weights=values, minlength=R_cut) / n_leaves
    cut_values = plain
    if column_weight is not None:
        wt = np.asarray(column_weight, dtype=np.float64)
        if wt.shape != (ensemble.n_rules,) or not np.all(wt >= 0):
            raise ValueError(
                f"column_weight must hold {ensemble.n_rules} non-negative weights")
        den = np.bincount(column_map, weights=wt, minlength=R_cut)
        num = np.bincount(column_map, weights=wt * values, minlength=R_cut)
        with np.errstate(invalid="ignore", divide="ignore"):
            cut_values = np.where(den > 0, num / np.where(den > 0, den, 1.0), plain)
    single = n_leaves == 1
    cut_values[single] = values[first[single]]  # exactly the leaf's value

    cut = copy.copy(ensemble)
    cut.block_ptr = block_ptr
    cut.n_rules = R_cut
    cut.leaf_values = cut_values
    cut._leaf_nodes = nodes
    # an internal node has no id in the library's leaf call
    is_leaf = single & (np.asarray(ensemble._leaf_nodes)[first] == nodes)
    cut.leaf_node_ids = np.where(is_leaf, np.asarray(ensemble.leaf_node_ids)[first], -1)
    cut.rules = RuleList(cut)
    cut.node_paths = NodePathList(cut)
    # routing: the library's leaf id -> the column of that leaf's ancestor
    lut = ensemble._lut
    hit = lut >= 0
    new_lut = np.full(lut.shape, -1, dtype=np.int32)
    new_lut[hit] = column_map[lut[hit]]
    slot_block = np.repeat(np.arange(ensemble.n_trees), np.diff(ensemble._lut_off))
    new_local = np.array(ensemble._lut_local)  # keeps the dtype and its sentinel
    new_local[hit] = new_lut[hit] - block_ptr[slot_block[hit]]
    cut._lut, cut._lut_local = new_lut, new_local
    cut.rule_depth = depth
    cut.uncut = getattr(ensemble, "uncut", None) or ensemble
    cut.column_map = (column_map if getattr(ensemble, "column_map", None) is None
                      else column_map[ensemble.column_map])
    return cut


def choose_rule_depth(ensemble, row_counts, n_rows, return_columns=False):
    """The depth "auto" picks, from the training rows in each column.

    The largest depth ``d <= AUTO_MAX_DEPTH`` at which the nodes of the cut
    trees hold a median of at least :func:`min_rows_per_rule` training rows
    (``max(10, 1%)`` of them, at most 10%); 1 if none does.  A
    depth at or beyond every tree's depth is the uncut ensemble.

    Parameters
    ----------
    ensemble : RuleEnsemble
    row_counts : ndarray of shape (R,)
        Training rows in each column (:func:`column_weights`).
    n_rows : int
    return_columns : bool, default=False
        Also return ``cut_columns(ensemble, depth)``, computed here anyway,
        for :func:`cut_at_depth` (the 1.7-million-leaf forest's ancestor
        lookup and column map then run once, not twice).

    Returns
    -------
    depth : int
    median_rows : float
        The median rows per node at that depth.
    columns : tuple, only if ``return_columns``
    """
    need = min_rows_per_rule(n_rows)
    max_depth = int(tree_depths(ensemble).max(initial=0))
    for d in range(min(AUTO_MAX_DEPTH, max(max_depth, 1)), 0, -1):
        columns = cut_columns(ensemble, d)
        column_map, _, block_ptr = columns
        rows = np.bincount(column_map, weights=row_counts, minlength=int(block_ptr[-1]))
        med = float(np.median(rows))
        if med >= need:
            break
    return (d, med, columns) if return_columns else (d, med)


def union_of_cuts(ensemble, depths, column_weight=None):
    """Every tree cut at each of ``depths``, one block per (depth, tree).

    RuleFit's design: the rules of a tree at several depths at once (single
    conditions and pairs for ``depths=(1, 2)``).  Each cut is a partition of
    the rows, so a block of the union is one as well: the engine's
    assumptions (one column per row and block, disjoint supports within a
    block, left-to-right order) hold block by block.  The blocks of depth
    ``depths[0]`` come first, then those of ``depths[1]``, and so on; block
    ``b`` of cut ``k`` is block ``k * T + b``.  A node that is a leaf of
    the tree cut at two of the depths (a leaf of depth 1 in the cuts at 1
    and 2) is a column of both blocks.

    Parameters
    ----------
    ensemble : RuleEnsemble
        The leaf-level ensemble.
    depths : sequence of int
        Distinct depths >= 0, in increasing order.
    column_weight : ndarray of shape (n_rules,), optional
        As for :func:`cut_at_depth`.

    Returns
    -------
    RuleEnsemble
        ``rule_depth`` is the tuple of depths, ``uncut`` the leaf-level
        ensemble, ``column_map`` None (a leaf lies in one column per cut:
        ``column_maps`` holds the map of each cut, in the order of the
        blocks); ``tree_scale`` is divided by the number of cuts, so that
        the default coefficients predict the mean of the cut trees.
    """
    depths = tuple(int(d) for d in depths)
    if len(depths) < 2 or list(depths) != sorted(set(depths)):
        raise ValueError(f"depths must be at least two distinct increasing depths, got {depths!r}")
    base = getattr(ensemble, "uncut", None) or ensemble
    if base is not ensemble:
        raise ValueError("union_of_cuts needs the leaf-level ensemble, not a cut one")
    cuts = [cut_at_depth(ensemble, d, column_weight) for d in depths]
    K, T = len(cuts), ensemble.n_trees
    out = copy.copy(ensemble)
    ptr = [np.asarray(cuts[0].block_ptr, dtype=np.int64)]
    lut, lut_local, lut_off = [cuts[0]._lut], [cuts[0]._lut_local], [cuts[0]._lut_off[:-1]]
    node_off = [np.asarray(ensemble.node_offset[:-1], dtype=np.int64)]
    n_nodes = int(ensemble.node_offset[-1])
    for k, cut in enumerate(cuts[1:], 1):
        shift = int(ptr[-1][-1])
        ptr.append(np.asarray(cut.block_ptr[1:], dtype=np.int64) + shift)
        lut.append(np.where(cut._lut >= 0, cut._lut + shift, -1).astype(np.int32))
        lut_local.append(cut._lut_local)
        lut_off.append(cut._lut_off[:-1] + int(sum(c._lut.shape[0] for c in cuts[:k])))
        node_off.append(np.asarray(ensemble.node_offset[:-1], dtype=np.int64) + k * n_nodes)
    lut_off.append([sum(c._lut.shape[0] for c in cuts)])
    node_off.append([K * n_nodes])
    out.n_trees = K * T
    out.block_ptr = np.concatenate(ptr)
    out.n_rules = int(out.block_ptr[-1])
    out.leaf_values = np.concatenate([c.leaf_values for c in cuts])
    out.leaf_node_ids = np.concatenate([c.leaf_node_ids for c in cuts])
    out._leaf_nodes = np.concatenate([c._leaf_nodes for c in cuts])
    # global node ids stay unique across blocks: cut k's copies of a tree's
    # nodes are shifted by k times the ensemble's node count
    out.node_offset = np.concatenate(node_off).astype(np.int64)
    out._blocks = list(ensemble._blocks) * K
    out.tree_scale = np.tile(np.asarray(ensemble.tree_scale, dtype=np.float64), K) / K
    out.tree_class = np.tile(ensemble.tree_class, K)
    out._src_col = np.tile(ensemble._src_col, K)
    out._lut = np.concatenate(lut).astype(np.int32)
    out._lut_local = np.concatenate(lut_local)
    out._lut_off = np.concatenate(lut_off).astype(np.int64)
    out.rules = RuleList(out)
    out.node_paths = NodePathList(out)
    out.rule_depth = depths
    out.uncut = ensemble
    out.column_map = None
    out.column_maps = [c.column_map for c in cuts]
    return out
