"""Integer points from real rule contributions: a scale search and local moves.

The card's score is ``S = p_0 + A p`` (``A`` the 0/1 rule membership, ``p``
integer points) and its risk ``expit(S / alpha)``.  Rounding ``alpha * c``
for one ``alpha`` is the classical scheme; two ideas of the risk-score
literature (Ustun & Rudin, *Learning Optimized Risk Scores*, JMLR 2019;
Liu et al., *FasterRisk*, NeurIPS 2022) improve on it:

* the scale is free: for every integer points vector the best scale (the
  "multiplier") is a one-dimensional convex problem, solved exactly here by
  Newton's method on ``1 / alpha``;
* local moves: one point more or less on one rule (or the start), kept when
  the log-loss at the refitted scale decreases, until no move helps.

Everything here works on the membership matrix of the kept rules on the
data the card is built on; nothing is fitted again.
"""
import numpy as np
from scipy.special import expit, log_expit

__all__ = ["best_scale", "local_moves", "round_points"]


def _loss(ys, eta, s, total):
    """Weighted mean log-loss; ``ys`` holds the labels as +1 / -1."""
    return float(-np.dot(s, log_expit(ys * eta)) / total)


def best_scale(score, ys, s, beta0=1.0, iters=30):
    """The slope ``beta = 1 / alpha`` minimising the log-loss of ``beta * score``.

    Parameters
    ----------
    score : ndarray of shape (n,)
        Integer scores.
    ys : ndarray of shape (n,)
        +1 for the event, -1 otherwise.
    s : ndarray of shape (n,)
        Row weights.
    beta0 : float, default=1.0
        Start of the Newton iterations (a safeguarded step halving keeps the
        loss decreasing).
    iters : int, default=30

    Returns
    -------
    beta : float
        > 0; ``beta0`` when the scores do not separate the classes at all
        (the loss then does not depend on a positive slope).
    loss : float
    """
    total = s.sum()
    z = ys * score
    beta = float(beta0)
    loss = _loss(ys, beta * score, s, total)
    for _ in range(iters):
        m = beta * z
        g = -np.dot(s, z * expit(-m)) / total
        h = np.dot(s, z * z * expit(m) * expit(-m)) / total
        if h <= 1e-300 or abs(g) <= 1e-12 * max(1.0, abs(beta)):
            break
        step = g / h
        t = 1.0
        while True:
            nb = beta - t * step
            if nb > 0:
                nl = _loss(ys, nb * score, s, total)
                if nl <= loss:
                    break
            t *= 0.5
            if t < 1e-8:
                return beta, loss
        done = abs(nb - beta) <= 1e-10 * beta
        beta, loss = nb, nl
        if done:
            break
    return beta, loss


def local_moves(A, ys, s, points, p0, beta, max_points, max_moves=200, floor=None,
                signs=None):
    """Greedy moves of one point on one rule (or the start) that lower the loss.

    Each round tries every move ``p_j +- 1`` (within ``[-max_points,
    max_points]``) and ``p_0 +- 1`` at the current scale, applies the best
    one if it lowers the log-loss, and refits the scale (:func:`best_scale`).
    ``floor``: moves whose loss (at the current scale, or after the refit)
    would fall below it are not taken, and the moves stop when only such
    moves lower the loss; ``None``: no floor.  ``signs`` (one per rule,
    optional): rule ``j``'s points stay in ``[0, max_points]`` where
    ``signs[j] > 0``, in ``[-max_points, 0]`` where ``signs[j] < 0`` and at 0
    where it is 0 (``points`` must start there); ``None``: free.

    Returns
    -------
    points : ndarray of float64
    p0 : float
    beta : float
    loss : float
    """
    total = s.sum()
    points = points.astype(np.float64).copy()
    k = points.shape[0]
    upper = np.full(k, float(max_points))
    lower = -upper
    if signs is not None:
        signs = np.sign(np.asarray(signs, dtype=np.float64))
        upper[signs < 0] = 0.0
        lower[signs > 0] = 0.0
        upper[signs == 0] = lower[signs == 0] = 0.0
        if np.any(points > upper) or np.any(points < lower):
            raise ValueError("the starting points do not have the signs given")
    score = A @ points + p0
    loss = _loss(ys, beta * score, s, total)
    # the moves as columns: +1 / -1 on each rule, +1 / -1 on the start
    D = np.concatenate([A, -A, np.ones((A.shape[0], 2))], axis=1)
    D[:, -1] = -1.0
    for _ in range(max_moves):
        allowed = np.concatenate([points < upper, points > lower, [True, True]])
        cand = score[:, None] + D                       # (n, 2k + 2)
        losses = -(s @ log_expit(ys[:, None] * beta * cand)) / total
        losses[~allowed] = np.inf
        if floor is not None:
            losses[losses < floor] = np.inf
        m = int(np.argmin(losses))
        if not losses[m] < loss - 1e-12:
            break
        nscore = cand[:, m].copy()
        nbeta, nloss = best_scale(nscore, ys, s, beta0=beta)
        if floor is not None and nloss < floor:
            break  # the refitted scale would take it below the floor: stop here
        if m < k:
            points[m] += 1
        elif m < 2 * k:
            points[m - k] -= 1
        else:
            p0 += 1 if m == 2 * k else -1
        score, beta, loss = nscore, nbeta, nloss
    return points, p0, beta, loss


