"""A penalty per kind of block: one penalty on the first blocks (the rules),
another on the next (the linear terms), and optionally a third, which no
``lam`` acts on, on the last (confirmatory terms).

``BlockwisePenalty(rules, linear, n_rule_blocks)`` acts as ``rules`` on the
blocks ``0 .. n_rule_blocks - 1`` and as ``linear`` (a separable sparsity
penalty, L1 or MCP: fusion and group-L0 do not apply to a linear term) on
the blocks after them, dispatching every contract call on ``Block.index``;
with ``fixed`` and ``n_linear_blocks``, the blocks from ``n_rule_blocks +
n_linear_blocks`` on are ``fixed``'s (an :class:`~firecy.penalties.Unpenalised`
penalty, or a sign constraint of one: terms every path point keeps, R
``pre``'s confirmatory terms).  Its ``lam`` is every part's ``lam`` (the
path moves them together). Its flags: separable when every part is, the
rules' score kind, and any other bit (a sign bound) of any part. When
the rule penalty scores blocks by an achievable decrease (group-L0), the
other blocks are scored by the decrease of their prox step too, so that the
engine compares like with like. docs/penalties.rst states it.
"""
import numpy as np

from firecy.penalties.base cimport (
    Block, PENALTY_SCORE_IS_DECREASE, PENALTY_SEPARABLE, Penalty)
from firecy.penalties._group_l0 cimport prox_decrease


