"""Which printed rule text is exact for which inputs (issue 37).

The default text of a float64 threshold (HistGradientBoosting, LightGBM) is
the shortest decimal that selects the leaf's rows for inputs of at most 15
significant digits; ``exact=True`` prints the threshold itself, which reads
back exactly for every input -- here every threshold and its two float64
neighbours, where the short text and the model part ways."""
import numpy as np
import pytest

from firecy.ensembles import rule_ensemble_from_model
from firecy.rules import (
    LIGHTGBM_ZERO_THRESHOLD,
    evaluate_parsed,
    format_conditions,
    library_reading,
    parse_rule,
    rule_text,
)


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.normal(size=n) * 1e3,
        rng.uniform(size=n),
        rng.poisson(0.7, size=n).astype(float),        # zeros: LightGBM's zero band
        np.round(rng.normal(size=n), 3),
    ])
    y = X[:, 0] / 1e3 + np.sin(6 * X[:, 1]) + (X[:, 2] > 0) + X[:, 3] ** 2
    return X, y + 0.1 * rng.normal(size=n)


def _probe_rows(ens, X, seed=1):
    """Training-like rows with one feature set to a threshold or one of its
    float64 neighbours, for every numeric threshold of the ensemble."""
    rng = np.random.default_rng(seed)
    values = {}
    for j in range(ens.n_rules):
        for c in ens.rules[j]:
            t = float(c.threshold)
            if np.isfinite(t):
                values.setdefault(c.feature, set()).update(
                    {t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf)})
    rows = []
    for f, vals in values.items():
        for v in sorted(vals):
            row = X[rng.integers(len(X))].copy()
            row[f] = v
            rows.append(row)
    return np.array(rows)


def _models():
    from sklearn.ensemble import HistGradientBoostingRegressor

    out = {"hgb": HistGradientBoostingRegressor(max_iter=30, random_state=0)}
    lightgbm = pytest.importorskip("lightgbm")
    out["lightgbm"] = lightgbm.LGBMRegressor(n_estimators=30, random_state=0, verbose=-1)
    return out


@pytest.fixture(scope="module", params=["hgb", "lightgbm"])
def fitted(request):
    X, y = _data()
    model = _models()[request.param].fit(X, y)
    ens = rule_ensemble_from_model(model)
    probes = _probe_rows(ens, X)
    return request.param, ens, probes


def _library_rows(ens, X):
    """Rows the library sends to each leaf: (n_rows, n_leaves) booleans."""
    table = np.asarray(ens.leaf_table(X))
    member = np.zeros((X.shape[0], ens.n_rules), dtype=bool)
    member[np.arange(X.shape[0])[:, None], table] = True
    return member


def _read_back(ens, j, X, **kw):
    names = [f"x{i}" for i in range(X.shape[1])]
    text = rule_text(ens, j, names, **kw)
    return evaluate_parsed(parse_rule(text, names), X, **library_reading(ens))


def test_exact_text_selects_the_librarys_rows_on_every_threshold_neighbour(fitted):
    kind, ens, probes = fitted
    member = _library_rows(ens, probes)
    assert ens.n_rules >= 500
    wrong = [j for j in range(ens.n_rules)
             if not np.array_equal(_read_back(ens, j, probes, exact=True), member[:, j])]
    assert wrong == []


def test_default_text_is_exact_on_15_digit_inputs_and_not_beyond(fitted):
    kind, ens, probes = fitted
    rounded = np.array([[float(f"{v:.15g}") for v in row] for row in probes])
    member = _library_rows(ens, rounded)
    wrong = [j for j in range(ens.n_rules)
             if not np.array_equal(_read_back(ens, j, rounded), member[:, j])]
    assert wrong == []
    # on the unrounded neighbours the short text does differ from the model
    # (what the docs say: exact only up to 15 significant digits)
    member = _library_rows(ens, probes)
    differ = sum(not np.array_equal(_read_back(ens, j, probes), member[:, j])
                 for j in range(ens.n_rules))
    assert differ > 0


def test_lightgbm_zero_threshold_prints_as_zero_and_exactly_on_request():
    lightgbm = pytest.importorskip("lightgbm")
    X, y = _data()
    model = lightgbm.LGBMRegressor(n_estimators=30, random_state=0, verbose=-1).fit(X, y)
    ens = rule_ensemble_from_model(model)
    zero = [(j, c) for j in range(ens.n_rules) for c in ens.rules[j]
            if float(c.threshold) == LIGHTGBM_ZERO_THRESHOLD]
    assert zero, "the count feature's split at zero"
    j, c = zero[0]
    assert format_conditions([c], ["size"] * 4) in ("size <= 0.0", "size > 0.0")
    assert "1.0000000180025095e-35" in format_conditions([c], ["size"] * 4, exact=True)
    # both read back, as LightGBM reads its input, to the leaf's rows, on
    # inputs inside LightGBM's zero band too
    probes = _probe_rows(ens, X)
    probes[:50, c.feature] = [0.0, 1e-36, -1e-36, 5e-36, -0.0] * 10
    member = _library_rows(ens, probes)
    for exact in (False, True):
        assert np.array_equal(_read_back(ens, j, probes, exact=exact), member[:, j])


def test_exact_and_precision_are_exclusive():
    from firecy.ensembles import Condition

    with pytest.raises(ValueError, match="give one of them"):
        format_conditions([Condition(0, "<=", 0.1 + 0.2, dtype="float64")], precision=3,
                          exact=True)


def test_summary_rules_table_and_json_take_exact():
    from sklearn.ensemble import HistGradientBoostingRegressor

    from firecy import FIRERegressor
    from firecy.rules import rules_json, rules_table

    X, y = _data(n=600)
    fire = FIRERegressor(HistGradientBoostingRegressor(max_iter=20, random_state=0),
                         rule_depth=None, n_lambdas=10, cv=3, random_state=0,
                         n_jobs=1, linear_terms=False).fit(X, y)
    short = rules_table(fire, as_frame=False)
    exact = rules_table(fire, as_frame=False, exact=True)
    assert [r["column"] for r in short] == [r["column"] for r in exact]
    for r in exact:   # the exact text is the ensemble's exact rule text
        assert r["rule"] == rule_text(fire.ensemble_, r["column"], fire._rule_feature_names(),
                                      exact=True)
    assert any(a["rule"] != b["rule"] for a, b in zip(short, exact))
    assert all(r["rule"] in fire.summary(exact=True) for r in exact)
    assert [r["rule"] for r in rules_json(fire, exact=True)["rules"]] == \
        [r["rule"] for r in exact]
