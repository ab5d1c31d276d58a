"""Stability (issue 39): the measure, the stability column, stable=True."""
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.utils import check_random_state

from firecy import FIREClassifier, FIRERegressor
from firecy.ensembles import Condition
from firecy.estimators._stability import decile_grid, dice, kept_signatures, rule_signature
from firecy.rules import evaluate_parsed, library_reading, parse_rule, rule_text

FAST = dict(n_lambdas=15, cv=3, random_state=0, n_jobs=1)


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X, y


def test_dice_by_hand():
    assert dice({"a", "b"}, {"b", "c"}) == 0.5
    assert dice({"a"}, {"a"}) == 1.0 and dice({"a"}, {"b"}) == 0.0
    assert dice(set(), set()) == 1.0 and dice({"a"}, set()) == 0.0


def test_signature_maps_thresholds_to_the_nearest_decile():
    X = np.arange(100.0).reshape(-1, 1)
    grid = decile_grid(X)
    np.testing.assert_allclose(grid[0], np.quantile(X[:, 0], np.linspace(0.1, 1.0, 10)))
    near = rule_signature([Condition(0, "<=", 40.1)], grid)
    assert near == rule_signature([Condition(0, "<", 39.0)], grid)   # same side, same decile
    assert near != rule_signature([Condition(0, ">", 40.1)], grid)
    assert near != rule_signature([Condition(0, "<=", 60.0)], grid)


