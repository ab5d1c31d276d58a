"""The library-neutral description of a fitted tree, shared by every adapter.

Each adapter (``_sklearn``, ``_xgboost``, ``_lightgbm``) turns a fitted model
into an :class:`Adapter`: a list of :class:`Block` (one per tree, or per
(tree, class) pair) whose trees are described by :class:`TreeStructure`, plus
three functions of the data (library leaf ids, baseline, the library's own raw
prediction).  :class:`~firecy.ensembles.RuleEnsemble` does everything else
(leaf ordering, rules, node paths, lookup tables, the leaf table and the
design) once, for all of them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TreeStructure", "Block", "Adapter"]


@dataclass
class TreeStructure:
    """One tree in a library-neutral form (internal).

    Nodes are numbered ``0 .. n_nodes-1`` with the root at 0.  For sklearn,
    XGBoost and HistGradientBoosting this is the library's node id; LightGBM
    numbers internal nodes and leaves separately, so its adapter puts leaf
    ``k`` at ``n_internal + k``.

    Attributes
    ----------
    left, right : ndarray of int64, shape (n_nodes,)
        Children; -1 at leaves.
    cond_left, cond_right : list of Condition or None
        The condition that sends a row to the left / right child.
    leaf_id : ndarray of int64, shape (n_nodes,)
        The id the library's leaf call returns for this node (-1 if internal).
    """

    left: np.ndarray
    right: np.ndarray
    cond_left: list
    cond_right: list
    leaf_id: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.left.shape[0])

    def depth_first(self):
        """Leaves left to right, with their internal-node paths and conditions.

        Returns
        -------
        leaves : ndarray of int64
            Local node ids of the leaves in depth-first (left-to-right) order.
        paths : list of tuple of int
            Local ids of the internal nodes from the root to each leaf.
        rules : list of tuple of Condition
            The conditions along each path, root first.
        """
        left, right = self.left, self.right
        leaves, paths, rules = [], [], []
        # Explicit stack, not recursion: fully grown sklearn trees can be
        # deeper than Python's recursion limit.  Pushing the right child first
        # pops the left child first, which yields left-to-right order.
        stack = [(0, (), ())]
        visited = 0
        while stack:
            node, path, conds = stack.pop()
            visited += 1
            if visited > self.n_nodes:
                raise ValueError("malformed tree: the child arrays contain a cycle")
            lc = int(left[node])
            if lc < 0:
                leaves.append(node)
                paths.append(path)
                rules.append(conds)
                continue
            p = path + (node,)
            stack.append((int(right[node]), p, conds + (self.cond_right[node],)))
            stack.append((lc, p, conds + (self.cond_left[node],)))
        return np.asarray(leaves, dtype=np.int64), paths, rules


@dataclass
class Block:
    """One block of columns of the design: a tree's leaves for one output.

    Attributes
    ----------
    tree : TreeStructure
    values : ndarray of float64, shape (tree.n_nodes,)
        Value the library stores at each node (only leaves are read).
    tree_class : int
        Output (class) the block contributes to.
    scale : float
        Multiplier of the block's leaf values in the raw prediction.
    src_col : int
        Column of the library's leaf-id array that routes this block.
    """

    tree: TreeStructure
    values: np.ndarray
    tree_class: int
    scale: float
    src_col: int


class Adapter:
    """What a library adapter provides (internal; subclassed per library).

    Attributes
    ----------
    source : str
    n_features_in : int
    feature_names : list of str or None
    n_outputs : int
    blocks : list of Block
    raw_prediction : str
        What "raw prediction" means for this model, for the docs and errors.
    """

    source = None
    n_features_in = 0
    feature_names = None
    n_outputs = 1
    blocks = ()
    raw_prediction = ""

    def apply(self, X) -> np.ndarray:
        """Library leaf ids, shape (n, n_src), any integer or float dtype."""
        raise NotImplementedError

    def baseline(self, X) -> np.ndarray:
        """Part of the raw prediction no leaf carries, (n,) or (n, K)."""
        raise NotImplementedError

    def predict_raw(self, X) -> np.ndarray:
        """The library's own raw prediction, (n,) or (n, K)."""
        raise NotImplementedError
