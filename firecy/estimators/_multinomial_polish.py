"""Joint Newton steps of the multinomial loss on the support of every class.

The class-by-class descent of :mod:`firecy.estimators._logistic_paths`
converges linearly (the classes are coupled through the softmax), and its
stopping rule measures the decrease of F, so two runs that start from
different points (e.g. weighted rows and repeated rows, the same objective)
stop up to about ``sqrt(tol)`` apart. Once the support is right the problem
restricted to it is smooth: with the penalty's local model
(``Penalty.local_groups``, the contract the engine's own Newton steps use:
coordinates, or fused segments of leaves, that move together) and the exact
multinomial Hessian

.. math::

    H = \\sum_i \\tilde s_i J_i^T (\\mathrm{diag}(p_i) - p_i p_i^T) J_i,
    \\qquad \\tilde s_i = s_i / \\sum s,

(``J_i`` maps the variables, the groups of every class and the K
intercepts, to row i's K margins) Newton steps reach the restricted
stationary point to rounding in a few steps. The support is never changed
here: a step that would move a weight across zero is refused, and every
accepted step lowers F (a backtracking line search on the true F).
"""
import numpy as np
from scipy.linalg import cho_factor, cho_solve

__all__ = ["polish_multinomial", "row_logsumexp"]

# largest number of variables (groups + intercepts) for a joint Newton step
POLISH_MAX_VARIABLES = 400
# largest rows x variables (two dense arrays of this size)
POLISH_MAX_ENTRIES = 20_000_000
POLISH_MAX_STEPS = 30
# what polish_multinomial returns when a weight stopped at zero
SHRUNK = "shrunk"


def row_logsumexp(eta):
    """log sum_k exp(eta[:, k]) per row (plain NumPy: scipy's logsumexp
    costs more in argument handling than in arithmetic on these sizes)."""
    top = eta.max(axis=1)
    return top + np.log(np.exp(eta - top[:, None]).sum(axis=1))


def _dense_columns(state, k, columns):
    """Columns of class k's design, dense (n x len(columns))."""
    sub = state.designs[k][0]
    if sub.is_tree:
        blocks = np.searchsorted(sub.block_ptr, columns, side="right") - 1
        return (sub.leaf_table[:, blocks] == columns) * sub.leaf_values[columns]
    return np.asarray(state.class_csc(k)[:, columns].todense())


def _class_groups(pen, wk, curv, block_ptr):
    """The penalty's local model on class k's blocks in use: (columns,
    column group, penalty gradient, penalty Hessian), or None."""
    nz_blocks = np.unique(np.searchsorted(block_ptr, np.flatnonzero(wk), side="right") - 1)
    cols, groups, grads, hesses = [], [], [], []
    n_groups = 0
    for t in nz_blocks:
        lo, hi = block_ptr[t], block_ptr[t + 1]
        model = pen.local_groups_of(wk[lo:hi], curv[lo:hi], columns=np.arange(lo, hi),
                                    block=int(t))
        if model is None:
            return None
        group, g, h = model
        keep = group >= 0
        cols.append(np.arange(lo, hi)[keep])
        groups.append(group[keep] + n_groups)
        grads.append(g)
        hesses.append(h)
        n_groups += g.shape[0]
    if not cols:
        return (np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros(0),
                np.zeros(0))
    return (np.concatenate(cols), np.concatenate(groups), np.concatenate(grads),
            np.concatenate(hesses))


