"""The one threshold formatter (firecy/ensembles/_threshold_text.py): every
printed rule, read back with :func:`firecy.rules.parse_rule` and evaluated the
way its library compares, selects the rows the library routes, next to each
threshold of real models.

float32 comparisons (scikit-learn, XGBoost) print text that is exact for every
input: probed at the threshold and one float32 and one float64 ulp either
side.  A float64 comparison (LightGBM) prints the shortest decimal exact for
every input with at most 15 significant digits: probed at the 15-digit
decimals either side of the threshold and at the float32 values either side
(no shorter text than the repr can be exact at the float64 ulps themselves:
the ``exact_text`` form is probed there).
"""
import dataclasses

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import RandomForestRegressor

from firecy.ensembles import rule_ensemble_from_model
from firecy.ensembles._threshold_text import format_threshold
from firecy.rules import evaluate_parsed, format_conditions, library_reading, parse_rule


def _data():
    X, y = make_friedman1(n_samples=400, noise=0.3, random_state=0)
    X[:, 0] = np.round(X[:, 0] * 1000) / 7   # values whose midpoints print long
    return X, y


def _model(kind, X, y):
    if kind == "sklearn":
        return RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    if kind == "xgboost":
        xgb = pytest.importorskip("xgboost")
        return xgb.XGBRegressor(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    lgb = pytest.importorskip("lightgbm")
    return lgb.LGBMRegressor(n_estimators=10, num_leaves=12, verbose=-1,
                             random_state=0).fit(X, y)


def _probes(t, float64_ulps):
    f = np.float32(t)
    vals = [t, float(f), float(np.nextafter(f, np.float32(-np.inf))),
            float(np.nextafter(f, np.float32(np.inf))),
            float(f"{t:.15g}"), float(f"{t:.14g}"), float(f"{t:.6g}")]
    for digits in (15, 14):
        step = 10.0 ** (np.floor(np.log10(abs(t))) - digits + 1) if t else 0.0
        vals += [float(f"{t - step:.{digits}g}"), float(f"{t + step:.{digits}g}")]
    if float64_ulps:
        vals += [float(np.nextafter(t, -np.inf)), float(np.nextafter(t, np.inf))]
    return vals


def _fifteen_digit(v):
    return float(f"{v:.15g}") == v


@pytest.mark.parametrize("kind", ["sklearn", "xgboost", "lightgbm"])
def test_printed_threshold_reparsed_selects_the_library_rows(kind):
    X, y = _data()
    ens = rule_ensemble_from_model(_model(kind, X, y))
    reading = library_reading(ens)
    float32 = reading["dtype"] == "float32"
    assert float32 == (kind != "lightgbm")
    conds = {c for rule in ens.rules for c in rule if not c.is_categorical
             and np.isfinite(c.threshold)}
    assert len(conds) > 30
    n_shortened = 0
    for c in conds:
        t = float(c.threshold)
        row = X[:1].copy()
        probes = np.repeat(row, 0, axis=0)
        vals = [v for v in _probes(t, float64_ulps=float32)
                if float32 or _fifteen_digit(v)]
        probes = np.repeat(row, len(vals), axis=0)
        probes[:, c.feature] = vals
        probes = np.vstack([probes, X])
        names = list(ens.feature_names)
        text = format_conditions([c], names)
        n_shortened += len(text) < len(format_conditions([c], names, simplify=False)
                                       .replace(format_threshold(c), repr(t)))
        got = evaluate_parsed(parse_rule(text, names), probes, **reading)
        np.testing.assert_array_equal(got, c.evaluate(probes), err_msg=f"{c} -> {text}")
        if not float32:
            # the exact form holds at the float64 ulps too
            exact = dataclasses.replace(c, exact_text=True)
            ulps = np.repeat(row, 3, axis=0)
            ulps[:, c.feature] = [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)]
            etext = format_conditions([exact], names)
            assert etext.endswith(repr(t))
            np.testing.assert_array_equal(
                evaluate_parsed(parse_rule(etext, names), ulps, **reading),
                c.evaluate(ulps))
    if kind == "lightgbm":
        # LightGBM's float64 midpoints of these values print long as a repr
        assert n_shortened > 0


def test_float64_text_is_the_shortest_and_lightgbm_noise_goes():
    from firecy.ensembles import Condition

    lightgbm = dict(zero_threshold=float(np.float32(1e-35)))   # its conditions
    for t, want in [(868.2000000000002, "868.2"), (27.600000000000005, "27.6"),
                    (0.1 + 0.2, "0.3"), (1.0, "1.0"), (-2.5e-7, "-2.5e-07")]:
        for op in ("<=", ">"):
            assert format_threshold(Condition(0, op, t, **lightgbm)) == want
    # elsewhere (HistGradientBoosting) a threshold may be a data value: kept
    assert format_threshold(Condition(0, "<=", 868.2000000000002)) == "868.2000000000002"
    assert format_threshold(Condition(0, "<=", 1.0)) == "1.0"
    # a threshold of full precision may be a data value (HistGradientBoosting
    # splits at them): it keeps its side, so 1/3 prints to 16 digits
    t = 1 / 3
    for op in ("<=", ">", "<", ">="):
        c = Condition(0, op, t)
        text = format_threshold(c)
        assert len(text) <= len(repr(t))
        d = float(text)
        probes = np.array([[t], [0.333333333333333], [0.333333333333334]])
        np.testing.assert_array_equal(Condition(0, op, d).evaluate(probes),
                                      c.evaluate(probes))
