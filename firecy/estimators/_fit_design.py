"""The fit's design, sliceable by rows: :class:`FitDesign`.

The selection builds a solver design (:class:`~firecy.solver.BlockDesign`)
for the full training rows and for each fold's rows.  A :class:`FitDesign`
holds what they are built from -- the leaf table of the rules and their
values -- and builds the design of any subset of the rows, so that the
selection's tasks (``_selection``) need not know what the columns are.
"""
import numpy as np

from firecy.solver import BlockDesign

__all__ = ["FitDesign"]


class FitDesign:
    """The rule columns of one fit, for any subset of its training rows.

    Parameters
    ----------
    leaf_table : ndarray of int32, shape (n_samples, n_blocks)
        The design column each row lands in, per block (tree).
    leaf_values : ndarray of float64, shape (n_columns,)
        The value of each rule's column (in solver units).
    block_ptr : ndarray of int64, shape (n_blocks + 1,)
    """

    def __init__(self, leaf_table, leaf_values, block_ptr):
        self.leaf_table = leaf_table
        self.leaf_values = np.ascontiguousarray(leaf_values, dtype=np.float64)
        self.block_ptr = np.asarray(block_ptr, dtype=np.int64)

    @property
    def n_samples(self):
        return self.leaf_table.shape[0]

    @property
    def n_columns(self):
        return self.leaf_values.shape[0]

    def rows(self, rows):
        """The same columns on ``rows`` (an index array or a slice)."""
        return FitDesign(self.leaf_table[rows], self.leaf_values, self.block_ptr)

    def block_design(self):
        """The solver's design of these rows."""
        return BlockDesign.from_leaf_table(self.leaf_table, self.leaf_values, self.block_ptr)
