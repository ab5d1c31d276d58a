"""BlockDesign.block_lipschitz against dense eigenvalues of each block's
weighted Gram matrix (the all-diagonal fast path and the general loop)."""
import numpy as np
import pytest

from firecy.solver import BlockDesign


def _dense_reference(design, s):
    M = design.tocsc().toarray()
    ptr = np.asarray(design.block_ptr)
    return np.array([np.linalg.eigvalsh(M[:, lo:hi].T @ (s[:, None] * M[:, lo:hi]))[-1]
                     if hi > lo else np.nan for lo, hi in zip(ptr[:-1], ptr[1:])])


@pytest.mark.parametrize("seed", [0, 1])
def test_tree_layout_matches_dense_eigenvalues(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=7)        # blocks of 1 to 5 leaves
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    n = 60
    table = np.column_stack([rng.integers(lo, hi, size=n) for lo, hi in zip(ptr[:-1], ptr[1:])])
    values = rng.normal(size=ptr[-1])
    design = BlockDesign.from_leaf_table(table, values, ptr)
    s = rng.uniform(0.1, 2.0, size=n)
    curv = design.column_stats(s)[1]
    got = design.block_lipschitz(s, curv)
    np.testing.assert_allclose(got, _dense_reference(design, s), rtol=1e-12, atol=1e-14)


def test_general_layout_with_an_overlapping_block():
    rng = np.random.default_rng(3)
    M = (rng.uniform(size=(40, 6)) < 0.4) * rng.normal(size=(40, 6))
    M[:, 1] = M[:, 0] * 2.0 + (M[:, 1] != 0)  # block 0 overlaps (not diagonal)
    design = BlockDesign.from_matrix(M, [0, 3, 4, 6])
    s = rng.uniform(0.5, 1.5, size=40)
    curv = design.column_stats(s)[1]
    got = design.block_lipschitz(s, np.asarray(curv).ravel())
    np.testing.assert_allclose(got, _dense_reference(design, s), rtol=1e-10)
