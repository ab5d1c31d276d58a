"""The rules of a fitted tree ensemble: :class:`RuleEnsemble`.

Built from an adapter (see ``_tree.py`` for what an adapter provides; the
adapter of a model is picked by ``_dispatch.make_adapter``), it holds every
leaf as a rule and builds the leaf table and the design for any data.
"""
from __future__ import annotations

import numbers

import numpy as np

import firecy.ensembles._design as _design
from firecy.ensembles._condition_text import format_conditions
from firecy.ensembles._dispatch import make_adapter
from firecy.ensembles._lazy import NodePathList, RuleList
from firecy.ensembles._depth import column_weights, cut_at_depth, union_of_cuts
from firecy.ensembles._routing import EnsembleRouting
from firecy.ensembles._tree import Adapter, depth_first_layout

__all__ = ["RuleEnsemble"]


class RuleEnsemble(EnsembleRouting):
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
    source : {"sklearn", "xgboost", "lightgbm", "catboost"}
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
      LightGBM, CatBoost): the margin before the inverse link, i.e. ``decision_function``
      for sklearn classifiers, ``predict`` for sklearn GradientBoosting
      regressors, ``_raw_predict`` for HistGradientBoosting (equal to
      ``predict`` for the squared error), ``predict(output_margin=True)`` for
      XGBoost, ``predict(raw_score=True)`` for LightGBM (divided by the number
      of iterations in random-forest mode, which averages),
      ``predict(prediction_type="RawFormulaVal")`` for CatBoost;
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

    def __repr__(self):
        return (
            f"RuleEnsemble(source={self.source!r}, n_trees={self.n_trees}, "
            f"n_rules={self.n_rules}, n_outputs={self.n_outputs}, "
            f"n_features_in_={self.n_features_in_})"
        )


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
