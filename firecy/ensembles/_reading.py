"""Reading a column of the data as a library reads it (internal).

A column may come from a numpy array or a pandas DataFrame, hold numbers,
pandas categories or labels; these helpers return what a tree of the library
compares: numbers, category codes, or category values.
"""
from __future__ import annotations

import bisect
import functools
import warnings

import numpy as np

__all__ = ["label_index", "sorted_labels", "codes_from_labels", "coded_column",
           "column_as_float"]


def _column(X, j, codes=True):
    """Column ``j`` of a 2-D array or DataFrame, as a 1-D numpy array."""
    iloc = getattr(X, "iloc", None)
    if iloc is not None:
        s = iloc[:, j]
        if getattr(s.dtype, "name", None) == "category":
            if not codes:
                return s.to_numpy()
            c = s.cat.codes.to_numpy().astype(np.float64)
            c[c < 0] = np.nan
            return c
        if not isinstance(s.dtype, np.dtype) and s.dtype.kind in "biuf":
            # Nullable extension dtypes (Int64, Float64, boolean): pd.NA -> NaN.
            return s.to_numpy(dtype=np.float64, na_value=np.nan)
        return s.to_numpy()
    if hasattr(X, "tocsc") and hasattr(X, "nnz"):
        raise TypeError(
            "Condition.evaluate needs dense data: a sparse matrix's implicit "
            "entries mean 0 to some libraries and missing to XGBoost; use "
            "RuleEnsemble.dense_for_rules(X) first"
        )
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got an array of shape {X.shape}")
    return X[:, j]


@functools.lru_cache(maxsize=256)
def label_index(labels: tuple) -> dict:
    """``{label: code}`` of a library's category labels (cached per tuple)."""
    return {v: k for k, v in enumerate(labels)}


@functools.lru_cache(maxsize=256)
def sorted_labels(labels: tuple) -> tuple:
    """The labels in sorted order, and the code of each."""
    order = sorted(range(len(labels)), key=labels.__getitem__)
    return tuple(labels[k] for k in order), tuple(order)


def _unseen_error(j, unseen):
    shown = ", ".join(repr(v) for v in unseen[:5]) + (", ..." if len(unseen) > 5 else "")
    return ValueError(
        f"column {j} has categories the model was not fitted with, after all of "
        f"its own in sorted order ({shown}); XGBoost refuses such data"
    )


def _next_label_code(v, labels, j):
    """XGBoost (3.1, 3.2): the code of the first training label >= ``v`` in
    sorted order; None when there is none (XGBoost then refuses the data)."""
    ordered, codes = sorted_labels(labels)
    try:
        pos = bisect.bisect_left(ordered, v)
    except TypeError:
        raise ValueError(
            f"column {j} holds category {v!r}, not comparable with the model's "
            f"categories ({ordered[0]!r}, ...); XGBoost refuses such data"
        ) from None
    return None if pos == len(ordered) else codes[pos]


def codes_from_labels(values, labels, *, unseen="missing", j=0) -> np.ndarray:
    """The library's codes (float64) of category ``values``, NaN for missing
    values (None, NaN).

    ``unseen`` says what the library does with a label it was not fitted
    with: ``"missing"`` (LightGBM: NaN), or ``"next"`` (XGBoost 3.1 and 3.2:
    the code of the next training label in sorted order, as its re-coder
    finds it by binary search, and an error past the last one; a
    UserWarning says so, since this silently changes the category).
    """
    index = label_index(tuple(labels))
    out = np.empty(len(values), dtype=np.float64)
    refused, mapped = [], []
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and v != v):
            out[i] = np.nan
            continue
        code = index.get(v)
        if code is None:
            try:
                missing = bool(v != v)  # NaN-like (np.nan, pd.NaT)
            except (TypeError, ValueError):
                missing = False
            out[i] = np.nan
            if missing or unseen == "missing":
                continue
            code = _next_label_code(v, labels, j)
            if code is None:
                refused.append(v)
            else:
                mapped.append((v, labels[code]))
                out[i] = code
        else:
            out[i] = code
    if refused:
        raise _unseen_error(j, refused)
    if mapped:
        shown = ", ".join(f"{a!r} as {b!r}" for a, b in mapped[:5])
        warnings.warn(
            f"column {j} has categories XGBoost was not fitted with; XGBoost reads "
            f"them as the next of its categories in sorted order ({shown}), and so "
            "do firecy's rules",
            UserWarning,
            stacklevel=4,
        )
    return out


def coded_column(X, j, labels, unseen="missing"):
    """Column ``j`` as the library's category codes (see ``Condition.labels``)."""
    iloc = getattr(X, "iloc", None)
    if iloc is not None:
        s = iloc[:, j]
        if getattr(s.dtype, "name", None) == "category":
            # recode the frame's categories (not its rows) by label
            pos = codes_from_labels(list(s.cat.categories), labels, unseen=unseen, j=j)
            codes = s.cat.codes.to_numpy()
            out = np.full(codes.shape[0], np.nan)
            ok = codes >= 0
            out[ok] = pos[codes[ok]]
            return out
        if s.dtype == object:
            return codes_from_labels(s.to_numpy(), labels, unseen=unseen, j=j)
        return _column(X, j)
    col = _column(X, j)
    if col.dtype == object:
        return codes_from_labels(col, labels, unseen=unseen, j=j)
    return col


def _isnan_any(col) -> np.ndarray:
    """NaN / None mask that also works on object arrays."""
    if col.dtype.kind in "fc":
        return np.isnan(col)
    if col.dtype.kind == "O":
        return np.fromiter(
            (v is None or (isinstance(v, float) and v != v) for v in col),
            dtype=bool,
            count=col.shape[0],
        )
    return np.zeros(col.shape[0], dtype=bool)


def _isin_exact(values, categories) -> np.ndarray:
    if values.dtype.kind == "O" or any(isinstance(c, str) for c in categories):
        cats = set(categories)
        return np.fromiter((v in cats for v in values), dtype=bool, count=len(values))
    return np.isin(values, np.asarray(categories))


def column_as_float(X, j) -> np.ndarray:
    """Column ``j`` as float64: a category column as its codes (NaN for -1)."""
    return np.asarray(_column(X, j), dtype=np.float64)
