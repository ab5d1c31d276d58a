"""FIRE on rows that live in a Dask cluster (internal; the public names are in
:mod:`firecy.dask`).

Importing this package does not import Dask: :func:`is_dask` answers False
without it (no Dask collection can exist then), and the estimators' hooks
import the rest only when they meet a Dask collection.
"""
from firecy._dask._detect import is_dask

__all__ = ["is_dask"]
