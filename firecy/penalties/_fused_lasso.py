"""The 1-D fused lasso solvers under their earlier module name.

They live in :mod:`firecy.penalties.tv`; the tests and the benchmarks
(``benchmarks/fused_lasso_speed.py``, ``asv_bench``) import this module for
the solvers and their test hooks.
"""
from firecy.penalties.tv._api import fused_lasso, fused_lasso_weighted
from firecy.penalties.tv._testing import (  # noqa: F401
    _call_c,
    _condat_with_budget,
    _set_sorted_kinks_max_live,
    _time_solver,
)

__all__ = ["fused_lasso", "fused_lasso_weighted"]
