"""The multinomial (softmax) loss on stacked rows, on the ABI 2 contract
(docs/datafits.rst, "Multinomial").

K classes turn each sample i into K consecutive *pseudo-rows* ``p = i K + k``
(row group i), each with its own raw prediction ``eta_p = eta_{ik}``, the
margin of class k. The design stacks the classes: a column of class k (a leaf
of one of class k's trees) has nonzeros only on its rows' class-k pseudo-rows,
so a block (one tree of one class) touches one pseudo-row per sample and
stays diagonal. The loss of sample i couples its group:

    (1 / sum_i s_i) sum_i s_i (log sum_k exp(eta_ik) - eta_{i y_i}).

The engine's sample weights are the pseudo-rows' (the sample's weight
repeated K times, normalised by the engine to sum 1: w_p = s_i / (K sum s)),
so the group's weight is ``W_i = K w_p``.

State: ``row[0]`` the margins eta_p, ``row[1]`` the weighted derivative
``z_p = W_i (softmax_k(eta_i) - y_p)`` (exactly d F / d eta_p: a column's
gradient is a plain sum over z), ``row[2][:K]`` the K intercepts (the
contract's scalar ``intercept`` cannot hold them; a per-row array can, and
the engine saves and restores it with the rest of the row state around
Anderson and line-search trials, which is what intercepts need). The engine
runs with ``fit_intercept=False`` so that its own scalar intercept (a
common shift of every pseudo-row, a null direction of the softmax) never
moves; this datafit steps its K intercepts in ``update_intercept`` when
built with ``fit_intercept=True``.

Coupling: a shift of eta_p changes z on every pseudo-row of p's group.
``shift_column`` updates whole groups, so column gradients read off z are
always exact (the working-set strategy needs nothing else). ``shift_rows``
reports the change of z on every row it is given and needs the engine to
hand over whole groups: the datafit declares ``row_group_size = K`` (a Python
attribute, read once when the engine is built; not a cdef member, so the
ABI-2 layout is unchanged) and the engine's greedy strategy widens its
touched rows to whole groups before calling ``shift_rows``.

Curvature: along one column of class k the Hessian of F is
sum_i (s_i / sum s) p_ik (1 - p_ik) M_ij^2 <= sum_p w_p (K / 4) M_pj^2, and a
block's columns have disjoint rows, so ``u_p = K / 4`` gives the engine a
majoriser of F over every block (the binary logistic curvature per class).
"""
from libc.float cimport DBL_EPSILON
from libc.math cimport exp, fabs, log, sqrt

import numpy as np

from firecy.datafits.base cimport Column, Datafit, DatafitState


# intercepts the datafit steps jointly (a K x K Newton system on the stack)
cdef enum:
    MAX_INTERCEPTS = 64


cdef bint cholesky_solve(double* a, const double* b, double* x, Py_ssize_t n) noexcept nogil:
    """x = A^-1 b for a symmetric positive definite A (n x n, row-major,
    overwritten by its Cholesky factor); False if A is not positive definite."""
    cdef Py_ssize_t i, j, k
    cdef double acc
    for j in range(n):
        acc = a[j * n + j]
        for k in range(j):
            acc -= a[j * n + k] * a[j * n + k]
        if not acc > 0.0:
            return False
        a[j * n + j] = sqrt(acc)
        for i in range(j + 1, n):
            acc = a[i * n + j]
            for k in range(j):
                acc -= a[i * n + k] * a[j * n + k]
            a[i * n + j] = acc / a[j * n + j]
    for i in range(n):
        acc = b[i]
        for k in range(i):
            acc -= a[i * n + k] * x[k]
        x[i] = acc / a[i * n + i]
    for i in range(n - 1, -1, -1):
        acc = x[i]
        for k in range(i + 1, n):
            acc -= a[k * n + i] * x[k]
        x[i] = acc / a[i * n + i]
    return True


cdef inline double group_max(const double* eta, Py_ssize_t K) noexcept nogil:
    """max_k eta[k] (the shift that keeps exp finite)."""
    cdef Py_ssize_t k
    cdef double top = eta[0]
    for k in range(1, K):
        if eta[k] > top:
            top = eta[k]
    return top