def test_the_stability_column_is_a_count_of_the_half_fits(diabetes):
    X, y = diabetes
    rf = RandomForestRegressor(20, max_depth=2, random_state=0)
    # rules only: diabetes is near-linear, and its default fit keeps lines
    fire = FIRERegressor(rf, max_rules=5, linear_terms=False, **FAST).fit(X, y)
    result = fire.stability(X, y, n_splits=2, random_state=7)
    # brute force: the same splits, every half fitted, its rules counted
    grid, rng, n = decile_grid(X), check_random_state(7), len(y)
    counts, scores = {}, []
    for _ in range(2):
        order = rng.permutation(n)
        sets = []
        for rows in (order[: n // 2], order[n // 2: 2 * (n // 2)]):
            half = clone(fire).fit(X[rows], y[rows])
            sets.append(set(kept_signatures(half, grid).values()))
            for key in sets[-1]:
                counts[key] = counts.get(key, 0) + 1
        scores.append(dice(*sets))
    np.testing.assert_allclose(result.dice, scores)
    table = fire.rules_
    for j, key in kept_signatures(fire, grid).items():
        expected = counts.get(key, 0) / 4
        assert table.loc[table["column"] == j, "stability"].item() == expected
    assert "stability" in fire.summary()


def test_stability_is_the_same_on_any_number_of_jobs_and_shows_its_progress(diabetes, capsys):
    X, y = diabetes
    rf = RandomForestRegressor(10, max_depth=2, random_state=0)
    fire = FIRERegressor(rf, max_rules=5, linear_terms=False, **FAST).fit(X, y)
    one = fire.stability(X, y, n_splits=2, random_state=3, n_jobs=1, verbose=False)
    assert capsys.readouterr().err == ""
    two = fire.stability(X, y, n_splits=2, random_state=3, n_jobs=2, verbose=True)
    np.testing.assert_array_equal(one.dice, two.dice)
    np.testing.assert_array_equal(one.n_rules, two.n_rules)
    assert one.frequency == two.frequency
    err = capsys.readouterr().err.splitlines()
    # redirected (not a terminal): one line to start, one per half fit
    assert err[0] == "stability: 4 half fits"
    assert [line.split(",")[0] for line in err[1:]] == [
        f"stability: half fit {k} of 4" for k in range(1, 5)]
    assert "left" in err[1] and err[-1].endswith("done")
    with pytest.raises(ValueError, match="verbose"):
        fire.stability(X, y, n_splits=1, verbose="loud")


def test_stable_rules_read_back_from_their_text(diabetes):
    X, y = diabetes
    fire = FIRERegressor(stable=True, max_rules=6, **FAST).fit(X, y)
    ens = fire.ensemble_
    assert all(len(ens.rules[j]) <= 2 for j in np.flatnonzero(fire.coef_))
    names = [f"x{i}" for i in range(X.shape[1])]
    for j in np.flatnonzero(fire.coef_):
        parsed = parse_rule(rule_text(ens, j, names), names)
        np.testing.assert_array_equal(evaluate_parsed(parsed, X, **library_reading(ens)),
                                      ens.rule_mask(j, X))


def test_stable_with_missing_values(diabetes):
    # the pool's rules route missing values as the trees do, and read back
    X, y = diabetes
    X = X.copy()
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.15] = np.nan
    fire = FIRERegressor(stable=True, max_rules=6, linear_terms=False, **FAST).fit(X, y)
    assert fire.n_rules_ > 0
    ens = fire.ensemble_
    names = [f"x{i}" for i in range(X.shape[1])]
    for j in np.flatnonzero(fire.coef_):
        parsed = parse_rule(rule_text(ens, j, names, show_missing=True), names)
        np.testing.assert_array_equal(evaluate_parsed(parsed, X, **library_reading(ens)),
                                      ens.rule_mask(j, X))
    np.testing.assert_allclose(fire.predict(X), fire.predict(X.copy()))


def test_stable_pool_is_distinct_rows_and_frequency_ranked(diabetes):
    X, y = diabetes
    fire = FIRERegressor(stable=True, max_rules=8, **FAST).fit(X, y)
    ens = fire.ensemble_
    masks = [ens.rule_mask(j, X) for j in fire.stable_columns_]
    for a in range(len(masks)):
        for b in range(a + 1, len(masks)):
            assert not np.array_equal(masks[a], masks[b])
            assert not np.array_equal(masks[a], ~masks[b])
    freq = fire._rule_stability[fire.stable_columns_]
    assert np.all(np.diff(freq) <= 0) and np.all((freq > 0) & (freq <= 1))
    # a kept rule stands for its copies in other trees: their columns are equal
    from firecy.ensembles._equal_rules import equal_rule_groups

    groups = equal_rule_groups(ens, range(ens.n_rules))
    M = ens.design(X)
    kept = set(np.flatnonzero(fire.coef_).tolist())
    for g in groups:
        if kept & set(g):
            for j in g[1:]:
                np.testing.assert_array_equal((M[:, g[0]] != 0).toarray(),
                                              (M[:, j] != 0).toarray())


def test_stable_l1_fit_is_the_frequency_weighted_lasso_on_the_pool(diabetes):
    # docs/stability.rst: with penalty="l1" and a given lam, stable=True
    # minimises 1/(2n) ||y - b - P w||^2 + lam sum_j (f_max / f_j) |w_j| over
    # the pool's columns P (rule indicator times leaf value), f_j each rule's
    # frequency: scikit-learn's Lasso on the columns scaled by f_j / f_max
    from sklearn.linear_model import Lasso

    X, y = diabetes
    y = (y - y.mean()) / y.std()
    lam = 0.01
    est = FIRERegressor(stable=True, penalty="l1", fusion=0.0, lam=lam, linear_terms=False,
                        max_rules=8, tol=1e-12, **FAST).fit(X, y)
    ens, cols = est.ensemble_, est.stable_columns_
    freq = est._rule_stability[cols]
    P = np.column_stack([ens.rule_mask(j, X) * float(np.ravel(ens.leaf_values)[j])
                         for j in cols])
    scale = freq / freq.max()
    assert scale.min() < 0.9          # the weights differ: the check can fail
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=10**6).fit(P * scale, y)
    np.testing.assert_allclose(est.predict(X), ref.predict(P * scale), rtol=1e-6, atol=1e-6)

    def objective(b, w):
        return 0.5 * np.mean((y - b - P @ w) ** 2) + lam * np.sum(np.abs(w) / scale)

    w = np.ravel(est.coef_)[cols]
    np.testing.assert_allclose(objective(est.intercept_, w),
                               objective(ref.intercept_, ref.coef_ * scale), rtol=1e-7)
    # one penalty for every rule is a different problem here
    plain = Lasso(alpha=lam, tol=1e-14, max_iter=10**6).fit(P, y)
    assert not np.allclose(plain.predict(P), est.predict(X), atol=1e-4)