cdef class BlockwisePenalty(Penalty):
    """``rules`` on the first ``n_rule_blocks`` blocks, ``linear`` on the
    next, ``fixed`` (optional) on the last.

    The penalty of a design whose rule blocks (trees) come first and whose
    extra blocks (linear terms, each a block of one column) follow, as the
    estimators build it with ``linear_terms=True``; with ``confirmatory=``,
    the confirmatory terms' blocks (one column each) come last, under
    ``fixed``, which no ``lam`` acts on.

    Parameters
    ----------
    rules : Penalty
        The penalty of the rule blocks (any: L1, MCP, fusion, group-L0, a
        plug-in).
    linear : Penalty
        The penalty of the linear terms' blocks: separable and scored by its
        direction vector (``L1`` or ``MCP``).
    n_rule_blocks : int
        The number of rule blocks (block indices below it are rules).
    fixed : Penalty, optional
        The penalty of the blocks from ``n_rule_blocks + n_linear_blocks``
        on, each one column: separable, scored by its direction vector, and
        such that no ``lam`` penalises it (:class:`~firecy.penalties.Unpenalised`,
        or a sign constraint of it); :meth:`unpenalised_blocks` names those
        blocks, so a path starts where they are fitted. It sees its columns
        numbered 0, 1, ... from the first fixed block (``Block.columns``), so
        that per-column data of it (a sign constraint's bounds, one per
        fixed column) keeps its meaning on a design restricted to some blocks
        (:meth:`restrict_blocks`). None (the default): every block after the
        rules' is ``linear``'s.
    n_linear_blocks : int, optional
        With ``fixed``, the number of linear blocks (required; may be 0).

    Attributes
    ----------
    lam : float
        Every part's ``lam``; setting it sets each.
    n_fixed_start : int or None
        The first block index of ``fixed`` (None without it).

    Examples
    --------
    Two rule blocks under group-L0 and a linear block under L1:

    >>> from firecy.penalties import BlockwisePenalty, GroupL0, L1, Unpenalised
    >>> pen = BlockwisePenalty(GroupL0(L1(0.1), lam0=1.0), L1(0.1), n_rule_blocks=2)
    >>> pen.value_of([0.0, 2.0], block=1)        # a rule block: 0.1 * 2 + lam0
    1.2
    >>> round(pen.value_of([2.0], block=2), 12)  # the linear block: 0.1 * 2
    0.2
    >>> pen.lam = 0.5
    >>> pen.rules.lam, pen.linear.lam
    (0.5, 0.5)

    With one linear block and a confirmatory (unpenalised) block after it:
    block 3 costs nothing, its prox is the identity, no ``lam`` zeroes it,
    and the path keeps it:

    >>> pen = BlockwisePenalty(L1(0.1), L1(0.1), 2, fixed=Unpenalised(),
    ...                        n_linear_blocks=1)
    >>> round(pen.value_of([2.0], block=2), 12), pen.value_of([2.0], block=3)
    (0.2, 0.0)
    >>> pen.prox_of([0.05], block=3), pen.prox_of([0.05], block=2)
    (array([0.05]), array([0.]))
    >>> pen.lambda_max_of([0.3], block=3)
    inf
    >>> pen.unpenalised_blocks([0, 2, 4, 5, 6]).tolist()
    [3]
    >>> pen.lam = 2.0
    >>> pen.fixed.lam, pen.n_fixed_start
    (2.0, 3)
    """
    cdef public Penalty rules
    cdef public Penalty linear
    cdef public object fixed
    cdef readonly Py_ssize_t n_rule_blocks
    cdef Py_ssize_t fixed_start
    cdef Penalty _fixed
    cdef bint decrease

    def __init__(self, Penalty rules, Penalty linear, Py_ssize_t n_rule_blocks,
                 Penalty fixed=None, n_linear_blocks=None):
        _check_separable(linear, "the linear terms' penalty", "L1 or MCP")
        if n_rule_blocks < 0:
            raise ValueError(f"n_rule_blocks must be non-negative, got {n_rule_blocks}")
        if fixed is None:
            if n_linear_blocks is not None:
                raise ValueError("n_linear_blocks is the boundary of the fixed blocks: "
                                 "give it with fixed=, not alone")
            self.fixed_start = -1
        else:
            _check_separable(fixed, "the fixed blocks' penalty",
                             "Unpenalised, or a sign constraint of it")
            if n_linear_blocks is None or int(n_linear_blocks) < 0:
                raise ValueError(f"fixed= needs n_linear_blocks, a non-negative integer "
                                 f"(the linear blocks before the fixed ones), got "
                                 f"{n_linear_blocks!r}")
            self.fixed_start = n_rule_blocks + int(n_linear_blocks)
        Penalty.__init__(self, rules.lam)
        self.rules = rules
        self.linear = linear
        self.fixed = fixed
        self._fixed = fixed
        (<object> self.linear).lam = (<object> rules).lam
        if fixed is not None:
            (<object> fixed).lam = (<object> rules).lam
        self.n_rule_blocks = n_rule_blocks
        self.decrease = bool(rules.flags & PENALTY_SCORE_IS_DECREASE)
        # separable when every part is; the rules' score kind; any other bit
        # (a sign bound, PENALTY_SIGN_BOUNDS) when any part has it, so that
        # the engine sees it whichever block carries it
        cdef unsigned int own = PENALTY_SEPARABLE | PENALTY_SCORE_IS_DECREASE
        cdef unsigned int other = (rules.flags | linear.flags) & ~own
        if fixed is not None:
            other |= fixed.flags & ~own
        self.flags = (rules.flags & own) | other

    cdef inline Block _local(self, const Block* blk, Py_ssize_t* col) noexcept nogil:
        # the fixed part sees its own columns, numbered 0, 1, ... from its
        # first block (one column each): a per-column penalty of it (a sign
        # bound) keeps its meaning on a design restricted to some blocks
        cdef Block local = blk[0]
        if blk.n == 1:
            col[0] = blk.index - self.fixed_start
            local.columns = col
        return local

    @property
    def n_linear_blocks(self):
        """The linear blocks before the fixed ones (None without ``fixed``)."""
        return None if self.fixed_start < 0 else self.fixed_start - self.n_rule_blocks

    @property
    def n_fixed_start(self):
        """The first block index of ``fixed`` (None without it)."""
        return None if self.fixed_start < 0 else self.fixed_start

    @property
    def lam(self):
        """The path parameter of every part."""
        return (<object> self.rules).lam

    @lam.setter
    def lam(self, double value):
        if not value >= 0.0:
            raise ValueError(f"lam must be a non-negative number, got {value!r}")
        # through the Python attribute: a wrapper such as GroupL0 passes it on
        (<object> self.rules).lam = value
        (<object> self.linear).lam = value
        if self._fixed is not None:
            (<object> self._fixed).lam = value
        (<Penalty> self).lam = value

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef Py_ssize_t col
        cdef Block local
        if blk.index < self.n_rule_blocks:
            return self.rules.value(blk, w)
        if self.fixed_start >= 0 and blk.index >= self.fixed_start:
            local = self._local(blk, &col)
            return self._fixed.value(&local, w)
        return self.linear.value(blk, w)

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t col
        cdef Block local
        if blk.index < self.n_rule_blocks:
            return self.rules.prox(blk, z, step, out)
        if self.fixed_start >= 0 and blk.index >= self.fixed_start:
            local = self._local(blk, &col)
            return self._fixed.prox(&local, z, step, out)
        return self.linear.prox(blk, z, step, out)

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t col
        cdef Block local
        if blk.index < self.n_rule_blocks:
            return self.rules.subdiff(blk, w, lo, hi)
        if self.fixed_start >= 0 and blk.index >= self.fixed_start:
            local = self._local(blk, &col)
            return self._fixed.subdiff(&local, w, lo, hi)
        return self.linear.subdiff(blk, w, lo, hi)

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef Py_ssize_t col
        cdef Block local
        if blk.index < self.n_rule_blocks:
            return self.rules.lambda_max(blk, grad)
        if self.fixed_start >= 0 and blk.index >= self.fixed_start:
            local = self._local(blk, &col)
            return self._fixed.lambda_max(&local, grad)
        return self.linear.lambda_max(blk, grad)

    cdef double block_score(self, const Block* blk, const double* w, const double* grad,
                            const double* step, double* work) except? -1 nogil:
        cdef Py_ssize_t col
        cdef Block local
        if blk.index < self.n_rule_blocks:
            return self.rules.block_score(blk, w, grad, step, work)
        if self.fixed_start >= 0 and blk.index >= self.fixed_start:
            if self.decrease:
                local = self._local(blk, &col)
                return prox_decrease(self._fixed, &local, w, grad, step, work)
            local = self._local(blk, &col)
            return self._fixed.block_score(&local, w, grad, step, work)
        if self.decrease:
            # the rules' scores are achievable decreases: so is this one
            return prox_decrease(self.linear, blk, w, grad, step, work)
        return self.linear.block_score(blk, w, grad, step, work)

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        cdef Py_ssize_t col
        cdef Block local
        if blk.index < self.n_rule_blocks:
            return self.rules.local_groups(blk, w, group, grad, hess)
        if self.fixed_start >= 0 and blk.index >= self.fixed_start:
            local = self._local(blk, &col)
            return self._fixed.local_groups(&local, w, group, grad, hess)
        return self.linear.local_groups(blk, w, group, grad, hess)

    # ------------------------------------------------------------------

    def check_blocks(self, block_ptr):
        """The rule penalty's check on the rule blocks; with ``fixed``, that
        every fixed block is one column, and ``fixed``'s own check on its
        columns (numbered from 0)."""
        block_ptr = np.asarray(block_ptr)
        self.rules.check_blocks(block_ptr[:min(self.n_rule_blocks, block_ptr.size - 1) + 1])
        if self.fixed is None or self.fixed_start >= block_ptr.size - 1:
            return
        widths = np.diff(block_ptr[self.fixed_start:])
        if np.any(widths != 1):
            raise ValueError(f"every fixed block (from block {self.fixed_start} on) must be "
                             f"one column; their widths are {widths.tolist()}")
        check = getattr(self.fixed, "check_blocks", None)
        if check is not None:
            check(np.arange(widths.size + 1))

    def bind_ensemble(self, ensemble):
        """The rule penalty bound to ``ensemble`` (see :meth:`Penalty.bind_ensemble`)."""
        rules = self.rules.bind_ensemble(ensemble)
        return self if rules is self.rules else BlockwisePenalty(
            rules, self.linear, self.n_rule_blocks, self.fixed, self.n_linear_blocks)

    def restrict_blocks(self, blocks):
        """This penalty on the design of ``blocks`` only (sorted block
        indices, renumbered from 0, as ``BlockDesign.subset_blocks`` does).
        A fixed part with its own ``restrict_blocks`` (a sign constraint,
        whose bounds are per design column) is restricted to the fixed
        blocks kept, renumbered among themselves."""
        blocks = np.asarray(blocks)
        n_rules = int(np.count_nonzero(blocks < self.n_rule_blocks))
        if self.fixed is None:
            return BlockwisePenalty(self.rules, self.linear, n_rules)
        is_fixed = blocks >= self.fixed_start
        n_linear = int(np.count_nonzero(~is_fixed)) - n_rules
        return BlockwisePenalty(self.rules, self.linear, n_rules,
                                _restrict_fixed(self.fixed, blocks[is_fixed] - self.fixed_start),
                                n_linear)

    def restrict_to(self, blocks, columns):
        """This penalty on the design of ``blocks`` only, whose columns are
        ``columns`` of the full design (what ``BlockDesign.subset_blocks``
        returns), renumbered from 0.

        As :meth:`restrict_blocks`, and each part with per-column data of
        its own (its ``restrict_to``: a sign constraint's bounds, indexed by
        the design's column) restricted to its kept columns, so that every
        bound stays with its column when the kept blocks are not a prefix
        (:meth:`restrict_blocks` alone keeps the parts as they are: a bound
        would then act on whichever column took its number). The linear
        and fixed blocks are one column each (as the estimators build
        them): the rules' columns are the kept columns before the last
        ``#(kept blocks from n_rule_blocks on)``, the linear part's those
        before the kept fixed blocks' columns.
        """
        blocks = np.asarray(blocks, dtype=np.intp)
        columns = np.asarray(columns, dtype=np.intp)
        out = self.restrict_blocks(blocks)
        is_rule = blocks < self.n_rule_blocks
        is_fixed = (blocks >= self.fixed_start) if self.fixed is not None \
            else np.zeros(blocks.size, dtype=bool)
        n_tail = int(np.count_nonzero(~is_rule))
        if columns.size < n_tail:
            raise ValueError(f"{columns.size} columns for {n_tail} linear / fixed blocks: "
                             "each of those blocks is one column")
        rules, linear = self.rules, self.linear
        to = getattr(rules, "restrict_to", None)
        if to is not None:
            rules = to(blocks[is_rule], columns[:columns.size - n_tail])
        to = getattr(linear, "restrict_to", None)
        if to is not None:
            n_fixed = int(np.count_nonzero(is_fixed))
            linear = to(blocks[~is_fixed], columns[:columns.size - n_fixed])
        if rules is self.rules and linear is self.linear:
            return out
        if out.fixed is None:
            out = BlockwisePenalty(rules, linear, out.n_rule_blocks)
        else:
            out = BlockwisePenalty(rules, linear, out.n_rule_blocks, out.fixed,
                                   out.n_linear_blocks)
        # restrict_to of a part may rebuild it: its lam is the template's
        out.lam = self.lam
        return out

    def unpenalised_blocks(self, block_ptr):
        """The blocks no ``lam`` penalises: the rule penalty's among the rule
        blocks (an :class:`~firecy.penalties.Unpenalised` one: all of them),
        none of the linear terms', and every fixed block."""
        ptr = np.asarray(block_ptr)
        n_blocks = ptr.size - 1
        n = min(self.n_rule_blocks, n_blocks)
        find = getattr(self.rules, "unpenalised_blocks", None)
        found = (np.empty(0, dtype=np.intp) if find is None
                 else np.asarray(find(ptr[:n + 1]), dtype=np.intp))
        if self.fixed is None or self.fixed_start >= n_blocks:
            return found
        return np.concatenate([found, np.arange(self.fixed_start, n_blocks, dtype=np.intp)])

    def _repr_params(self):
        text = f"{self.rules!r}, {self.linear!r}, n_rule_blocks={self.n_rule_blocks}"
        if self.fixed is None:
            return text
        return text + f", fixed={self.fixed!r}, n_linear_blocks={self.n_linear_blocks}"

    def __reduce__(self):
        if self.fixed is None:
            return (BlockwisePenalty, (self.rules, self.linear, self.n_rule_blocks))
        return (BlockwisePenalty, (self.rules, self.linear, self.n_rule_blocks, self.fixed,
                                   self.n_linear_blocks))


