"""A penalty per kind of block: one penalty on the first blocks (the rules),
another on the rest (the linear terms).

``BlockwisePenalty(rules, linear, n_rule_blocks)`` acts as ``rules`` on the
blocks ``0 .. n_rule_blocks - 1`` and as ``linear`` (a separable sparsity
penalty, L1 or MCP: fusion and group-L0 do not apply to a linear term) on
the blocks after them, dispatching every contract call on ``Block.index``.
Its ``lam`` is both penalties' ``lam`` (the path moves them together). When
the rule penalty scores blocks by an achievable decrease (group-L0), the
other blocks are scored by the decrease of their prox step too, so that the
engine compares like with like. docs/penalties.rst states it.
"""
import numpy as np

from firecy.penalties.base cimport (
    Block, PENALTY_SCORE_IS_DECREASE, PENALTY_SEPARABLE, Penalty)
from firecy.penalties._group_l0 cimport prox_decrease


cdef class BlockwisePenalty(Penalty):
    """``rules`` on the first ``n_rule_blocks`` blocks, ``linear`` on the others.

    The penalty of a design whose rule blocks (trees) come first and whose
    extra blocks (linear terms, each a block of one column) follow, as the
    estimators build it with ``linear_terms=True``.

    Parameters
    ----------
    rules : Penalty
        The penalty of the rule blocks (any: L1, MCP, fusion, group-L0, a
        plug-in).
    linear : Penalty
        The penalty of the other blocks: separable and scored by its
        direction vector (``L1`` or ``MCP``).
    n_rule_blocks : int
        The number of rule blocks (block indices below it are rules).

    Attributes
    ----------
    lam : float
        Both penalties' ``lam``; setting it sets both.

    Examples
    --------
    Two rule blocks under group-L0 and a linear block under L1:

    >>> from firecy.penalties import BlockwisePenalty, GroupL0, L1
    >>> pen = BlockwisePenalty(GroupL0(L1(0.1), lam0=1.0), L1(0.1), n_rule_blocks=2)
    >>> pen.value_of([0.0, 2.0], block=1)        # a rule block: 0.1 * 2 + lam0
    1.2
    >>> round(pen.value_of([2.0], block=2), 12)  # the linear block: 0.1 * 2
    0.2
    >>> pen.lam = 0.5
    >>> pen.rules.lam, pen.linear.lam
    (0.5, 0.5)
    """
    cdef public Penalty rules
    cdef public Penalty linear
    cdef readonly Py_ssize_t n_rule_blocks
    cdef bint decrease

    def __init__(self, Penalty rules, Penalty linear, Py_ssize_t n_rule_blocks):
        if not linear.flags & PENALTY_SEPARABLE or linear.flags & PENALTY_SCORE_IS_DECREASE:
            raise ValueError(
                f"the linear terms' penalty must be separable and scored by its direction "
                f"vector (L1 or MCP), got {linear!r}")
        if n_rule_blocks < 0:
            raise ValueError(f"n_rule_blocks must be non-negative, got {n_rule_blocks}")
        Penalty.__init__(self, rules.lam)
        self.rules = rules
        self.linear = linear
        (<object> self.linear).lam = (<object> rules).lam
        self.n_rule_blocks = n_rule_blocks
        self.decrease = bool(rules.flags & PENALTY_SCORE_IS_DECREASE)
        self.flags = rules.flags & (PENALTY_SEPARABLE | PENALTY_SCORE_IS_DECREASE)

    @property
    def lam(self):
        """The path parameter of both penalties."""
        return (<object> self.rules).lam

    @lam.setter
    def lam(self, double value):
        if not value >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {value!r}")
        # through the Python attribute: a wrapper such as GroupL0 passes it on
        (<object> self.rules).lam = value
        (<object> self.linear).lam = value
        (<Penalty> self).lam = value

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        if blk.index < self.n_rule_blocks:
            return self.rules.value(blk, w)
        return self.linear.value(blk, w)

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        if blk.index < self.n_rule_blocks:
            return self.rules.prox(blk, z, step, out)
        return self.linear.prox(blk, z, step, out)

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        if blk.index < self.n_rule_blocks:
            return self.rules.subdiff(blk, w, lo, hi)
        return self.linear.subdiff(blk, w, lo, hi)

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        if blk.index < self.n_rule_blocks:
            return self.rules.lambda_max(blk, grad)
        return self.linear.lambda_max(blk, grad)

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        if blk.index < self.n_rule_blocks:
            return self.rules.block_score(blk, w, grad, step, work)
        if self.decrease:
            # the rules' scores are achievable decreases: so is this one
            return prox_decrease(self.linear, blk, w, grad, step, work)
        return self.linear.block_score(blk, w, grad, step, work)

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        if blk.index < self.n_rule_blocks:
            return self.rules.local_groups(blk, w, group, grad, hess)
        return self.linear.local_groups(blk, w, group, grad, hess)

    # ------------------------------------------------------------------

    def check_blocks(self, block_ptr):
        """The rule penalty's check on the rule blocks."""
        block_ptr = np.asarray(block_ptr)
        self.rules.check_blocks(block_ptr[:min(self.n_rule_blocks, block_ptr.size - 1) + 1])

    def bind_ensemble(self, ensemble):
        """The rule penalty bound to ``ensemble`` (see :meth:`Penalty.bind_ensemble`)."""
        rules = self.rules.bind_ensemble(ensemble)
        return self if rules is self.rules else BlockwisePenalty(
            rules, self.linear, self.n_rule_blocks)

    def restrict_blocks(self, blocks):
        """This penalty on the design of ``blocks`` only (sorted block
        indices, renumbered from 0, as ``BlockDesign.subset_blocks`` does)."""
        blocks = np.asarray(blocks)
        return BlockwisePenalty(self.rules, self.linear,
                                int(np.count_nonzero(blocks < self.n_rule_blocks)))

    def unpenalised_blocks(self, block_ptr):
        """The blocks no ``lam`` penalises: the rule penalty's among the rule
        blocks (an :class:`~firecy.penalties.Unpenalised` one: all of them),
        none of the linear terms'."""
        ptr = np.asarray(block_ptr)
        n = min(self.n_rule_blocks, ptr.size - 1)
        find = getattr(self.rules, "unpenalised_blocks", None)
        if find is None:
            return np.empty(0, dtype=np.intp)
        return np.asarray(find(ptr[:n + 1]), dtype=np.intp)

    def _repr_params(self):
        return f"{self.rules!r}, {self.linear!r}, n_rule_blocks={self.n_rule_blocks}"

    def __reduce__(self):
        return (BlockwisePenalty, (self.rules, self.linear, self.n_rule_blocks))
