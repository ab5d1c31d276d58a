"""Rows of Dask collections as aligned partitions: X, y and sample weights.

Every all-rows pass of :mod:`firecy._dask._fit` maps a function over the
partitions ``(X_i, y_i, s_i)`` with :func:`dask.delayed` and reduces the small
results on the client; the partitions are never gathered (except on the exact
path, for data that fits the sample size).
"""
import sys

import numpy as np


def is_frame(obj):
    """A Dask DataFrame or Series (never imports dask.dataframe, which needs pyarrow)."""
    dd = sys.modules.get("dask.dataframe")
    return dd is not None and isinstance(obj, (dd.DataFrame, dd.Series))


def row_partitions(X):
    """``(parts, lengths)``: one Delayed per row partition; lengths if known, else None."""
    import dask.array as da

    if isinstance(X, da.Array):
        if X.ndim == 2 and X.numblocks[1] > 1:
            X = X.rechunk({1: -1})  # one block per row partition
        parts = list(np.asarray(X.to_delayed()).reshape(X.numblocks[0], -1)[:, 0])
        lengths = X.chunks[0]
        known = not any(np.isnan(c) for c in lengths)
        return parts, (tuple(int(c) for c in lengths) if known else None)
    if is_frame(X):
        return list(X.to_delayed()), None
    raise TypeError(f"expected a Dask array, DataFrame or Series, got {type(X).__name__}")


def partition_lengths(parts):
    """Rows of every partition (one pass that only counts)."""
    import dask

    return tuple(int(v) for v in dask.compute(*[dask.delayed(len)(p) for p in parts]))


def aligned(X, y, sample_weight):
    """``(x_parts, y_parts, w_parts, lengths)``: partitions of X, y, s that match.

    ``y`` and ``sample_weight`` may be Dask collections (with as many row
    partitions as X; the task of each partition checks its row counts) or
    in-memory arrays, split like X.  ``w_parts`` is a list of None without
    weights.
    """
    from firecy._dask._detect import is_dask

    xp, lengths = row_partitions(X)
    others = []
    for obj, name in ((y, "y"), (sample_weight, "sample_weight")):
        if obj is None:
            others.append([None] * len(xp))
            continue
        if is_dask(obj):
            import dask.array as da

            if isinstance(obj, da.Array) and isinstance(X, da.Array) and lengths is not None \
                    and obj.chunks[0] != lengths:
                if obj.shape[0] != sum(lengths):
                    raise ValueError(
                        f"X has {sum(lengths)} rows but {name} has {obj.shape[0]}")
                obj = obj.rechunk({0: lengths})  # the same rows, cut like X
            if isinstance(obj, da.Array) and obj.ndim == 2 and obj.shape[1] == 1:
                obj = obj[:, 0]
            parts, _ = row_partitions(obj)
            if len(parts) != len(xp):
                raise ValueError(
                    f"X has {len(xp)} row partitions but {name} has {len(parts)}: "
                    f"partition them alike (e.g. {name} as a column of X's DataFrame)")
            others.append(parts)
        else:
            arr = np.asarray(obj)
            if lengths is None:
                lengths = partition_lengths(xp)
            if arr.shape[0] != sum(lengths):
                raise ValueError(f"X has {sum(lengths)} rows but {name} has {arr.shape[0]}")
            cuts = np.cumsum((0,) + tuple(lengths))
            others.append([arr[a:b] for a, b in zip(cuts[:-1], cuts[1:])])
    return xp, others[0], others[1], lengths


def as_1d(values):
    """A partition of y or of the weights as a 1-D ndarray."""
    if values is None:
        return None
    arr = np.asarray(values)
    return arr.reshape(-1) if arr.ndim == 2 and arr.shape[1] == 1 else arr


def check_rows(i, x, y, w):
    """The rows of partition ``i`` agree in number."""
    n = len(x)
    for obj, name in ((y, "y"), (w, "sample_weight")):
        if obj is not None and len(obj) != n:
            raise ValueError(
                f"row partition {i}: X has {n} rows but {name} has {len(obj)}: X and "
                f"{name} must be partitioned alike")
    return n


def concat(pieces):
    """Partitions (ndarrays or pandas objects) back into one object."""
    first = pieces[0]
    if hasattr(first, "iloc"):
        import pandas as pd

        return pd.concat(pieces, axis=0)
    return np.concatenate([np.asarray(p) for p in pieces], axis=0)
