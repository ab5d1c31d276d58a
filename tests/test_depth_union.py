"""Several depth cuts at once (``RuleEnsemble.cut((1, 2))``, ``rule_depth=(1, 2)``),
checked against the single cuts and the library's own routing."""
import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

from firecy import FIREClassifier
from firecy.ensembles import rule_ensemble_from_model
from firecy.ensembles._testing import check_rules_route_rows
from firecy.rules import count_antecedents
from test_ensembles_sklearn import make_data


@pytest.fixture(scope="module", params=["forest", "boosting"])
def model_and_data(request):
    X, y = make_data("binary", n=400)
    if request.param == "forest":
        m = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0)
    else:
        m = GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0)
    return m.fit(X, y), X, y


def test_union_is_the_single_cuts_side_by_side(model_and_data):
    model, X, _ = model_and_data
    ens = rule_ensemble_from_model(model)
    union = ens.cut((1, 2), X=X)
    one, two = ens.cut(1, X=X), ens.cut(2, X=X)
    T = ens.n_trees
    assert union.n_trees == 2 * T and union.n_rules == one.n_rules + two.n_rules
    assert union.rule_depth == (1, 2) and union.uncut is ens
    np.testing.assert_array_equal(union.block_ptr[:T + 1], one.block_ptr)
    np.testing.assert_array_equal(union.block_ptr[T:] - one.n_rules, two.block_ptr)
    np.testing.assert_array_equal(union.leaf_table(X),
                                  np.hstack([one.leaf_table(X), two.leaf_table(X) + one.n_rules]))
    np.testing.assert_array_equal(union.leaf_values,
                                  np.concatenate([one.leaf_values, two.leaf_values]))
    # the rules: the single cuts' conditions, one or two of them
    assert [len(r) for r in union.rules] == [len(r) for r in one.rules] + [
        len(r) for r in two.rules]
    assert max(len(r) for r in union.rules[:one.n_rules]) == 1
    # each rule selects exactly the rows the library routes to its node
    check_rules_route_rows(union, X)
    # global node ids distinct across blocks; one split read in both cuts is
    # one antecedent
    coef = np.zeros(union.n_rules)
    coef[0] = coef[one.n_rules] = 1.0   # tree 0's first node at depth 1 and at depth 2
    assert union.node_paths[one.n_rules][0] != union.node_paths[0][0]
    assert count_antecedents(union, coef) == 2
    # the default coefficients average the two cut trees
    base = ens.baseline(X)
    np.testing.assert_allclose(union.predict_raw(X) - base,
                               ((one.predict_raw(X) - base) + (two.predict_raw(X) - base)) / 2)


def test_union_of_one_depth_and_bad_depths(model_and_data):
    model, X, _ = model_and_data
    ens = rule_ensemble_from_model(model)
    assert ens.cut([2], X=X).n_rules == ens.cut(2, X=X).n_rules
    with pytest.raises(ValueError, match="depths"):
        ens.cut((2, 1))
    with pytest.raises(ValueError, match="leaf-level"):
        ens.cut(2).cut((1, 2))


def test_fire_with_rule_depth_1_and_2():
    X, y = make_data("binary", n=500)
    forest = RandomForestClassifier(n_estimators=20, max_depth=3, random_state=0)
    fire = FIREClassifier(forest, rule_depth=(2, 1), max_rules=8, selection="validation",
                          random_state=0, linear_terms=False).fit(X, y)
    assert fire.rule_depth_ == (1, 2)
    ens = fire.ensemble_
    assert ens.n_trees == 40
    kept = np.flatnonzero(fire.coef_)
    assert kept.size and all(len(ens.rules[j]) <= 2 for j in range(ens.n_rules))
    # the log-odds, brute force: intercept + coefficient x value over the
    # rules whose conditions a row satisfies
    eta = fire.intercept_ + np.asarray(ens.baseline(X)).reshape(-1)
    for j in kept:
        eta = eta + fire.coef_[j] * ens.leaf_values[j] * ens.rule_mask(j, X)
    np.testing.assert_allclose(fire.decision_function(X), eta, rtol=1e-10, atol=1e-10)
    assert "depth <= d for d in [1, 2]" in fire.summary()


