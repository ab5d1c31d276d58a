"""How a classifier fits its regularisation paths: the ``fitter`` objects of
:func:`~firecy.estimators._selection.select_on_paths` for classification.

Both fitters read a *packed target*, one row per sample, so that the selection
can slice it by rows like any target: column 0 holds the class index
(0 .. K-1; 0 or 1 for a binary model) and columns 1: the ensemble's baseline
for each output (the raw margin no leaf carries), which enters the margin as
a per-row offset.

* :class:`BinaryLogisticPaths` (one output): the logistic loss of
  :class:`~firecy.datafits.Logistic`, the baseline as ``offset``;
  :func:`~firecy.solver.fire_path` does everything.
* :class:`MultinomialPaths` (K outputs, every block speaking for one class):
  the multinomial (softmax) loss

  .. math::

     F(w, b) = \\frac{1}{\\sum_i s_i} \\sum_i s_i \\Bigl(\\log \\sum_k e^{\\eta_{ik}}
               - \\eta_{i y_i}\\Bigr) + \\sum_k P(w_k), \\qquad
     \\eta_{ik} = o_{ik} + b_k + (M_k w_k)_i,

  minimised by block coordinate descent over the classes. With the other
  classes' margins fixed, the loss in :math:`\\eta_{\\cdot k}` is exactly a
  binary logistic loss with labels :math:`[y_i = k]` and the per-row offset
  :math:`o_{ik} - \\log \\sum_{k' \\neq k} e^{\\eta_{ik'}}` (plus a constant),
  so each class step is a warm-started :func:`~firecy.solver.solve` with the
  logistic datafit; the penalty is a sum over blocks, hence over classes.
  Every class step lowers :math:`F`; the cycles stop when a cycle lowers it
  by less than ``tol`` (relative).  No datafit contract is involved beyond
  the logistic one.  Once the support holds over a cycle, and after the
  confirming cycle, joint Newton steps on the support
  (:mod:`~firecy.estimators._multinomial_polish`) land on the restricted
  stationary point itself: the cycles alone converge linearly and stop
  about ``sqrt(tol)`` from it.
"""
import numpy as np

from firecy._validation import check_sample_weight
from firecy.estimators._multinomial_cycles import absent_class_margin
from firecy.estimators._multinomial_engine import multinomial_path
from firecy.estimators._multinomial_polish import row_logsumexp
from firecy.solver import PathResult, fire_path

__all__ = ["BinaryLogisticPaths", "MultinomialPaths", "multinomial_path", "pack_target"]


def pack_target(codes, baseline):
    """The packed target: class index, then the baseline of each output."""
    baseline = np.asarray(baseline, dtype=np.float64)
    baseline = baseline.reshape(baseline.shape[0], -1)
    return np.column_stack([np.asarray(codes, dtype=np.float64), baseline])


# ---------------------------------------------------------------------------
# binary
# ---------------------------------------------------------------------------
class BinaryLogisticPaths:
    """Paths of the logistic loss; the ensemble's baseline is the offset."""

    #: :func:`~firecy.solver.fire_path` fits unpenalised blocks first (``_stable``)
    keeps_unpenalised_blocks = True

    def path(self, design, y, penalty, *, sample_weight=None, **kwargs):
        labels, offset = y[:, 0], y[:, 1]
        s = check_sample_weight(sample_weight, labels.shape[0])
        present = np.unique(labels[s > 0])
        if present.size < 2:
            return _constant_path(design.n_columns, kwargs.get("lambdas"),
                                  np.array([_single_class_intercept(present, s, offset)]),
                                  kwargs.get("fit_intercept", True))
        return fire_path(design, labels, penalty, datafit="logistic", offset=offset,
                         sample_weight=sample_weight, **kwargs)

    def predict(self, design, y, path):
        """Margins (log-odds of class 1), shape (n_rows, n_points)."""
        return (np.asarray(design.tocsc() @ path.coefs.T) + path.intercepts[None, :]
                + y[:, 1:2])

    def training_loss(self, design, y, path, sample_weight):
        """The weighted mean log-loss at each point of ``path`` on the rows
        of ``design`` (what the path minimises, without the penalty)."""
        m = self.predict(design, y, path)
        loss = np.logaddexp(0.0, m) - y[:, :1] * m
        return np.average(loss, axis=0, weights=sample_weight)


