"""Calibration and rank accuracy of risk predictions (Ustun & Rudin, *Learning
Optimized Risk Scores*, JMLR 2019, section 2)."""
import numpy as np

from firecy._validation import check_sample_weight

__all__ = ["calibration_error", "rank_auc", "reliability_table"]


def _check_binary(y_true, values, sample_weight, name):
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValueError(f"y_true must be 1-D, got shape {y.shape}")
    values = np.asarray(values, dtype=np.float64)
    if values.shape != y.shape:
        raise ValueError(f"{name} has shape {values.shape}, y_true {y.shape}")
    labels = np.unique(y)
    if not np.all(np.isin(labels, [0, 1])):
        raise ValueError(f"y_true must hold 0 and 1 (1 = the event), found {labels[:5].tolist()}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinity")
    s = check_sample_weight(sample_weight, y.shape[0])
    return y.astype(np.float64), values, s


def reliability_table(y_true, proba, *, groups=None, n_bins=10, sample_weight=None):
    """Predicted and observed risk per group of rows (a reliability diagram).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        1 for the event, 0 otherwise.
    proba : array-like of shape (n_samples,)
        Predicted risk of the event.
    groups : array-like of shape (n_samples,), optional
        Rows with equal ``groups`` form a group: a risk score's integer
        score (the paper's :math:`s_i`). Default: ``n_bins`` equal-frequency
        bins of ``proba`` (rows with equal ``proba`` stay together).
    n_bins : int, default=10
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    dict of ndarray
        ``group`` (the group's value, or the bin's index), ``weight`` (sum of
        the weights of its rows), ``predicted`` (weighted mean of ``proba``)
        and ``observed`` (weighted mean of ``y_true``, :math:`\\bar p_s`), one
        entry per non-empty group, sorted by group.

    Examples
    --------
    >>> from firecy.risk import reliability_table
    >>> t = reliability_table([0, 1, 1, 1], [0.2, 0.2, 0.9, 0.9], groups=[0, 0, 1, 1])
    >>> t["observed"].tolist()
    [0.5, 1.0]
    """
    y, p, s = _check_binary(y_true, proba, sample_weight, "proba")
    g = _bin_of(p, s, n_bins) if groups is None else np.asarray(groups)
    if g.shape != y.shape:
        raise ValueError(f"groups has shape {g.shape}, y_true {y.shape}")
    keys, inv = np.unique(g, return_inverse=True)
    weight = np.bincount(inv, weights=s, minlength=keys.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = np.bincount(inv, weights=s * p, minlength=keys.size) / weight
        observed = np.bincount(inv, weights=s * y, minlength=keys.size) / weight
    keep = weight > 0
    return {"group": keys[keep], "weight": weight[keep], "predicted": predicted[keep],
            "observed": observed[keep]}


def calibration_error(y_true, proba, *, groups=None, n_bins=10, sample_weight=None):
    """The expected calibration error CAL of the risk-score paper.

    .. math::

        \\mathrm{CAL} = \\frac{1}{n} \\sum_s \\sum_{i : s_i = s} |p_i - \\bar p_s|,
        \\qquad \\bar p_s = \\text{the observed risk of the rows with } s_i = s

    (weighted by ``sample_weight`` when given).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        1 for the event, 0 otherwise.
    proba : array-like of shape (n_samples,)
        Predicted risk.
    groups : array-like of shape (n_samples,), optional
        The score :math:`s_i` of each row (rows with equal scores form a
        group; the paper's definition for a risk score). Default:
        ``n_bins`` equal-frequency bins of ``proba``, the usual estimate for
        a model with a continuous score (Naeini et al., 2015).
    n_bins : int, default=10
    sample_weight : array-like of shape (n_samples,), optional

    Returns
    -------
    float
        In [0, 1]; 0 for a perfectly calibrated model.

    Examples
    --------
    >>> from firecy.risk import calibration_error
    >>> float(calibration_error([0, 1, 1, 1], [0.5, 0.5, 1.0, 1.0], groups=[0, 0, 1, 1]))
    0.0
    """
    y, p, s = _check_binary(y_true, proba, sample_weight, "proba")
    if s.sum() <= 0:
        return float("nan")
    g = _bin_of(p, s, n_bins) if groups is None else np.asarray(groups)
    if g.shape != y.shape:
        raise ValueError(f"groups has shape {g.shape}, y_true {y.shape}")
    _, inv = np.unique(g, return_inverse=True)
    weight = np.bincount(inv, weights=s)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = np.bincount(inv, weights=s * y) / weight
    return float(np.dot(s, np.abs(p - observed[inv])) / s.sum())


def _bin_of(p, s, n_bins):
    """Equal-frequency (by weight) bins of ``p``; rows with equal ``p`` share a bin."""
    if int(n_bins) < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    order = np.argsort(p, kind="stable")
    cum = np.cumsum(s[order])
    total = cum[-1] if cum.size else 0.0
    raw = np.minimum((n_bins * (cum - s[order]) / max(total, 1e-300)).astype(np.intp),
                     n_bins - 1)
    sorted_p = p[order]
    _, first = np.unique(sorted_p, return_index=True)
    g = np.empty_like(raw)
    g[order] = raw[first][np.searchsorted(sorted_p[first], sorted_p)]
    return g


def rank_auc(y_true, score, *, ties=0.5, sample_weight=None):
    """The area under the ROC curve of the risk-score paper.

    .. math::

        \\mathrm{AUC} = \\frac{1}{n^+ n^-} \\sum_{i : y_i = 1} \\sum_{k : y_k = 0}
        \\bigl([s_i > s_k] + \\mathrm{ties} \\cdot [s_i = s_k]\\bigr)

    The paper writes the strict comparison (``ties=0``); the usual AUC
    (scikit-learn's ``roc_auc_score``) counts a tie as one half, the default
    here. It matters for integer scores, which tie often.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        1 for the event, 0 otherwise.
    score : array-like of shape (n_samples,)
        Any score increasing with the risk.
    ties : float, default=0.5
    sample_weight : array-like of shape (n_samples,), optional
        Pairs are weighted by the product of their rows' weights.

    Returns
    -------
    float
        NaN when a class is absent.

    Examples
    --------
    >>> from firecy.risk import rank_auc
    >>> float(rank_auc([0, 0, 1, 1], [0, 1, 1, 2]))
    0.875
    >>> float(rank_auc([0, 0, 1, 1], [0, 1, 1, 2], ties=0.0))
    0.75
    """
    y, v, s = _check_binary(y_true, score, sample_weight, "score")
    pos, neg = s * y, s * (1.0 - y)
    if pos.sum() <= 0 or neg.sum() <= 0:
        return float("nan")
    keys, inv = np.unique(v, return_inverse=True)
    pos_at = np.bincount(inv, weights=pos, minlength=keys.size)
    neg_at = np.bincount(inv, weights=neg, minlength=keys.size)
    neg_below = np.cumsum(neg_at) - neg_at
    pairs = np.dot(pos_at, neg_below) + ties * np.dot(pos_at, neg_at)
    return float(pairs / (pos.sum() * neg.sum()))
