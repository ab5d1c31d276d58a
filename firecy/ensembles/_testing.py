"""Consistency checks of a :class:`RuleEnsemble` against its library.

Used by firecy's test-suite, and usable on any fitted model: each check raises
``AssertionError`` with a description of the first discrepancy.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "check_rule_ensemble",
    "check_predict_raw",
    "check_rules_route_rows",
    "check_contiguous_subtrees",
    "check_design",
    "check_structure",
]


def check_structure(ens):
    """Shapes, dtypes and internal consistency of the attributes."""
    T, R, K = ens.n_trees, ens.n_rules, ens.n_outputs
    bp = ens.block_ptr
    assert bp.dtype == np.int64 and bp.shape == (T + 1,) and bp[0] == 0 and bp[-1] == R
    assert np.all(np.diff(bp) >= 1), "a block without leaves"
    assert ens.leaf_values.dtype == np.float64 and ens.leaf_values.shape == (R,)
    assert ens.tree_scale.dtype == np.float64 and ens.tree_scale.shape == (T,)
    assert ens.tree_class.dtype == np.int64 and ens.tree_class.shape == (T,)
    assert ens.tree_class.min() >= 0 and ens.tree_class.max() < K
    assert ens.leaf_node_ids.dtype == np.int64 and ens.leaf_node_ids.shape == (R,)
    assert len(ens.rules) == R and len(ens.node_paths) == R
    assert len(ens.feature_names) == ens.n_features_in_
    for j in range(R):
        assert len(ens.rules[j]) == len(ens.node_paths[j])
        assert ens.node_paths[j].dtype == np.int64
        for c in ens.rules[j]:
            assert 0 <= c.feature < ens.n_features_in_
    # Library leaf ids are unique within a block.
    for t in range(T):
        ids = ens.leaf_node_ids[bp[t]:bp[t + 1]]
        assert np.unique(ids).size == ids.size, f"duplicate leaf ids in block {t}"


def check_contiguous_subtrees(ens):
    """The leaves under every internal node form one unbroken run of columns,
    and consecutive leaves diverge left-then-right (depth-first order)."""
    cols_of = {}
    for j, path in enumerate(ens.node_paths):
        for node in path.tolist():
            cols_of.setdefault(node, []).append(j)
    rule_tree = ens.rule_tree
    for node, cols in cols_of.items():
        cols = np.asarray(cols)
        assert cols.size >= 2, f"internal node {node} has a single leaf below it"
        assert np.all(np.diff(cols) == 1), (
            f"leaves under internal node {node} are not contiguous: {cols.tolist()}"
        )
        assert np.unique(rule_tree[cols]).size == 1, f"node {node} spans blocks"
    # Node paths are distinct across blocks.
    blocks_of = {}
    for j, path in enumerate(ens.node_paths):
        for node in path.tolist():
            blocks_of.setdefault(node, set()).add(int(rule_tree[j]))
    assert all(len(b) == 1 for b in blocks_of.values())
    # Depth-first: where two consecutive leaves of a block part, the first
    # took the node's left condition and the second its right condition.
    blocks = getattr(ens._adapter, "blocks", None)
    if blocks is None:
        return
    for t in range(ens.n_trees):
        tree = blocks[t].tree
        for j in range(int(ens.block_ptr[t]), int(ens.block_ptr[t + 1]) - 1):
            a, b = ens.node_paths[j], ens.node_paths[j + 1]
            d = 0
            while d < min(a.size, b.size) and a[d] == b[d]:
                d += 1
            assert d > 0 or (a.size == 0 and b.size == 0)
            shared = d - 1  # position of the last shared internal node
            local = int(a[shared] - ens.node_offset[t])
            assert ens.rules[j][shared] is tree.condition(local, True)
            assert ens.rules[j + 1][shared] is tree.condition(local, False)


def check_rules_route_rows(ens, X, table=None):
    """Evaluating each leaf's rule selects exactly the rows the library routes
    to that leaf."""
    if table is None:
        table = ens.leaf_table(X)
    X = ens.dense_for_rules(X)
    rule_tree = ens.rule_tree
    for j in range(ens.n_rules):
        t = int(rule_tree[j])
        expected = table[:, t] == j
        got = ens.rule_mask(j, X)
        if not np.array_equal(got, expected):
            bad = np.flatnonzero(got != expected)
            raise AssertionError(
                f"rule {j} ({ens.rule_text(j, show_missing=True)}) of block {t} "
                f"selects {int(got.sum())} rows, the library routes "
                f"{int(expected.sum())} there; first mismatching rows {bad[:5].tolist()}"
            )


def check_design(ens, X, ids=None):
    """The design, the leaf table and the leaf ids agree."""
    if ids is None:
        ids = ens.apply(X)
    table = ens.leaf_table_from_ids(ids)
    n = table.shape[0]
    assert table.dtype == np.int32 and table.flags.c_contiguous
    assert table.shape == (n, ens.n_trees)
    bp = ens.block_ptr
    assert np.all(table >= bp[:-1]) and np.all(table < bp[1:]), "leaf outside its block"
    # The library id of the leaf each row lands in is the id the library gave.
    ids2 = np.asarray(ids).reshape(n, -1)[:, ens._src_col].astype(np.int64)
    np.testing.assert_array_equal(ens.leaf_node_ids[table], ids2)
    M = ens.design_from_ids(ids)
    assert isinstance(M, sp.csc_matrix) and M.dtype == np.float64
    assert M.shape == (n, ens.n_rules)
    assert M.has_sorted_indices
    M.check_format(full_check=True)
    rows = np.repeat(np.arange(n), ens.n_trees)
    expected = sp.csc_matrix(
        (ens.leaf_values[table.ravel()], (rows, table.ravel())), shape=M.shape
    )
    assert (M != expected).nnz == 0
    assert np.all(np.diff(M.tocsr().indptr) == ens.n_trees)
    M2 = ens.design_from_leaf_table(table)
    assert (M2 != M).nnz == 0
    np.testing.assert_array_equal(M.indices, M2.indices)
    return table, M


def _raw_tolerance(ens, table, baseline, rtol):
    """Per-row tolerance: rtol times the magnitude of the summed terms.

    A pure relative error is meaningless where the prediction is near 0 (a
    margin of a balanced classifier); libraries that add in float32 (XGBoost)
    make errors proportional to the terms they add, not to their sum.
    """
    contrib = np.abs(ens.leaf_values * ens.column_scale)[table]
    if ens.n_outputs == 1:
        return rtol * (contrib.sum(axis=1) + np.abs(baseline))
    onehot = np.zeros((ens.n_trees, ens.n_outputs))
    onehot[np.arange(ens.n_trees), ens.tree_class] = 1.0
    return rtol * (contrib @ onehot + np.abs(baseline))


def check_predict_raw(ens, X, rtol=1e-6, M=None, table=None):
    """``design @ scale + baseline`` reproduces the library's raw prediction
    row by row, to ``rtol`` relative to the magnitude of the summed terms."""
    ref = ens.reference_predict_raw(X)
    base = ens.baseline(X)
    if table is None:
        table = ens.leaf_table(X)
    if M is None:
        M = ens.design(X)
    K = ens.n_outputs
    expected_shape = (table.shape[0],) if K == 1 else (table.shape[0], K)
    assert ref.shape == expected_shape, f"reference shape {ref.shape} != {expected_shape}"
    assert base.shape == expected_shape
    contrib = M @ sp.diags(ens.column_scale)
    if K == 1:
        ours = np.asarray(contrib.sum(axis=1)).ravel() + base
    else:
        onehot = sp.csr_matrix(
            (np.ones(ens.n_rules), (np.arange(ens.n_rules), ens.tree_class[ens.rule_tree])),
            shape=(ens.n_rules, K),
        )
        ours = (contrib @ onehot).toarray() + base
    tol = _raw_tolerance(ens, table, base, rtol)
    err = np.abs(ours - ref)
    bad = err > np.maximum(tol, rtol * np.abs(ref))
    if bad.any():
        i = np.argwhere(bad)[0]
        raise AssertionError(
            f"raw prediction mismatch at {tuple(i.tolist())}: firecy {ours[tuple(i)]!r}, "
            f"library {ref[tuple(i)]!r} ({int(bad.sum())} entries off)"
        )
    np.testing.assert_allclose(ens.predict_raw(X), ours, rtol=1e-12, atol=1e-12)
    return ours


def check_rule_ensemble(ens, X, rtol=1e-6, check_prediction=True):
    """All the checks above on data ``X``."""
    check_structure(ens)
    check_contiguous_subtrees(ens)
    ids = ens.apply(X)
    table, M = check_design(ens, X, ids)
    check_rules_route_rows(ens, X, table)
    if check_prediction:
        check_predict_raw(ens, X, rtol=rtol, M=M, table=table)