cdef inline double group_exp(const double* eta, double* prob, Py_ssize_t K,
                             double top) noexcept nogil:
    """prob[k] = exp(eta[k] - top); returns their sum. The largest margin's
    term is exp(0) = 1 exactly and is not computed: exp was ~30% of a
    wine LightGBM fit's CPU time (perf), one call in K saved, the same bits."""
    cdef Py_ssize_t k
    cdef double total = 0.0
    for k in range(K):
        prob[k] = 1.0 if eta[k] == top else exp(eta[k] - top)
        total += prob[k]
    return total


cdef inline void group_probabilities(const double* eta, double* prob,
                                     Py_ssize_t K) noexcept nogil:
    """prob[k] = softmax(eta)[k] (no log: the callers that refresh z do not
    need log sum exp, and libm's log was another 6% of the CPU time)."""
    cdef Py_ssize_t k
    cdef double total = group_exp(eta, prob, K, group_max(eta, K))
    for k in range(K):
        prob[k] /= total


cdef inline double group_softmax(const double* eta, double* prob,
                                 Py_ssize_t K) noexcept nogil:
    """prob[k] = softmax(eta)[k]; returns log sum_k exp(eta[k])."""
    cdef Py_ssize_t k
    cdef double top = group_max(eta, K)
    cdef double total = group_exp(eta, prob, K, top)
    for k in range(K):
        prob[k] /= total
    return top + log(total)


cdef inline double group_lse(const double* eta, Py_ssize_t K) noexcept nogil:
    """log sum_k exp(eta[k])."""
    cdef Py_ssize_t k
    cdef double top = group_max(eta, K), total = 0.0
    for k in range(K):
        total += 1.0 if eta[k] == top else exp(eta[k] - top)
    return top + log(total)


