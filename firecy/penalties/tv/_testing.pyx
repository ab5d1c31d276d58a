"""Test and benchmark hooks of the 1-D fused lasso solvers (not public API).

They time the C solvers without Python overhead, run Condat's algorithm
under a step budget, and call the solvers on raw arguments between guard
zones; ``tests/test_fused_lasso.py`` and ``benchmarks/speed/fused_lasso_speed.py``
use them (through ``firecy.penalties._fused_lasso``).
"""
import time

import numpy as np

from firecy.penalties.tv._api import _as_signal, _prepare_weighted
from firecy.penalties.tv._condat cimport (
    _condat, _condat_then_dp, fused_lasso_1d, fused_lasso_1d_work_size)
from firecy.penalties.tv._dp cimport (
    fused_lasso_dp, fused_lasso_dp_bounded, fused_lasso_dp_l1, fused_lasso_dp_l1_work_size,
    fused_lasso_dp_work_size)
from firecy.penalties.tv._dp import _set_sorted_kinks_max_live  # noqa: F401


def _time_solver(str solver, z, double lam_tv, weights=None, double lam1=0.0,
                 gamma=None, curvature=None, Py_ssize_t repeat=1,
                 str clock="thread"):
    """Seconds taken by ``repeat`` back-to-back calls of a C-level solver.

    The calls run in one ``nogil`` loop on preallocated buffers, so the
    figure excludes all Python overhead. ``solver``: ``"condat"``
    (``fused_lasso_1d``), ``"dp"`` (``fused_lasso_dp_l1``, weights and
    ``lam1`` as given) or ``"dp_mcp"`` (``fused_lasso_dp``).

    ``z`` (and ``weights`` / ``curvature`` if given) may be 2-D: the calls
    then cycle through its rows. Repeating one short signal lets the branch
    predictor learn its exact path, which flatters the timing; a few hundred
    different rows do not. ``clock``: ``"thread"`` (this thread's CPU time:
    what the solver costs, not counting time other processes hold the core)
    or ``"wall"``.
    """
    cdef const double[::1] z_view, c_view, a_view
    cdef double[::1] out_view, work_view
    cdef const double* c_ptr = NULL
    cdef const double* a_ptr = NULL
    cdef Py_ssize_t n, rows, r, call, offset
    cdef int kind, status = 0
    cdef double gamma_c
    z2 = np.atleast_2d(np.asarray(z, dtype=np.float64))
    rows, n = z2.shape
    flat = lambda v: None if v is None else np.broadcast_to(
        np.asarray(v, dtype=np.float64), z2.shape).ravel()
    z_arr, lam_tv, c_arr, lam1, gamma, a_arr = _prepare_weighted(
        z2.ravel(), lam_tv, flat(weights), lam1, gamma, flat(curvature))
    if n == 0:
        raise ValueError("empty signal")
    kind = {"condat": 0, "dp": 1, "dp_mcp": 2}[solver]
    if kind == 2 and a_arr is None:
        raise ValueError("dp_mcp needs gamma")
    gamma_c = gamma
    z_view = z_arr
    out = np.empty(n)
    out_view = out
    if c_arr is not None:
        c_view = c_arr
    if a_arr is not None:
        a_view = a_arr
    work = np.empty(fused_lasso_dp_work_size(n))
    work_view = work
    timer = {"thread": time.thread_time, "wall": time.perf_counter}[clock]
    # one untimed round first: it faults in the fresh buffers' pages, which a
    # caller reusing its workspace (the engine) never pays again
    for r in range(2):
        if r == 1:
            start = timer()
        with nogil:
            for call in range(rows if r == 0 else repeat):
                offset = (call % rows) * n
                if c_arr is not None:
                    c_ptr = &c_view[offset]
                if a_arr is not None:
                    a_ptr = &a_view[offset]
                if kind == 0:
                    status |= fused_lasso_1d(&z_view[offset], n, lam_tv,
                                             &out_view[0], &work_view[0])
                elif kind == 1:
                    status |= fused_lasso_dp_l1(&z_view[offset], c_ptr, n,
                                                lam_tv, lam1, &out_view[0],
                                                &work_view[0])
                else:
                    status |= fused_lasso_dp(&z_view[offset], c_ptr, n, lam_tv,
                                             lam1, gamma_c, a_ptr,
                                             &out_view[0], &work_view[0])
    elapsed = timer() - start
    if status != 0:
        raise ValueError("invalid arguments")
    return elapsed


