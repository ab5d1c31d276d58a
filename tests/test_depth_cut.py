"""Rules at a chosen depth (``RuleEnsemble.cut``), checked against each
library's own routing and tree structure."""
import numpy as np
import pytest
from sklearn.ensemble import (
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import Lasso

from firecy.ensembles import rule_ensemble_from_model
from firecy.ensembles._depth import choose_rule_depth, column_weights, tree_depths
from firecy.ensembles._testing import check_rules_route_rows
from test_ensembles_sklearn import make_data, with_missing


def _ancestor(parent, depth_of, node, d):
    while depth_of[node] > d:
        node = parent[node]
    return node


def _check_cut_nodes(cut, X, expected_node):
    """Every row lands in the column of ``expected_node(t, i)`` (the library's)."""
    table = cut.leaf_table(X)
    for t in range(cut.n_trees):
        got = cut._leaf_nodes[table[:, t]]
        want = np.array([expected_node(t, i) for i in range(table.shape[0])])
        np.testing.assert_array_equal(got, want, err_msg=f"block {t}")


def _check_order_and_blocks(cut, ens, d):
    """Blocks kept; columns are runs of the uncut leaves, in depth-first order."""
    assert cut.n_trees == ens.n_trees
    np.testing.assert_array_equal(cut.tree_scale, ens.tree_scale)
    cmap = cut.column_map
    assert cmap.shape == (ens.n_rules,) and np.all(np.diff(cmap) >= 0)
    # each uncut block maps onto exactly the cut block of the same tree
    np.testing.assert_array_equal(cmap[ens.block_ptr[:-1]], cut.block_ptr[:-1])
    np.testing.assert_array_equal(cmap[ens.block_ptr[1:] - 1] + 1, cut.block_ptr[1:])
    for j in range(ens.n_rules):
        leaf_rule, cut_rule = ens.rules[j], cut.rules[int(cmap[j])]
        # the cut rule is the prefix of its leaves' paths, of length min(depth, d)
        assert len(cut_rule) == min(len(leaf_rule), d)
        assert leaf_rule[:len(cut_rule)] == cut_rule
    assert max(len(cut.rules[j]) for j in range(cut.n_rules)) <= d
    # a column that is one leaf keeps its library leaf id; a node has none
    single = np.bincount(cmap, minlength=cut.n_rules) == 1
    first = np.searchsorted(cmap, np.arange(cut.n_rules))
    is_leaf = single & np.array([len(cut.rules[j]) == len(ens.rules[int(f)])
                         for j, f in enumerate(first)])
    np.testing.assert_array_equal(
        cut.leaf_node_ids, np.where(is_leaf, ens.leaf_node_ids[first], -1))
    assert len(cut.node_paths) == cut.n_rules and all(
        len(cut.node_paths[j]) == len(cut.rules[j]) for j in range(cut.n_rules))


# -- scikit-learn: apply + the tree's child arrays ---------------------------
def _sklearn_parents(tree):
    n = tree.node_count
    parent = np.full(n, -1)
    depth = np.zeros(n, dtype=int)
    for node in range(n):  # sklearn numbers children after their parent
        for child in (tree.children_left[node], tree.children_right[node]):
            if child >= 0:
                parent[child] = node
                depth[child] = depth[node] + 1
    return parent, depth


@pytest.mark.parametrize("d", [1, 2, 4])
def test_sklearn_forest_cut_routes_like_decision_path(d):
    X, y = make_data("regression")
    X = with_missing(X, np.random.default_rng(0))  # sklearn trees route NaN
    rf = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    cut = ens.cut(d, X=X)
    assert cut.rule_depth == d and cut.uncut is ens
    leaves = rf.apply(X)
    structure = [_sklearn_parents(e.tree_) for e in rf.estimators_]

    def expected(t, i):
        parent, depth = structure[t]
        return _ancestor(parent, depth, leaves[i, t], d)

    _check_cut_nodes(cut, X, expected)
    # and decision_path agrees: the row passes through its column's node
    path = rf.decision_path(X)[0].tocsr()
    offsets = rf.decision_path(X)[1]
    table = cut.leaf_table(X)
    for t in range(cut.n_trees):
        nodes = cut._leaf_nodes[table[:, t]] + offsets[t]
        assert np.all(path[np.arange(X.shape[0]), nodes].A1 == 1)
    _check_order_and_blocks(cut, ens, d)
    check_rules_route_rows(cut, X)


def test_cut_values_are_the_training_mean_of_the_leaf_values():
    X, y = make_data("regression")
    rng = np.random.default_rng(3)
    sw = rng.uniform(0.5, 2.0, X.shape[0])
    rf = RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    cut = ens.cut(2, X=X, sample_weight=sw)
    leaf_pred = np.stack([e.predict(X) for e in rf.estimators_], axis=1)  # the library's
    table = cut.leaf_table(X)
    for j in range(cut.n_rules):
        t = int(cut.rule_tree[j])
        rows = table[:, t] == j
        want = np.average(leaf_pred[rows, t], weights=sw[rows])
        assert cut.leaf_values[j] == pytest.approx(want, rel=1e-12)
    # with the default weights, the raw prediction is the cut trees' average
    cut_pred = np.stack([cut.leaf_values[table[:, t]] for t in range(cut.n_trees)], 1)
    np.testing.assert_allclose(cut.predict_raw(X), cut_pred.mean(axis=1), rtol=1e-12)
    # any weights: the design and predict_raw agree (exactness of the cut)
    w = rng.normal(size=cut.n_rules)
    np.testing.assert_allclose(cut.predict_raw(X, w), cut.design(X) @ w, rtol=1e-12)


def test_full_depth_cut_is_the_uncut_ensemble():
    X, y = make_data("regression")
    rf = RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    cut = ens.cut(int(tree_depths(ens).max()), X=X)
    assert cut.n_rules == ens.n_rules
    np.testing.assert_array_equal(cut.block_ptr, ens.block_ptr)
    np.testing.assert_array_equal(cut.leaf_values, ens.leaf_values)
    np.testing.assert_array_equal(cut.leaf_node_ids, ens.leaf_node_ids)
    np.testing.assert_array_equal(cut.leaf_table(X), ens.leaf_table(X))
    np.testing.assert_allclose(cut.predict_raw(X), rf.predict(X), rtol=1e-12)
    assert [cut.rule_text(j) for j in range(cut.n_rules)] == [
        ens.rule_text(j) for j in range(ens.n_rules)]


def test_multiclass_forest_cut_keeps_class_blocks():
    X, y = make_data("multiclass")
    rf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    cut = ens.cut(2, X=X)
    np.testing.assert_array_equal(cut.tree_class, ens.tree_class)
    _check_order_and_blocks(cut, ens, 2)
    check_rules_route_rows(cut, X)
    # the K class blocks of a tree have the same nodes
    K = ens.n_outputs
    sizes = cut.tree_sizes.reshape(-1, K)
    assert np.all(sizes == sizes[:, :1])


def test_histgradientboosting_with_missing_and_categories():
    X, y = make_data("regression", categorical=(5,))
    X = with_missing(X, np.random.default_rng(0))
    hgb = HistGradientBoostingRegressor(max_iter=5, max_leaf_nodes=15,
                                        categorical_features=[5], random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(hgb)
    for d in (1, 2, 3):
        cut = ens.cut(d, X=X)
        _check_order_and_blocks(cut, ens, d)
        check_rules_route_rows(cut, X)


# -- XGBoost: pred_leaf + the tree dump ---------------------------------------
@pytest.mark.parametrize("name", ["reg_depthwise", "reg_lossguide", "categorical_partition",
                                  "booster_categorical", "clf_binary"])
@pytest.mark.parametrize("d", [1, 2])
def test_xgboost_cut_routes_like_pred_leaf_and_dump(name, d):
    xgb = pytest.importorskip("xgboost")
    from test_ensembles_xgboost import fitted

    model, ens, X, X_new = fitted(name)
    booster = model if isinstance(model, xgb.Booster) else model.get_booster()
    frame = booster.trees_to_dataframe()
    structure = {}
    for t, df in frame.groupby("Tree"):
        parent = {}
        for _, row in df.iterrows():
            for child in (row["Yes"], row["No"]):
                if isinstance(child, str) and child:
                    parent[int(child.split("-")[1])] = int(row["Node"])
        depth = {}
        for node in df["Node"]:
            k, n = 0, int(node)
            while n in parent:
                n, k = parent[n], k + 1
            depth[int(node)] = k
        structure[int(t)] = (parent, depth)
    cut = ens.cut(d, X=X)
    for data in (X, X_new):
        dm = xgb.DMatrix(data, feature_types=booster.feature_types, enable_categorical=True)
        leaves = booster.predict(dm, pred_leaf=True).astype(int).reshape(data.shape[0], -1)

        def expected(t, i):
            src = int(ens._src_col[t])
            parent, depth = structure[src]
            return _ancestor(parent, depth, leaves[i, src], d)

        _check_cut_nodes(cut, data, expected)
        check_rules_route_rows(cut, data)
    _check_order_and_blocks(cut, ens, d)


# -- LightGBM: pred_leaf + dump_model -----------------------------------------
def _lightgbm_paths(tree_structure):
    """leaf_index -> split_index path; and the number of internal nodes."""
    paths, n_internal = {}, 0
    stack = [(tree_structure, [])]
    while stack:
        node, path = stack.pop()
        if "leaf_index" in node or "split_index" not in node:
            paths[int(node.get("leaf_index", 0))] = path
        else:
            n_internal += 1
            for key in ("left_child", "right_child"):
                stack.append((node[key], path + [int(node["split_index"])]))
    return paths, n_internal


@pytest.mark.parametrize("name", ["reg_nan", "reg_missing_zero", "categorical",
                                  "booster_categorical_poisson", "rf_binary"])
@pytest.mark.parametrize("d", [1, 2])
def test_lightgbm_cut_routes_like_pred_leaf_and_dump(name, d):
    lgb = pytest.importorskip("lightgbm")
    from test_ensembles_lightgbm import fitted

    model, ens, X, X_new = fitted(name)
    booster = model if isinstance(model, lgb.Booster) else model.booster_
    trees = [_lightgbm_paths(info["tree_structure"])
             for info in booster.dump_model()["tree_info"]]
    cut = ens.cut(d, X=X)
    for data in (X, X_new):
        leaves = np.asarray(booster.predict(data, pred_leaf=True)).reshape(data.shape[0], -1)

        def expected(t, i):
            src = int(ens._src_col[t])
            paths, n_internal = trees[src]
            path = paths[int(leaves[i, src])]
            return path[d] if len(path) > d else n_internal + int(leaves[i, src])

        _check_cut_nodes(cut, data, expected)
        check_rules_route_rows(cut, data)
    _check_order_and_blocks(cut, ens, d)


# -- FIRE on a cut ensemble ----------------------------------------------------
def test_fire_l1_on_cut_matches_sklearn_lasso_on_explicit_cut_design():
    from firecy import FIRERegressor

    X, y = make_data("regression")
    rf = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    lam = 0.05
    fire = FIRERegressor(rf, rule_depth=2, penalty="l1", fusion=0.0, lam=lam,
                         max_rules=None, tol=1e-12, linear_terms=False).fit(X, y)
    assert fire.rule_depth_ == 2
    # the explicit design, built independently from sklearn's decision_path
    indicator, offsets = rf.decision_path(X)
    indicator = indicator.toarray()
    cols, values = [], []
    for t, est in enumerate(rf.estimators_):
        parent, depth = _sklearn_parents(est.tree_)
        pred = est.predict(X)
        for node in range(est.tree_.node_count):
            is_cut_leaf = depth[node] == 2 or (depth[node] < 2
                                               and est.tree_.children_left[node] < 0)
            if is_cut_leaf:
                rows = indicator[:, offsets[t] + node] == 1
                cols.append(rows)
                values.append(pred[rows].mean())
    M = np.stack(cols, axis=1) * np.array(values)
    assert M.shape[1] == fire.ensemble_.n_rules
    ref = Lasso(alpha=lam, tol=1e-14, max_iter=10**6).fit(M, y)

    def objective(coef, b):
        r = y - b - M @ coef
        return 0.5 * np.mean(r * r) + lam * np.abs(coef).sum()

    # columns may come in another order: compare objectives and predictions
    f_ref = objective(ref.coef_, ref.intercept_)
    f = fire.ensemble_.design(X) @ fire.coef_ + fire.intercept_
    assert objective(np.zeros(M.shape[1]), 0.0) > f_ref  # not the trivial solution
    r = y - f
    f_fire = 0.5 * np.mean(r * r) + lam * np.abs(fire.coef_).sum()
    assert f_fire == pytest.approx(f_ref, rel=1e-7)
    np.testing.assert_allclose(f, ref.predict(M), rtol=1e-4, atol=1e-4 * np.std(y))


def test_auto_depth_rule():
    X, y = make_data("regression", n=2000)
    rf = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    ens = rule_ensemble_from_model(rf)
    rows = column_weights(ens.leaf_table(X), None, ens.n_rules)
    d, med = choose_rule_depth(ens, rows, 2000)
    assert d == 3 and med >= 20        # max depth 3; 2000/8 rows per node
    d, med = choose_rule_depth(ens, rows, 200_000)  # needs 2000 rows per node
    assert d == 1 and med < 2000       # none qualifies: depth 1
    shallow = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    sh = rule_ensemble_from_model(shallow)
    d, _ = choose_rule_depth(sh, column_weights(sh.leaf_table(X), None, sh.n_rules), 2000)
    assert d == 2


def test_rule_depth_validation():
    from firecy import FIRERegressor

    X, y = make_data("regression", n=50)
    for bad in (0, -1, 2.5, "deep", True):
        with pytest.raises(ValueError, match="rule_depth"):
            FIRERegressor(rule_depth=bad, n_lambdas=3, cv=2, linear_terms=False).fit(X, y)


def test_node_depths_and_ancestors_match_sklearn():
    """The layout's node depths are scikit-learn's (``compute_node_depths``,
    root 1), and the compiled walk up finds each leaf's ancestor at a depth by
    scikit-learn's own parent links."""
    from sklearn.datasets import make_friedman1

    from firecy.ensembles._depth import _ancestors, node_depths

    X, y = make_friedman1(n_samples=400, random_state=0)
    rf = RandomForestRegressor(n_estimators=4, random_state=0).fit(X, y)  # fully grown
    ens = rule_ensemble_from_model(rf)
    for d in (0, 1, 3, 50):
        anc = _ancestors(ens, d)
        for t, (blk, est) in enumerate(zip(ens._blocks, rf.estimators_)):
            tree = est.tree_
            np.testing.assert_array_equal(node_depths(blk.tree), tree.compute_node_depths() - 1)
            parent = np.full(tree.node_count, -1)
            for side in (tree.children_left, tree.children_right):
                inner = side >= 0
                parent[side[inner]] = np.flatnonzero(inner)
            depth = tree.compute_node_depths() - 1
            lo, hi = ens.block_ptr[t], ens.block_ptr[t + 1]
            for leaf, a in zip(ens._leaf_nodes[lo:hi], anc[lo:hi]):
                node = leaf
                while depth[node] > d:
                    node = parent[node]
                assert a == node
