"""Size first: refuse a leaf table that does not fit, before allocating it.

A leaf table is ``n_rows x n_trees`` int32, and the library's leaf ids it is
built from are as large again or twice (int64 / float64 ids); 2,000 trees on
2.5 million rows need about 60 GB.  An out-of-memory kill loses the session
without a word, so firecy estimates the memory first and raises
:class:`EnsembleTooLargeError`, saying how to proceed, when the estimate
exceeds the budget: half the memory the system reports available, or the
``FIRECY_MEMORY_BUDGET`` environment variable (bytes, or with a suffix:
``"8G"``, ``"500M"``; ``"none"`` turns the check off).
"""
from __future__ import annotations

import os

__all__ = ["EnsembleTooLargeError", "check_memory", "memory_budget"]

# Bytes per (row, tree) entry: the library's leaf ids (up to 8 bytes: int64
# or float64) and the int32 leaf table.
ID_BYTES = 8
TABLE_BYTES = 4
_AVAILABLE_FRACTION = 0.5
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class EnsembleTooLargeError(MemoryError):
    """The leaf table (or what is built from it) would not fit in the memory budget.

    Raised before anything large is allocated, by
    :meth:`RuleEnsemble.leaf_table`, :meth:`~RuleEnsemble.design`,
    :meth:`~RuleEnsemble.predict_raw` and the estimators' ``fit``; the
    message gives the estimate, the budget and how to proceed.  A
    ``MemoryError``, so that code catching that catches it too.

    Examples
    --------
    A million rows that take no memory, and a budget of 1 MiB:

    >>> import os
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from firecy.ensembles import EnsembleTooLargeError, RuleEnsemble
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> ens = RuleEnsemble.from_model(
    ...     RandomForestRegressor(n_estimators=3, random_state=0).fit(X, X[:, 0]))
    >>> os.environ["FIRECY_MEMORY_BUDGET"] = "1M"
    >>> try:
    ...     ens.leaf_table(np.broadcast_to(X[:1], (1_000_000, 2)))
    ... except EnsembleTooLargeError as err:
    ...     print(str(err)[:60])
    building the leaf table for 1,000,000 rows x 3 trees needs a
    >>> del os.environ["FIRECY_MEMORY_BUDGET"]
    """


def _available_bytes():
    """MemAvailable from /proc/meminfo (Linux), else physical memory, else None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def memory_budget():
    """The memory budget firecy checks leaf tables against, in bytes.

    Returns
    -------
    int or None
        The environment variable ``FIRECY_MEMORY_BUDGET`` if set (bytes, or
        with a suffix K, M, G, T: ``"16G"``), else half the memory the
        system reports available (``MemAvailable``); None when the variable
        is ``"none"`` (no check) or the memory cannot be read.

    Raises
    ------
    ValueError
        If ``FIRECY_MEMORY_BUDGET`` is not a number of bytes.

    Examples
    --------
    >>> import os
    >>> from firecy.ensembles import memory_budget
    >>> os.environ["FIRECY_MEMORY_BUDGET"] = "2G"
    >>> memory_budget()
    2147483648
    >>> del os.environ["FIRECY_MEMORY_BUDGET"]
    """
    env = os.environ.get("FIRECY_MEMORY_BUDGET", "").strip()
    if env:
        if env.lower() in ("none", "off", "0"):
            return None
        unit = _SUFFIX.get(env[-1].upper())
        try:
            return int(float(env[:-1] if unit else env) * (unit or 1))
        except ValueError:
            raise ValueError(
                f"FIRECY_MEMORY_BUDGET={env!r} is not a number of bytes (e.g. 8G, 500M)"
            ) from None
    avail = _available_bytes()
    return None if avail is None else int(avail * _AVAILABLE_FRACTION)


def _gb(b):
    return f"{b / (1 << 30):.3g} GiB" if b >= 1 << 28 else f"{b / (1 << 20):.3g} MiB"


def check_memory(n_rows, n_trees, n_id_columns, *, copies=1.0, extra_bytes=0,
                 what="the leaf table", advice=None):
    """Raise :class:`EnsembleTooLargeError` if building ``what`` would exceed the budget.

    Parameters
    ----------
    n_rows, n_trees, n_id_columns : int
        Rows, blocks, and columns of the library's leaf-id array.
    copies : float
        Leaf tables alive at once (a fit's folds copy it).
    extra_bytes : int
        Anything else the caller will allocate.
    what : str
        What is being built, for the message.
    advice : str, optional
        How to proceed, replacing the default (fewer rows or trees).

    Returns
    -------
    int
        The estimate in bytes.
    """
    ids = int(n_rows) * int(n_id_columns) * ID_BYTES
    table = int(n_rows) * int(n_trees) * TABLE_BYTES
    need = ids + int(copies * table) + int(extra_bytes)
    budget = memory_budget()
    if budget is not None and need > budget:
        raise EnsembleTooLargeError(
            f"building {what} for {n_rows:,} rows x {n_trees:,} trees needs about "
            f"{_gb(need)} (library leaf ids {_gb(ids)}, leaf table {_gb(table)}"
            f"{f' x {copies:g}' if copies != 1 else ''}"
            f"{f', other {_gb(extra_bytes)}' if extra_bytes else ''}), more than the memory budget of "
            f"{_gb(budget)} (half the available memory; set the environment variable "
            "FIRECY_MEMORY_BUDGET, e.g. to 16G, to change it). " + (advice or (
                "Use fewer rows (a random sample of them, or process X in chunks), or "
                "a model with fewer trees; a rule_depth cut makes the rules fewer, "
                "not the table smaller."))
        )
    return need