def test_stable_is_reproducible_on_any_thread_count(diabetes):
    X, y = diabetes
    one = FIRERegressor(stable=True, max_rules=6, n_lambdas=15, cv=3, random_state=3,
                        n_jobs=1).fit(X, y)
    two = clone(one).set_params(n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.coef_, two.coef_)
    np.testing.assert_array_equal(one.path_.stability, two.path_.stability)


def test_path_stability_and_its_picture(diabetes):
    pytest.importorskip("matplotlib")
    X, y = diabetes
    fire = FIRERegressor(stable=True, max_rules=6, **FAST).fit(X, y)
    s = fire.path_.stability
    assert s.shape == fire.path_.lambdas.shape
    ok = np.isfinite(s)
    assert ok.any() and np.all((s[ok] >= 0) & (s[ok] <= 1))
    from firecy.plotting import plot_path

    fig = plot_path(fire.path_, budget=6)
    assert len(fig.axes) == 2 and "stability" in fig.axes[1].get_ylabel()
    # a default fit has no stability on its path and one axis
    plain = FIRERegressor(max_rules=6, **FAST).fit(X, y)
    assert plain.path_.stability.size == 0 and len(plot_path(plain.path_).axes) == 1


def test_stable_classifier_and_bad_values():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    clf = FIREClassifier(stable=True, max_rules=5, linear_terms=False, **FAST).fit(X, y)
    assert 0 < clf.n_rules_ <= 5 and "stability" in clf.rules_.columns
    with pytest.raises(TypeError, match="stable must be True or False"):
        FIRERegressor(stable="yes").fit(X, y)


@pytest.mark.parametrize("linear_terms", [False, True])
def test_stable_multiclass_classifier_scores_are_its_kept_terms(linear_terms):
    # each pool rule speaks for its tree's class: the fit's class scores are
    # rebuilt from the kept rules' masks and values and the kept slopes alone
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = FIREClassifier(stable=True, linear_terms=linear_terms, **FAST).fit(X, y)
    ens = clf.ensemble_
    block = np.searchsorted(np.asarray(ens.block_ptr), np.arange(len(ens.leaf_values)),
                            side="right") - 1
    klass = np.asarray(ens.tree_class)[block]
    assert set(klass[clf.stable_columns_]) <= {0, 1, 2}
    coef = np.ravel(clf.coef_)
    scores = np.tile(np.asarray(clf.intercept_, dtype=float), (len(X), 1))
    for j in np.flatnonzero(coef):
        scores[:, klass[j]] += coef[j] * ens.rule_mask(j, X) * float(np.ravel(ens.leaf_values)[j])
    if clf.linear_terms_.features.size:
        scores += clf.linear_terms_.design(X) @ (
            np.asarray(clf.linear_coef_).reshape(3, -1).T / clf.linear_terms_.scale[:, None])
    proba = np.exp(scores - scores.max(axis=1, keepdims=True))
    np.testing.assert_allclose(proba / proba.sum(axis=1, keepdims=True), clf.predict_proba(X),
                               rtol=1e-8, atol=1e-10)
    # well above one class's third (the rules-only fit keeps one or two rules
    # of 500 depth-2 trees here; with the lines it is near perfect)
    assert clf.score(X, y) > (0.9 if linear_terms else 0.6)


