"""Newton steps on the support, with the datafit's true curvature.

Coordinate methods crawl on the ill-conditioned designs of forests (trees are
strongly correlated), and a majorised block update (the logistic loss's 1/4
bound) crawls where probabilities approach 0 or 1. Once the support is right
the problem restricted to it is smooth: with the penalty's local model
(``Penalty.local_groups``: coordinates, or fused segments of leaves, that move
together) and the datafit's second-order model

    gradient  g = A^T d,   Hessian  H = A^T diag(h) A,

(d_i = s_i loss'(y_i, eta_i), h_i = s_i loss''(y_i, eta_i), column g of A the
sum of group g's columns of M), with the intercept profiled out
(H - H_wb H_bw / H_bb, g - H_wb g_b / H_bb), one direct solve gives a Newton
step. For the squared loss the model is exact and one step lands on the
support's stationary point; for other losses the engine repeats it. A step
that would flip a sign stops at zero there (an active-set move, as in
OWL-QN); every step is kept only if F decreases. When none of the tried
steps does (a singular support Hessian: trees that repeat each other's
leaves), a line search finds the minimum of F along the direction, at a
kink of the penalty. When the penalty's concave
part (MCP) makes the model indefinite, a run of majorize-minimize steps
linearises it and keeps the datafit's Hessian.
"""
import numpy as np
import scipy.sparse as sp
from scipy.linalg.lapack import dpotrf, dpotrs

# largest support for a Newton step (a dense Cholesky of this size)
NEWTON_MAX_SUPPORT = 4000
# Newton steps per attempt with an exact (quadratic) model: a factorisation
# each; on a still-shrinking support more than one step costs more than the
# coordinate epochs it saves (measured)
NEWTON_MAX_STEPS = 1
# steps per attempt while each stops at a kink of the penalty found by the
# line search (a singular Hessian: the datafit's model does not change
# along the flat direction, so the next step is cheap progress; one step
# per attempt left coordinate descent to crawl between them)
NEWTON_MAX_KINK_STEPS = 8
# Newton steps per attempt when the model is not exact (logistic loss)
NEWTON_MAX_STEPS_SMOOTH = 10
# majorize-minimize steps per factorisation when the local model is indefinite
NEWTON_MM_STEPS = 50
# a grouped (multinomial) Newton step that did not land is retried on the
# same support only once the coordinate rounds have lowered F by this much
# (relative) since the failed attempt, and after 1, 4, 16, ... declined calls
# (the k-th retry waits NEWTON_RETRY_BACKOFF^(k-1) calls): see newton_step.
# Measured (benchmarks/classification/RESULTS.md): 3e-5 or more left
# iris LightGBM fits at max_iter, 1e-6 took wine LightGBM's last path points
# to another stationary point (1e-2 higher); without the backoff, wine
# LightGBM retried hundreds of times per point (28.5 s CPU against 21.4 s)
NEWTON_RETRY_DECREASE = 1e-5
NEWTON_RETRY_BACKOFF = 4
# the line search along a direction no tried step accepts: halvings to
# bracket the minimum (t down to 2^-60), then golden-section steps in the
# bracket (0.618^60: the kink located to ~1e-13 of the bracket)
LINE_BRACKET_STEPS = 60
LINE_GOLDEN_STEPS = 60


def _cho_factor(matrix):
    """The upper Cholesky factor of ``matrix`` as LAPACK's dpotrf leaves it
    (scipy.linalg.cho_factor without its argument checks, which cost 50
    times the factorisation of the small matrices here: 0.3 s of a 3-class
    fit's 11 s, profiled); LinAlgError if not positive definite."""
    factor, info = dpotrf(matrix, lower=0, clean=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"dpotrf: info {info}")
    return factor


def _cho_solve(factor, rhs):
    """``matrix^-1 rhs`` from :func:`_cho_factor`'s factor (LAPACK's dpotrs;
    scipy.linalg.cho_solve's checks cost 50 times the solve here: 2.5 s of
    a 3-class fit's 11 s, 26,000 calls, profiled)."""
    out, info = dpotrs(factor, rhs, lower=0)
    if info != 0:
        raise ValueError(f"dpotrs: illegal argument {-info}")
    return out


