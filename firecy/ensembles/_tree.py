"""The library-neutral description of a fitted tree, shared by every adapter.

Each adapter (``_sklearn``, ``_xgboost``, ``_lightgbm``) turns a fitted model
into an :class:`Adapter`: a list of :class:`Block` (one per tree, or per
(tree, class) pair) whose trees are described by :class:`TreeStructure`, plus
three functions of the data (library leaf ids, baseline, the library's own raw
prediction).  :class:`~firecy.ensembles.RuleEnsemble` does everything else
(leaf ordering, rules, node paths, lookup tables, the leaf table and the
design) once, for all of them.

A tree is held as node arrays, never as one Python object per node or per
leaf: a forest of fully grown trees has millions of leaves.  The left-to-right
order of the leaves and every node's parent come from :func:`depth_first_layout`,
which walks all the trees of a model in one compiled pass over their node
arrays.  A rule's conditions are built when the rule is read
(:meth:`TreeStructure.path` and :meth:`TreeStructure.condition`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from firecy.ensembles._condition import Condition
from firecy.ensembles._layout import depth_first

__all__ = ["SplitRule", "TreeStructure", "Block", "Adapter", "depth_first_layout",
           "names_from", "n_rows", "round_runs"]


@dataclass(frozen=True)
class SplitRule:
    """How a library compares at a numeric split (one per model; internal).

    Attributes
    ----------
    op_left, op_right : str
        The operator of the left / right branch: ``"<="`` / ``">"``
        (scikit-learn, LightGBM) or ``"<"`` / ``">="`` (XGBoost).
    dtype : {"float32", "float64"}
        Precision the input is rounded to before the comparison.
    zero_threshold : float
        Inputs with ``|x| <= zero_threshold`` read as 0 (LightGBM).
    labels : dict of int -> tuple
        The library's category labels of a feature, in code order, for
        features it re-codes by label (numeric splits on such a feature
        compare the code; see :class:`~firecy.ensembles.Condition`).
    """

    op_left: str
    op_right: str
    dtype: str
    zero_threshold: float = 0.0
    labels: dict = field(default_factory=dict, compare=False, hash=False)


class TreeStructure:
    """One tree as node arrays (internal).

    Nodes are numbered ``0 .. n_nodes-1`` with the root at 0.  For sklearn,
    XGBoost and HistGradientBoosting this is the library's node id; LightGBM
    numbers internal nodes and leaves separately, so its adapter puts leaf
    ``k`` at ``n_internal + k``.

    Parameters
    ----------
    left, right : ndarray of int, shape (n_nodes,)
        Children; -1 at leaves.
    feature : ndarray of int, shape (n_nodes,)
        Split feature of each internal node (ignored at leaves).
    threshold : ndarray of float64, shape (n_nodes,)
        Threshold of each numeric split, exact in float64.
    missing_left : ndarray of bool, shape (n_nodes,)
        Whether a missing value takes the left branch.
    split_rule : SplitRule
        The library's operators and reading of the input.
    leaf_id : ndarray of int, shape (n_nodes,), optional
        The id the library's leaf call returns for each leaf (-1 at internal
        nodes).  Default: the node id itself.
    zero_as_missing : ndarray of bool, shape (n_nodes,), optional
        LightGBM ``missing_type == "Zero"`` splits.
    special : dict of int -> (Condition, Condition), optional
        The (left, right) conditions of nodes that are not numeric splits
        (categorical splits); their entries in the arrays are ignored.
    """

    def __init__(self, left, right, feature, threshold, missing_left, split_rule, *,
                 leaf_id=None, zero_as_missing=None, special=None):
        self.left = np.asarray(left)
        self.right = np.asarray(right)
        self.feature = np.asarray(feature)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.missing_left = np.asarray(missing_left, dtype=bool)
        self.split_rule = split_rule
        self._leaf_id = None if leaf_id is None else np.asarray(leaf_id)
        self.zero_as_missing = (None if zero_as_missing is None
                                else np.asarray(zero_as_missing, dtype=bool))
        self.special = dict(special or {})
        # set by depth_first_layout: parent of each node (-1 at the root and
        # at unreachable nodes) and whether it is its parent's left child
        self.parent = None
        self.is_left = None
        self._conditions = {}

    @property
    def n_nodes(self) -> int:
        return int(self.left.shape[0])

    def leaf_ids(self, nodes) -> np.ndarray:
        """The library's leaf ids of ``nodes`` (int64)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        if self._leaf_id is None:
            return nodes
        return np.asarray(self._leaf_id[nodes], dtype=np.int64)

    def condition(self, node: int, left: bool) -> Condition:
        """The condition that sends a row from ``node`` to its left / right child.

        Built on first use and kept, so that every rule through this node
        holds the same object.
        """
        key = 2 * int(node) + (0 if left else 1)
        cond = self._conditions.get(key)
        if cond is not None:
            return cond
        pair = self.special.get(int(node))
        if pair is not None:
            cond = pair[0] if left else pair[1]
        else:
            r = self.split_rule
            f = int(self.feature[node])
            m = bool(self.missing_left[node])
            zam = bool(self.zero_as_missing[node]) if self.zero_as_missing is not None else False
            cond = Condition(
                f, r.op_left if left else r.op_right, float(self.threshold[node]),
                missing=m if left else not m, dtype=r.dtype, zero_as_missing=zam,
                zero_threshold=r.zero_threshold, labels=r.labels.get(f, ()),
            )
        self._conditions[key] = cond
        return cond

    def path(self, leaf: int):
        """Internal nodes from the root to ``leaf``, and the branch taken at each.

        Returns
        -------
        nodes : list of int
            Local ids, root first.
        lefts : list of bool
            Whether the path goes to the left child at each node.
        """
        if self.parent is None:
            raise RuntimeError("the tree has no layout: call depth_first_layout first")
        nodes, lefts = [], []
        parent, is_left = self.parent, self.is_left
        node = int(leaf)
        p = int(parent[node])
        while p >= 0:
            nodes.append(p)
            lefts.append(bool(is_left[node]))
            node, p = p, int(parent[p])
        nodes.reverse()
        lefts.reverse()
        return nodes, lefts

    def conditions(self, leaf: int) -> list:
        """The conditions on the path to ``leaf``, root first."""
        nodes, lefts = self.path(leaf)
        return [self.condition(n, s) for n, s in zip(nodes, lefts)]