def test_stable_is_documented_once():
    # the classifier's entry is the regressor's, and it says what the pool does
    from firecy.estimators._shared_doc import parameter_entry

    entry = parameter_entry("stable")
    assert entry in FIREClassifier.__doc__ and entry in FIRERegressor.__doc__
    assert "{stable}" not in FIREClassifier.__doc__
    assert "frequency falls" in entry and "n_lambdas" not in entry


def test_cli_stable_writes_each_rules_stability(tmp_path):
    pd = pytest.importorskip("pandas")
    from firecy.cli import main

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    path = tmp_path / "d.csv"
    X.assign(target=y).to_csv(path, index=False)
    out = tmp_path / "rules.json"
    assert main(["extract", str(path), "--target", "target", "--stable", "--no-linear-terms",
                 "--max-rules", "5",
                 "--n-lambdas", "10", "--cv", "3", "--output", str(out), "--n-jobs", "1",
                 "--no-progress"]) == 0
    doc = json.loads(out.read_text())
    assert doc["rules"] and all(0 < r["stability"] <= 1 for r in doc["rules"])
    assert pd is not None


def test_stable_with_linear_terms_sums_and_keeps_them_apart(diabetes):
    # the linear terms follow the pool's columns: the fitted weights, the
    # explanation and the prediction agree, and the path's stability is a Dice
    X, y = diabetes
    fire = FIRERegressor(stable=True, max_rules=8, **FAST).fit(X, y)
    assert fire.n_terms_ > fire.n_rules_ >= 0 and np.count_nonzero(fire.linear_coef_) > 0
    table = fire.explain(X[:25])
    np.testing.assert_allclose(table.groupby("row")["contribution"].sum().to_numpy(),
                               fire.predict(X[:25]), rtol=1e-10)
    rules_only = FIRERegressor(stable=True, max_rules=8, linear_terms=False, **FAST).fit(X, y)
    assert rules_only.n_terms_ == rules_only.n_rules_ > 0
    assert np.all(np.isfinite(fire.path_.stability) <= 1)


def test_stable_pool_counts_a_split_and_its_complement_once(diabetes):
    # x <= t and x > t come from one split: the pool holds it once, on its
    # lower side, with the fraction of the trees that hold either side
    import dataclasses

    from firecy.rules import simplify_conditions
    from firecy.rules._inputs import model_tree_of

    X, y = diabetes
    # seed 2: counted apart, the pool takes an upper side x > t (checked)
    fire = FIRERegressor(stable=True, max_rules=8, **dict(FAST, random_state=2)).fit(X, y)
    ens = fire.ensemble_
    R = len(ens.leaf_values)
    trees = model_tree_of(ens, np.arange(R))
    rules = [frozenset(simplify_conditions(ens.rules[k])) for k in range(R)]
    flip = {"<=": ">", ">": "<=", "<": ">=", ">=": "<"}
    n_single = 0
    for j in fire.stable_columns_:
        conds = rules[j]
        sides = {conds}
        if len(conds) == 1:
            (c,) = conds
            upper = frozenset({dataclasses.replace(c, op=flip[c.op], missing=not c.missing)})
            assert c.op in ("<=", "<") or upper not in rules
            sides.add(upper)
            n_single += 1
        holders = {int(trees[k]) for k in range(R) if rules[k] in sides}
        assert fire._rule_stability[j] == pytest.approx(len(holders) / len(set(trees.tolist())))
    assert n_single > 0


