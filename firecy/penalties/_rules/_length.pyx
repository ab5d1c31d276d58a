"""Rule-length-weighted L1: rule j costs ``lam * base**length_j * |w_j|``.

Short rules are preferred (Jawanpuria, Nath & Ramakrishnan, Generalized
Hierarchical Kernel Learning, JMLR, section 5: weights ``d_v = a^{|v|}``
with ``|v|`` the number of conditions). The penalty is separable; its data
is one weight per design column, read through ``Block.columns``. Written on
the public header only (``firecy.penalties.base``), as a third party would.
"""
from libc.math cimport fabs, fmax

import numpy as np

from firecy.penalties.base cimport Block, PENALTY_SEPARABLE, Penalty


cdef inline double soft(double z, double t) noexcept nogil:
    if z > t:
        return z - t
    if z < -t:
        return z + t
    return 0.0


cdef class LengthWeightedL1(Penalty):
    """Rule-length-weighted L1: ``lam * sum_j base**length_j * |w_j|``.

    ``length_j`` is the number of conditions of rule j (after merging
    redundant conditions on one feature, see
    :func:`firecy.rules.simplify_conditions`), so that with ``base > 1`` a
    long rule must explain more to be kept (Jawanpuria et al., section 5). With
    ``base = 1`` it is the lasso. By name: ``FIRERegressor(penalty=
    "length_l1")`` reads the lengths from the fitted ensemble.

    Parameters
    ----------
    lam : float, default=1.0
        Sparsity strength, non-negative.
    base : float, default=2.0
        The weight base ``a`` (> 0; > 1 favours short rules).
    lengths : array-like of int, shape (n_columns,), default=None
        Conditions per rule (design column). None: set later from a rule
        ensemble (:meth:`bind_ensemble`, which the estimators call); solving
        with an unbound penalty raises ValueError.

    Attributes
    ----------
    weights : ndarray of float64, shape (n_columns,)
        ``base**lengths`` (empty when unbound).

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.penalties import LengthWeightedL1
    >>> pen = LengthWeightedL1(0.5, base=2.0, lengths=[1, 3])
    >>> pen.value_of(np.array([1.0, -1.0]), columns=[0, 1])   # 0.5 * (2 + 8)
    5.0
    >>> pen.prox_of(np.array([3.0, 3.0]), step=1.0, columns=[0, 1])
    array([2., 0.])
    """
    cdef readonly double base
    cdef const double[::1] _weights
    cdef readonly object lengths

    def __init__(self, double lam=1.0, double base=2.0, lengths=None):
        Penalty.__init__(self, lam)
        if not (base > 0.0 and np.isfinite(base)):
            raise ValueError(f"base must be a positive number, got {base!r}")
        self.base = base
        self.flags = PENALTY_SEPARABLE
        if lengths is None:
            self.lengths = None
            self._weights = np.zeros(0)
            return
        lengths = np.asarray(lengths)
        if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.number) or (
                lengths.size and (np.any(lengths < 0) or np.any(lengths != np.round(lengths)))):
            raise ValueError("lengths must be a 1-D array of non-negative integers")
        self.lengths = lengths.astype(np.int64)
        weights = float(base) ** self.lengths.astype(np.float64)
        if not np.all(np.isfinite(weights)):
            raise ValueError(f"base**lengths overflows (base={base!r}, longest rule "
                             f"{int(self.lengths.max())} conditions)")
        self._weights = weights

    @classmethod
    def from_ensemble(cls, ensemble, lam=1.0, base=2.0):
        """The penalty with the rule lengths of ``ensemble`` (a RuleEnsemble)."""
        return cls(lam, base, rule_lengths(ensemble))

    @property
    def weights(self):
        return np.asarray(self._weights).copy()

    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        cdef double total = 0.0
        cdef Py_ssize_t k
        for k in range(blk.n):
            total += self._weights[blk.columns[k]] * fabs(w[k])
        return self.lam * total

    cdef int prox(self, const Block* blk, const double* z, const double* step,
                  double* out) except -1 nogil:
        cdef Py_ssize_t k
        for k in range(blk.n):
            out[k] = soft(z[k], self.lam * self._weights[blk.columns[k]] / step[k]) \
                if step[k] > 0.0 else 0.0
        return 0

    cdef int subdiff(self, const Block* blk, const double* w, double* lo,
                     double* hi) except -1 nogil:
        cdef Py_ssize_t k
        cdef double c
        for k in range(blk.n):
            c = self.lam * self._weights[blk.columns[k]]
            if w[k] > 0.0:
                lo[k] = hi[k] = c
            elif w[k] < 0.0:
                lo[k] = hi[k] = -c
            else:
                lo[k] = -c
                hi[k] = c
        return 0

    cdef double lambda_max(self, const Block* blk, const double* grad) except? -1 nogil:
        cdef double m = 0.0
        cdef Py_ssize_t k
        for k in range(blk.n):
            m = fmax(m, fabs(grad[k]) / self._weights[blk.columns[k]])
        return m

    cdef Py_ssize_t local_groups(self, const Block* blk, const double* w, Py_ssize_t* group,
                                 double* grad, double* hess) except -1 nogil:
        cdef Py_ssize_t k, n_groups = 0
        cdef double c
        for k in range(blk.n):
            if w[k] == 0.0:
                group[k] = -1
                continue
            c = self.lam * self._weights[blk.columns[k]]
            group[k] = n_groups
            grad[n_groups] = c if w[k] > 0.0 else -c
            hess[n_groups] = 0.0
            n_groups += 1
        return n_groups

    def check_blocks(self, block_ptr):
        """The rule lengths must be set and match the design's columns."""
        block_ptr = np.asarray(block_ptr)
        n_columns = int(block_ptr[block_ptr.shape[0] - 1])
        if self.lengths is None:
            raise ValueError(
                "LengthWeightedL1 has no rule lengths: build it with "
                "LengthWeightedL1.from_ensemble(ensemble) or lengths=..., or use it "
                "through FIRERegressor(penalty='length_l1')")
        if self._weights.shape[0] != n_columns:
            raise ValueError(f"LengthWeightedL1 has {self._weights.shape[0]} rule lengths, "
                             f"the design has {n_columns} columns")

    def bind_ensemble(self, ensemble):
        """The penalty with the rule lengths of ``ensemble``."""
        return LengthWeightedL1(self.lam, self.base, rule_lengths(ensemble))

    def _repr_params(self):
        bound = "" if self.lengths is None else f", lengths=<{len(self.lengths)} rules>"
        return f"lam={self.lam!r}, base={self.base!r}{bound}"

    def __reduce__(self):
        return (LengthWeightedL1, (self.lam, self.base, self.lengths))


def rule_lengths(ensemble):
    """Conditions per rule of a RuleEnsemble, redundant ones merged."""
    from firecy.rules import simplify_conditions

    return np.array([len(simplify_conditions(conds)) for conds in ensemble.rules],
                    dtype=np.int64)
