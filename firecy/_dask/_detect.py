"""Is this a Dask collection?  Without importing Dask when it is not loaded."""
import sys


def is_dask(*objs):
    """True when one of ``objs`` is a Dask collection (array, DataFrame, Series...)."""
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return any(o is not None and is_dask_collection(o) for o in objs)
