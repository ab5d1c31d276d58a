"""One BLAS thread while firecy solves, safe when solves run in several threads.

``threadpoolctl.threadpool_limits`` changes a process-wide setting and, on
exit, restores the value it saw on entry.  Two solves in two threads nest
badly: the second one enters while the first holds BLAS at one thread, saves
"1", and restores it after the first one has restored the original count,
leaving BLAS at one thread for the rest of the process.  threadpoolctl 3.8
adds a rule for OpenBLAS's process-wide pool: only one "controlling" thread
may change it, the others are silently ignored, so a limit set by one worker
thread cannot be undone by another.

:func:`single_blas_thread` counts the solves in progress under a lock: the
first to enter sets the limit, the last to leave restores what was there
before the first.  Around each change it takes OpenBLAS's control and gives it
back (``clear_controlling_thread(force=True)``), so that whichever thread
comes first or last can act, and no thread keeps the control afterwards.

The libraries are found once per process (one :class:`threadpoolctl.ThreadpoolController`,
as scikit-learn keeps one): ``threadpool_limits`` scans every loaded shared
library on each call, 3-30 ms depending on what the process has imported,
which a path paid at every point.

:func:`effective_n_jobs` sizes the thread pools themselves (the estimators'
folds, the path refinement's jumps): it lives here, below the solver and the
estimators, because both use it.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import joblib
from joblib.parallel import get_active_backend

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread", "effective_n_jobs"]

_lock = threading.Lock()
_depth = 0
_limiter = None
_controller = None


def _release_openblas_control():
    """Let any thread change OpenBLAS's pool (threadpoolctl >= 3.8)."""
    try:
        from threadpoolctl import OpenBLASController
    except ImportError:  # pragma: no cover - older threadpoolctl
        return
    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


@contextmanager
def single_blas_thread():
    """Hold BLAS at one thread in the body (process-wide, reference-counted)."""
    global _depth, _limiter, _controller
    with _lock:
        if _depth == 0:
            if _controller is None:
                _controller = ThreadpoolController()
            _release_openblas_control()
            _limiter = _controller.limit(limits=1, user_api="blas")
            _release_openblas_control()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                limiter, _limiter = _limiter, None
                _release_openblas_control()
                limiter.restore_original_limits()
                _release_openblas_control()


# joblib's own local backends (threads, loky, multiprocessing): the ones whose
# default firecy may size from this machine's cores
_JOBLIB_BACKENDS = tuple(
    getattr(joblib.parallel, name) for name in
    ("ThreadingBackend", "LokyBackend", "MultiprocessingBackend")
    if hasattr(joblib.parallel, name)
)


def _omp_num_threads():
    """``OMP_NUM_THREADS`` as a positive int, or None when unset or not one."""
    try:
        n = int(os.environ.get("OMP_NUM_THREADS", "").split(",")[0])
    except ValueError:
        return None
    return n if n >= 1 else None


def effective_n_jobs(n_jobs, n_tasks):
    """The ``n_jobs`` to give joblib for ``n_tasks`` independent tasks.

    An explicit ``n_jobs`` is joblib's (``1``: serial, in the calling
    thread; ``-1``: every core). ``None`` resolves as the boosters
    (XGBoost, LightGBM) and scikit-learn's HistGradientBoosting do, to the
    cores this process may use, and never more than there are tasks:

    * inside ``joblib.parallel_config(n_jobs=k)`` (or
      ``parallel_backend(..., n_jobs=k)``): ``k``, as in scikit-learn;
    * inside a joblib worker (a nested call: cross-validating a FIRE
      estimator with ``n_jobs`` set): 1, the outer level has the cores;
    * under a backend other than joblib's own (Dask): None, the backend's
      default;
    * otherwise ``min(n_tasks, cores, OMP_NUM_THREADS)``, the cores being
      :func:`joblib.cpu_count` (the CPU affinity mask and a cgroup quota
      count) and ``OMP_NUM_THREADS`` the thread limit the user or joblib's
      process workers set (loky sets it in each worker, so nested
      parallelism does not oversubscribe the machine).

    Parameters
    ----------
    n_jobs : int or None
        The estimator's ``n_jobs``.
    n_tasks : int
        The number of tasks to run.

    Returns
    -------
    int or None
        The value for :class:`joblib.Parallel`.
    """
    if n_jobs is not None:
        return n_jobs
    backend, config_n_jobs = get_active_backend()
    if config_n_jobs is not None:
        return config_n_jobs
    if getattr(backend, "nesting_level", 0):
        return 1
    if not isinstance(backend, _JOBLIB_BACKENDS):
        return None
    cores = joblib.cpu_count()
    omp = _omp_num_threads()
    if omp is not None:
        cores = min(cores, omp)
    return max(1, min(int(n_tasks), cores))
