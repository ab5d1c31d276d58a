"""Exact solvers for the one-dimensional fused lasso (total-variation denoising).

The prox of the fusion penalties (``firecy.penalties._fusion``) is a 1-D
fused lasso over a tree's leaves. Two algorithms, both exact (up to
rounding) and allocation-free at C level, with headers other Cython code can
``cimport``:

* ``_condat``: the unweighted problem
  ``argmin_x 1/2 sum_i (x_i - y_i)^2 + lam sum_{i>0} |x_i - x_{i-1}|``,
  by Condat's direct algorithm;
* ``_dp``: the weighted problem
  ``argmin_x sum_i [c_i/2 (x_i - z_i)^2 + phi_i(x_i)] + lam_tv TV(x)``
  with phi_i = 0, ``lam1 |x|`` or firecy's MCP, by Johnson's dynamic
  programme.

``lam_tv`` and ``lam1`` are the levels of this 1-D problem: the fusion
penalties call it with ``lam_tv = lam_fusion`` (their fusion strength) and
``lam1 = lam`` (their sparsity strength), see docs/objective.rst.
``_api`` holds the Python functions :func:`fused_lasso` and
:func:`fused_lasso_weighted`.

Dual view used throughout. With u_0 = u_n = 0 and
u_{i+1} = u_i + c_i (x_i - z_i) + s_i (s_i a subgradient of phi_i at x_i),
x is optimal iff |u_i| <= lam_tv for all i and u_i = lam_tv sign(x_i - x_{i-1})
wherever x_i != x_{i-1}. The tests check exactly this certificate.
"""
from firecy.penalties.tv._api import fused_lasso, fused_lasso_weighted

__all__ = ["fused_lasso", "fused_lasso_weighted"]
