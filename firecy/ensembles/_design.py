"""Vectorised construction of the leaf table and the design matrix.

Everything here touches n rows, so nothing loops over rows in Python; the
Python loops run over chunks of rows or of trees, each step doing numpy work
on many elements.

The design M (n x R) has exactly one nonzero per row in every block: row i of
tree t lands in one leaf.  Hence in CSC layout block t occupies exactly n
consecutive entries, ``indices[t*n:(t+1)*n]``, and within it the rows must be
sorted by (leaf, row): a *stable* argsort of the rows' local leaf positions.
Local positions fit in uint8 for trees of up to 254 leaves (uint16 up to
65534), for which numpy's stable sort is a linear-time radix sort.  Building
CSC directly this way needs no CSR intermediate, so peak memory is the design
itself plus a bounded scratch.

The library's leaf ids come as an (n, n_trees) row-major array.  Reading one
tree's column from it is a strided gather that misses the cache on every
row, which made it the most expensive step; the ids are therefore read in
slabs of a few dozen trees (row-major reads), converted and mapped to local
positions on the whole slab, and transposed once, so that each tree's
positions are contiguous.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# Scratch budget, in elements, for (rows x trees) temporaries: about 4 M
# elements keeps the scratch a few percent of a 100k x 500 design.
_SCRATCH_ELEMENTS = 1 << 22
_MAX_SLAB = 64


def row_chunk(n_trees: int) -> int:
    """Rows per chunk for (rows x n_trees) scratch arrays."""
    return max(256, (_SCRATCH_ELEMENTS // 4) // max(n_trees, 1))


def _slab_width(n_rows: int, n_trees: int) -> int:
    """Trees per slab for (n_rows x slab) scratch arrays.

    At most an eighth of the trees, so that the slab's scratch (6 bytes per
    entry) stays under a tenth of the design (12 bytes per entry).
    """
    width = min(_MAX_SLAB, _SCRATCH_ELEMENTS // max(n_rows, 1), n_trees // 8)
    return int(max(1, width))


def local_dtype(max_leaves: int):
    """Smallest integer type for leaf positions within a tree, and a sentinel.

    The sentinel (for ids that are not leaves) is >= every block's leaf count,
    so it sorts last and one look at the sorted positions reveals it.
    """
    if max_leaves < np.iinfo(np.uint8).max:
        return np.uint8, int(np.iinfo(np.uint8).max)
    if max_leaves < np.iinfo(np.uint16).max:
        return np.uint16, int(np.iinfo(np.uint16).max)
    return np.int32, int(max_leaves)


def _ids_slab(ids, src_col, k0, k1, identity):
    """Columns of the blocks k0:k1 as a fresh int32 (rows x blocks) array.

    sklearn's gradient boosting returns float64 ids, XGBoost float32 ids,
    sklearn forests int64: all exact small integers.  int32 converts faster
    than int64 and indexes as well.
    """
    sub = ids[:, k0:k1] if identity else ids[:, src_col[k0:k1]]
    return sub.astype(np.int32)  # always a copy: callers modify it in place


def _check_range(slab, sizes):
    """Every id within its block's lookup table (negative ids included)."""
    # A negative int32 seen as uint32 is huge: one comparison covers both ends.
    if slab.size and (slab.view(np.uint32) >= sizes.astype(np.uint32)).any():
        raise ValueError("the library returned a leaf id outside the tree")


def _not_a_leaf():
    return ValueError(
        "the library returned a node id that is not a leaf of the extracted "
        "tree; was the model changed after the RuleEnsemble was built?"
    )


def _is_identity(ids, src_col):
    T = src_col.shape[0]
    return ids.shape[1] == T and np.array_equal(src_col, np.arange(T))


def leaf_table_from_ids(ids, src_col, lut, lut_off) -> np.ndarray:
    """Map library leaf ids to global column indices.

    Parameters
    ----------
    ids : ndarray of shape (n, n_src)
        Leaf ids as the library returns them.
    src_col : ndarray of int, shape (T,)
        Column of ``ids`` each block reads.
    lut : ndarray of int32
        Concatenated per-block lookup tables, library leaf id -> global column
        (-1 where the id is not a leaf).
    lut_off : ndarray of int64, shape (T + 1,)
        Start of each block's lookup table in ``lut``.

    Returns
    -------
    table : ndarray of int32, shape (n, T), C-contiguous
    """
    n = ids.shape[0]
    T = src_col.shape[0]
    out = np.empty((n, T), dtype=np.int32)
    identity = _is_identity(ids, src_col)
    offsets = lut_off[:-1].astype(np.int32)
    sizes = np.diff(lut_off)
    chunk = row_chunk(T)
    for r0 in range(0, n, chunk):
        r1 = min(r0 + chunk, n)
        sub = _ids_slab(ids[r0:r1], src_col, 0, T, identity)
        _check_range(sub, sizes)
        sub += offsets
        np.take(lut, sub, out=out[r0:r1], mode="clip")  # range checked above
        if out[r0:r1].min(initial=0) < 0:
            raise _not_a_leaf()
    return out


