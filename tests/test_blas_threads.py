"""Solves in several threads leave BLAS with the thread count it had before.

Each solve holds BLAS at one thread; threadpoolctl's limit is process-wide and
restores on exit what it saw on entry, so overlapping solves must share one
reference-counted limit (``firecy._threads.single_blas_thread``).
"""
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from firecy._threads import single_blas_thread
from firecy.penalties import L1
from firecy.solver import solve


# the BLAS libraries the tests watch: those that honour a count of two threads
# (a single-threaded build, such as the OpenBLAS some cvxpy solvers load,
# stays at one whatever is asked, and made every test here skip in the suite)
_watched = None


def blas_threads():
    return sorted(i["num_threads"] for i in threadpool_info()
                  if i["user_api"] == "blas" and (_watched is None or i["filepath"] in _watched))


def _release_control():
    # threadpoolctl >= 3.8 lets one thread at a time change OpenBLAS's
    # process-wide pool; the main thread must not keep that control here
    try:
        from threadpoolctl import OpenBLASController
        OpenBLASController.clear_controlling_thread(force=True)
    except (ImportError, AttributeError):
        pass


@pytest.fixture
def two_blas_threads():
    """BLAS at two threads (whatever the environment says), restored after."""
    global _watched
    if not blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    limiter = threadpool_limits(limits=2, user_api="blas")
    _release_control()
    try:
        _watched = {i["filepath"] for i in threadpool_info()
                    if i["user_api"] == "blas" and i["num_threads"] == 2}
        if not _watched:
            pytest.skip("no BLAS library here can be set to two threads")
        yield
    finally:
        _watched = None
        _release_control()
        limiter.restore_original_limits()
        _release_control()


def test_overlapping_limits_exiting_out_of_order(two_blas_threads):
    # A enters, B enters, A leaves, B leaves: the order that leaves BLAS at one
    # thread when each holder saves and restores on its own.
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    inside = {}

    def a():
        with single_blas_thread():
            inside["a"] = blas_threads()
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b():
        a_in.wait(5)
        with single_blas_thread():
            b_in.set()
            a_out.wait(5)
            inside["b"] = blas_threads()   # A has left: B still holds the limit

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert set(inside["a"]) == {1} and set(inside["b"]) == {1}
    assert set(blas_threads()) == {2}


def test_limit_applies_while_another_thread_holds_threadpoolctl_control(two_blas_threads):
    # a user's own `with threadpool_limits(...)` in the main thread makes it
    # OpenBLAS's controlling thread: a solve in a worker must still run on
    # one BLAS thread, and give back the user's setting
    seen = []
    with threadpool_limits(limits=2, user_api="blas"):
        t = threading.Thread(target=lambda: seen.append(_inside()))
        t.start()
        t.join(10)
        assert set(blas_threads()) == {2}
    assert seen and set(seen[0]) == {1}
    assert set(blas_threads()) == {2}


def _inside():
    with single_blas_thread():
        return blas_threads()


def test_limit_is_restored_after_an_exception(two_blas_threads):
    with pytest.raises(RuntimeError):
        with single_blas_thread():
            assert set(blas_threads()) == {1}
            raise RuntimeError("inside")
    assert set(blas_threads()) == {2}


def test_concurrent_solves_restore_blas_threads(two_blas_threads, rf_design):
    table, values, block_ptr, X, y, _ = rf_design
    import scipy.sparse as sp

    n = table.shape[0]
    M = sp.csc_matrix((values[table.ravel()], (np.repeat(np.arange(n), table.shape[1]),
                                                table.ravel())), shape=(n, values.size))
    lam_max = np.max(np.abs(M.T @ (y - y.mean()))) / n
    reference = solve(M, y, L1(0.05 * lam_max), block_ptr=block_ptr).coef
    barrier = threading.Barrier(4)
    results, errors = [], []

    def worker(k):
        try:
            barrier.wait(10)
            for _ in range(3):
                results.append(solve(M, y, L1(0.05 * lam_max), block_ptr=block_ptr).coef)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(results) == 12
    for coef in results:   # same answer in every thread (one BLAS thread each)
        np.testing.assert_array_equal(coef, reference)
    assert set(blas_threads()) == {2}


def test_libraries_are_found_once_per_process(monkeypatch, two_blas_threads):
    # threadpoolctl scans every loaded library when a controller is built
    # (3-30 ms); a path solves once per point, so the scan must not repeat
    import threadpoolctl

    import firecy._threads as threads

    built = []
    real_init = threadpoolctl.ThreadpoolController.__init__

    def counting_init(self, *args, **kwargs):
        built.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", counting_init)
    monkeypatch.setattr(threads, "_controller", None, raising=False)
    X = np.random.default_rng(0).standard_normal((50, 4))
    y = X[:, 0]
    for _ in range(3):
        solve(X, y, L1(0.01), block_ptr=np.arange(5))
    by_firecy = len(built)
    assert by_firecy == 1
    assert set(blas_threads()) == {2}    # (threadpool_info builds its own)
