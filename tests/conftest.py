import numpy as np
import pytest


def forest_design(n_samples=400, n_trees=20, max_depth=3, seed=0):
    """A tree-layout design built straight from scikit-learn's tree arrays.

    Deliberately independent of firecy.ensembles: leaves are numbered in
    node-id order here, which is a valid (if not left-to-right) block layout.
    """
    from sklearn.datasets import make_friedman1
    from sklearn.ensemble import RandomForestRegressor

    X, y = make_friedman1(n_samples=n_samples, noise=0.5, random_state=seed)
    rf = RandomForestRegressor(
        n_estimators=n_trees, max_depth=max_depth, random_state=seed
    ).fit(X, y)
    node_of_row = rf.apply(X)
    table = np.empty(node_of_row.shape, dtype=np.int32)
    values, block_ptr = [], [0]
    for t, est in enumerate(rf.estimators_):
        tree = est.tree_
        leaves = np.flatnonzero(tree.children_left == -1)
        column_of_node = np.full(tree.node_count, -1)
        column_of_node[leaves] = block_ptr[-1] + np.arange(leaves.size)
        table[:, t] = column_of_node[node_of_row[:, t]]
        values.append(tree.value[leaves, 0, 0])
        block_ptr.append(block_ptr[-1] + leaves.size)
    return table, np.concatenate(values), np.array(block_ptr), X, y, rf


@pytest.fixture(scope="session")
def rf_design():
    return forest_design()
