"""monotone= and linear_sign= (docs/monotone.rst): every FIRE estimator's fit is
monotone as asked, checked by brute force along a grid of each constrained
feature's values (every threshold of the model and its neighbours), through
predict and through the exported Python and SQL, on data where the
unconstrained fit is not monotone (so the check can fail)."""
import math
import sqlite3
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import (HistGradientBoostingClassifier, HistGradientBoostingRegressor,
                              RandomForestRegressor)

from firecy import (FIREClassifier, FIREPoissonRegressor, FIRERegressor,
                    FIRESurvivalRegressor)
from firecy.rules import rules_json, rules_python, rules_sql

NAMES = ["x0", "x1", "x2", "x3"]
#: x0 must rise (the data dip in it), x2 must fall (the data rise with it)
MONO = {"x0": 1, "x2": -1}


def _data(n=500, seed=0, missing=True):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 4))
    x0 = X[:, 0]
    f = (2 * x0 - 3 * ((x0 > 0.4) & (x0 < 0.6)) + X[:, 1] * x0 + 1.5 * (X[:, 2] > 0.5)
         + 0.5 * X[:, 3])
    if missing:
        X[rng.uniform(size=n) < 0.1, 0] = np.nan
        X[rng.uniform(size=n) < 0.1, 2] = np.nan
        f = np.where(np.isnan(X[:, 0]), 0.7, f)
    return X, f, rng


def _target(kind, f, rng):
    if kind == "regression":
        return f + 0.1 * rng.normal(size=f.size)
    if kind == "binary":
        return (rng.uniform(size=f.size) < 1 / (1 + np.exp(-3 * (f - 1.5)))).astype(int)
    if kind == "multiclass":
        return np.digitize(f + 0.2 * rng.normal(size=f.size), [1.0, 2.0])
    if kind == "poisson":
        return rng.poisson(np.exp(0.8 * f - 1))
    time = rng.exponential(np.exp(-0.8 * f))
    return np.array(list(zip(rng.uniform(size=f.size) < 0.8, time)),
                    dtype=[("event", bool), ("time", float)])


def _estimator(kind, **params):
    # the default penalty (MCP + fusion 0.5) unless a test says otherwise
    params = dict(dict(cv=3, n_lambdas=20, random_state=0), **params)
    if kind == "regression":
        return FIRERegressor(HistGradientBoostingRegressor(max_iter=20, random_state=0),
                             **params)
    if kind in ("binary", "multiclass"):
        return FIREClassifier(HistGradientBoostingClassifier(max_iter=15, random_state=0),
                              **params)
    if kind == "poisson":
        return FIREPoissonRegressor(
            HistGradientBoostingRegressor(loss="poisson", max_iter=20, random_state=0),
            **params)
    return FIRESurvivalRegressor(RandomForestRegressor(30, max_depth=3, random_state=0),
                                 **params)


def _scores(fire, Z):
    """Each output's score on the raw scale (what monotone constrains)."""
    if isinstance(fire, FIREClassifier):
        s = fire.decision_function(Z)
    elif isinstance(fire, FIREPoissonRegressor):
        s = np.log(fire.predict(Z))
    else:
        s = fire.predict(Z)
    return s.reshape(len(Z), -1)


def _grid(fire, f, X):
    """The feature's values to walk: every threshold of the model on it and its
    neighbours (1e-9 relative), the linear term's clip bounds, the data's range."""
    cuts = {c.threshold for rule in fire.ensemble_.rules for c in rule
            if c.feature == f and not c.is_categorical}
    terms = fire.linear_terms_
    for t, g in enumerate(terms.features):
        if g == f:
            cuts |= {float(terms.lower[t]), float(terms.upper[t])}
    col = X[:, f][~np.isnan(X[:, f])]
    values = {col.min() - 1, col.max() + 1}
    for t in cuts:
        if not math.isfinite(t):       # HistGradientBoosting's +inf: missing values only
            continue
        d = 1e-9 * max(abs(t), 1.0)
        values |= {t - d, t, t + d}
    return np.array(sorted(values))