def _restrict_fixed(fixed, kept):
    """The fixed part on its columns ``kept`` (its own numbering: one column
    per fixed block), renumbered from 0: a penalty with per-column data
    restricts it (``restrict_to(kept, kept)``: a sign constraint slices its
    bounds; ``restrict_columns``, or ``restrict_blocks`` of one-column
    blocks); one without is the same on any columns."""
    kept = np.asarray(kept, dtype=np.intp)
    to = getattr(fixed, "restrict_to", None)
    if to is not None:
        # SignConstrained's: its blocks and columns, in its own numbering, are one
        return to(kept, kept)
    for name in ("restrict_columns", "restrict_blocks"):
        restrict = getattr(fixed, name, None)
        if restrict is not None:
            return restrict(kept)
    lower, upper = getattr(fixed, "lower", None), getattr(fixed, "upper", None)
    inner = getattr(fixed, "inner", None)
    if lower is not None and upper is not None and inner is not None:
        # a sign constraint (SignConstrained): its bounds on the kept columns
        return type(fixed)(inner, np.asarray(lower)[kept], np.asarray(upper)[kept])
    return fixed


cdef _check_separable(Penalty pen, str what, str examples):
    if not pen.flags & PENALTY_SEPARABLE or pen.flags & PENALTY_SCORE_IS_DECREASE:
        raise ValueError(f"{what} must be separable and scored by its direction "
                         f"vector ({examples}), got {pen!r}")
