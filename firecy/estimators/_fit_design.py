"""The fit's design, sliceable by rows: :class:`FitDesign`.

The selection builds a solver design (:class:`~firecy.solver.BlockDesign`)
for the full training rows and for each fold's rows.  A :class:`FitDesign`
holds what they are built from -- the leaf table of the rules and their
values, and any extra dense columns (the linear terms, each a block of one
column after the rule blocks) -- and builds the design of any subset of the
rows, so that the selection's tasks (``_selection``) need not know what the
columns are.
"""
import numpy as np

from firecy.solver import BlockDesign

__all__ = ["FitDesign"]


class FitDesign:
    """The columns of one fit, for any subset of its training rows.

    Parameters
    ----------
    leaf_table : ndarray of int32, shape (n_samples, n_blocks)
        The design column each row lands in, per block (tree).
    leaf_values : ndarray of float64, shape (n_columns,)
        The value of each rule's column (in solver units).
    block_ptr : ndarray of int64, shape (n_blocks + 1,)
    extra : ndarray of float64, shape (n_samples, n_extra), optional
        Dense columns after the rules' (in solver units), each a block of
        its own: the design is then in the mixed layout (the rules keep
        their leaf table).
    """

    def __init__(self, leaf_table, leaf_values, block_ptr, extra=None):
        self.leaf_table = leaf_table
        self.leaf_values = np.ascontiguousarray(leaf_values, dtype=np.float64)
        self.block_ptr = np.asarray(block_ptr, dtype=np.int64)
        self.extra = None if extra is None or extra.shape[1] == 0 else extra

    @property
    def n_samples(self):
        return self.leaf_table.shape[0]

    @property
    def n_columns(self):
        return self.leaf_values.shape[0] + (0 if self.extra is None else self.extra.shape[1])

    def rows(self, rows):
        """The same columns on ``rows`` (an index array or a slice)."""
        return FitDesign(self.leaf_table[rows], self.leaf_values, self.block_ptr,
                         None if self.extra is None else self.extra[rows])

    def block_design(self):
        """The solver's design of these rows."""
        design = BlockDesign.from_leaf_table(self.leaf_table, self.leaf_values, self.block_ptr)
        if self.extra is None:
            return design
        return design.with_general_blocks(self.extra, np.arange(self.extra.shape[1] + 1))