def _walk(X, f, grid, n_rows=15):
    """Rows of X (some with other features missing), each along ``grid`` in
    feature f, then one with f missing: shape (n_rows, len(grid) + 1, n_features)."""
    rows = X[:n_rows].copy()
    Z = np.repeat(rows[:, None, :], grid.size + 1, axis=1)
    Z[:, :-1, f] = grid[None, :]
    Z[:, -1, f] = np.nan
    return Z


def _worst_step(scores, sign):
    """The most negative step of ``sign * score`` along the grid, relative to
    the scores' size (the missing value, last, is not ordered: left out)."""
    s = sign * scores[:, :-1, :]
    scale = max(1.0, float(np.max(np.abs(s))))
    return float(np.min(np.diff(s, axis=1))) / scale


def _check_monotone(fire, X, constraints, via="predict"):
    worst = math.inf
    for name, sign in constraints.items():
        f = NAMES.index(name)
        Z = _walk(X, f, _grid(fire, f, X))
        flat = Z.reshape(-1, Z.shape[-1])
        if via == "predict":
            s = _scores(fire, flat)
        elif via == "python":
            s = _python_scores(fire, flat)
        else:
            s = _sql_scores(fire, flat)
        worst = min(worst, _worst_step(s.reshape(Z.shape[0], Z.shape[1], -1), sign))
    return worst


def _python_scores(fire, Z):
    namespace = {}
    exec(rules_python(fire, feature_names=NAMES), namespace)
    out = [namespace["predict"](dict(zip(NAMES, map(float, row)))) for row in Z]
    return np.asarray(out, dtype=np.float64).reshape(len(Z), -1)


def _sql_scores(fire, Z):
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE data (i INTEGER, " + ", ".join(f'"{n}" REAL' for n in NAMES)
                + ")")
    con.executemany("INSERT INTO data VALUES (?" + ", ?" * len(NAMES) + ")",
                    [(i, *[None if np.isnan(v) else float(v) for v in row])
                     for i, row in enumerate(Z)])
    expr = rules_sql(fire, feature_names=NAMES, alias="m", table="data")
    out = con.execute(f"SELECT {expr} FROM data ORDER BY i").fetchall()
    return np.asarray(out, dtype=np.float64)


def _raw_by_conditions(fire, Z):
    """The raw scores from the account alone: the intercept, every kept rule's
    contribution where all its conditions hold (each Condition read on its
    own: a missing value goes where the rule's split sends it), every linear
    term (0 for a missing x)."""
    model = fire.model_
    out = np.tile(model.constant, (len(Z), 1))
    for t in model.terms:
        if t.kind == "rule":
            hold = np.ones(len(Z), dtype=bool)
            for c in t.conditions:
                hold &= c.evaluate(Z)
            out[:, t.output] += np.where(hold, t.contribution, 0.0)
        else:
            x = Z[:, t.features[0]]
            out[:, t.output] += np.where(np.isnan(x), 0.0,
                                         t.weight * (np.clip(x, t.lower, t.upper) - t.center))
    return out


KINDS = ["regression", "binary", "multiclass", "poisson", "cox"]


def _fit(kind, seed=0, **params):
    X, f, rng = _data(seed=seed)
    y = _target(kind, f, rng)
    return _estimator(kind, **params).fit(X, y), X


@pytest.mark.parametrize("kind", KINDS)
def test_unconstrained_fit_is_not_monotone(kind):
    """The data make the check able to fail: without constraints the fit
    dips in x0 or rises in x2."""
    fire, X = _fit(kind, monotone={})
    assert not np.any(fire.monotone_)
    assert _check_monotone(fire, X, MONO) < -1e-3


