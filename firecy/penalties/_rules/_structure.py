"""Group structures of the hierarchical penalty: nested leaf ranges per tree.

The hierarchical penalty of :class:`~firecy.penalties.HierarchicalGroup` has
one group per internal node of each tree: the leaves below the node, a
contiguous run of the block's columns (leaves are in left-to-right order).
Here those groups are read off a rule ensemble's node paths, checked, and
flattened into the arrays the compiled penalty reads.
"""
import numpy as np

__all__ = ["groups_from_node_paths", "flatten_groups"]


def groups_from_node_paths(node_paths, block_ptr):
    """The groups of every tree, from each leaf's root-to-leaf node path.

    Parameters
    ----------
    node_paths : list of R int arrays
        The ids of the internal nodes from the root to each leaf (ids unique
        across blocks), as :attr:`RuleEnsemble.node_paths`.
    block_ptr : array of int, shape (T + 1,)

    Returns
    -------
    list of T ndarray of int64, shape (G_t, 3)
        Rows ``(start, end, depth)``: the node's leaves are the block's
        columns ``start:end`` (local positions), ``depth`` its number of
        conditions (the root: 0). A tree that is a single leaf gets one
        group, the leaf itself at depth 0.
    """
    block_ptr = np.asarray(block_ptr, dtype=np.int64)
    if len(node_paths) != block_ptr[-1]:
        raise ValueError(f"{len(node_paths)} node paths for {block_ptr[-1]} columns")
    out = []
    for t in range(block_ptr.shape[0] - 1):
        lo, hi = int(block_ptr[t]), int(block_ptr[t + 1])
        span = {}
        for k in range(hi - lo):
            for depth, node in enumerate(np.asarray(node_paths[lo + k]).tolist()):
                first, last, d = span.get(node, (k, k, depth))
                if d != depth:
                    raise ValueError(f"node {node} appears at two depths in block {t}")
                span[node] = (min(first, k), max(last, k), depth)
        rows = [(first, last + 1, depth) for first, last, depth in span.values()]
        if not rows:                      # a single-leaf tree
            rows = [(0, hi - lo, 0)]
        out.append(np.array(rows, dtype=np.int64).reshape(-1, 3))
    return out


def flatten_groups(tree_groups):
    """Check the groups of every block and flatten them for the penalty.

    Each block's groups must be nested or disjoint (a laminar family), and
    cover every leaf of the block ``0 .. size - 1`` (``size``: the largest
    ``end``). They are put in post-order (every group after the groups it
    contains), which is the order of the prox's composition.

    Returns
    -------
    dict of arrays: ``group_ptr`` (T + 1), ``start``, ``end``, ``depth``,
    ``parent`` (local index of the smallest enclosing group, -1 at a root),
    ``sizes`` (T), ``leaf_group`` (per column: the local index of the
    deepest group holding it).
    """
    ptr, starts, ends, depths, parents, sizes, leaf_groups = [0], [], [], [], [], [], []
    for t, rows in enumerate(tree_groups):
        rows = np.asarray(rows)
        if rows.ndim != 2 or rows.shape[1] != 3 or rows.shape[0] == 0:
            raise ValueError(f"block {t}: groups must be a non-empty (G, 3) array of "
                             "(start, end, depth)")
        if not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"block {t}: groups must be integers")
        start, end, depth = (rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64),
                             rows[:, 2].astype(np.int64))
        if np.any(start < 0) or np.any(end <= start) or np.any(depth < 0):
            raise ValueError(f"block {t}: every group needs 0 <= start < end and depth >= 0")
        order = np.lexsort((-start, end))          # post-order: by end, then outer last
        start, end, depth = start[order], end[order], depth[order]
        if np.any((np.diff(start) == 0) & (np.diff(end) == 0)):
            raise ValueError(f"block {t}: a group is given twice")
        size = int(end.max())
        parent = np.full(start.shape[0], -1, dtype=np.int64)
        # pre-order walk (start up, end down) with a stack of open groups
        pre = np.lexsort((-end, start))
        stack = []
        for g in pre.tolist():
            while stack and end[stack[-1]] <= start[g]:
                stack.pop()
            if stack:
                if end[g] > end[stack[-1]]:
                    raise ValueError(f"block {t}: groups [{start[g]}, {end[g]}) and "
                                     f"[{start[stack[-1]]}, {end[stack[-1]]}) overlap "
                                     "without nesting")
                parent[g] = stack[-1]
            stack.append(g)
        leaf_group = np.full(size, -1, dtype=np.int64)
        for g in range(start.shape[0]):            # post-order: the deepest comes first
            seg = leaf_group[start[g]:end[g]]
            seg[seg < 0] = g
        if np.any(leaf_group < 0):
            raise ValueError(f"block {t}: leaves {np.flatnonzero(leaf_group < 0).tolist()} "
                             "are in no group")
        ptr.append(ptr[-1] + start.shape[0])
        starts.append(start)
        ends.append(end)
        depths.append(depth)
        parents.append(parent)
        sizes.append(size)
        leaf_groups.append(leaf_group)
    if not sizes:
        raise ValueError("no blocks")
    return {
        "group_ptr": np.array(ptr, dtype=np.intp),
        "start": np.concatenate(starts).astype(np.intp),
        "end": np.concatenate(ends).astype(np.intp),
        "depth": np.concatenate(depths).astype(np.intp),
        "parent": np.concatenate(parents).astype(np.intp),
        "sizes": np.array(sizes, dtype=np.intp),
        "leaf_group": np.concatenate(leaf_groups).astype(np.intp),
    }
