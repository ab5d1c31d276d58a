"""How a :class:`~firecy.ensembles.RuleEnsemble` reads data: :class:`EnsembleRouting`.

The methods that route rows through the trees (the library's own leaf call,
or firecy's walk where the library has none), turn leaf ids into the leaf
table and the design, and predict with rule weights.  ``RuleEnsemble``
(``_base.py``) holds the structure they read: the adapter, the blocks, the
leaf id lookup tables, the leaf values and scales.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import firecy.ensembles._design as _design
from firecy.ensembles._memory import check_memory
from firecy._validation import check_not_library_matrix

__all__ = ["EnsembleRouting"]


class EnsembleRouting:
    """Routing, design and prediction of a :class:`~firecy.ensembles.RuleEnsemble`
    (a base class of it; see there)."""

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


def _n_rows(X) -> int:
    """Rows of any input the libraries take (arrays, frames, sparse, lists, DMatrix)."""
    shape = getattr(X, "shape", None)
    if shape is not None:
        return int(shape[0])
    if callable(getattr(X, "num_row", None)):  # XGBoost DMatrix
        return int(X.num_row())
    return len(X)