cdef class Multinomial(Datafit):
    """The multinomial loss over ``n_classes`` stacked pseudo-rows per sample.

    Parameters
    ----------
    n_classes : int
        K >= 2: the number of pseudo-rows per sample (row group size).
    fit_intercept : bool, default=True
        Whether the datafit fits one intercept per class (kept in the
        state's third per-row array). Build the engine with
        ``fit_intercept=False`` (see the module docstring).

    Notes
    -----
    ``y`` is one-hot over each group: ``y[i K + k] = 1`` if sample i has
    class k. ``sample_weight`` repeats the sample's weight over its group.
    :func:`stack_multinomial` builds both, and the stacked design.

    Examples
    --------
    >>> import numpy as np
    >>> from firecy.datafits import Multinomial
    >>> mn = Multinomial(3)
    >>> y = np.array([1.0, 0.0, 0.0])                 # one sample, class 0
    >>> float(mn.value_of(y, np.zeros(3))) == float(np.log(3.0))
    True
    """
    cdef readonly Py_ssize_t n_classes
    cdef readonly bint fit_intercept

    def __cinit__(self, n_classes=2, fit_intercept=True):
        if int(n_classes) < 2:
            raise ValueError(f"n_classes must be at least 2, got {n_classes!r}")
        self.n_classes = int(n_classes)
        self.fit_intercept = bool(fit_intercept)
        self.n_rows_used = 3
        self.exact_curvature = False

    @property
    def row_group_size(self):
        """Pseudo-rows whose derivatives move together (the engine widens
        the rows it hands to ``shift_rows`` to whole groups)."""
        return int(self.n_classes)

    @property
    def name(self):
        return "multinomial"

    cdef int check_groups(self, Py_ssize_t n) except -1 nogil:
        if n % self.n_classes:
            with gil:
                raise ValueError(
                    f"the multinomial datafit works on whole groups of {self.n_classes} "
                    f"pseudo-rows; got {n} rows")
        return 0

    # -- per-sample methods, on whole groups (a sample's loss is its
    # group's); loss is spread evenly, so that sum_p w_p loss_p = F
    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t gi, g, k, K = self.n_classes
        cdef double lse, own
        self.check_groups(n)
        for gi in range(n // K):
            g = gi * K
            lse = group_lse(eta + g, K)
            own = 0.0
            for k in range(K):
                own += y[g + k] * eta[g + k]
            for k in range(K):
                out[g + k] = lse - own
        return 0

    cdef int gradient_hessian(self, const double* y, const double* eta, double* grad,
                              double* hess, Py_ssize_t n) except -1 nogil:
        # per unit pseudo-row weight: d F / d eta_p = W_i (p - y) = w_p K (p - y)
        cdef Py_ssize_t gi, g, k, K = self.n_classes
        self.check_groups(n)
        for gi in range(n // K):
            g = gi * K
            group_softmax(eta + g, grad + g, K)
            for k in range(K):
                if hess != NULL:
                    hess[g + k] = K * grad[g + k] * (1.0 - grad[g + k])
                grad[g + k] = K * (grad[g + k] - y[g + k])
        return 0

    cdef int curvature_bound(self, const double* y, double* out,
                             Py_ssize_t n) except -1 nogil:
        cdef Py_ssize_t i
        for i in range(n):
            out[i] = 0.25 * self.n_classes
        return 0

    # -- state-level
    cdef inline void refresh_group(self, DatafitState* st, Py_ssize_t g) noexcept nogil:
        """z on group g (first pseudo-row g) from its margins."""
        cdef Py_ssize_t k, K = self.n_classes
        cdef double* z = st.row[1] + g
        cdef double wg = K * st.weight[g]
        group_probabilities(st.row[0] + g, z, K)
        for k in range(K):
            z[k] = wg * (z[k] - st.y[g + k])

    cdef int initialize(self, DatafitState* st, const double* linear) except -1 nogil:
        cdef Py_ssize_t i, gi, g, K = self.n_classes
        cdef double* b = st.row[2]
        self.check_groups(st.n_samples)
        st.intercept = 0.0
        for i in range(st.n_samples):
            st.row[0][i] = st.offset[i] + linear[i] + (b[i % K] if self.fit_intercept else 0.0)
        for gi in range(st.n_samples // K):
            g = gi * K
            self.refresh_group(st, g)
        return 0

    cdef double value(self, DatafitState* st) except? -1 nogil:
        cdef Py_ssize_t gi, g, k, K = self.n_classes
        cdef double total = 0.0, own
        for gi in range(st.n_samples // K):
            g = gi * K
            own = 0.0
            for k in range(K):
                own += st.y[g + k] * st.row[0][g + k]
            total += K * st.weight[g] * (group_lse(st.row[0] + g, K) - own)
        return total

    cdef double column_gradient(self, DatafitState* st, const Column* col) except? -1 nogil:
        cdef Py_ssize_t k
        cdef double total = 0.0
        cdef const double* z = st.row[1]
        if col.values == NULL:
            for k in range(col.n_rows):
                total += z[col.rows[k]]
            return total * col.value
        for k in range(col.n_rows):
            total += col.values[k] * z[col.rows[k]]
        return total

    cdef int shift_column(self, DatafitState* st, const Column* col,
                          double delta) except -1 nogil:
        cdef Py_ssize_t q, p, K = self.n_classes
        cdef double* eta = st.row[0]
        cdef double step = col.value * delta
        # a column of the stacked design has at most one pseudo-row per group
        # (one class): each group is refreshed once, right after its shift
        for q in range(col.n_rows):
            p = col.rows[q]
            eta[p] += step if col.values == NULL else col.values[q] * delta
            self.refresh_group(st, p - p % K)
        return 0

    cdef int shift_rows(self, DatafitState* st, const int* rows, double* delta,
                        Py_ssize_t n_rows) except -1 nogil:
        # two passes: every margin first, then z of each listed row from its
        # group's new margins (a group's rows may come in any order)
        cdef Py_ssize_t q, p, g, k, K = self.n_classes
        cdef double lse, wg, z_new
        cdef double* eta = st.row[0]
        for q in range(n_rows):
            p = rows[q]
            eta[p] += delta[p]
        for q in range(n_rows):
            p = rows[q]
            g = p - p % K
            lse = group_lse(eta + g, K)
            wg = K * st.weight[g]
            z_new = wg * (exp(eta[p] - lse) - st.y[p])
            delta[p] = z_new - st.row[1][p]
            st.row[1][p] = z_new
        return 0

    cdef double common_gradient(self, DatafitState* st) noexcept nogil:
        return 0.0

    cdef int row_derivatives(self, DatafitState* st, double* grad,
                             double* hess) except -1 nogil:
        # the Hessian's diagonal (the engine's Newton model is per row; the
        # softmax's cross terms -p_k p_l are left out: a positive definite
        # model whose steps the line search confirms on the true F)
        cdef Py_ssize_t i, K = self.n_classes
        cdef double p
        for i in range(st.n_samples):
            grad[i] = st.row[1][i]
            if hess != NULL:
                p = st.row[1][i] / (K * st.weight[i]) + st.y[i] if st.weight[i] > 0.0 else 0.0
                hess[i] = K * st.weight[i] * p * (1.0 - p)
        return 0

    cdef void shift_intercepts(self, DatafitState* st, const double* step) noexcept nogil:
        cdef Py_ssize_t i, gi, g, K = self.n_classes
        for i in range(st.n_samples):
            st.row[0][i] += step[i % K]
        for gi in range(st.n_samples // K):
            g = gi * K
            self.refresh_group(st, g)
        for i in range(K):
            st.row[2][i] += step[i]

    cdef double trial_value(self, DatafitState* st, const double* step) noexcept nogil:
        """F with every intercept moved by step (the state unchanged)."""
        cdef Py_ssize_t gi, g, k, K = self.n_classes
        cdef double total = 0.0, own, top, s
        cdef double* e = st.work      # K doubles of scratch (3 n >= K)
        for gi in range(st.n_samples // K):
            g = gi * K
            own = 0.0
            for k in range(K):
                e[k] = st.row[0][g + k] + step[k]
                own += st.y[g + k] * e[k]
            total += K * st.weight[g] * (group_lse(e, K) - own)
        return total

    cdef double trial_value_kept(self, DatafitState* st, const double* step) noexcept nogil:
        """:meth:`trial_value`, keeping in ``st.work`` what
        :meth:`accept_trial` needs to move there without recomputing it: the
        trial margins (``work[:n]``), their shifted exponentials
        (``work[n:2n]``) and each group's sum (``work[2n + g/K]``); the
        3 n doubles of ``work`` hold them (K >= 2). An accepted intercept
        step cost its exponentials twice (here and in shift_intercepts,
        ~10% of a wine LightGBM fit, perf); the same operations in the same
        order, so the state is bit for bit what shift_intercepts leaves."""
        cdef Py_ssize_t gi, g, k, n = st.n_samples, K = self.n_classes
        cdef double total = 0.0, own, top, s
        cdef double* e = st.work
        cdef double* ex = st.work + n
        cdef double* sums = st.work + 2 * n
        for gi in range(n // K):
            g = gi * K
            own = 0.0
            for k in range(K):
                e[g + k] = st.row[0][g + k] + step[k]
                own += st.y[g + k] * e[g + k]
            top = group_max(e + g, K)
            s = group_exp(e + g, ex + g, K, top)
            sums[gi] = s
            total += K * st.weight[g] * (top + log(s) - own)
        return total

    cdef void accept_trial(self, DatafitState* st, const double* step) noexcept nogil:
        """The state after :meth:`trial_value_kept` at ``step`` is accepted."""
        cdef Py_ssize_t gi, g, k, n = st.n_samples, K = self.n_classes
        cdef double wg, s
        cdef const double* e = st.work
        cdef const double* ex = st.work + n
        cdef const double* sums = st.work + 2 * n
        for gi in range(n // K):
            g = gi * K
            wg = K * st.weight[g]
            s = sums[gi]
            for k in range(K):
                st.row[0][g + k] = e[g + k]
                st.row[1][g + k] = wg * (ex[g + k] / s - st.y[g + k])
        for k in range(K):
            st.row[2][k] += step[k]

    cdef double update_intercept(self, DatafitState* st) except? -1 nogil:
        """A Newton step on the K intercepts, halved until F decreases.

        The K x K Hessian sum_i W_i (diag(p_i) - p_i p_i^T) is singular
        along (1, ..., 1) (the softmax ignores a common shift) and the
        gradient is orthogonal to it: adding c 1 1^T / K (c its largest
        diagonal entry) gives the minimum-norm Newton step. A per-class
        (diagonal) step overshoots when the classes pull on each other and a
        majorised step (curvature 1/2) crawls when probabilities are
        extreme: measured, both left the intercepts to converge over
        hundreds of sweeps. Near the optimum, where F's rounding hides the
        decrease, the full step is kept if it shrinks the gradient.
        Returns the largest |change|."""
        cdef Py_ssize_t i, gi, g, k, l, trial, K = self.n_classes
        cdef double f_old, f_new, f_scale = 0.0, gnorm = 0.0, gnew, moved, wg, c, t
        cdef double grad[MAX_INTERCEPTS]
        cdef double step[MAX_INTERCEPTS]
        cdef double trial_step[MAX_INTERCEPTS]
        cdef double hess[MAX_INTERCEPTS * MAX_INTERCEPTS]
        cdef double* prob
        if not self.fit_intercept:
            return 0.0
        if K > MAX_INTERCEPTS:
            with gil:
                raise ValueError(f"the multinomial datafit fits intercepts for at most "
                                 f"{MAX_INTERCEPTS} classes, got {K}")
        for k in range(K):
            grad[k] = 0.0
            for l in range(K):
                hess[k * K + l] = 0.0
        for gi in range(st.n_samples // K):
            g = gi * K
            wg = K * st.weight[g]
            if wg <= 0.0:
                continue
            prob = st.work               # K doubles of scratch
            for k in range(K):
                grad[k] += st.row[1][g + k]
                prob[k] = st.row[1][g + k] / wg + st.y[g + k]
                f_scale += st.weight[g] * fabs(st.row[0][g + k])
            for k in range(K):
                hess[k * K + k] += wg * prob[k]
                for l in range(K):
                    hess[k * K + l] -= wg * prob[k] * prob[l]
        for k in range(K):
            gnorm = gnorm if fabs(grad[k]) <= gnorm else fabs(grad[k])
        if gnorm == 0.0:
            return 0.0
        c = 0.0
        for k in range(K):
            c = c if hess[k * K + k] <= c else hess[k * K + k]
        if c <= 0.0:
            return 0.0
        for k in range(K):
            for l in range(K):
                hess[k * K + l] += c / K
            hess[k * K + k] += 1e-12 * c
        if not cholesky_solve(hess, grad, step, K):
            return 0.0
        moved = 0.0
        for k in range(K):
            step[k] = -step[k]
            moved = fabs(step[k]) if fabs(step[k]) > moved else moved
        f_old = self.value(st)
        f_scale = K * f_scale + f_old
        t = 1.0
        for trial in range(40):
            for k in range(K):
                trial_step[k] = t * step[k]
            f_new = self.trial_value_kept(st, trial_step)
            if f_new < f_old:
                self.accept_trial(st, trial_step)
                return t * moved
            t *= 0.5
        if gnorm * moved <= 4.0 * st.n_samples * DBL_EPSILON * f_scale:
            # below the rounding of F (see Logistic.update_intercept): keep
            # the full step if it shrinks the gradient
            self.shift_intercepts(st, step)
            gnew = 0.0
            for k in range(K):
                grad[k] = 0.0
            for i in range(st.n_samples):
                grad[i % K] += st.row[1][i]
            for k in range(K):
                gnew = gnew if fabs(grad[k]) <= gnew else fabs(grad[k])
            if gnew < gnorm:
                return moved
            for k in range(K):
                step[k] = -step[k]
            self.shift_intercepts(st, step)
        return 0.0

    def validate(self, y, sample_weight):
        """One-hot labels over each group, the group's weights equal.

        Parameters
        ----------
        y : ndarray of float64, shape (n_samples * n_classes,)
        sample_weight : ndarray of float64, shape (n_samples * n_classes,)

        Returns
        -------
        ndarray of float64
        """
        K = self.n_classes
        y = np.ascontiguousarray(y, dtype=np.float64)
        s = np.asarray(sample_weight, dtype=np.float64)
        if y.shape[0] % K:
            raise ValueError(f"the multinomial datafit needs {K} pseudo-rows per sample; "
                             f"got {y.shape[0]} rows")
        Y = y.reshape(-1, K)
        if np.any((Y != 0.0) & (Y != 1.0)) or np.any(Y.sum(axis=1) != 1.0):
            raise ValueError("the multinomial datafit needs one-hot labels over each "
                             "group of pseudo-rows")
        S = s.reshape(-1, K)
        if np.any(S != S[:, :1]):
            raise ValueError("the multinomial datafit needs the sample's weight repeated "
                             "over its group of pseudo-rows")
        present = (Y[S[:, 0] > 0] > 0).any(axis=0)
        if self.fit_intercept and not present.all():
            raise ValueError(
                f"the multinomial datafit needs every class among the rows of positive "
                f"weight; classes {np.flatnonzero(~present).tolist()} have none (their "
                "intercepts would run to -infinity: drop them)")
        return y

    def __reduce__(self):
        return (Multinomial, (self.n_classes, self.fit_intercept))
