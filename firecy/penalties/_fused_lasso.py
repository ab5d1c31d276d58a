"""The 1-D fused lasso solvers under their earlier module name.

They live in :mod:`firecy.penalties.tv`. Kept for the asv suite
(``asv_bench/benchmarks/bench_fused_lasso.py``) and
``benchmarks/speed/fused_lasso_speed.py``, which time earlier commits too, where
only this name exists. New code imports from ``firecy.penalties.tv``.
"""
from firecy.penalties.tv._api import fused_lasso, fused_lasso_weighted
from firecy.penalties.tv._testing import (  # noqa: F401
    _call_c,
    _condat_with_budget,
    _set_sorted_kinks_max_live,
    _time_solver,
)

__all__ = ["fused_lasso", "fused_lasso_weighted"]