def test_rule_depth_tuples():
    from firecy.estimators._rule_depth import check_rule_depth

    assert check_rule_depth((2, 1)) == (1, 2)
    assert check_rule_depth([3]) == 3
    for bad in ((), (1, 1), (0, 2), (1, 2.5), (True, 2)):
        with pytest.raises(ValueError, match="rule_depth"):
            check_rule_depth(bad)
    # depths beyond the trees: the leaves (depth-2 trees, (1, 5) is (1, 2))
    X, y = make_data("binary", n=300)
    forest = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0)
    fire = FIREClassifier(forest, rule_depth=(1, 5), lam=0.01, random_state=0,
                          linear_terms=False).fit(X, y)
    assert fire.rule_depth_ == (1, 2)
    fire = FIREClassifier(forest, rule_depth=(2, 5), lam=0.01, random_state=0,
                          linear_terms=False).fit(X, y)
    assert fire.rule_depth_ is None and fire.ensemble_.n_trees == 5


def test_group_l0_under_a_union_warns_that_each_depth_pays():
    # the engine's groups are the design's blocks, one per (depth, tree):
    # documented, and said at fit time when group_l0 > 0 meets a union
    import warnings

    X, y = make_data("binary", n=400)
    forest = RandomForestClassifier(6, max_depth=3, random_state=0).fit(X, y)
    kw = dict(lam=0.01, max_rules=None, n_lambdas=5)
    with pytest.warns(UserWarning, match="pays group_l0 twice"):
        fire = FIREClassifier(forest, rule_depth=(1, 2), group_l0=0.05, **kw).fit(X, y)
    assert fire.ensemble_.n_trees == 2 * forest.n_estimators
    for depth, l0 in (((1, 2), 0.0), (2, 0.05), ((1, 2), [0.0])):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            FIREClassifier(forest, rule_depth=depth, group_l0=l0, **kw).fit(X, y)
        assert not any("group_l0" in str(w.message) for w in caught), (depth, l0)


def test_reports_name_the_models_trees_under_a_union():
    # one depth-2 tree cut at depths 1 and 2: two blocks, one tree; every
    # report counts one tree and labels the rules with it, while the
    # exported code still groups by block (a depth-1 rule overlaps its
    # children) and reproduces the fit
    import matplotlib

    matplotlib.use("Agg")
    from sklearn.tree import DecisionTreeRegressor

    from firecy import FIRERegressor
    from firecy.plotting import plot_rules
    from firecy.rules import rules_python, rules_report
    from firecy.rules._export import export_plan

    X, y = make_data("regression", n=400)
    tree = DecisionTreeRegressor(max_depth=2, random_state=0).fit(X, y)
    fire = FIRERegressor(tree, rule_depth=(1, 2), penalty="l1", fusion=0.0, lam=1e-4,
                         max_rules=None, linear_terms=False).fit(X, y)
    assert fire.ensemble_.n_trees == 2
    kept = np.flatnonzero(fire.coef_)
    blocks = np.searchsorted(fire.ensemble_.block_ptr, kept, side="right") - 1
    assert set(blocks.tolist()) == {0, 1}          # rules from both depths
    assert set(fire.rules_["tree"]) == {0}
    assert f"{len(kept)} rules from 1 tree," in rules_report(fire)
    source = rules_python(fire)
    assert f"{len(kept)} rules from 1 trees." in source
    assert "# tree 0, depth 1" in source and "# tree 0, depth 2" in source
    ns = {}
    exec(compile(source, "<exported rules>", "exec"), ns)
    names = export_plan(fire).feature_names
    pred = [ns["predict"](dict(zip(names, row))) for row in X[:50]]
    np.testing.assert_allclose(pred, fire.predict(X[:50]), rtol=1e-12, atol=1e-12)
    fig = plot_rules(fire)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "tree 0, depth 1" in texts and "tree 0, depth 2" in texts
    assert fig.axes[0].get_title().startswith(f"{len(kept)} rules from 1 tree,")
