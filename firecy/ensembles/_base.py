"""The rules of a fitted tree ensemble: :class:`RuleEnsemble`.

Built from an adapter (see ``_tree.py`` for what an adapter provides; the
adapter of a model is picked by ``_dispatch.make_adapter``), it holds every
leaf as a rule and builds the leaf table and the design for any data.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

import firecy.ensembles._design as _design
from firecy.ensembles._condition_text import format_conditions
from firecy.ensembles._dispatch import make_adapter
from firecy.ensembles._lazy import NodePathList, RuleList
from firecy.ensembles._depth import column_weights, cut_at_depth, union_of_cuts
from firecy.ensembles._memory import check_memory
from firecy.ensembles._tree import Adapter, depth_first_layout
from firecy._validation import check_not_library_matrix

__all__ = ["RuleEnsemble"]


class RuleEnsemble:
    """The rules of a fitted tree ensemble, one design column per leaf.

    Build one with :meth:`from_model` (or
    :func:`firecy.ensembles.rule_ensemble_from_model`); the constructor is
    internal.

    Parameters
    ----------
    adapter : Adapter
        firecy's internal reader of one library's trees
        (``firecy.ensembles._tree.Adapter``).
    feature_names : sequence of str, optional
        Override the model's feature names.

    Attributes
    ----------
    source : {"sklearn", "xgboost", "lightgbm"}
    n_features_in_ : int
    feature_names : list of str
        From the model when it has them (pandas columns, XGBoost
        ``feature_names``, LightGBM ``feature_name()``), else ``x0, x1, ...``.
    n_outputs : int
        K: 1 for regression and binary classification, the number of classes
        for multi-class models.
    n_trees : int
        T, the number of blocks.  A block is a tree, except for a multi-class
        random-forest classifier, which has one block per (tree, class).
    n_rules : int
        R, the number of leaves (design columns).
    block_ptr : ndarray of int64, shape (T + 1,)
        Block t's leaves are columns ``block_ptr[t]:block_ptr[t+1]``, in
        left-to-right (depth-first) order.
    leaf_values : ndarray of float64, shape (R,)
        The value the library stores in each leaf.
    tree_scale : ndarray of float64, shape (T,)
        Per-block multiplier: ``design(X) @ np.repeat(tree_scale, sizes) +
        baseline(X)`` is the library's raw prediction.  After
        :meth:`to_indicators`, the per-column :attr:`column_scale` carries it.
    tree_class : ndarray of int64, shape (T,)
        Output (class) index each block contributes to.
    leaf_node_ids : ndarray of int64, shape (R,)
        Each leaf's id in the library: the node id for sklearn, HistGradient-
        Boosting and XGBoost, the ``leaf_index`` for LightGBM.  It is what the
        library's leaf call (``apply`` / ``pred_leaf``) returns.
    rules : sequence of R lists of Condition
        ``rules[j]``: root-to-leaf conditions in path order, unsimplified.
        Built when read (a deep forest has millions of rules); the
        Condition objects of a node are shared by every rule through it.
    node_paths : sequence of R ndarray of int64
        ``node_paths[j]``: global ids of the internal nodes on the path of
        rule j, unique across blocks (``node_offset[t] + local node id``; the
        K class blocks of one random-forest tree get distinct ids).  Built
        when read.
    node_offset : ndarray of int64, shape (T + 1,)
        Block t's global node ids are ``node_offset[t]:node_offset[t+1]``; the
        local id is the library's node id (LightGBM: ``split_index``).
    raw_prediction : str
        What "raw prediction" means for this model (see Notes).
    rule_depth : int or None
        The depth the trees were cut at (:meth:`cut`); None: every leaf is a
        rule.
    uncut : RuleEnsemble or None
        For a cut ensemble, the leaf-level ensemble it was cut from.
    column_map : ndarray of int64 or None
        For a cut ensemble, shape (``uncut.n_rules``,): the cut column each
        leaf lies in (non-decreasing).

    Notes
    -----
    Raw prediction, per model type:

    * boosting (sklearn GradientBoosting and HistGradientBoosting, XGBoost,
      LightGBM): the margin before the inverse link, i.e. ``decision_function``
      for sklearn classifiers, ``predict`` for sklearn GradientBoosting
      regressors, ``_raw_predict`` for HistGradientBoosting (equal to
      ``predict`` for the squared error), ``predict(output_margin=True)`` for
      XGBoost, ``predict(raw_score=True)`` for LightGBM (divided by the number
      of iterations in random-forest mode, which averages);
    * sklearn random forests and extra trees: ``predict`` for regressors,
      ``predict_proba[:, 1]`` for binary classifiers and ``predict_proba`` for
      multi-class classifiers, whose design has one block per (tree, class)
      holding that class's leaf fractions.

    Examples
    --------
    Three boosted trees of depth 2 give three blocks of four rules; with the
    default weights (``column_scale``, the learning rate here) the design
    reproduces the model's prediction:

    >>> import numpy as np
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from firecy.ensembles import RuleEnsemble
    >>> data = load_diabetes()
    >>> X, y = data.data, data.target
    >>> gb = GradientBoostingRegressor(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    >>> ens = RuleEnsemble.from_model(gb, feature_names=data.feature_names)
    >>> ens
    RuleEnsemble(source='sklearn', n_trees=3, n_rules=12, n_outputs=1, n_features_in_=10)
    >>> ens.block_ptr
    array([ 0,  4,  8, 12])
    >>> M = ens.design(X)
    >>> M.shape
    (442, 12)
    >>> bool(np.allclose(M @ ens.column_scale + ens.baseline(X), gb.predict(X)))
    True

    Each rule is the path to its leaf:

    >>> len(ens.rules[0]), ens.rule_text(0).count(" and ")
    (2, 1)
    """

    def __init__(self, adapter: Adapter, feature_names=None):
        self._adapter = adapter
        self.source = adapter.source
        self.n_features_in_ = int(adapter.n_features_in)
        self.n_outputs = int(adapter.n_outputs)
        self.raw_prediction = adapter.raw_prediction
        self.feature_names = _resolve_feature_names(
            feature_names, adapter.feature_names, self.n_features_in_
        )
        blocks = list(adapter.blocks)
        if not blocks:
            raise ValueError(f"the {self.source} model has no trees")
        self._build(blocks)
        self._indicator_scale = None
        self.rule_depth = None
        self.uncut = None
        self.column_map = None

    # -- construction -------------------------------------------------------
    @classmethod
    def from_model(cls, model, feature_names=None, *, X=None) -> "RuleEnsemble":
        """Extract the rules of a fitted tree ensemble.

        The same as :func:`firecy.ensembles.rule_ensemble_from_model`, which
        documents the parameters, the supported models and the errors.
        """
        return cls(make_adapter(model, X=X), feature_names=feature_names)

    def _build(self, blocks):
        T = len(blocks)
        # Trees shared by several blocks (a multi-class forest's K classes)
        # are laid out once.
        unique, which = {}, np.empty(T, dtype=np.int64)
        for t, blk in enumerate(blocks):
            which[t] = unique.setdefault(id(blk.tree), len(unique))
        trees = [None] * len(unique)
        for blk in blocks:
            trees[unique[id(blk.tree)]] = blk.tree
        orders = depth_first_layout(trees)

        sizes = np.array([orders[u].shape[0] for u in which], dtype=np.int64)
        block_ptr = np.zeros(T + 1, dtype=np.int64)
        np.cumsum(sizes, out=block_ptr[1:])
        R = int(block_ptr[-1])
        leaf_nodes = np.empty(R, dtype=np.int64)
        leaf_values = np.empty(R, dtype=np.float64)
        leaf_ids = np.empty(R, dtype=np.int64)
        node_offset = np.zeros(T + 1, dtype=np.int64)
        lut_sizes = np.empty(T, dtype=np.int64)
        for t, blk in enumerate(blocks):
            order = orders[which[t]]
            lo, hi = block_ptr[t], block_ptr[t + 1]
            leaf_nodes[lo:hi] = order
            leaf_values[lo:hi] = np.asarray(blk.values, dtype=np.float64)[order]
            lib_ids = blk.tree.leaf_ids(order)
            if lib_ids.size and lib_ids.min() < 0:
                raise ValueError("adapter error: a leaf has no library leaf id")
            leaf_ids[lo:hi] = lib_ids
            node_offset[t + 1] = node_offset[t] + blk.tree.n_nodes
            lut_sizes[t] = int(lib_ids.max()) + 1 if lib_ids.size else 0

        self.n_trees = T
        self.block_ptr = block_ptr
        self.n_rules = R
        self.leaf_values = leaf_values
        self.leaf_node_ids = leaf_ids
        self.node_offset = node_offset
        self._blocks = blocks
        self._leaf_nodes = leaf_nodes
        self.rules = RuleList(self)
        self.node_paths = NodePathList(self)
        self.tree_scale = np.array([b.scale for b in blocks], dtype=np.float64)
        self.tree_class = np.array([b.tree_class for b in blocks], dtype=np.int64)
        self._src_col = np.array([b.src_col for b in blocks], dtype=np.intp)

        # Lookup tables, library leaf id -> global column / local position,
        # concatenated over blocks so that one fancy index maps a whole table.
        lut_off = np.zeros(T + 1, dtype=np.int64)
        np.cumsum(lut_sizes, out=lut_off[1:])
        dt, sentinel = _design.local_dtype(int(sizes.max()))
        lut = np.full(int(lut_off[-1]), -1, dtype=np.int32)
        lut_local = np.full(int(lut_off[-1]), sentinel, dtype=dt)
        pos = np.arange(R, dtype=np.int64) - np.repeat(block_ptr[:-1], sizes)
        slot = np.repeat(lut_off[:-1], sizes) + leaf_ids
        lut[slot] = np.arange(R, dtype=np.int64)
        lut_local[slot] = pos
        self._lut, self._lut_local, self._lut_off = lut, lut_local, lut_off

    def cut(self, depth, *, X=None, sample_weight=None, column_weight=None):
        """The ensemble with every tree cut at ``depth``: one rule per node.

        The rules of block t become the leaves of tree t cut at ``depth``:
        each leaf of depth at most ``depth``, and each node at depth exactly
        ``depth`` in place of the leaves below it.  Blocks, left-to-right
        order and disjoint supports within a block are kept; a row lands in
        the cut column of its library leaf's ancestor, so routing is the
        library's own (missing values, categories); ``rules[j]`` is the path
        to the node, the common prefix of its leaves' paths.

        Parameters
        ----------
        depth : int or sequence of int
            Depth of the cut (the root is depth 0; a depth at or beyond a
            tree's depth leaves it whole).  Several distinct depths in
            increasing order (``(1, 2)``: single conditions and pairs) give
            the union of the cuts, one block per (depth, tree): see
            ``_depth.union_of_cuts``.
        X : array-like, optional
            Training data: a cut column's value is the mean of the model's
            leaf values over the rows of ``X`` in the node, weighted by
            ``sample_weight`` (the tree's prediction averaged over the node).
        sample_weight : array-like of shape (n_samples,), optional
        column_weight : ndarray of shape (n_rules,), optional
            The training weight in each column of this ensemble, instead of
            ``X`` (see ``_depth.column_weights``).  With neither, a cut
            column's value is the plain mean of its leaves' values.

        Returns
        -------
        RuleEnsemble
            A new ensemble sharing this one's trees; ``rule_depth`` is
            ``depth``, ``uncut`` the leaf-level ensemble, ``column_map``
            each leaf's cut column.  ``predict_raw(X)`` with the default
            coefficients predicts with the cut trees; ``predict_raw(X, w)``,
            the design, the rule texts and the exports are exact for any
            ``w``.  ``leaf_node_ids`` is -1 for a column that is an internal
            node of the library's tree.

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from firecy.ensembles import RuleEnsemble
        >>> X, y = load_diabetes(return_X_y=True)
        >>> rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
        >>> ens = RuleEnsemble.from_model(rf)
        >>> cut = ens.cut(2, X=X)
        >>> cut.n_rules, [len(cut.rules[j]) for j in range(4)]
        (20, [2, 2, 2, 2])
        """
        if self.is_indicator:
            # a cut column's value is a mean of its leaves' values, lost here
            raise ValueError("cut the ensemble before to_indicators(), not after")
        if column_weight is None and X is not None:
            sw = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
            column_weight = column_weights(self.leaf_table(X), sw, self.n_rules)
        if not isinstance(depth, (numbers.Integral, str)) and hasattr(depth, "__len__"):
            if len(depth) == 1:
                depth = depth[0]
            else:
                return union_of_cuts(self, depth, column_weight)
        return cut_at_depth(self, depth, column_weight)

    def _leaf(self, j):
        """(block, local leaf node) of rule ``j``, with a range check."""
        j = int(j)
        if not -self.n_rules <= j < self.n_rules:
            raise IndexError(f"rule {j} out of range for {self.n_rules} rules")
        if j < 0:
            j += self.n_rules
        t = int(np.searchsorted(self.block_ptr, j, side="right")) - 1
        return t, int(self._leaf_nodes[j])

    # -- sizes --------------------------------------------------------------
    @property
    def tree_sizes(self) -> np.ndarray:
        """Number of leaves of each block, shape (T,)."""
        return np.diff(self.block_ptr)

    @property
    def rule_tree(self) -> np.ndarray:
        """Block index of each column, shape (R,)."""
        return np.repeat(np.arange(self.n_trees, dtype=np.int64), self.tree_sizes)

    @property
    def column_scale(self) -> np.ndarray:
        """The default coefficients, shape (R,): with them ``predict_raw(X)``
        is the library's raw prediction (or the cut trees' prediction).

        The per-column ``tree_scale``; after :meth:`to_indicators`, each
        column's former value times it.
        """
        scale = getattr(self, "_indicator_scale", None)  # absent from old pickles
        if scale is not None:
            return scale
        return np.repeat(self.tree_scale, self.tree_sizes)

    @property
    def is_indicator(self) -> bool:
        """Whether :meth:`to_indicators` made every column an indicator."""
        return getattr(self, "_indicator_scale", None) is not None

    def to_indicators(self):
        """In place: every design column becomes its rule's indicator.

        ``leaf_values`` become 1 and the values move into
        :attr:`column_scale`, so that ``predict_raw(X)`` with the default
        coefficients still gives this ensemble's raw prediction (the
        library's, or the cut trees' for a depth cut), while a
        coefficient is now the rule's effect on the raw score (RuleFit's
        design).  The estimators' ``rule_values="unit"`` calls it.

        Returns
        -------
        self : RuleEnsemble
        """
        if not self.is_indicator:
            scale = np.asarray(self.leaf_values, dtype=np.float64) * self.column_scale
            self.leaf_values = np.ones(self.n_rules, dtype=np.float64)
            self._indicator_scale = scale
        return self

    # -- data-dependent -----------------------------------------------------
    def apply(self, X) -> np.ndarray:
        """Leaf ids as the library returns them (its own leaf call).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ids : ndarray of shape (n_samples, n_src)
            Library leaf ids (``apply`` / ``pred_leaf``), in the library's
            dtype; block t reads column ``src_col[t]``.  For scikit-learn's
            HistGradientBoosting, which has no leaf call, firecy routes the
            rows itself through the model's node arrays; for scikit-learn's
            forests on dense rows as well, after the forest's own input
            validation (the ids of its ``apply``, at half the CPU time).

        Raises
        ------
        EnsembleTooLargeError
            Before calling the library, when the leaf ids and the leaf table
            for ``X`` would exceed the memory budget
            (``firecy.ensembles.memory_budget``).
        """
        check_memory(_n_rows(X), self.n_trees, int(self._src_col.max()) + 1)
        ids = np.asarray(self._adapter.apply(X))
        if ids.ndim == 1:
            ids = ids.reshape(-1, 1)
        return ids

    def leaf_table(self, X, blocks=None) -> np.ndarray:
        """Global column of the leaf each row lands in, per block.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        blocks : array-like of int, optional
            Only these blocks, in this order: the rows are routed through
            the trees these blocks read and no other (where the adapter can
            do that exactly; see :meth:`predict_raw`).  Default: every block.

        Returns
        -------
        table : ndarray of int32, shape (n_samples, n_trees), C-contiguous
            Shape (n_samples, len(blocks)) with ``blocks``: column j is
            column ``blocks[j]`` of the whole table.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from firecy.ensembles import RuleEnsemble
        >>> X, y = load_diabetes(return_X_y=True)
        >>> rf = RandomForestRegressor(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
        >>> ens = RuleEnsemble.from_model(rf)
        >>> part = ens.leaf_table(X, blocks=[7, 2])
        >>> part.shape
        (442, 2)
        >>> bool(np.array_equal(part, ens.leaf_table(X)[:, [7, 2]]))
        True
        """
        if blocks is None:
            return self.leaf_table_from_ids(self.apply(X))
        blocks = self._check_blocks(blocks)
        ids, src = self._apply_blocks(X, blocks)
        lut, lut_off = self._sub_lut(blocks)
        return _design.leaf_table_from_ids(ids, src, lut, lut_off)

    def _check_blocks(self, blocks) -> np.ndarray:
        blocks = np.asarray(blocks)
        if blocks.ndim != 1 or (blocks.size and blocks.dtype.kind not in "iu"):
            raise ValueError("blocks must be a 1-d array of block indices")
        blocks = blocks.astype(np.int64, copy=False)
        if blocks.size and (blocks.min() < 0 or blocks.max() >= self.n_trees):
            raise ValueError(f"blocks must lie in [0, {self.n_trees}), got "
                             f"{int(blocks.min())}..{int(blocks.max())}")
        return blocks

    def _apply_blocks(self, X, blocks):
        """Leaf ids of the trees ``blocks`` read, and each block's id column.

        The adapter routes the rows through those trees only
        (``Adapter.apply_sources``).  With no block, the first block's tree
        is routed all the same (and its column dropped): the library then
        still validates ``X`` (feature count and names, dtype), as a full
        route would.
        """
        src_of = self._src_col[blocks] if blocks.size else self._src_col[:1]
        sources = np.unique(src_of)
        check_memory(_n_rows(X), max(int(blocks.size), 1), int(sources.size))
        ids = np.asarray(self._adapter.apply_sources(X, sources))
        if ids.ndim == 1:
            ids = ids.reshape(-1, 1)
        if ids.ndim != 2 or ids.shape[1] != sources.size:
            raise ValueError(
                f"adapter error: {ids.shape[1] if ids.ndim == 2 else ids.shape} leaf-id "
                f"columns for {sources.size} trees")
        if not blocks.size:
            return ids[:, :0], np.zeros(0, dtype=np.intp)
        return ids, np.searchsorted(sources, src_of).astype(np.intp)

    def _sub_lut(self, blocks):
        """The lookup tables of ``blocks`` only, concatenated (see ``_build``)."""
        off = self._lut_off
        sizes = (off[blocks + 1] - off[blocks]).astype(np.int64)
        sub_off = np.zeros(blocks.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=sub_off[1:])
        # one gather of every slot of the chosen tables
        slots = np.repeat(off[blocks] - sub_off[:-1], sizes) + np.arange(int(sub_off[-1]))
        return self._lut[slots], sub_off

    def leaf_table_from_ids(self, ids) -> np.ndarray:
        """:meth:`leaf_table` from leaf ids already obtained by :meth:`apply`."""
        ids = self._check_ids(ids)
        return _design.leaf_table_from_ids(ids, self._src_col, self._lut, self._lut_off)

    def design(self, X):
        """The design matrix M: ``M[i, j] = leaf_values[j]`` if row i lands in leaf j.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        M : scipy.sparse.csc_matrix of shape (n_samples, n_rules), float64
            Exactly ``n_trees`` stored entries per row (one per block, an
            explicit zero where a leaf's value is 0), sorted row indices,
            int32 indices unless the size needs int64.
        """
        return self.design_from_ids(self.apply(X))

    def design_from_ids(self, ids):
        """:meth:`design` from leaf ids already obtained by :meth:`apply`."""
        ids = self._check_ids(ids)
        return _design.design_from_ids(
            ids, self._src_col, self._lut_local, self._lut_off,
            self.leaf_values, self.block_ptr,
        )

    def design_from_leaf_table(self, table):
        """:meth:`design` from a leaf table (see :meth:`leaf_table`)."""
        return _design.design_from_table(table, self.leaf_values, self.block_ptr)

    def baseline(self, X) -> np.ndarray:
        """The part of the raw prediction that no leaf carries.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        baseline : ndarray of float64, shape (n_samples,) if ``n_outputs == 1``
            else (n_samples, n_outputs).  Constant over rows except for a
            sklearn gradient boosting model with a custom ``init`` estimator.
        """
        return np.asarray(self._adapter.baseline(X), dtype=np.float64)

    def constant_baseline(self):
        """The baseline when it is the same for every row, else None.

        Returns
        -------
        ndarray of float64, shape (n_outputs,), or None
            None for a sklearn gradient boosting model with a custom ``init``
            estimator, whose baseline varies by row.
        """
        base = self._adapter.constant_baseline()
        return None if base is None else np.asarray(base, dtype=np.float64).reshape(-1)

    def predict_raw(self, X, coef=None) -> np.ndarray:
        """``design(X) @ coef + baseline(X)``, per output.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        coef : ndarray of shape (n_rules,), optional
            Rule weights; the per-column ``tree_scale`` by default, which
            reproduces the library's raw prediction.

        Returns
        -------
        raw : ndarray of float64, shape (n_samples,) or (n_samples, n_outputs)
            Column k sums the blocks with ``tree_class == k``.

        Notes
        -----
        With ``coef``, the rows are routed only through the trees of the
        blocks that hold a nonzero ``leaf_values * coef`` (a fitted FIRE
        model keeps a handful of rules from a few of hundreds of trees): a
        block whose every term is 0 adds nothing to the sum.  Every adapter
        routes a subset of trees exactly: scikit-learn's forests, extra trees
        and gradient boosting through firecy's walk of the chosen trees (the
        sparse walk of each for sparse input), HistGradientBoosting through
        its own walk, XGBoost and LightGBM by the library's leaf call over the
        runs of boosting rounds that hold them.  The sum then skips the
        zero terms, so it may differ from the full sum in the last bits.
        """
        if coef is None:
            return self.predict_raw_from_ids(self.apply(X), X)
        weighted = self.leaf_values * self._check_coef(coef)
        blocks = self._active_blocks(weighted)
        if blocks.size == self.n_trees:  # nothing to skip: the full route
            return self._sum_blocks(self.leaf_table(X), weighted, self.tree_class) \
                + self.baseline(X)
        table = self.leaf_table(X, blocks=blocks)
        return self._sum_blocks(table, weighted, self.tree_class[blocks]) + self.baseline(X)

    def _active_blocks(self, weighted) -> np.ndarray:
        """Blocks holding a nonzero entry of ``weighted``, in increasing order.

        Parameters
        ----------
        weighted : ndarray of shape (n_rules,)
            Per-column terms, e.g. ``leaf_values * coef``.  NaN counts as
            nonzero.

        Returns
        -------
        ndarray of int64
            The blocks whose columns :meth:`predict_raw` must route.
        """
        weighted = np.asarray(weighted)
        if weighted.shape != (self.n_rules,):
            raise ValueError(f"weighted must have shape ({self.n_rules},), got {weighted.shape}")
        # every block holds at least one column, so reduceat sees no empty range
        hit = np.logical_or.reduceat(weighted != 0, self.block_ptr[:-1])
        return np.flatnonzero(hit).astype(np.int64)

    def predict_raw_from_ids(self, ids, X, coef=None) -> np.ndarray:
        """:meth:`predict_raw` from leaf ids already obtained by :meth:`apply`."""
        w = self.column_scale if coef is None else self._check_coef(coef)
        table = self.leaf_table_from_ids(ids)
        return self._sum_blocks(table, self.leaf_values * w, self.tree_class) + self.baseline(X)

    def _check_coef(self, coef):
        w = np.asarray(coef, dtype=np.float64)
        if w.shape != (self.n_rules,):
            raise ValueError(f"coef must have shape ({self.n_rules},), got {w.shape}")
        return w

    def _sum_blocks(self, table, weighted, tree_class):
        """Per output, the sum over the table's blocks of ``weighted`` at each row's column."""
        n, T = table.shape
        K = self.n_outputs
        out = np.zeros((n, K))
        onehot = np.zeros((T, K))
        onehot[np.arange(T), tree_class] = 1.0
        chunk = _design.row_chunk(T)
        for r0 in range(0, n, chunk):
            r1 = min(r0 + chunk, n)
            contrib = weighted[table[r0:r1]]
            out[r0:r1] = contrib.sum(axis=1, keepdims=True) if K == 1 else contrib @ onehot
        return out[:, 0] if K == 1 else out

    def reference_predict_raw(self, X) -> np.ndarray:
        """The library's own raw prediction (see Notes of the class).

        ``predict_raw(X)`` reproduces it; this method calls the library.
        """
        return np.asarray(self._adapter.predict_raw(X), dtype=np.float64)

    # -- rules --------------------------------------------------------------
    def rule_mask(self, j, X) -> np.ndarray:
        """Rows of ``X`` satisfying every condition of rule ``j``.

        Parameters
        ----------
        j : int
        X : ndarray, DataFrame or scipy sparse matrix of shape (n_samples, n_features)
            A sparse matrix is read the way the library reads it: XGBoost
            treats the entries it does not store as missing, the others as 0.
            For many rules, convert it once with :meth:`dense_for_rules`.

        Returns
        -------
        mask : ndarray of bool, shape (n_samples,)
        """
        X = self.dense_for_rules(X)
        n = X.shape[0]
        mask = np.ones(n, dtype=bool)
        for cond in self.rules[j]:
            mask &= cond.evaluate(X)
        return mask

    def dense_for_rules(self, X):
        """``X`` as the numbers the library's trees compare, to evaluate rules on.

        A scipy sparse matrix becomes a float64 array holding what the library
        sees: NaN (missing) where an XGBoost model does not find a stored
        entry, 0 for the other libraries.  A DataFrame with pandas categorical
        columns that XGBoost or LightGBM re-codes by label becomes the float64
        codes the library uses (see :class:`Condition`'s ``labels``).  An
        XGBoost model's ``missing`` value (when not NaN) becomes NaN, as
        XGBoost reads it.  Other input is returned unchanged.
        """
        check_not_library_matrix(X)
        X = self._adapter.rules_input(X)
        if sp.issparse(X):
            return X.toarray()
        return X

    def rule_text(self, j, feature_names=None, *, show_missing=False, precision=None,
                  exact=False) -> str:
        """Text of rule ``j``, as :func:`firecy.rules.rule_text` ``(self, j, ...)``.

        There is one rule text in firecy
        (:func:`~firecy.rules.format_conditions`: conditions simplified,
        the library's operators and thresholds, see :mod:`firecy.rules`).

        Parameters
        ----------
        j : int
        feature_names : sequence of str, optional
            Defaults to :attr:`feature_names`.
        show_missing : bool, default=False
            Print the missing-value suffixes.
        precision : int, optional
            Round thresholds for display.
        exact : bool, default=False
            Thresholds exact for every input (see
            :func:`~firecy.rules.format_conditions`).

        Returns
        -------
        str
            ``"(all rows)"`` for the single leaf of a stump-less tree.
        """
        names = feature_names if feature_names is not None else self.feature_names
        names = None if names is None else [str(n) for n in names]
        return format_conditions(self.rules[j], names, show_missing=show_missing,
                                 precision=precision, exact=exact)

    # -- misc ---------------------------------------------------------------
    def _check_ids(self, ids):
        ids = np.asarray(ids)
        if ids.ndim == 1:
            ids = ids.reshape(-1, 1)
        if ids.ndim != 2 or ids.shape[1] <= int(self._src_col.max()):
            raise ValueError(
                f"leaf ids of shape {ids.shape} do not match the ensemble "
                f"({int(self._src_col.max()) + 1} id columns expected)"
            )
        return ids

    def __repr__(self):
        return (
            f"RuleEnsemble(source={self.source!r}, n_trees={self.n_trees}, "
            f"n_rules={self.n_rules}, n_outputs={self.n_outputs}, "
            f"n_features_in_={self.n_features_in_})"
        )


def _n_rows(X) -> int:
    """Rows of any input the libraries take (arrays, frames, sparse, lists, DMatrix)."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0])
    if callable(getattr(X, "num_row", None)):  # XGBoost DMatrix
        return int(X.num_row())
    return len(X)


def _resolve_feature_names(override, from_model, n_features):
    names = override if override is not None else from_model
    if names is None:
        return [f"x{i}" for i in range(n_features)]
    names = [str(s) for s in names]
    if len(names) != n_features:
        raise ValueError(
            f"feature_names has {len(names)} entries, the model {n_features} features"
        )
    return names
