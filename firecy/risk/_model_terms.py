"""What a risk card reads from a fitted binary rule model: which kept rules a
row satisfies, each rule's contribution to the log-odds, the scores a card
can reach, and the event indicator of the labels."""
import numpy as np
from scipy.special import log_expit

__all__ = ["rule_membership", "contributions", "log_loss", "achievable_scores",
           "event_indicator"]


def rule_membership(model, X):
    """(rows x kept rules) 0/1 matrix, the kept columns, and X for the model."""
    Xm = model._validate_predict_data(X)
    ens = model.ensemble_
    cols = np.flatnonzero(model.coef_)
    tree = np.searchsorted(ens.block_ptr, cols, side="right") - 1
    blocks, at = np.unique(tree, return_inverse=True)
    table = np.asarray(ens.leaf_table(Xm, blocks=blocks))  # the kept rules' trees only
    A = (table[:, at] == cols[None, :]).astype(np.float64)
    return A, cols, Xm


def contributions(model, Xm, cols):
    """Per kept rule c_j (log-odds of classes_[1]) and the constant c_0."""
    ens = model.ensemble_
    coef = np.asarray(model.coef_, dtype=np.float64)
    c = coef[cols] * ens.leaf_values[cols]
    base = np.asarray(ens.baseline(Xm), dtype=np.float64).reshape(Xm.shape[0], -1)
    if base.shape[0] and not np.allclose(base, base[:1], rtol=0.0, atol=1e-12):
        raise ValueError(
            "the ensemble's baseline varies by row (a gradient boosting model with a "
            "custom init estimator): a card's starting points must be one number")
    b = np.atleast_1d(np.asarray(model.intercept_, dtype=np.float64))
    first = base[0] if base.shape[0] else np.zeros(b.size)
    if ens.n_outputs == 1:
        return c, float(b[0] + first[0])
    # two outputs (one score per class): the log-odds is score_1 - score_0
    tree = np.searchsorted(ens.block_ptr, cols, side="right") - 1
    sign = np.where(ens.tree_class[tree] == 1, 1.0, -1.0)
    return sign * c, float((b[1] + first[1]) - (b[0] + first[0]))


def log_loss(y, eta, s):
    return float(-np.dot(s, np.where(y == 1, log_expit(eta), log_expit(-eta))) / s.sum())


def achievable_scores(ens, cols, points, intercept):
    """Every total a row can reach: per tree, one kept leaf or (if the tree has
    leaves not kept) none; a superset when rules of different trees exclude
    each other."""
    tree = np.searchsorted(ens.block_ptr, cols, side="right") - 1
    totals = {0}
    for t in np.unique(tree):
        mine = points[tree == t]
        options = set(mine.tolist())
        if np.count_nonzero(tree == t) < ens.block_ptr[t + 1] - ens.block_ptr[t]:
            options.add(0)
        totals = {a + o for a in totals for o in options}
    return np.array(sorted(intercept + v for v in totals), dtype=np.int64)


def event_indicator(model, y):
    classes = model.classes_
    y = np.asarray(y)
    unknown = ~np.isin(y, classes)
    if np.any(unknown):
        raise ValueError(f"y has labels {np.unique(y[unknown])[:5].tolist()} that are not "
                         f"among the model's classes {classes.tolist()}")
    return (y == classes[1]).astype(np.float64)