def test_stable_pool_writes_a_pair_beside_its_parent_as_the_lower_child(diabetes):
    # A and x > t beside A is A minus (A and x <= t): the pool writes it as
    # its node's lower child, so two samples name it alike; the parent (its
    # split written on its lower side) and the pair are then both in the pool
    from firecy.rules import simplify_conditions

    X, y = diabetes
    # seed 0, 500 trees, 14 rules: written apart, the pool keeps an upper
    # child beside its parent (checked)
    fire = FIRERegressor(stable=True, max_rules=14, **FAST)
    fire._fit_options = {"n_trees": 500}
    fire.fit(X, y)
    assert fire.estimator_.n_estimators == 500
    ens = fire.ensemble_

    def lower(conds):
        if len(conds) == 1 and conds[0].op in (">", ">="):
            return lower(simplify_conditions([_flipped(conds[0])]))
        return frozenset(conds)

    pool = {lower(simplify_conditions(ens.rules[j])) for j in fire.stable_columns_}
    pairs = 0
    for j in fire.stable_columns_:
        path = list(ens.rules[j])
        if len(path) == 2 and lower(simplify_conditions(path[:1])) in pool:
            pairs += 1
            assert path[-1].op in ("<=", "<")
    assert pairs > 0


def _flipped(c):
    import dataclasses

    flip = {"<=": ">", ">": "<=", "<": ">=", ">=": "<"}
    return dataclasses.replace(c, op=flip[c.op], missing=not c.missing)


def _few_values_data(seed=0, n=400):
    # x0 takes five values, 1 for 60 % of the rows and 3 for 20 %: its
    # deciles are 1 (six times), 3, 3, 5, 5, so x0 <= 2.5 and x0 <= 3.5 are
    # both nearest the decile 3, yet differ by every row with x0 = 3
    rng = check_random_state(seed)
    x0 = rng.choice([1.0, 2.0, 3.0, 4.0, 5.0], size=n, p=[0.6, 0.05, 0.2, 0.05, 0.1])
    X = np.column_stack([x0, rng.normal(size=(n, 2))])
    # steps at 2.5 and 3.5 of about equal gain: the trees' roots take either
    y = 2.0 * (x0 >= 3) + 3.0 * (x0 >= 4) + 0.5 * rng.normal(size=n)
    return X, y


def test_stable_pool_compares_a_feature_of_few_values_threshold_by_threshold():
    X, y = _few_values_data()
    grid = decile_grid(X)
    low, high = Condition(0, "<=", 2.5), Condition(0, "<=", 3.5)
    assert rule_signature([low], grid) == rule_signature([high], grid)

    def x0_thresholds(fire):
        ens = fire.ensemble_
        return sorted(float(c.threshold) for j in fire.stable_columns_
                      for c in [ens.rules[j][0]] if len(ens.rules[j]) == 1 and c.feature == 0)

    fire = FIRERegressor(stable=True, max_rules=6, **FAST).fit(X, y)
    # at most ten values: each threshold is its own rule
    assert x0_thresholds(fire) == [2.5, 3.5]
    merged = FIRERegressor(stable=True, max_rules=6, **FAST)
    merged._fit_options = {"discrete_limit": 0}
    merged.fit(X, y)
    assert len(x0_thresholds(merged)) == 1


def test_max_rules_auto_is_ten_for_a_kept_pool_and_fourteen_otherwise(diabetes):
    X, y = diabetes
    plain = FIRERegressor(**FAST).fit(X, y)
    assert plain.max_rules == "auto" and plain.max_rules_ == 14
    assert plain.n_terms_ <= 14
    # stable with linear terms: the pool is kept, and is SIRUS's ten rules
    fire = FIRERegressor(stable=True, **FAST).fit(X, y)
    assert fire.max_rules_ == 10 and len(fire.stable_columns_) == 10 == fire.n_rules_
    # rules only: FIRE selects in a penalised pool of 14
    rules_only = FIRERegressor(stable=True, linear_terms=False, **FAST).fit(X, y)
    assert rules_only.max_rules_ == 14 and len(rules_only.stable_columns_) == 14
    assert FIRERegressor(stable=True, max_rules=6, **FAST).fit(X, y).max_rules_ == 6
    with pytest.raises(ValueError, match="max_rules must be 'auto'"):
        FIRERegressor(max_rules="all").fit(X, y)