@pytest.mark.parametrize("linear_terms", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_monotone_by_brute_force(kind, linear_terms):
    fire, X = _fit(kind, monotone=MONO, linear_terms=linear_terms)
    assert fire.n_rules_ > 0
    assert fire.monotone_.tolist() == [1, 0, -1, 0]
    for via in ("predict", "python", "sql"):
        assert _check_monotone(fire, X, MONO, via) >= -1e-12, via
    # a row with a constrained feature missing gets the rules that send a
    # missing value their way, and 0 from its linear term (docs/monotone.rst)
    for name in MONO:
        Z = _walk(X, NAMES.index(name), _grid(fire, NAMES.index(name), X))
        flat = Z.reshape(-1, 4)
        np.testing.assert_allclose(_scores(fire, flat), _raw_by_conditions(fire, flat),
                                   rtol=1e-10, atol=1e-10)
    _check_kept_terms(fire, MONO)


def _check_kept_terms(fire, constraints):
    """Every kept rule is one-sided in each constrained feature it reads, with
    the contribution's sign that asks; every kept slope has its sign."""
    signs = {NAMES.index(n): s for n, s in constraints.items()}
    for t in fire.model_.terms:
        if t.kind == "linear":
            s = signs.get(t.features[0])
            assert s is None or s * t.weight >= 0
            continue
        for f, s in signs.items():
            ops = {c.op for c in t.conditions if c.feature == f}
            if not ops:
                continue
            assert ops <= {">", ">="} or ops <= {"<", "<="}, t.text
            side = 1 if ops <= {">", ">="} else -1
            assert side * s * t.contribution > 0, t.text


def test_stable_fit_is_monotone():
    fire, X = _fit("regression", monotone=MONO, stable=True)
    assert fire.n_rules_ > 0
    back = pickle.loads(pickle.dumps(fire))
    np.testing.assert_array_equal(back.predict(X), fire.predict(X))
    assert type(back.penalty_) is type(fire.penalty_)
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)
    # the pool holds no rule that monotone holds at zero (an interval in a
    # constrained feature, or two asking for opposite signs)
    for j in fire.stable_columns_:
        need = set()
        for f, sign in ((0, 1), (2, -1)):
            ops = {c.op for c in fire.ensemble_.rules[j] if c.feature == f}
            assert not ({">", ">="} & ops and {"<", "<="} & ops), fire.ensemble_.rule_text(j)
            if ops:
                need.add(sign if ops <= {">", ">="} else -sign)
        assert len(need) <= 1, fire.ensemble_.rule_text(j)


@pytest.mark.parametrize("kind", ["regression", "multiclass"])
def test_monotone_without_fusion(kind):
    """The separable penalty (MCP alone) under the constraints; the other
    tests fit the default (MCP + fusion 0.5)."""
    fire, X = _fit(kind, monotone=MONO, fusion=0.0)
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)


def test_linear_sign_signs_the_slopes_only():
    X, f, rng = _data(missing=False)
    y = f - 2 * X[:, 3] + 0.1 * rng.normal(size=f.size)       # x3's slope is negative
    free = _estimator("regression", monotone={}).fit(X, y)
    t3 = list(free.linear_terms_.features).index(3)
    assert free.linear_coef_[t3] < 0
    fire = _estimator("regression", monotone={}, linear_sign={"x3": 1}).fit(X, y)
    assert fire.linear_coef_[t3] >= 0
    assert fire.linear_sign_.tolist() == [0, 0, 0, 1]
    assert not np.any(fire.monotone_)
    assert fire.model_.linear_sign == {"x3": 1} and fire.model_.monotone == {}
    assert "linear terms signed: x3 (+)" in fire.summary()


def test_outputs_say_the_constraints():
    fire, X = _fit("regression", monotone={"x2": -1, 0: 1}, linear_sign={"x1": 1})
    text = "monotone: x0 (+), x2 (-); linear terms signed: x1 (+)"
    assert fire.model_.constraints_text() == text
    assert fire.model_.monotone == {"x0": 1, "x2": -1}
    assert text in fire.summary()
    doc = rules_json(fire)
    assert doc["monotone"] == {"x0": 1, "x2": -1} and doc["linear_sign"] == {"x1": 1}
    assert text in rules_python(fire)
    assert text in rules_sql(fire)
    from firecy.report import _sections

    html = str(_sections.summary_section(fire, X, NAMES))
    assert "constraints" in html and "x0 (+)" in html
    free, _ = _fit("regression", monotone={})
    assert free.model_.constraints_text() == "" and rules_json(free)["monotone"] == {}
    assert "monotone" not in free.summary()