def round_points(A, c, c0, event, s, *, max_points, n_scales=24, n_polish=6, saturate=3,
                 floor=None):
    """Integer points for contributions ``c`` (and the constant ``c0``).

    Every scale ``alpha`` of a grid on which the largest point stays within
    ``max_points`` rounds ``alpha * c`` (the start: floor or ceil of
    ``alpha * c0``); the ``n_polish`` best of them by log-loss get their
    scale refitted and :func:`local_moves`.  The grid goes on, at the same
    step, up to scales where the largest rule would get ``saturate *
    max_points`` points, its points (and any other beyond the range) clipped
    to ``max_points``: one rule of large weight and small support then no
    longer rounds every other rule to one point or none (a rule model at its
    rule budget, ``selection="budget"``, often has one); the ``n_polish``
    best of these saturated roundings are polished too.  ``saturate=1``:
    the unclipped grid alone.  ``floor``: the local moves' (see
    :func:`local_moves`).

    No rounding flips a sign: every point has the sign of its contribution
    ``c_j`` or is 0 (the grid rounds and clips ``alpha * c``; the local moves
    keep ``signs=sign(c)``).  A rule that raises the model's risk never lowers
    the card's, so a card rounded from a model fitted under monotone
    constraints keeps them.

    Returns
    -------
    list of (loss, points, p0, alpha)
        Every candidate (the plain roundings and the polished ones), for the
        caller's choice; a superset of those of any smaller ``saturate``
        (the unclipped ones are polished on their own).
    """
    ys = np.where(event == 1, 1.0, -1.0)
    total = s.sum()
    top = float(np.max(np.abs(c))) if c.size else 0.0
    # the same step (1 / n_scales of a point on the largest rule) in both parts
    steps = int(saturate) * n_scales * max_points
    scales = (np.linspace(0.5, int(saturate) * max_points + 0.5, steps, endpoint=False)[1:]
              / top if top > 0 else np.array([1.0]))
    plain, clipped = [], []
    for alpha in scales:
        raw = np.round(alpha * c)
        pts = np.clip(raw, -max_points, max_points)
        base = A @ pts
        into = clipped if pts.size and np.any(pts != raw) else plain
        for p0 in {float(np.floor(alpha * c0)), float(np.ceil(alpha * c0))}:
            loss = _loss(ys, (base + p0) / alpha, s, total)
            into.append((loss, pts, p0, float(alpha)))
    polished = []
    for cands in (plain, clipped):
        cands.sort(key=lambda t: t[0])
        done = set()
        for loss, pts, p0, alpha in cands:
            if len(done) >= n_polish:
                break
            key = (p0,) + tuple(pts.tolist())
            if key in done:
                continue
            done.add(key)
            beta, _ = best_scale(A @ pts + p0, ys, s, beta0=1.0 / alpha)
            q, q0, beta, l3 = local_moves(A, ys, s, pts, p0, beta, max_points, floor=floor,
                                          signs=c)
            polished.append((l3, q, float(q0), 1.0 / beta))
    return plain + clipped + polished
