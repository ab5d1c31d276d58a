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
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread"]

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