@pytest.mark.parametrize("form", [{"x0": 1, "x2": -1}, {0: 1, 2: -1}, [1, 0, -1, 0],
                                  (1, 0, -1, 0), np.array([1, 0, -1, 0]), "(1,0,-1,0)"])
def test_forms(form):
    from firecy.estimators._monotone import check_constraints

    class Data:
        feature_names = NAMES

    est = FIRERegressor(monotone=form)
    est.n_features_in_ = 4
    mono, lin = check_constraints(est, Data)
    assert mono.tolist() == [1, 0, -1, 0] and lin.tolist() == [0, 0, 0, 0]


def test_clone_and_get_params():
    for cls in (FIRERegressor, FIREClassifier, FIREPoissonRegressor, FIRESurvivalRegressor):
        est = cls(monotone={"x0": 1}, linear_sign=[0, 1, 0, 0])
        params = clone(est).get_params()
        assert params["monotone"] == {"x0": 1} and params["linear_sign"] == [0, 1, 0, 0]
        assert cls().get_params()["monotone"] is None


@pytest.mark.parametrize("params, match", [
    (dict(monotone={"nope": 1}), "unknown feature 'nope'"),
    (dict(monotone={7: 1}), "feature index 7"),
    (dict(monotone={"x0": 2}), r"monotone\['x0'\] must be -1, 0 or \+1"),
    (dict(monotone={"x0": True}), "must be -1, 0 or"),
    (dict(monotone=[1, 0]), "2 entries, X has 4 features"),
    (dict(monotone="(1,a)"), "string like"),
    (dict(monotone=5), "must be a dict"),
    (dict(linear_sign={"x1": -3}), r"linear_sign\['x1'\]"),
    (dict(monotone={"x0": 1}, linear_sign={"x0": -1}), "disagrees with monotone on 'x0'"),
])
def test_bad_input(params, match):
    X, f, rng = _data(n=100)
    est = _estimator("regression", **params)
    with pytest.raises((ValueError, TypeError), match=match):
        est.fit(X, f)
    # validated at fit, not in __init__ (clone and get_params take anything)
    clone(est)


def test_categorical_feature_is_refused():
    pd = pytest.importorskip("pandas")
    X, f, rng = _data(n=300, missing=False)
    df = pd.DataFrame(X, columns=NAMES)
    df["x3"] = pd.Categorical(np.where(X[:, 3] > 0.5, "a", "b"))
    model = HistGradientBoostingRegressor(max_iter=5, categorical_features="from_dtype")
    est = FIRERegressor(model, monotone={"x3": 1}, fusion=0.0, cv=3)
    with pytest.raises(ValueError, match="'x3'.*order is not defined"):
        est.fit(df, f)


def _booster_fit(library):
    X, f, rng = _data(missing=False)
    y = f + 0.1 * rng.normal(size=f.size)
    if library == "xgboost":
        xgb = pytest.importorskip("xgboost")
        model = xgb.XGBRegressor(n_estimators=20, max_depth=3, monotone_constraints="(1,0,-1,0)")
    elif library == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        model = lgb.LGBMRegressor(n_estimators=20, num_leaves=8, verbose=-1,
                                  monotone_constraints=[1, 0, -1, 0])
    elif library == "catboost":
        cb = pytest.importorskip("catboost")
        model = cb.CatBoostRegressor(iterations=20, depth=3, verbose=0, random_seed=0,
                                     allow_writing_files=False,
                                     monotone_constraints=[1, 0, -1, 0])
    else:
        model = HistGradientBoostingRegressor(max_iter=20, monotonic_cst=[1, 0, -1, 0])
    return model.fit(X, y), X, y


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "catboost", "sklearn"])
def test_model_constraints_are_the_default(library):
    model, X, y = _booster_fit(library)
    fire = FIRERegressor(model, fusion=0.0, cv=3, n_lambdas=20, random_state=0).fit(X, y)
    assert fire.monotone_.tolist() == [1, 0, -1, 0]
    # named as the rules name the features (LightGBM's Column_0, ...)
    names = fire.ensemble_.feature_names
    assert fire.model_.monotone == {names[0]: 1, names[2]: -1}
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)
    off = FIRERegressor(model, fusion=0.0, cv=3, n_lambdas=20, random_state=0,
                        monotone={}).fit(X, y)
    assert not np.any(off.monotone_) and off.model_.monotone == {}
    assert type(off.penalty_).__name__ != "SignConstrained"