def polish_multinomial(state, pen, w, b):
    """Newton steps on the joint support; ``w`` and ``b`` are updated in place.

    Parameters
    ----------
    state : _Multinomial
        The class designs, labels, weights and offsets.
    pen : Penalty
    w : ndarray of shape (n_columns,)
    b : ndarray of shape (n_classes,)

    Returns
    -------
    True, False or SHRUNK
        True if it converged (the last Newton step was below rounding);
        ``SHRUNK`` if a step took weights to zero (the support shrank: the
        zeros are to be confirmed); False if it stopped without (no local
        model, no decrease, too many variables). ``w`` and ``b`` hold the
        last accepted point (never worse than the start).
    """
    K, s = state.K, state.s / state.s.sum()
    if not np.all(state.present):
        return False   # an absent class's intercept follows the others: not smooth
    classes = []
    n_var = 0
    for k, (sub, cols) in enumerate(state.designs):
        if sub is None:
            classes.append(None)
            continue
        curv = state.class_curvature(k)
        ptr = np.asarray(sub.block_ptr)
        wk = w[cols]
        # the penalty on class k's design (its columns renumbered:
        # SignConstrained's bounds restricted to them)
        pen_k = state.class_penalty(pen, k) if hasattr(state, "class_penalty") else pen
        groups = _class_groups(pen_k, wk, curv, ptr)
        if groups is None:
            return False
        gcols, ggroup, pgrad, phess = groups
        # A_k: the group columns of class k, dense (n x G_k)
        A = np.zeros((state.n_rows, pgrad.shape[0]))
        if gcols.size:
            np.add.at(A.T, ggroup, _dense_columns(state, k, gcols).T)
        classes.append(dict(pen=pen_k, cols=cols, gcols=gcols, ggroup=ggroup, A=A, curv=curv,
                            ptr=ptr,
                            start=n_var, n=pgrad.shape[0], pgrad=pgrad, phess=phess))
        n_var += pgrad.shape[0]
    # the loss is the same when every intercept moves by the same amount:
    # the last class's stays where it is (the Hessian would be singular)
    n_icpt = K - 1 if state.fit_intercept else 0
    V = n_var + n_icpt
    if V == 0 or V > POLISH_MAX_VARIABLES:
        return False

    if state.n_rows * V > POLISH_MAX_ENTRIES:
        return False
    # one feature column per variable (a group's summed columns, or a
    # class's intercept) and the class whose margin it moves
    feature = np.zeros((state.n_rows, V))
    var_class = np.empty(V, dtype=np.intp)
    for k, c in enumerate(classes):
        if c is not None:
            feature[:, c["start"]:c["start"] + c["n"]] = c["A"]
            var_class[c["start"]:c["start"] + c["n"]] = k
            del c["A"]
    feature[:, n_var:] = 1.0
    var_class[n_var:] = np.arange(n_icpt)
    same_class = var_class[:, None] == var_class[None, :]

    for c in classes:
        if c is not None:
            c["blocks"] = np.unique(np.searchsorted(c["ptr"], c["gcols"], side="right") - 1)

    def objective(w, eta):
        value = float(np.dot(s, row_logsumexp(eta) - eta[rows, state.codes]))
        for c in classes:
            if c is None:
                continue
            wk, ptr, curv = w[c["cols"]], c["ptr"], c["curv"]
            for t in c["blocks"]:
                lo, hi = ptr[t], ptr[t + 1]
                value += c["pen"].value_of(wk[lo:hi], curv[lo:hi], columns=np.arange(lo, hi),
                                      block=int(t))
        return value

    rows = np.arange(state.n_rows)
    eta = state.margins(w, b)
    f_old = objective(w, eta)
    Y = np.zeros((state.n_rows, K))
    Y[rows, state.codes] = 1.0
    models = [None if c is None else (c["gcols"], c["ggroup"], c["pgrad"], c["phess"])
              for c in classes]
    for _ in range(POLISH_MAX_STEPS):
        P = np.exp(eta - row_logsumexp(eta)[:, None])
        R = s[:, None] * (P - Y)
        grad = np.einsum("iv,iv->v", feature, R[:, var_class])
        pen_hess = np.zeros(V)
        for c, model in zip(classes, models):
            if c is None or c["n"] == 0:
                continue
            if model is None or not np.array_equal(model[0], c["gcols"]) \
                    or not np.array_equal(model[1], c["ggroup"]):
                return False   # the structure changed (a fused segment split)
            grad[c["start"]:c["start"] + c["n"]] += model[2]
            pen_hess[c["start"]:c["start"] + c["n"]] = model[3]
        # H_uv = sum_i s_i f_u f_v (p_cu [cu = cv] - p_cu p_cv)
        G = feature * P[:, var_class]
        sG = s[:, None] * G
        H = np.where(same_class, sG.T @ feature, 0.0) - sG.T @ G
        step, exact = _newton_direction(H, pen_hess, grad)
        if step is None:
            return False
        # the step's size relative to the variables; Newton's error after
        # a full exact step is of the order of its square
        size = float(np.max(np.abs(step))) / (1.0 + max(
            float(np.max(np.abs(w[w != 0]), initial=0.0)), float(np.max(np.abs(b)))))
        if size <= 1e-13:
            return True
        # the decrease the model predicts: below 1e-12 (1 + |F|) the
        # rounding of F (a sum of per-row terms of the size of the margins,
        # which cancel) cannot confirm a decrease, while the margins can
        # still move (flat directions: probabilities near 0 or 1); the exact
        # model's step is then taken as it is, unverified
        decrement = -float(grad @ step)
        verify = decrement > 1e-12 * (1.0 + abs(f_old))
        if not verify and not exact:
            return True
        # the margins move linearly with the variables
        deta = np.column_stack([feature[:, var_class == k] @ step[var_class == k]
                                for k in range(K)])
        new_w, new_b = w.copy(), b.copy()
        accepted = False
        for t in (1.0, 0.5, 0.25, 0.125) if verify else (1.0,):
            crossing = np.zeros(w.shape[0], dtype=bool)
            for c in classes:
                if c is None or c["n"] == 0:
                    continue
                glob = c["cols"][c["gcols"]]
                new_w[glob] = w[glob] + t * step[c["start"]:c["start"] + c["n"]][c["ggroup"]]
                crossing[glob] = new_w[glob] * w[glob] <= 0
            new_b[:n_icpt] = b[:n_icpt] + t * step[n_var:]
            if np.any(crossing):
                # the restricted optimum lies beyond zero for these weights:
                # they stop at zero (as in OWL-QN), the support shrinks, and
                # the caller must confirm the zeros with a cycle
                new_w[crossing] = 0.0
                eta_new = state.margins(new_w, new_b)
                f_new = objective(new_w, eta_new)
                if f_new <= f_old or not verify:
                    w[:], b[:] = new_w, new_b
                    return SHRUNK
                return False
            eta_new = eta + t * deta
            f_new = objective(new_w, eta_new)
            if f_new <= f_old or not verify:
                accepted = True
                break
        if not accepted:
            return False
        w[:], b[:], eta, f_old = new_w, new_b, eta_new, min(f_new, f_old)
        if exact and t == 1.0 and size <= 1e-10:
            return True
        models = [None if c is None else _class_groups(c["pen"], w[c["cols"]], c["curv"],
                                                       c["ptr"])
                  for c in classes]
    return False


def _newton_direction(H, pen_hess, grad):
    """-(H + diag(pen_hess))^-1 grad; with a concave penalty part that makes
    it indefinite, the datafit Hessian alone (a majorize-minimize step of the
    concave part; the line search keeps F decreasing)."""
    scale = max(float(np.max(np.abs(np.diag(H)))), 1e-300)
    for M, exact in ((H + np.diag(pen_hess), True), (H, False)):
        for ridge in (0.0, 1e-12 * scale):
            try:
                factor = cho_factor(M + ridge * np.eye(M.shape[0]), check_finite=False)
            except np.linalg.LinAlgError:
                continue
            d = -cho_solve(factor, grad, check_finite=False)
            if np.all(np.isfinite(d)):
                return d, exact
    return None, False
