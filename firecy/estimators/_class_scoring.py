"""Probabilities from margins, and the losses a classifier's selection minimises.

A classifier's margin is the log-odds of class 1 (one output) or one score
per class (K outputs, probabilities by the softmax).  The selection scores
every path point on held-out rows with :class:`ClassificationLoss`, a
picklable object (joblib may ship it to processes or a Dask cluster).
"""
import numpy as np
from scipy.special import expit, log_expit, log_softmax, softmax

from firecy._metrics import roc_auc

__all__ = ["SCORINGS", "ClassificationLoss", "check_scoring", "probabilities"]

SCORINGS = ("log_loss", "brier", "error_rate", "roc_auc")


def check_scoring(scoring):
    """A scoring name of :data:`SCORINGS` or a callable; otherwise a ValueError."""
    if callable(scoring):
        return scoring
    if isinstance(scoring, str) and scoring in SCORINGS:
        return scoring
    raise ValueError(
        f"scoring must be one of {', '.join(map(repr, SCORINGS))} or a callable "
        f"scoring(y_true, proba, sample_weight) returning a loss, got {scoring!r}")


def probabilities(margins, n_outputs):
    """Class probabilities from margins, shape (..., K) (K = 2 for one output).

    One output: ``margins`` is the log-odds of class 1 (any shape), the
    probabilities ``[1 - sigmoid, sigmoid]``. ``n_outputs`` = K > 1: the
    trailing axis holds one margin per class, the probabilities are their
    softmax.
    """
    margins = np.asarray(margins, dtype=np.float64)
    if n_outputs == 1:
        p1 = expit(margins)
        return np.stack([1.0 - p1, p1], axis=-1)
    return softmax(margins, axis=-1)


def _weighted_mean(values, w):
    """Weighted mean over axis 0 (unweighted if the weights sum to zero)."""
    if w.sum() > 0:
        return np.tensordot(w, values, axes=(0, 0)) / w.sum()
    return values.mean(axis=0)


class ClassificationLoss:
    """The validation loss of classification path points (lower is better).

    Called as ``loss(y, margins, sample_weight)`` with ``y`` the packed
    target (class index in column 0) and ``margins`` of shape
    (n_rows, n_points) for one output or (n_rows, n_points, K); returns one
    value per path point.

    Parameters
    ----------
    scoring : {"log_loss", "brier", "error_rate", "roc_auc"} or callable
        ``"log_loss"``: the weighted mean negative log-likelihood;
        ``"brier"``: the weighted mean of ``sum_k (p_k - [y = k])^2``;
        ``"error_rate"``: 1 - accuracy; ``"roc_auc"``: 1 - ROC AUC (one-vs-rest,
        macro-averaged over the classes the held-out rows hold for K > 2
        classes; NaN when they hold a single class, and the selection
        averages over the folds where it is defined). A
        callable ``scoring(y_true, proba, sample_weight)`` gets the labels,
        the (n_rows, n_classes) probabilities and the weights and returns a
        value to minimise.
    classes : ndarray
        The labels, so that a callable sees them.
    """

    def __init__(self, scoring, classes):
        self.scoring = check_scoring(scoring)
        self.classes = np.asarray(classes)

    def __call__(self, y, margins, sample_weight):
        codes = np.asarray(y)[:, 0].astype(np.intp)
        w = np.asarray(sample_weight, dtype=np.float64)
        margins = np.asarray(margins, dtype=np.float64)
        binary = margins.ndim == 2
        n, n_points = margins.shape[:2]
        if self.scoring == "log_loss":
            if binary:
                label = (codes == 1)[:, None]
                nll = -np.where(label, log_expit(margins), log_expit(-margins))
            else:
                logp = log_softmax(margins, axis=2)
                nll = -logp[np.arange(n), :, codes]
            return _weighted_mean(nll, w)
        proba = probabilities(margins, 1 if binary else margins.shape[2])
        if self.scoring == "brier":
            onehot = np.zeros((n, 1, proba.shape[2]))
            onehot[np.arange(n), 0, codes] = 1.0
            return _weighted_mean(((proba - onehot) ** 2).sum(axis=2), w)
        if self.scoring == "error_rate":
            wrong = np.argmax(proba, axis=2) != codes[:, None]
            return _weighted_mean(wrong.astype(np.float64), w)
        out = np.empty(n_points)
        weights = w if w.sum() > 0 else None
        for p in range(n_points):
            if self.scoring == "roc_auc":
                out[p] = 1.0 - roc_auc(codes, proba[:, p, :], weights)
            else:
                out[p] = float(self.scoring(self.classes[codes], proba[:, p, :], weights))
        return out