def test_rule_signs_by_brute_force():
    """Each rule's required sign from its conditions equals what walking each
    constrained feature through the rule's indicator shows: rising (the
    constraint's sign), falling (the opposite), a bump or two features
    asking for opposite signs (held at zero)."""
    from sklearn.ensemble import ExtraTreesRegressor

    from firecy.ensembles import rule_ensemble_from_model
    from firecy.estimators._monotone import HELD, rule_signs

    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(300, 3))
    forest = ExtraTreesRegressor(20, max_depth=3, random_state=0).fit(X, X.sum(axis=1))
    ens = rule_ensemble_from_model(forest)
    monotone = np.array([1, -1, 0], dtype=np.int8)
    signs = rule_signs(ens, monotone)
    grid = np.linspace(-0.01, 1.01, 400)
    for j in range(ens.n_rules):
        inside = np.ones(len(X), dtype=bool)
        for c in ens.rules[j]:
            inside &= c.evaluate(X)
        # rows the rule holds on (every leaf has some): the walk crosses its bounds
        others = X[inside][:20]
        need = set()
        for f in (0, 1):
            rising = falling = True
            for row in others:
                Z = np.repeat(row[None], grid.size, axis=0)
                Z[:, f] = grid
                hold = np.ones(grid.size, dtype=bool)
                for c in ens.rules[j]:
                    hold &= c.evaluate(Z)
                step = np.diff(hold.astype(int))
                rising &= bool(np.all(step >= 0))
                falling &= bool(np.all(step <= 0))
            if rising and falling:
                continue                       # the rule does not read f
            need.add(HELD if not (rising or falling) else (1 if rising else -1) * monotone[f])
        want = HELD if HELD in need or len(need) > 1 else (need.pop() if need else 0)
        assert signs[j] == want, (j, ens.rule_text(j))
    assert {1, -1, HELD} <= set(signs.tolist())


def test_wrapped_lam_reaches_the_inner_penalties():
    """The path sets ``lam`` on the outer penalty: it must reach Blockwise's
    two penalties and group-L0's constrained inner one (a typed C field
    skipped Blockwise's property, and every path point stayed at zero)."""
    from firecy.penalties import MCP, BlockwisePenalty, GroupL0, SignConstrained

    inner = BlockwisePenalty(MCP(0.1, 1.1), MCP(0.1, 1.1), 1)
    pen = SignConstrained(inner, np.zeros(3), np.full(3, np.inf))
    pen.lam = 0.05
    assert inner.rules.lam == inner.linear.lam == 0.05
    group = GroupL0(SignConstrained(MCP(0.1, 1.1), np.zeros(2), np.full(2, np.inf)), 0.5)
    group.lam = 0.03
    assert group.inner.lam == group.inner.inner.lam == 0.03


def test_monotone_with_group_l0():
    fire, X = _fit("regression", monotone=MONO, group_l0=0.01, linear_terms=False,
                   fusion=0.0)
    assert fire.n_rules_ > 0
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)


def _bounded_least_squares(M, y, cols, lower, upper):
    """min over the weights of ``cols`` (and an intercept) of the squared
    loss / (2 n) under the bounds (scipy's bounded least squares)."""
    from scipy.optimize import lsq_linear

    A = np.column_stack([M[:, cols], np.ones(len(y))])
    lo, hi = np.append(lower[cols], -np.inf), np.append(upper[cols], np.inf)
    keep = ~((lo == 0) & (hi == 0))
    res = lsq_linear(A[:, keep], y, bounds=(lo[keep], hi[keep]), tol=1e-12, max_iter=5000)
    return 0.5 * np.mean((A[:, keep] @ res.x - y) ** 2)