def _assemble_csc(n, leaf_values, block_ptr, local_slabs) -> sp.csc_matrix:
    """CSC design from an iterator of (first block, local positions).

    ``local_slabs`` yields ``(k0, local)`` with ``local`` of shape (w, n): the
    position of each row's leaf within block ``k0 + j``, for j < w.
    """
    T = block_ptr.shape[0] - 1
    R = int(block_ptr[-1])
    nnz = n * T
    idx_dtype = np.int32 if max(n, nnz, R) < np.iinfo(np.int32).max else np.int64
    indices = np.empty(nnz, dtype=idx_dtype)
    counts = np.empty(R, dtype=np.int64)
    for k0, local in local_slabs:
        for j in range(local.shape[0]):
            t = k0 + j
            r_t = int(block_ptr[t + 1] - block_ptr[t])
            # Stable radix sort of small integers: rows stay increasing
            # within each leaf (sorted CSC indices).
            order = np.argsort(local[j], kind="stable")
            indices[t * n:(t + 1) * n] = order
            # Leaf sizes from the sorted positions: cheaper than bincount,
            # which converts to intp and scans for the range first.
            ranked = local[j].take(order)
            if n and ranked[-1] >= r_t:  # the sentinel of a non-leaf id
                raise _not_a_leaf()
            bounds = np.searchsorted(ranked, np.arange(r_t + 1, dtype=ranked.dtype))
            bounds[-1] = n
            counts[block_ptr[t]:block_ptr[t + 1]] = np.diff(bounds)
    data = np.repeat(leaf_values, counts)
    indptr = np.empty(R + 1, dtype=idx_dtype)
    indptr[0] = 0
    np.cumsum(counts, out=indptr[1:])
    M = sp.csc_matrix((data, indices, indptr), shape=(n, R), copy=False)
    M.has_sorted_indices = True
    return M


def design_from_ids(ids, src_col, lut_local, lut_off, leaf_values, block_ptr):
    """CSC design straight from the library's leaf ids (no leaf table).

    Parameters are as in :func:`leaf_table_from_ids`, with ``lut_local``
    mapping library leaf id -> position of the leaf within its block (the
    sentinel of :func:`local_dtype` where the id is not a leaf).
    """
    n = ids.shape[0]
    T = src_col.shape[0]
    identity = _is_identity(ids, src_col)
    offsets = lut_off[:-1].astype(np.int32)
    sizes = np.diff(lut_off)
    width = _slab_width(n, T)

    def positions():
        for k0 in range(0, T, width):
            k1 = min(k0 + width, T)
            slab = _ids_slab(ids, src_col, k0, k1, identity)
            _check_range(slab, sizes[k0:k1])
            slab += offsets[k0:k1]
            # (n, w) local positions, transposed once: each tree's row is
            # then contiguous for bincount and argsort.
            local = np.ascontiguousarray(np.take(lut_local, slab, mode="clip").T)
            del slab
            yield k0, local

    return _assemble_csc(n, leaf_values, block_ptr, positions())


def design_from_table(table, leaf_values, block_ptr):
    """CSC design from a leaf table of global column indices (n, T)."""
    table = np.asarray(table)
    n, T = table.shape
    if T != block_ptr.shape[0] - 1:
        raise ValueError(
            f"leaf table has {T} columns, the ensemble {block_ptr.shape[0] - 1} trees"
        )
    sizes = np.diff(block_ptr)
    dt, _ = local_dtype(int(sizes.max()) if sizes.size else 0)
    width = _slab_width(n, T)
    starts = block_ptr[:-1].astype(np.int32)

    def positions():
        for k0 in range(0, T, width):
            k1 = min(k0 + width, T)
            slab = table[:, k0:k1].astype(np.int32)  # a copy, modified in place
            slab -= starts[k0:k1]
            if slab.size and (slab.view(np.uint32) >= sizes[k0:k1].astype(np.uint32)).any():
                raise ValueError("the leaf table holds columns outside their tree")
            local = np.ascontiguousarray(slab.astype(dt).T)
            del slab
            yield k0, local

    return _assemble_csc(n, leaf_values, block_ptr, positions())