def _single_class_intercept(present, s, offset):
    """A fold whose training rows hold one class: its margin (about the
    probability of that class minus half an observation)."""
    if present.size == 0:
        return 0.0
    margin = -absent_class_margin(int(np.count_nonzero(s > 0)))
    margin = margin if present[0] == 1 else -margin
    return float(margin - np.average(offset, weights=s if s.sum() > 0 else None))


def _single_class_intercepts(present, s, offsets, n_classes):
    """The intercepts of a multinomial fold whose training rows hold one
    class: every other class at the log-odds of half an observation against
    it (the absent-class rule of the cycles), the baseline's mean taken
    off, summing to zero like every multinomial solution."""
    b = np.zeros(n_classes)
    if present.size:
        b[:] = absent_class_margin(int(np.count_nonzero(s > 0)))
        b[present[0]] = 0.0
        b -= np.average(offsets, axis=0, weights=s if s.sum() > 0 else None)
    return b - b.mean()


def _constant_path(n_columns, lambdas, intercept, fit_intercept):
    """A path without rules (a degenerate fold): one point per lambda asked."""
    lambdas = np.array([np.inf] if lambdas is None else lambdas, dtype=np.float64)
    intercept = intercept if fit_intercept else np.zeros_like(intercept)
    m = lambdas.shape[0]
    icpt = np.repeat(intercept[None, :], m, axis=0)
    return PathResult(
        lambdas=lambdas, coefs=np.zeros((m, n_columns)),
        intercepts=icpt[:, 0] if intercept.size == 1 else icpt,
        objectives=np.full(m, np.nan), n_rules=np.zeros(m, dtype=np.intp),
        n_iter=np.zeros(m, dtype=np.intp), converged=np.ones(m, dtype=bool),
        lambda_max=float(lambdas[0]),
    )


# ---------------------------------------------------------------------------
# multinomial
# ---------------------------------------------------------------------------
class MultinomialPaths:
    """Paths of the multinomial loss over class-specific blocks.

    Parameters
    ----------
    block_class : ndarray of int, shape (n_blocks,)
        The class (output) each block speaks for.
    n_classes : int
    """

    def __init__(self, block_class, n_classes):
        self.block_class = np.asarray(block_class, dtype=np.intp)
        self.n_classes = int(n_classes)

    def for_blocks(self, block_class):
        """This fitter on other rule blocks (a stable fit's pool), of the
        classes ``block_class``."""
        return MultinomialPaths(block_class, self.n_classes)

    def with_extra_blocks(self, extra_class):
        """This fitter on a design with more blocks after the rules' (the
        linear terms'), of the classes ``extra_class``."""
        return MultinomialPaths(np.r_[self.block_class, np.asarray(extra_class, dtype=np.intp)],
                                self.n_classes)

    def path(self, design, y, penalty, *, sample_weight=None, **kwargs):
        s = check_sample_weight(sample_weight, y.shape[0])
        present = np.unique(y[s > 0, 0]).astype(np.intp)
        if present.size < 2:
            # a fold whose training rows hold one class (a user's splitter,
            # or zero weights): nothing to separate, as for the binary model
            return _constant_path(design.n_columns, kwargs.get("lambdas"),
                                  _single_class_intercepts(present, s, y[:, 1:],
                                                           self.n_classes),
                                  kwargs.get("fit_intercept", True))
        return multinomial_path(design, y, penalty, block_class=self.block_class,
                                n_classes=self.n_classes, sample_weight=sample_weight,
                                **kwargs)

    def predict(self, design, y, path):
        """Margins, shape (n_rows, n_points, n_classes)."""
        M = design.tocsc()
        out = np.empty((design.n_samples, len(path), self.n_classes))
        col_class = np.repeat(self.block_class, np.diff(design.block_ptr))
        for k in range(self.n_classes):
            cols = col_class == k
            out[:, :, k] = np.asarray(M[:, cols] @ path.coefs[:, cols].T)
        return out + path.intercepts[None, :, :] + y[:, None, 1:]

    def training_loss(self, design, y, path, sample_weight):
        """The weighted mean multinomial log-loss at each point of ``path``
        on the rows of ``design``."""
        eta = self.predict(design, y, path)
        n, m, K = eta.shape
        lse = row_logsumexp(eta.reshape(n * m, K)).reshape(n, m)
        own = np.take_along_axis(eta, y[:, 0].astype(np.intp)[:, None, None], axis=2)[:, :, 0]
        return np.average(lse - own, axis=0, weights=sample_weight)
