"""The block design the solver works on.

A design is a matrix M (n_samples x n_columns) whose columns are split into
contiguous blocks (one block per tree). Three storage layouts:

* tree layout: every row has exactly one nonzero per block (a row lands in one
  leaf of each tree). Stored as an (n_samples, n_blocks) int32 table of the
  column each row lands in, the per-column leaf values, and the column -> rows
  lists. A third of CSC's size, and row access is a contiguous row of the
  table.
* general layout: any sparsity (rules that are not tree leaves, blocks with
  overlapping supports). Stored as CSC plus a CSR copy for row access.
* mixed layout: tree blocks first (the leaf table of the first
  ``n_tree_blocks`` blocks), then general blocks (CSC + CSR of the remaining
  columns), e.g. a forest's leaves and dense linear terms
  (:meth:`BlockDesign.with_general_blocks`). The tree part keeps its table
  and its kernels; only the extra columns pay for general storage.

Every layout has the same attributes: the tree part (``n_tree_blocks``,
``n_tree_columns``, ``leaf_table``, ``leaf_values``, ``tree_nnz`` entries)
and the general part (``col_vals`` for the entries ``tree_nnz:`` of the
column lists, ``row_ptr`` / ``row_cols`` / ``row_vals`` for its rows, with
global column ids); the tree layout has no general part (None), the general
layout no tree part (0 blocks).
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["BlockDesign"]


def _rows_by_column(table, block_ptr):
    """The rows of every column, column after column, each column's in
    increasing order (int32): the stable argsort of the flattened table
    divided by the number of blocks.

    The columns of block t are ``block_ptr[t]:block_ptr[t + 1]`` and table
    column t holds only those: the sort is one per block, on the block's
    local column ids, which fit 16 bits unless a block has more than 65536
    columns; numpy sorts 16-bit keys stably by radix sort, in linear time
    (5x faster than the sort of the whole table on 11,000 rows x 250
    trees, the same result).
    """
    n, T = table.shape
    if T and int(np.max(np.diff(block_ptr))) <= 1 << 16:
        local = np.empty((T, n), dtype=np.uint16)
        for t in range(T):
            local[t] = table[:, t] - block_ptr[t]
        return np.argsort(local, axis=1, kind="stable").astype(np.int32).ravel()
    order = np.argsort(table.ravel(), kind="stable")
    return np.ascontiguousarray(order // T, dtype=np.int32)


def _check_block_ptr(block_ptr, n_columns):
    block_ptr = np.asarray(block_ptr)
    if block_ptr.ndim != 1 or block_ptr.shape[0] < 2:
        raise ValueError("block_ptr must be a 1-D array of at least 2 block boundaries")
    if not np.issubdtype(block_ptr.dtype, np.integer):
        if not np.all(np.isfinite(block_ptr)) or np.any(block_ptr != np.round(block_ptr)):
            raise ValueError("block_ptr must hold integer column boundaries")
    block_ptr = block_ptr.astype(np.intp)
    if block_ptr[0] != 0 or block_ptr[-1] != n_columns:
        raise ValueError(
            f"blocks must cover the columns: block_ptr must start at 0 and end at "
            f"n_columns={n_columns}, got {block_ptr[0]} .. {block_ptr[-1]}"
        )
    if np.any(np.diff(block_ptr) <= 0):
        raise ValueError("block_ptr must be strictly increasing (no empty blocks)")
    return np.ascontiguousarray(block_ptr)


def _check_finite(values, what):
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what} contains NaN or infinity")


class BlockDesign:
    """A design matrix split into blocks of columns, in the solver's layout.

    Build it with :meth:`from_leaf_table` (tree ensembles) or
    :meth:`from_matrix` (any matrix and block boundaries).

    Attributes
    ----------
    n_samples, n_columns, n_blocks : int
    block_ptr : ndarray of shape (n_blocks + 1,)
        Block t holds columns ``block_ptr[t]:block_ptr[t + 1]``.
    layout : {"tree", "general", "mixed"}
        The storage layout (see the module docstring).
    is_tree : bool
        True for the tree layout (one nonzero per row per block).
    n_tree_blocks, n_tree_columns : int
        The blocks stored as a leaf table, and their columns: the first
        ``n_tree_blocks`` blocks (all of them in the tree layout, none in the
        general layout).
    block_is_diagonal : ndarray of bool, shape (n_blocks,)
        Whether no row has two nonzeros in the block (always, for a tree).

    Examples
    --------
    Two trees, the first with leaves (columns) 0-1, the second with leaves
    2-4; ``leaf_table[i, t]`` is the leaf row i lands in, in tree t:

    >>> import numpy as np
    >>> from firecy.solver import BlockDesign
    >>> table = np.array([[0, 2], [0, 3], [1, 4], [1, 2]])
    >>> design = BlockDesign.from_leaf_table(table, [1.0, 2.0, 0.5, 1.5, -1.0], [0, 2, 5])
    >>> design
    BlockDesign(tree, n_samples=4, n_columns=5, n_blocks=2)
    >>> design.tocsc().toarray()
    array([[ 1. ,  0. ,  0.5,  0. ,  0. ],
           [ 1. ,  0. ,  0. ,  1.5,  0. ],
           [ 0. ,  2. ,  0. ,  0. , -1. ],
           [ 0. ,  2. ,  0.5,  0. ,  0. ]])

    The same matrix in the general layout gives the same fit:

    >>> from firecy.penalties import L1
    >>> from firecy.solver import solve
    >>> general = BlockDesign.from_matrix(design.tocsc(), [0, 2, 5])
    >>> general.is_tree, general.block_is_diagonal
    (False, array([ True,  True]))
    >>> y = [1.0, 2.0, 0.0, 3.0]
    >>> a, b = solve(design, y, L1(0.1)), solve(general, y, L1(0.1))
    >>> bool(np.isclose(a.objective, b.objective))
    True
    >>> bool(np.allclose(design.matvec(a.coef), general.matvec(b.coef)))
    True

    Dense extra columns (here one linear term, a block of one column) join
    the tree blocks in the mixed layout, which keeps the leaf table:

    >>> mixed = design.with_general_blocks(np.array([[0.5], [1.0], [1.5], [2.0]]), [0, 1])
    >>> mixed
    BlockDesign(mixed, n_samples=4, n_columns=6, n_blocks=3)
    >>> mixed.n_tree_blocks, mixed.matvec(np.ones(6)).tolist()
    (2, [2.0, 3.5, 2.5, 4.5])

    Overlapping rules in one block (a node and its child) make the block
    non-diagonal:

    >>> BlockDesign.from_matrix(np.array([[1.0, 1.0], [1.0, 0.0]]), [0, 2]).block_is_diagonal
    array([False])
    """

    def __init__(self):
        raise TypeError("use BlockDesign.from_leaf_table or BlockDesign.from_matrix")

    @classmethod
    def _new(cls):
        return object.__new__(cls)

    @classmethod
    def from_leaf_table(cls, leaf_table, leaf_values, block_ptr):
        """Tree layout: row i lands in column ``leaf_table[i, t]`` of block t.

        Parameters
        ----------
        leaf_table : array-like of int, shape (n_samples, n_blocks)
            Global column index of the leaf each row lands in, per tree; the
            column must belong to that tree's block.
        leaf_values : array-like of float, shape (n_columns,)
            The nonzero value of each column (the leaf's value).
        block_ptr : array-like of int, shape (n_blocks + 1,)
            Block boundaries.
        """
        leaf_values = np.ascontiguousarray(leaf_values, dtype=np.float64)
        if leaf_values.ndim != 1 or leaf_values.shape[0] == 0:
            raise ValueError("leaf_values must be a non-empty 1-D array")
        _check_finite(leaf_values, "the design (leaf_values)")
        n_columns = leaf_values.shape[0]
        block_ptr = _check_block_ptr(block_ptr, n_columns)
        table = np.asarray(leaf_table)
        if table.ndim != 2:
            raise ValueError(f"leaf_table must be 2-D, got shape {table.shape}")
        if table.shape[0] == 0:
            raise ValueError("the design is empty: leaf_table has no rows")
        n_blocks = block_ptr.shape[0] - 1
        if table.shape[1] != n_blocks:
            raise ValueError(
                f"leaf_table has {table.shape[1]} columns but block_ptr describes "
                f"{n_blocks} blocks"
            )
        if not np.issubdtype(table.dtype, np.integer):
            raise TypeError(f"leaf_table must hold integers, got dtype {table.dtype}")
        # checked before the cast: an int64 value beyond int32 would wrap
        lo, hi = block_ptr[:-1], block_ptr[1:]
        if np.any(table < lo) or np.any(table >= hi):
            raise ValueError("leaf_table sends a row to a column outside its tree's block")
        if n_columns > np.iinfo(np.int32).max:
            raise ValueError(f"{n_columns} columns: the tree layout indexes columns with "
                             "int32; use BlockDesign.from_matrix")
        table = np.ascontiguousarray(table, dtype=np.int32)

        self = cls._new()
        self.layout = "tree"
        self.is_tree = True
        self.n_samples, self.n_blocks = table.shape
        self.n_tree_blocks, self.n_tree_columns = self.n_blocks, n_columns
        self.n_columns = n_columns
        self.block_ptr = block_ptr
        self.leaf_table = table
        self.leaf_values = leaf_values
        # column -> rows lists: a stable sort of the flattened table
        flat = table.ravel()
        self.col_rows = _rows_by_column(table, block_ptr)
        counts = np.bincount(flat, minlength=n_columns)
        self.col_ptr = np.zeros(n_columns + 1, dtype=np.intp)
        np.cumsum(counts, out=self.col_ptr[1:])
        self.tree_nnz = int(self.col_ptr[-1])
        self.col_vals = None
        self.row_ptr = self.row_cols = self.row_vals = None
        self.block_is_diagonal = np.ones(self.n_blocks, dtype=bool)
        return self

    @classmethod
    def from_matrix(cls, M, block_ptr):
        """General layout from any matrix (dense or scipy sparse).

        Parameters
        ----------
        M : array-like or sparse matrix of shape (n_samples, n_columns)
        block_ptr : array-like of int, shape (n_blocks + 1,)
            Block boundaries.
        """
        if sp.issparse(M):
            csc = sp.csc_matrix(M, dtype=np.float64)
        else:
            arr = np.asarray(M)
            if arr.dtype == object or not (
                np.issubdtype(arr.dtype, np.number) or arr.dtype == bool
            ):
                raise TypeError(f"the design must be numeric, got dtype {arr.dtype}")
            if arr.ndim != 2:
                raise ValueError(f"the design must be 2-D, got shape {arr.shape}")
            csc = sp.csc_matrix(arr.astype(np.float64))
        if csc.shape[0] == 0 or csc.shape[1] == 0:
            raise ValueError(f"the design is empty (shape {csc.shape})")
        csc.sum_duplicates()
        csc.sort_indices()
        _check_finite(csc.data, "the design")
        block_ptr = _check_block_ptr(block_ptr, csc.shape[1])
        csr = csc.tocsr()
        csr.sort_indices()

        self = cls._new()
        self.layout = "general"
        self.is_tree = False
        self.n_samples, self.n_columns = csc.shape
        self.n_blocks = block_ptr.shape[0] - 1
        self.n_tree_blocks = self.n_tree_columns = self.tree_nnz = 0
        self.block_ptr = block_ptr
        self.col_ptr = csc.indptr.astype(np.intp)
        self.col_rows = csc.indices.astype(np.int32)
        self.col_vals = np.ascontiguousarray(csc.data, dtype=np.float64)
        self.row_ptr = csr.indptr.astype(np.intp)
        self.row_cols = csr.indices.astype(np.int32)
        self.row_vals = np.ascontiguousarray(csr.data, dtype=np.float64)
        self.leaf_table = None
        self.leaf_values = None
        # a block's curvature is diagonal when no row has two nonzeros in it
        col_block = np.repeat(np.arange(self.n_blocks), np.diff(block_ptr))
        entry_block = col_block[self.row_cols]
        entry_row = np.repeat(np.arange(self.n_samples), np.diff(self.row_ptr))
        keys = entry_row.astype(np.int64) * self.n_blocks + entry_block
        uniq, counts = np.unique(keys, return_counts=True)
        diag = np.ones(self.n_blocks, dtype=bool)
        diag[(uniq[counts > 1] % self.n_blocks).astype(np.intp)] = False
        self.block_is_diagonal = diag
        return self

    def with_general_blocks(self, M, block_ptr):
        """This design followed by the columns of ``M`` as general blocks.

        Tree blocks stay in the leaf table (the mixed layout; a general
        design stays general): a dense column, such as a linear term, no
        longer sends the whole design to the general layout.

        Parameters
        ----------
        M : array-like or sparse matrix of shape (n_samples, n_extra)
        block_ptr : array-like of int, shape (n_extra_blocks + 1,)
            The extra columns' block boundaries (from 0).

        Returns
        -------
        BlockDesign
        """
        extra = BlockDesign.from_matrix(M, block_ptr)
        if extra.n_samples != self.n_samples:
            raise ValueError(f"the extra columns have {extra.n_samples} rows, the design "
                             f"{self.n_samples}")
        if self.n_tree_blocks == 0:
            ptr = np.r_[self.block_ptr, self.n_columns + extra.block_ptr[1:]]
            return BlockDesign.from_matrix(sp.hstack([self.tocsc(), extra.tocsc()]), ptr)
        tree = self._tree_part()
        if self.n_tree_blocks < self.n_blocks:
            ptr = self.block_ptr[self.n_tree_blocks:] - self.n_tree_columns
            extra = BlockDesign.from_matrix(
                sp.hstack([self._general_csc(), extra.tocsc()]),
                np.r_[ptr, ptr[-1] + extra.block_ptr[1:]])
        return BlockDesign._mixed(tree, extra)

    @classmethod
    def _mixed(cls, tree, general):
        """The mixed layout: ``tree``'s blocks (a tree design), then
        ``general``'s (a general design of the same rows)."""
        R0 = tree.n_columns
        self = cls._new()
        self.layout = "mixed"
        self.is_tree = False
        self.n_samples = tree.n_samples
        self.n_columns = R0 + general.n_columns
        self.n_blocks = tree.n_blocks + general.n_blocks
        self.block_ptr = np.ascontiguousarray(
            np.r_[tree.block_ptr, R0 + general.block_ptr[1:]], dtype=np.intp)
        self.n_tree_blocks, self.n_tree_columns = tree.n_blocks, R0
        self.leaf_table = tree.leaf_table
        self.leaf_values = tree.leaf_values
        self.tree_nnz = tree.tree_nnz
        self.col_ptr = np.ascontiguousarray(
            np.r_[tree.col_ptr, tree.tree_nnz + general.col_ptr[1:]], dtype=np.intp)
        self.col_rows = np.concatenate([tree.col_rows, general.col_rows])
        self.col_vals = general.col_vals
        self.row_ptr = general.row_ptr
        self.row_cols = (general.row_cols + R0).astype(np.int32)
        self.row_vals = general.row_vals
        self.block_is_diagonal = np.r_[tree.block_is_diagonal, general.block_is_diagonal]
        return self

    def _tree_part(self):
        """The tree blocks alone, as a tree design (no copy of the table)."""
        if self.layout == "tree":
            return self
        tree = BlockDesign._new()
        tree.layout, tree.is_tree = "tree", True
        tree.n_samples, tree.n_blocks = self.n_samples, self.n_tree_blocks
        tree.n_columns = tree.n_tree_columns = self.n_tree_columns
        tree.n_tree_blocks = self.n_tree_blocks
        tree.block_ptr = self.block_ptr[:self.n_tree_blocks + 1]
        tree.leaf_table, tree.leaf_values = self.leaf_table, self.leaf_values
        tree.col_ptr = self.col_ptr[:self.n_tree_columns + 1]
        tree.col_rows = self.col_rows[:self.tree_nnz]
        tree.tree_nnz = self.tree_nnz
        tree.col_vals = tree.row_ptr = tree.row_cols = tree.row_vals = None
        tree.block_is_diagonal = self.block_is_diagonal[:self.n_tree_blocks]
        return tree

    def _general_csc(self):
        """The general blocks' columns as a ``csc_matrix`` (n_samples x
        (n_columns - n_tree_columns))."""
        R0, nnz0 = self.n_tree_columns, self.tree_nnz
        ptr = self.col_ptr[R0:] - nnz0
        vals = self.col_vals if self.col_vals is not None else np.zeros(0)
        return sp.csc_matrix((vals, self.col_rows[nnz0:], ptr),
                             shape=(self.n_samples, self.n_columns - R0))

    @classmethod
    def coerce(cls, design, block_ptr=None):
        """Return ``design`` as a BlockDesign (a matrix needs ``block_ptr``)."""
        if isinstance(design, cls):
            if block_ptr is not None:
                raise ValueError("block_ptr is given twice: the design already has blocks")
            return design
        if block_ptr is None:
            raise ValueError("a design matrix needs block_ptr (the block boundaries)")
        return cls.from_matrix(design, block_ptr)

    def subset_blocks(self, blocks):
        """The design restricted to ``blocks`` (sorted), and its columns."""
        blocks = np.asarray(blocks, dtype=np.intp)
        sizes = self.block_ptr[blocks + 1] - self.block_ptr[blocks]
        cols = np.concatenate([np.arange(self.block_ptr[t], self.block_ptr[t + 1])
                               for t in blocks])
        sub_ptr = np.r_[0, np.cumsum(sizes)]
        tree_blocks = blocks[blocks < self.n_tree_blocks]
        n0 = tree_blocks.size
        if n0 == 0:
            return BlockDesign.from_matrix(self.tocsc()[:, cols], sub_ptr), cols
        tree_cols = cols[:sub_ptr[n0]]
        remap = np.full(self.n_tree_columns, -1, dtype=np.int32)
        remap[tree_cols] = np.arange(tree_cols.size, dtype=np.int32)
        sub = BlockDesign.from_leaf_table(
            remap[self.leaf_table[:, tree_blocks]], self.leaf_values[tree_cols],
            sub_ptr[:n0 + 1])
        if n0 < blocks.size:
            general = self._general_csc()[:, cols[sub_ptr[n0]:] - self.n_tree_columns]
            sub = sub.with_general_blocks(general, sub_ptr[n0:] - sub_ptr[n0])
        return sub, cols

    # -- linear algebra (vectorised NumPy; the solver has its own loops) --

    def tocsc(self):
        """The design as a ``scipy.sparse.csc_matrix``."""
        if self.layout == "general":
            data = self.col_vals
        else:
            R0 = self.n_tree_columns
            data = np.repeat(self.leaf_values, np.diff(self.col_ptr[:R0 + 1]))
            if self.layout == "mixed":
                data = np.concatenate([data, self.col_vals])
        return sp.csc_matrix(
            (data, self.col_rows, self.col_ptr), shape=(self.n_samples, self.n_columns)
        )

    def matvec(self, w):
        """``M @ w``."""
        w = np.asarray(w, dtype=np.float64)
        if self.is_tree:
            return (self.leaf_values * w)[self.leaf_table].sum(axis=1)
        if self.layout == "general":
            return self.tocsc() @ w
        R0 = self.n_tree_columns
        return ((self.leaf_values * w[:R0])[self.leaf_table].sum(axis=1)
                + self._general_csc() @ w[R0:])

    def column_stats(self, sample_weight):
        """Weighted column sums ``M^T s`` and curvatures ``(M * M)^T s``."""
        if self.layout == "mixed":
            sums, curv = self._tree_part().column_stats(sample_weight)
            csc = self._general_csc()
            return (np.r_[sums, csc.T @ sample_weight],
                    np.r_[curv, csc.multiply(csc).T @ sample_weight])
        if self.is_tree:
            # one value per column: both are that value (squared) times the
            # column's weight, the sum of its rows' weights
            s = np.asarray(sample_weight, dtype=np.float64)
            if s.shape != (self.n_samples,):
                raise ValueError(f"sample_weight has shape {s.shape}, the design has "
                                 f"{self.n_samples} rows")
            if s.size and np.all(s == s[0]):
                # equal weights (the common case): the row count, O(columns)
                # rather than a pass over the leaf table (8 ms of a 100 ms
                # solve on the 8000-rule forest)
                weight = np.diff(self.col_ptr) * s[0]
            else:
                weight = np.bincount(self.leaf_table.ravel(), minlength=self.n_columns,
                                     weights=np.repeat(s, self.n_blocks))
            return self.leaf_values * weight, self.leaf_values ** 2 * weight
        csc = self.tocsc()
        return csc.T @ sample_weight, csc.multiply(csc).T @ sample_weight

    def block_lipschitz(self, sample_weight, curvature):
        """Per block, the largest eigenvalue of ``M_t^T S M_t``.

        Equals the largest curvature (``column_stats``) for diagonal blocks;
        computed by a dense eigenvalue solve otherwise (blocks are small).
        """
        curv = curvature
        ptr = np.asarray(self.block_ptr)
        if self.n_blocks and self.block_is_diagonal.all() and np.all(ptr[1:] > ptr[:-1]):
            # every block diagonal (a tree's leaves): the per-block maxima in
            # one pass; the loop below costs a third of a Problem's set-up,
            # which the proximal-Newton loop pays at every outer step
            return np.maximum.reduceat(np.asarray(curv, dtype=np.float64), ptr[:-1])
        out = np.empty(self.n_blocks)
        csc = None
        for t in range(self.n_blocks):
            lo, hi = self.block_ptr[t], self.block_ptr[t + 1]
            if self.block_is_diagonal[t]:
                out[t] = curv[lo:hi].max()
                continue
            if csc is None:
                csc = self.tocsc()
            block = csc[:, lo:hi]
            gram = (block.T @ block.multiply(sample_weight[:, None])).toarray()
            out[t] = np.linalg.eigvalsh(gram)[-1]
        return out

    def __repr__(self):
        return (
            f"BlockDesign({self.layout}, n_samples={self.n_samples}, "
            f"n_columns={self.n_columns}, n_blocks={self.n_blocks})"
        )

