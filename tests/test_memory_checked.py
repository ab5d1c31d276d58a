"""Memory that is checked, not hoped for (issue 48): a wide sparse X is read
column by column, never made dense, at fit (linear terms), in ``explain`` and
in ``stability``."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor

from firecy import FIRERegressor
from firecy.estimators._stability import decile_grid


def _wide(n, p, density, seed=0):
    rng = np.random.default_rng(seed)
    noise = sp.random(n, p - 5, density=density, format="csc", random_state=seed)
    informative = rng.normal(size=(n, 5))
    X = sp.hstack([sp.csc_matrix(informative), noise]).tocsr()
    y = informative.sum(axis=1) + rng.normal(size=n)
    return X, y


def _fire():
    return FIRERegressor(RandomForestRegressor(n_estimators=5, max_depth=3, random_state=0))


def test_sparse_equals_dense_small():
    X, y = _wide(200, 300, 0.02)
    fs, fd = _fire().fit(X, y), _fire().fit(X.toarray(), y)
    ts, td = fs.linear_terms_, fd.linear_terms_
    assert len(ts) > 5
    np.testing.assert_array_equal(ts.features, td.features)
    for a in ("lower", "upper", "center", "sd", "scale"):
        np.testing.assert_allclose(getattr(ts, a), getattr(td, a), rtol=1e-12)
    assert ts.not_offered == td.not_offered
    # one model explains the sparse rows and their dense copy alike
    es, ed = fs.explain(X[:7]), fs.explain(X[:7].toarray())
    assert list(es["term"]) == list(ed["term"])
    np.testing.assert_allclose(es["contribution"], ed["contribution"], rtol=1e-12, atol=1e-14)
    assert list(es["features"]) == list(ed["features"])
    gs, gd = decile_grid(X), decile_grid(X.toarray())
    assert len(gs) == len(gd) == 300
    for a, b in zip(gs, gd):
        np.testing.assert_array_equal(a, b)


def test_wide_sparse_never_dense():
    # 2,000 x 50,000: 800 MB dense; a handful of stored noise entries
    X, y = _wide(2000, 50_000, 1e-6)
    tracemalloc.start()
    try:
        fire = _fire().fit(X, y)
        fit_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        table = fire.explain(X[:20])
        explain_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        result = fire.stability(X, y, n_splits=1)
        stability_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(fire.linear_terms_) >= 5
    assert len(table) > 20
    assert np.all((0.0 <= result.dice) & (result.dice <= 1.0))
    for peak in (fit_peak, explain_peak, stability_peak):
        assert peak < 100e6, peak


def _friedman_fire():
    from sklearn.datasets import make_friedman1

    X, y = make_friedman1(2000, 10, random_state=0)
    fire = FIRERegressor(RandomForestRegressor(50, max_depth=3, random_state=0)).fit(X, y)
    return fire, X


def test_explain_refuses_before_allocating(monkeypatch):
    import time

    from firecy.ensembles import EnsembleTooLargeError
    from firecy.estimators._explain import ExplanationTooLargeError

    fire, X = _friedman_fire()
    n_terms = len(fire.explain(X[:1]))
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "10M")
    rows = np.broadcast_to(X[:1], (2_000_000, X.shape[1]))   # no memory of its own
    start = time.perf_counter()
    with pytest.raises(ExplanationTooLargeError) as err:
        fire.explain(rows)
    assert time.perf_counter() - start < 5.0       # refused, not built
    assert isinstance(err.value, EnsembleTooLargeError)
    msg = str(err.value)
    assert f"2,000,000 rows x {n_terms:,} terms" in msg
    assert "GiB" in msg and "fired_only=True" in msg and "chunks" in msg
    # a small call under the same budget is unchanged
    small = fire.explain(X[:20])
    monkeypatch.delenv("FIRECY_MEMORY_BUDGET")
    assert small.equals(fire.explain(X[:20]))


def test_explain_estimate_within_2x():
    from firecy.estimators._explain import check_explain_memory

    fire, X = _friedman_fire()
    n_terms = len(fire.explain(X[:1]))
    tracemalloc.start()
    try:
        table = fire.explain(X[:400])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(table) == 400 * n_terms
    estimate = check_explain_memory(400, n_terms)
    assert peak / 2 <= estimate <= 2 * peak, (estimate, peak)


def test_risk_card_sized_before_the_forest(monkeypatch):
    from firecy.ensembles import EnsembleTooLargeError
    from firecy.risk import RiskCardClassifier
    from firecy.risk import _readable_cuts

    def never(*args, **kwargs):
        raise AssertionError("the forest was grown before the size check")

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 4))
    y = (X[:, 0] > 0).astype(int)
    monkeypatch.setenv("FIRECY_MEMORY_BUDGET", "100M")
    monkeypatch.setattr(_readable_cuts.ReadableExtraTrees, "fit", never)
    with pytest.raises(EnsembleTooLargeError, match=r"20,000 rows x 5,000 trees.*n_estimators"):
        RiskCardClassifier(n_estimators=5000).fit(X, y)