def _condat_with_budget(y, double lam, Py_ssize_t ratio=0,
                        Py_ssize_t slack=(<Py_ssize_t>1) << 62):
    """Test hook: the direct algorithm with a step budget of ``ratio`` steps
    per position reached plus ``slack`` (default: unlimited).

    Returns ``(x, steps, handed_over)``: the solution, the number of steps
    the direct algorithm took, and whether the dynamic programme finished it.
    """
    cdef const double[::1] y_view
    cdef double[::1] out_view, work_view
    cdef Py_ssize_t n, steps, stop_at = 0
    cdef double w0 = 0.0, last = 0.0
    y_arr = _as_signal(y, "y")
    n = y_arr.shape[0]
    if n < 2 or lam <= 0.0:
        raise ValueError("need n >= 2 and lam > 0")
    out = np.empty(n)
    work = np.empty(fused_lasso_1d_work_size(n))
    y_view = y_arr
    out_view = out
    work_view = work
    with nogil:
        steps = _condat(&y_view[0], n, lam, &out_view[0], ratio, slack,
                        &stop_at, &w0, &last)
    if stop_at < n:
        # rerun through the production path so the hand-over is what's tested
        with nogil:
            _condat_then_dp(&y_view[0], n, lam, &out_view[0], &work_view[0],
                            ratio, slack)
    return out, steps, stop_at < n


def _call_c(str solver, z, double lam_tv, weights=None, double lam1=0.0,
            double gamma=0.0, curvature=None, bint inplace=False,
            bint null_work=False):
    """Test hook: call a C-level solver on raw arguments (no validation).

    Returns ``(status, out)``. ``inplace``: ``out`` is the data array itself;
    ``null_work``: pass NULL as workspace (only ``"condat"`` accepts it).
    The workspace is exactly the documented size, between guard zones that
    are checked afterwards (RuntimeError if the solver wrote outside it);
    likewise for ``out``.
    """
    cdef double[::1] z_view, out_view, work_view
    cdef const double[::1] c_view, a_view
    cdef const double* c_ptr = NULL
    cdef const double* a_ptr = NULL
    cdef double* work_ptr = NULL
    cdef double* z_ptr
    cdef double* out_ptr
    cdef Py_ssize_t n, size, guard = 64
    cdef int status
    sentinel = -1.2345e300
    z_arr = np.array(z, dtype=np.float64).ravel()
    n = z_arr.shape[0]
    if solver == "condat":
        size = fused_lasso_1d_work_size(n)
    elif solver == "dp":
        size = fused_lasso_dp_l1_work_size(n)
    elif solver == "dp_mcp":
        size = fused_lasso_dp_work_size(n)
    else:
        raise ValueError(solver)
    work = np.full(size + 2 * guard, sentinel)
    out_buffer = np.full(n + 2 * guard, sentinel)
    if inplace:
        out_buffer[guard:guard + n] = z_arr
    z_view = out_buffer[guard:] if inplace else z_arr
    out_view = out_buffer
    work_view = work
    if not null_work:
        work_ptr = &work_view[guard]
    if weights is not None:
        c_arr = np.ascontiguousarray(weights, dtype=np.float64)
        c_view = c_arr
        c_ptr = &c_view[0]
    if curvature is not None:
        a_arr = np.ascontiguousarray(curvature, dtype=np.float64)
        a_view = a_arr
        a_ptr = &a_view[0]
    z_ptr = &z_view[0]
    out_ptr = &out_view[guard]
    if solver == "condat":
        status = fused_lasso_1d(z_ptr, n, lam_tv, out_ptr, work_ptr)
    elif solver == "dp":
        status = fused_lasso_dp_l1(z_ptr, c_ptr, n, lam_tv, lam1, out_ptr,
                                   work_ptr)
    else:
        status = fused_lasso_dp(z_ptr, c_ptr, n, lam_tv, lam1, gamma, a_ptr,
                                out_ptr, work_ptr)
    for buffer, inner in ((work, size), (out_buffer, n)):
        if not (np.all(buffer[:guard] == sentinel)
                and np.all(buffer[guard + inner:] == sentinel)):
            raise RuntimeError("solver wrote outside its buffer")
    return status, out_buffer[guard:guard + n].copy()


def _dp_bounded(z, c, double lam_tv, double lam1, lb, ub, double gamma=0.0, curv=None):
    """Test hook: fused_lasso_dp_bounded on NumPy arrays (returns out, status)."""
    import numpy as np
    cdef const double[::1] z_ = np.ascontiguousarray(z, dtype=np.float64)
    cdef const double[::1] c_ = np.ascontiguousarray(c, dtype=np.float64)
    cdef const double[::1] lb_ = np.ascontiguousarray(lb, dtype=np.float64)
    cdef const double[::1] ub_ = np.ascontiguousarray(ub, dtype=np.float64)
    cdef const double[::1] a_ = None if curv is None else np.ascontiguousarray(curv, dtype=np.float64)
    cdef Py_ssize_t n = z_.shape[0]
    out = np.zeros(n)
    cdef double[::1] out_ = out
    work = np.zeros(fused_lasso_dp_work_size(n) + 8)
    cdef double[::1] w_ = work
    status = fused_lasso_dp_bounded(&z_[0], &c_[0], n, lam_tv, lam1, gamma,
                                    NULL if curv is None else &a_[0], &lb_[0], &ub_[0],
                                    &out_[0], &w_[0])
    return out, status