def _cholesky(matrix):
    """(Cholesky factor, whether it needed the ridge): a relative ridge of
    1e-12 if singular (a whole tree in the support is collinear with the
    intercept, two trees repeat leaves); (None, False) if indefinite."""
    scale = max(float(np.max(np.abs(np.diag(matrix)))), 1e-300)
    for ridge in (0.0, 1e-12 * scale):
        try:
            return _cho_factor(matrix + ridge * np.eye(matrix.shape[0])), ridge > 0
        except np.linalg.LinAlgError:
            pass
    return None, False


def _support_is(const double[::1] coef, const Py_ssize_t[::1] support):
    """Whether the nonzeros of ``coef`` are exactly ``support`` (sorted), in
    one pass without allocating: on wine with LightGBM the engine asks ~46,000
    times per fit, and np.flatnonzero + np.array_equal cost ~3 s of 49 under
    cProfile."""
    cdef Py_ssize_t j, m = 0, S = support.shape[0]
    for j in range(coef.shape[0]):
        if coef[j] != 0.0:
            if m >= S or support[m] != j:
                return False
            m += 1
    return m == S


def newton_step(engine):
    """Newton steps on the engine's current support; True if the last one
    landed (full step, no sign change). The engine's column gradients are
    left stale (only F is evaluated): the caller resyncs before reading them."""
    grouped = engine.row_group > 1
    # engine.newton_failed_on: (support, failed attempts on it, F after the
    # last one, calls declined since), or None; reset by the engine at each
    # path point and before its final step
    failed_on = engine.newton_failed_on
    failures = 0
    if failed_on is not None:
        failed_support, failures, f_failed, declined = failed_on
        if not _support_is(engine.coef, failed_support):
            failures = 0   # a new support: a new start
        elif not (grouped
                  and declined + 1 >= NEWTON_RETRY_BACKOFF ** (failures - 1)
                  and f_failed - engine.objective_value()
                  > NEWTON_RETRY_DECREASE * abs(f_failed)):
            # same support as a failed attempt, and the state has not moved
            # enough (or not for long enough) for the step to land now: do
            # not refactorise. Never retrying made iris with LightGBM crawl in
            # coordinate rounds where a retried step lands (10x the CPU, 22
            # fits at max_iter); retrying at every call made wine with
            # LightGBM refactorise ~1000 times per path point (see below)
            engine.newton_failed_on = (failed_support, failures, f_failed, declined + 1)
            return False
    support = np.flatnonzero(engine.coef)
    exact = engine.exact_curvature
    moved = False
    status = "none"
    limit = NEWTON_MAX_STEPS if exact else NEWTON_MAX_STEPS_SMOOTH
    for step in range(1, max(limit, NEWTON_MAX_KINK_STEPS) + 1):
        f_before = engine.objective_value()
        status = _newton_once(engine)
        moved = moved or status != "none"
        if status == "kink" and step < NEWTON_MAX_KINK_STEPS:
            continue   # one kink per step along a flat direction: take the next
        if step >= limit:
            break
        if exact:
            if status != "partial":
                break
        elif status == "none" or f_before - engine.objective_value() <= 1e-14 * abs(f_before):
            break
    if not moved or (status != "full" and grouped):
        # a grouped (multinomial) step that did not land: on wine with
        # LightGBM (MCP + fusion, a singular and indefinite support model)
        # the line search stops at a kink of the penalty, then finds nothing,
        # every working-set round, up to ~1000 rounds per path point and 90%
        # of the fit's CPU time for a 1e-7 relative decrease
        engine.newton_failed_on = (support, failures + 1, engine.objective_value(), 0)
    else:
        engine.newton_failed_on = None
    return status == "full"


class _Columns:
    """The columns ``support`` of the design in CSC layout (``indptr``,
    ``indices``, ``data``, ``shape``), without scipy.sparse: building a
    csc_matrix and its transpose for every Newton model was 5,000
    constructions and ~20% of an iris GradientBoosting fit's CPU time
    (profiled), for arrays that are only read here."""

    __slots__ = ("indptr", "indices", "data", "shape", "col")

    def __init__(self, design, support):
        col_ptr = design.col_ptr
        starts, counts = col_ptr[support], np.diff(col_ptr)[support]
        self.indptr = np.zeros(support.size + 1, dtype=np.intp)
        np.cumsum(counts, out=self.indptr[1:])
        offsets = np.repeat(starts - self.indptr[:-1], counts)
        entry = offsets + np.arange(self.indptr[-1])
        self.indices = design.col_rows[entry]
        if design.is_tree:
            self.data = np.repeat(design.leaf_values[support], counts)
        elif design.n_tree_columns == 0:
            self.data = design.col_vals[entry]
        else:
            # mixed: a tree column's entries repeat its value, a general
            # column's are read past the tree part's entries
            in_tree = np.repeat(support < design.n_tree_columns, counts)
            self.data = np.empty(entry.size)
            self.data[in_tree] = np.repeat(
                design.leaf_values[support[support < design.n_tree_columns]],
                counts[support < design.n_tree_columns])
            self.data[~in_tree] = design.col_vals[entry[~in_tree] - design.tree_nnz]
        self.shape = (design.n_samples, support.size)
        # each entry's column, for the column sums below
        self.col = np.repeat(np.arange(support.size), counts)

    def rmatvec(self, v):
        """``M_S^T v`` (entries summed in column order, as a CSC product)."""
        return np.bincount(self.col, weights=self.data * v[self.indices],
                           minlength=self.shape[1])