def test_monotone_with_group_l0_and_linear_terms(monkeypatch):
    """With linear terms under the bounds, group_l0 = 0.01 keeps no rule, and
    that is the optimum: all the trees together, unpenalised, lower the
    bounded linear fit's squared loss by less than the price of one tree, so
    at the selected point every fit with a rule costs more than the fit
    chosen (which has none). Below that decrease (group_l0 = 1e-4) rules
    enter."""
    import firecy.estimators._selection as selection

    calls = []
    path = selection.fire_path

    def spy(design, y, penalty, **kwargs):
        out = path(design, y, penalty, **kwargs)
        # the solver's units (the estimator rescales y by a power of two and
        # lam0 with it, _scaling.py), before the caller unscales the path
        calls.append((design, np.asarray(y, dtype=float), penalty, out.lambdas.copy(),
                      out.objectives.copy(), out.coefs.copy()))
        return out

    monkeypatch.setattr(selection, "fire_path", spy)
    fire, X = _fit("regression", monotone=MONO, group_l0=0.01, linear_terms=True, fusion=0.0)
    design, y, pen, lambdas, objectives, coefs = next(
        c for c in calls if c[0].n_samples == len(X))
    lam0 = pen.rules.lam0
    M = design.tocsc().toarray()
    # the linear part's bounds cover the rule and the linear columns
    lower, upper = pen.linear.lower, pen.linear.upper
    n_rule_cols = int(design.block_ptr[pen.n_rule_blocks])
    linear = np.arange(n_rule_cols, M.shape[1])
    with_rules = _bounded_least_squares(M, y, np.arange(M.shape[1]), lower, upper)
    without = _bounded_least_squares(M, y, linear, lower, upper)
    assert 0 < without - with_rules < lam0 / 2
    # any weights with a rule cost at least the loss with every rule plus
    # one lam0: a path point whose (rule-free) objective is below that is
    # the global optimum; the selected point is one of them
    certified = objectives < with_rules + lam0
    k = int(np.argmin(np.abs(fire.path_.lambdas - fire.lambda_)))
    assert fire.path_.lambdas.size == lambdas.size and certified[k]
    assert not np.any(coefs[certified][:, :n_rule_cols])
    assert fire.n_rules_ == 0
    assert _check_monotone(fire, X, MONO) >= -1e-12

    fire, X = _fit("regression", monotone=MONO, group_l0=1e-4, linear_terms=True, fusion=0.0)
    assert fire.n_rules_ > 0
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)


def test_multiclass_group_l0_linear_terms_with_an_absent_class():
    """A class without weight leaves the multinomial solve: the penalty
    (BlockwisePenalty of group-L0 rules and linear terms, both bounded) is
    restricted to the other classes' blocks, which are not a prefix of the
    design; every bound must stay with its column (the fit was not monotone,
    -1.06 on this grid, when the bounds stayed by number)."""
    X, f, rng = _data()
    y = _target("multiclass", f, rng)
    weight = np.where(y == 0, 0.0, 1.0)
    est = _estimator("multiclass", monotone=MONO, group_l0=1e-3, linear_terms=True,
                     fusion=0.0)
    with pytest.warns(UserWarning, match="class 0 has no row of positive sample weight"):
        fire = est.fit(X, y, sample_weight=weight)
    assert type(fire.penalty_).__name__ == "BlockwisePenalty"
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)


def test_dask_fit_keeps_the_signed_weights():
    """On a sample, the all-rows refit is unconstrained: it is skipped, with a
    warning, and the fit stays monotone."""
    da = pytest.importorskip("dask.array")
    from firecy.dask import fit_dask

    X, f, rng = _data(n=600)
    y = _target("regression", f, rng)
    est = _estimator("regression", monotone=MONO)
    with pytest.warns(UserWarning, match="monotone or linear_sign keeps the weights"):
        fit_dask(est, da.from_array(X, chunks=200), da.from_array(y, chunks=200),
                 sample_size=400)
    assert est.dask_info_["sampled"] and not est.dask_info_["refit"]
    assert _check_monotone(est, X, MONO) >= -1e-12


