"""benchmarks/archive/any_model_pooled.py and any_model_cvpick.py (issue 22, session
35): the pooled intervals are scipy's t intervals of the mean log ratio, a
fit given twice is refused, and the inner-CV pick takes the fit of lower
``cv_error`` (the default on a tie) and charges both fits' CPU."""
import importlib.util
import pathlib
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

_DIR = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "archive"


def _load(name):
    sys.path.insert(0, str(_DIR))
    try:
        spec = importlib.util.spec_from_file_location(f"{name}_under_test", _DIR / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(_DIR))
    return mod


def _rows(seeds, ratio_of, cv_of=None, cpu=1.0):
    rows = []
    for s in seeds:
        rows.append(dict(dataset="d", seed=s, model="rf3x500", test_error=2.0,
                         fit_cpu_s=1.0, model_error=0.0, cv_error=np.nan, antecedents=30,
                         rules=14, depth_used="leaves", rule_depth="None"))
        rows.append(dict(dataset="d", seed=s, model="xgb", test_error=2.0 * ratio_of(s),
                         fit_cpu_s=cpu, model_error=float(s),
                         cv_error=np.nan if cv_of is None else cv_of(s), antecedents=30,
                         rules=14, depth_used="3", rule_depth="auto"))
    return pd.DataFrame(rows)


def test_pooled_interval_is_scipys_t_interval(tmp_path):
    mod = _load("any_model_pooled")
    rng = np.random.default_rng(0)
    r = np.exp(rng.normal(0.08, 0.1, size=12))
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _rows(range(6), lambda s: r[s]).to_csv(a, index=False)
    _rows(range(6, 12), lambda s: r[s]).to_csv(b, index=False)
    t = mod.pooled([(str(a), "xgb"), (str(b), "xgb")])
    x = np.log(r)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    row = t.iloc[0]
    assert row.seeds == 12
    np.testing.assert_allclose([row.geo_mean, row.ci_low, row.ci_high],
                               np.exp([x.mean(), lo, hi]), rtol=1e-12)
    assert row.vs_110 == ("above" if np.exp(lo) > 1.1 else
                          "below" if np.exp(hi) < 1.1 else "straddles")
    assert row.runs_above == int((r > 1.1).sum())


def test_pooled_refuses_a_fit_given_twice(tmp_path):
    mod = _load("any_model_pooled")
    a = tmp_path / "a.csv"
    _rows(range(3), lambda s: 1.0).to_csv(a, index=False)
    with pytest.raises(ValueError, match="given twice"):
        mod.pooled([(str(a), "xgb"), (str(a), "xgb")])


def test_cvpick_takes_the_lower_cv_error_and_both_fits_cpu():
    mod = _load("any_model_cvpick")
    seeds = range(4)
    # the default wins seeds 0 and 2 (seed 2 a tie), the union seeds 1 and 3
    default = _rows(seeds, lambda s: 1.0, cv_of=lambda s: 5.0, cpu=1.0)
    union = _rows(seeds, lambda s: 1.5 + s, cv_of=lambda s: {0: 6.0, 1: 4.0, 2: 5.0,
                                                             3: 1.0}[s], cpu=2.5)
    variant, picked = mod.cvpick(default, union)
    p = picked.set_index("seed").sort_index()
    assert list(p.picked) == ["auto", "d234", "auto", "d234"]
    np.testing.assert_allclose(p.test_error, [2.0, 5.0, 2.0, 9.0])
    np.testing.assert_allclose(p.fit_cpu_s, 3.5)
    # the reference rows are the default run's, untouched
    ref = variant[variant.model == "rf3x500"]
    assert len(ref) == 4 and (ref.fit_cpu_s == 1.0).all()


def test_cvpick_refuses_runs_of_different_boosters():
    mod = _load("any_model_cvpick")
    default = _rows(range(2), lambda s: 1.0, cv_of=lambda s: 1.0)
    other = default.copy()
    other.loc[other.model == "xgb", "model_error"] += 1.0
    with pytest.raises(ValueError, match="different boosters"):
        mod.cvpick(default, other)