def _columns(design, support):
    """The columns ``support`` of the design (:class:`_Columns`)."""
    return _Columns(design, support)


# the grouped (multinomial) model works on the support's columns as a dense
# (samples x support) array up to this many entries, else on sparse ones
GROUPED_DENSE_ENTRIES = 4_000_000


def _grouped_rows_model(engine, M_S, groups, n_groups, column_group, d, out, with_hessian):
    """The exact second-order model of the multinomial loss on the support.

    The datafit's per-row curvature is only the diagonal W p_k (1 - p_k) of
    each sample's K x K block W (diag(p) - p p^T) (the contract is per row):
    Newton steps on that model ignore how the classes pull on each other and
    stall (measured: iris, the engine alternated Newton steps on the weights
    with intercept steps for thousands of updates). Here, with X the support
    columns in sample space (column a of class k_a: X_ia = M_{iK + k_a, a}),
    D_ia = p_{i k_a} X_ia and W_i the sample's weight,

        H_ab = sum_i W_i (X_ia D_ib [k_a = k_b] - D_ia D_ib).

    The K intercepts (the datafit's, in the state's third row) are profiled
    out as the scalar intercept is for other datafits: their block H_bb is
    singular along (1, ..., 1) (the softmax does not change when every
    margin moves alike), and every gradient and cross term is orthogonal to
    that direction, so H_bb + c 1 1^T / K gives the minimum-norm move.
    """
    K = engine.row_group
    eta = engine.datafit_rows()[0].reshape(-1, K)
    P = np.exp(eta - eta.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    W = K * engine.sample_weight[::K]
    n, S = P.shape[0], M_S.shape[1]
    counts = np.diff(M_S.indptr)
    col = M_S.col
    sample = M_S.indices // K
    cls = np.zeros(S, dtype=np.intp)
    cls[counts > 0] = M_S.indices[M_S.indptr[:-1][counts > 0]] % K
    p_entry = P[sample, cls[col]]
    if n * S <= GROUPED_DENSE_ENTRIES:
        X = np.zeros((n, S))
        X[sample, col] = M_S.data
        D = np.zeros((n, S))
        D[sample, col] = M_S.data * p_entry
        WD = W[:, None] * D
        G1 = X.T @ WD
        G2 = D.T @ WD
    else:
        X = sp.csc_matrix((M_S.data, sample, M_S.indptr), shape=(n, S))
        D = sp.csc_matrix((M_S.data * p_entry, sample, M_S.indptr), shape=(n, S))
        WD = sp.csc_matrix((M_S.data * p_entry * W[sample], sample, M_S.indptr), shape=(n, S))
        G1 = (X.T @ WD).toarray()
        G2 = (D.T @ WD).toarray()
    # columns -> the penalty's groups (dense indicator: supports are small)
    C = np.zeros((S, n_groups))
    C[np.arange(S), groups] = 1.0
    fits_b = bool(getattr(engine.get_datafit(), "fit_intercept", False))
    if fits_b:
        WP = W[:, None] * P                                          # n x K
        h_bb = np.diag(WP.sum(axis=0)) - P.T @ WP
        scale = max(float(np.max(np.diag(h_bb))), 1e-300)
        # (a class predicted with certainty everywhere leaves H_bb nearly
        # singular in other directions too: _cholesky's ridge, else the
        # intercepts stay where they are for this step)
        factor, _ = _cholesky(h_bb + scale * np.ones((K, K)) / K)
        fits_b = factor is not None
    if fits_b:
        h_wb = -np.asarray(D.T @ WP)                                 # S x K
        h_wb[np.arange(S), cls] += np.asarray(WD.sum(axis=0)).ravel()
        g_b = d.reshape(-1, K).sum(axis=0)
        h_wb_g = C.T @ h_wb                                          # groups x K
        out["grad"] = out["grad"] - h_wb_g @ _cho_solve(factor, g_b)
        out.update(g_b=g_b, h_bb=factor, h_wb=h_wb, vector_b=True)
    if with_hessian:
        H = G1 * (cls[:, None] == cls[None, :]) - G2
        hess = C.T @ H @ C
        if fits_b:
            hess = hess - h_wb_g @ _cho_solve(factor, h_wb_g.T)
        out["hess"] = hess
    return out


def _support_model(engine, with_hessian=True):
    """On the groups of the support: the datafit's gradient and Hessian
    (intercept profiled out), the penalty's local model, and what moving
    the intercept along needs. None if the penalty has no local model."""
    model = engine.penalty_groups()
    if model is None:
        return None
    column_group, pen_grad, pen_hess = model
    support = np.flatnonzero(column_group >= 0)
    groups = column_group[support]
    n_groups = pen_grad.shape[0]
    M_S = _columns(engine.design, support)
    d, h = engine.row_derivatives()
    grad = np.bincount(groups, weights=M_S.rmatvec(d), minlength=n_groups)
    out = {"column_group": column_group, "pen_hess": pen_hess, "hess": None,
           "g_b": 0.0, "h_bb": 0.0, "h_wb": None, "vector_b": False}
    if engine.fit_intercept:
        h_wb = M_S.rmatvec(h)
        h_wb_g = np.bincount(groups, weights=h_wb, minlength=n_groups)
        out.update(g_b=float(d.sum()), h_bb=float(h.sum()), h_wb=h_wb)
        if out["h_bb"] > 0:
            grad -= h_wb_g * (out["g_b"] / out["h_bb"])
    out["grad"] = grad + pen_grad
    if engine.row_group > 1:
        return _grouped_rows_model(engine, M_S, groups, n_groups, column_group, d, out,
                                   with_hessian)
    if with_hessian:
        hess = group_hessian(engine.design, column_group, n_groups, h)
        if engine.fit_intercept and out["h_bb"] > 0:
            hess -= np.outer(h_wb_g, h_wb_g) / out["h_bb"]
        out["hess"] = hess
    return out


def group_hessian(design, Py_ssize_t[::1] column_group, Py_ssize_t n_groups,
                  const double[::1] weight):
    """Dense ``A^T diag(weight) A`` where column g of A sums the columns of
    group g, row by row: each row adds weight_i M_ij M_ik for the pairs of
    grouped columns it touches (sum_i k_i^2 work, k_i of them in row i)."""
    cdef Py_ssize_t n = design.n_samples, T = design.n_blocks, R = design.n_columns
    cdef Py_ssize_t i, t, p, a, k, cnt
    # the tree blocks' leaves (the first T0 blocks), then the general part's
    # entries (mixed: both)
    cdef bint is_tree = design.is_tree
    cdef Py_ssize_t T0 = design.n_tree_blocks
    cdef const int[:, ::1] table = design.leaf_table if T0 else None
    cdef const double[::1] leaf_values = design.leaf_values if T0 else None
    cdef const Py_ssize_t[::1] row_ptr = None if is_tree else design.row_ptr
    cdef const int[::1] row_cols = None if is_tree else design.row_cols
    cdef const double[::1] row_vals = None if is_tree else design.row_vals
    cdef Py_ssize_t[::1] idx = np.empty(T if is_tree else R, dtype=np.intp)
    cdef double[::1] val = np.empty(T if is_tree else R)
    hess_arr = np.zeros((n_groups, n_groups))
    cdef double[:, ::1] hess = hess_arr
    cdef double wi, va
    with nogil:
        for i in range(n):
            wi = weight[i]
            if wi == 0.0:
                continue
            cnt = 0
            for t in range(T0):
                k = table[i, t]
                if column_group[k] >= 0:
                    idx[cnt] = column_group[k]
                    val[cnt] = leaf_values[k]
                    cnt += 1
            if not is_tree:
                for p in range(row_ptr[i], row_ptr[i + 1]):
                    k = row_cols[p]
                    if column_group[k] >= 0:
                        idx[cnt] = column_group[k]
                        val[cnt] = row_vals[p]
                        cnt += 1
            for a in range(cnt):
                va = wi * val[a]
                for k in range(cnt):
                    hess[idx[a], idx[k]] += va * val[k]
    return hess_arr


def _newton_once(engine):
    """One Newton step on the current support (or, when the penalty's local
    model is concave enough to make the Hessian indefinite, a run of
    majorize-minimize steps). Returns "full" (the whole step, no sign
    change), "partial" (moved; call again), "kink" (moved by the line search
    to a kink of the penalty) or "none"."""
    n_support = np.count_nonzero(engine.coef)
    if n_support == 0 or n_support > NEWTON_MAX_SUPPORT:
        return "none"
    # the model reads the datafit's row derivatives, not the column gradients
    f_old = engine.refresh_value()
    model = _support_model(engine)
    if model is None:
        return "none"
    hess = model["hess"]
    factor, singular = _cholesky(hess + np.diag(model["pen_hess"]))
    if factor is not None:
        status = _try_step(engine, model, -_cho_solve(factor, model["grad"]),
                           f_old)
        # a singular model's step stops where the structure changes (a sign,
        # a kink), and the flat direction usually goes on past it
        return "kink" if singular and status == "partial" else status
    # indefinite (MCP's concave part): majorize the concave part by its
    # linearisation, keep the datafit Hessian (positive definite), and
    # iterate on the factorisation while the structure holds (a DC
    # algorithm: for the squared loss each step is a descent step of F)
    factor, _ = _cholesky(hess)
    if factor is None:
        return "none"
    moved = False
    for _ in range(NEWTON_MM_STEPS):
        status = _try_step(engine, model, -_cho_solve(factor, model["grad"]),
                           f_old)
        if status == "none":
            break
        moved = True
        f_new = engine.objective_value()
        if status in ("partial", "kink") or f_old - f_new <= 1e-15 * abs(f_old):
            break
        f_old = f_new
        new_model = _support_model(engine, with_hessian=False)
        if new_model is None or not np.array_equal(new_model["column_group"],
                                                   model["column_group"]):
            break
        model["grad"] = new_model["grad"]
        model.update(g_b=new_model["g_b"], h_bb=new_model["h_bb"], h_wb=new_model["h_wb"],
                     vector_b=new_model["vector_b"])
    return ("kink" if status == "kink" else "partial") if moved else "none"


def _try_step(engine, model, group_direction, f_old):
    """Move the groups along ``group_direction`` without crossing zero (and
    the intercept along with them); keep the move only if F decreases.

    Candidates in turn: the whole step projected on the current orthant
    (every weight that would change sign stops at zero, as in OWL-QN: drops
    many wrong rules at once), the step to the first crossing, and halved
    steps (fused groups can also change order)."""
    if not np.all(np.isfinite(group_direction)):
        return "none"
    column_group = model["column_group"]
    w = engine.coef
    b_old = _intercepts(engine, model)
    support = np.flatnonzero(column_group >= 0)
    direction = group_direction[column_group[support]]
    w_old = w[support].copy()
    full = w_old + direction
    crossing = w_old * full < 0
    candidates = []
    if not np.any(crossing):
        candidates.append((full, "full"))
    else:
        projected = full.copy()
        projected[crossing] = 0.0
        candidates.append((projected, "partial"))
        ratios = -w_old[crossing] / direction[crossing]
        step = float(np.min(ratios))
        first = w_old + step * direction
        first[np.flatnonzero(crossing)[ratios <= step * (1 + 1e-12)]] = 0.0
        candidates.append((first, "partial"))
    # the halved steps are points t = 1/2, 1/4, 1/8 of the line search
    # below (and the whole step its t = 1 when nothing crosses): their
    # values are kept for it (the same point, so the same value; each is a
    # full state rebuild, and on 3-class iris most line searches find
    # nothing after ~60 of them)
    steps = [None] * len(candidates) + [0.5 ** h for h in range(1, 4)]
    if not np.any(crossing):
        steps[0] = 1.0
    candidates += [(w_old + 0.5 ** h * direction, "partial") for h in range(1, 4)]
    known = {}
    for (cand, status), t in zip(candidates, steps):
        f_cand = _value_at(engine, model, support, w_old, b_old, cand)
        if f_cand < f_old:
            engine.record_point()
            return status
        if t is not None:
            known[t] = f_cand
    t = _line_minimum(engine, model, support, w_old, b_old, direction, f_old, known)
    if t > 0.0:
        _value_at(engine, model, support, w_old, b_old, w_old + t * direction)
        engine.record_point()
        return "kink"
    _value_at(engine, model, support, w_old, b_old, w_old)
    return "none"


def _intercepts(engine, model):
    """The intercept(s) the model moves: the engine's, or the K of a
    grouped datafit (a copy)."""
    if model.get("vector_b"):
        return engine.datafit_rows()[2, :engine.row_group].copy()
    return engine.intercept


def _value_at(engine, model, support, w_old, b_old, cand):
    """F with the support's weights at ``cand`` (the intercept moved along).

    Under a sign-bounded penalty (``engine.sign_bounds``) a weight that would
    change sign stops at zero: every support weight is nonzero and feasible,
    so its own sign's half-line is inside its bounds, the other may not be.
    (The halved steps and the line search of _try_step would otherwise
    cross zero where the full step does.)"""
    if engine.sign_bounds:
        cand = np.where(cand * w_old < 0, 0.0, cand)
    engine.coef[support] = cand
    if model.get("vector_b"):
        # the datafit's K intercepts (see _grouped_rows_model)
        engine.datafit_rows()[2, :b_old.shape[0]] = b_old - _cho_solve(
            model["h_bb"], model["g_b"] + model["h_wb"].T @ (cand - w_old))
    elif model["h_wb"] is not None and model["h_bb"] > 0:
        # the profiled intercept's Newton move for this move of w
        engine.intercept = b_old - (model["g_b"] + model["h_wb"] @ (cand - w_old)) / model["h_bb"]
    else:
        engine.intercept = b_old
    return engine.refresh_value()


def _line_minimum(engine, model, support, w_old, b_old, direction, f_old, known=None):
    """The step t in (0, 1] minimising F along ``direction``, 0 if none lowers F.

    Needed when the support's Hessian is singular: two trees with leaves
    covering the same rows make a direction along which the datafit does
    not change, and the ridged Newton direction is huge along it. F is then
    piecewise linear along the line (the fusion term), and its minimum is
    at a kink of the penalty, where a group merges or a weight reaches
    zero: a point the halved steps overshoot, and coordinate descent
    reaches only by equal small steps (the two blocks trade weight, each
    move limited by its own curvature). The minimum is bracketed on
    t = 2^-k, then located by golden-section search.
    """
    known = {} if known is None else known

    def value(t):
        # F at step t: kept from the caller's candidates when it tried t
        # (the engine's state is left wherever; the caller sets it after)
        f = known.get(t)
        if f is None:
            f = _value_at(engine, model, support, w_old, b_old, w_old + t * direction)
        return f
    t_hi, f_hi = 1.0, value(1.0)
    t, f_t = 0.5, value(0.5)
    for _ in range(LINE_BRACKET_STEPS):
        if f_t < f_old and f_t <= f_hi:
            t_lo = 0.5 * t
            f_lo = value(t_lo)
            if f_lo >= f_t:
                break            # a minimum in [t/2, 2t]
            t_hi, f_hi, t, f_t = t, f_t, t_lo, f_lo
        else:
            t_hi, f_hi, t, f_t = t, f_t, 0.5 * t, value(0.5 * t)
            if not f_t < f_old and np.array_equal(w_old + t * direction, w_old):
                # t d is below half an ulp of every weight: so is every
                # smaller step (rounding is monotone), each is the point w_old
                # with the same intercepts, F the same f_t >= f_old, and the
                # halvings left would all land here and return 0. (On 3-class
                # iris a Newton polish ends in ~60 such halvings of a tiny
                # step, each a full state rebuild.)
                return 0.0
    else:
        return 0.0
    if not f_t < f_old:
        return 0.0
    a, b = 0.5 * t, t_hi
    best_t, best_f = t, f_t
    ratio = 0.5 * (5.0 ** 0.5 - 1.0)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    f_c, f_d = value(c), value(d)
    for _ in range(LINE_GOLDEN_STEPS):
        if f_c <= f_d:
            b, d, f_d = d, c, f_c
            c = b - ratio * (b - a)
            f_c = value(c)
        else:
            a, c, f_c = c, d, f_d
            d = a + ratio * (b - a)
            f_d = value(d)
        for tt, ff in ((c, f_c), (d, f_d)):
            if ff < best_f:
                best_t, best_f = tt, ff
    return best_t