def test_monotone_with_confirmatory_terms():
    """Confirmatory terms (kept unpenalised, their own signs) beside the
    monotone rules: the bounds go to the rules and linear terms only."""
    fire, X = _fit("regression", monotone=MONO, confirmatory={"x1": 1})
    assert _check_monotone(fire, X, MONO) >= -1e-12
    _check_kept_terms(fire, MONO)
    assert np.all(np.asarray(fire.confirmatory_coef_) >= 0)
    back = pickle.loads(pickle.dumps(fire))
    np.testing.assert_array_equal(back.predict(X), fire.predict(X))


def test_confirmatory_terms_on_a_monotone_feature_follow_the_constraint():
    """A confirmatory term the user demands on a constrained feature takes the
    constraint's sign: the data rise in x2 (constrained to fall), so the
    unconstrained confirmatory rule ``x2 > 0.5`` takes a positive weight
    (asserted, so the test can fail) and the constrained one none."""
    free, X = _fit("regression", monotone={}, confirmatory=["x2 > 0.5", "x2"])
    assert np.asarray(free.confirmatory_coef_).ravel()[0] > 0.2
    fire, X = _fit("regression", monotone=MONO, confirmatory=["x2 > 0.5", "x2"])
    assert np.all(np.asarray(fire.confirmatory_coef_) <= 0)
    assert fire.confirmatory_.signs.tolist() == [-1, -1]
    assert _check_monotone(fire, X, MONO) >= -1e-12


@pytest.mark.parametrize("confirmatory, message", [
    (["0.4 < x0 <= 0.6"], "bounds the monotone feature 'x0' on both sides"),
    (["x0 > 0.5 and x2 > 0.5"], "ask for opposite signs"),
    ({"x2 > 0.5": 1}, r"given the sign \+1, but monotone asks for -1"),
    ({"x0": -1}, r"given the sign -1, but monotone asks for \+1"),
])
def test_confirmatory_terms_that_cannot_be_monotone_are_refused(confirmatory, message):
    with pytest.raises(ValueError, match=message):
        _fit("regression", monotone=MONO, confirmatory=confirmatory)


def test_command_line_monotone(tmp_path, capsys):
    """``firecy extract --monotone x0=+1 --monotone x2=-1``: the JSON's rules
    are one-sided in those columns with the asked signs, and the printed
    output names the constraints; a bad form is one clear line."""
    pytest.importorskip("pandas")
    import json

    from firecy.cli import main

    X, f, rng = _data(n=400, missing=False)
    y = _target("regression", f, rng)
    path = tmp_path / "data.csv"
    with open(path, "w") as fh:
        fh.write(",".join(NAMES) + ",y\n")
        for row, t in zip(X, y):
            fh.write(",".join(repr(float(v)) for v in row) + f",{float(t)!r}\n")
    out = tmp_path / "rules.json"
    args = ["extract", str(path), "--target", "y", "--n-trees", "40", "--n-lambdas", "15",
            "--n-jobs", "1", "--no-progress", "--seed", "0", "--no-linear-terms",
            "--output", str(out)]
    assert main(args + ["--monotone", "x0=+1", "--monotone", "x2=-1"]) == 0
    printed = capsys.readouterr().out
    assert "monotone: x0 (+), x2 (-)" in printed
    doc = json.loads(out.read_text())
    from firecy.rules import parse_rule

    rules = [r for r in doc["rules"] if r.get("kind", "rule") == "rule"]
    assert rules
    checked = 0
    for r in rules:
        for c in parse_rule(r["rule"], NAMES):
            if NAMES[c.feature] in MONO:
                sign = MONO[NAMES[c.feature]] * (1 if c.op in (">", ">=") else -1)
                assert sign * r["contribution"] >= 0, r
                checked += 1
    assert checked
    assert main(args + ["--monotone", "x0=up"]) != 0
    assert "--monotone 'x0=up'" in capsys.readouterr().err