def depth_first_layout(trees) -> list:
    """Leaves of each tree in left-to-right (depth-first) order.

    Also sets ``tree.parent``, ``tree.is_left`` and the node depths
    (``tree._node_depth``, see :func:`firecy.ensembles._depth.node_depths`)
    on every tree.  One pass
    over the concatenated node arrays of all the trees, in compiled code
    (``_layout.depth_first``): linear in the number of nodes.

    Parameters
    ----------
    trees : sequence of TreeStructure

    Returns
    -------
    list of ndarray of int64
        For each tree, the local ids of its leaves reachable from the root, in
        left-to-right order.

    Raises
    ------
    ValueError
        If a child id is out of range, a node is reached twice (two parents,
        a cycle), the root is somebody's child, or an internal node lacks a
        child.
    """
    if not trees:
        return []
    sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
    off = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    left = np.empty(int(off[-1]), dtype=np.int64)
    right = np.empty(int(off[-1]), dtype=np.int64)
    for k, t in enumerate(trees):
        left[off[k]:off[k + 1]] = t.left
        right[off[k]:off[k + 1]] = t.right
    leaves, n_leaves, parent, is_left, depth = depth_first(left, right, off)
    del left, right
    leaf_off = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(n_leaves, out=leaf_off[1:])
    out = []
    for k, t in enumerate(trees):
        t.parent = parent[off[k]:off[k + 1]]
        t.is_left = is_left[off[k]:off[k + 1]]
        t._node_depth = depth[off[k]:off[k + 1]]  # what _depth.node_depths reads
        out.append(leaves[leaf_off[k]:leaf_off[k + 1]])
    return out


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
    split_rule : SplitRule or None
        The library's reading of a numeric split (for the rule exports).
    """

    source = None
    n_features_in = 0
    feature_names = None
    n_outputs = 1
    blocks = ()
    raw_prediction = ""
    split_rule = None

    def apply(self, X) -> np.ndarray:
        """Library leaf ids, shape (n, n_src), any integer or float dtype."""
        raise NotImplementedError

    def apply_sources(self, X, sources) -> np.ndarray:
        """Library leaf ids of the id columns ``sources`` of :meth:`apply` only.

        ``sources`` is a sorted array of distinct column indices; the result
        has shape (n, len(sources)), column j holding what column
        ``sources[j]`` of :meth:`apply` holds.  This default routes the rows
        through every tree and keeps those columns; adapters that can route
        through a subset of the trees exactly, at less cost, override it.
        """
        ids = np.asarray(self.apply(X))
        return ids.reshape(ids.shape[0], -1)[:, np.asarray(sources, dtype=np.intp)]

    def baseline(self, X) -> np.ndarray:
        """Part of the raw prediction no leaf carries, (n,) or (n, K)."""
        raise NotImplementedError

    def predict_raw(self, X) -> np.ndarray:
        """The library's own raw prediction, (n,) or (n, K)."""
        raise NotImplementedError

    def constant_baseline(self):
        """The baseline as an array of shape (K,) when no row changes it, else None."""
        return np.zeros(self.n_outputs)

    def library_input(self, X):
        """``X`` as the numbers the library's trees compare, or ``X`` itself.

        Adapters of libraries that re-code categorical columns by label
        return a float64 array of the codes the library uses; the others
        return ``X`` unchanged.
        """
        return X

    def rules_input(self, X):
        """``X`` as the rules read it: :meth:`library_input`, and NaN where
        the library reads a value as missing (XGBoost's ``missing``)."""
        return self.library_input(X)


def names_from(model):
    """The model's feature names, or None."""
    names = getattr(model, "feature_names_in_", None)
    return None if names is None else [str(s) for s in names]


def n_rows(X):
    """Number of rows of an array, DataFrame or sequence."""
    return X.shape[0] if hasattr(X, "shape") else len(X)


def round_runs(rounds, n_rounds, n_rows, trees_per_round, call_cost):
    """Ranges of boosting rounds to route, for libraries whose leaf call takes
    one contiguous range of rounds (XGBoost, LightGBM).

    Two runs of needed rounds are merged when routing the rounds between them
    costs less than one more call of the library; None when routing every
    round in one call costs no more than the runs (a few rows, rules spread
    over the model).  Costs are in tree-row walks.

    Parameters
    ----------
    rounds : ndarray of int
        The needed rounds, sorted, distinct.
    n_rounds : int
        Rounds the full route walks.
    n_rows : int
    trees_per_round : float
    call_cost : float
        Fixed cost of one leaf call, in tree-row walks (measured per library).

    Returns
    -------
    list of (start, stop) or None
        Half-open ranges of rounds covering ``rounds``.
    """
    per_round = max(int(n_rows), 1) * float(trees_per_round)
    runs = []
    for r in np.asarray(rounds, dtype=np.int64).tolist():
        if runs and (r - runs[-1][1]) * per_round < call_cost:
            runs[-1][1] = r + 1
        else:
            runs.append([r, r + 1])
    cost = sum((b - a) * per_round + call_cost for a, b in runs)
    if cost >= n_rounds * per_round + call_cost:
        return None
    return [(a, b) for a, b in runs]
