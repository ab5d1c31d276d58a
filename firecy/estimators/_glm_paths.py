"""How the count and survival estimators fit their paths: the ``fitter``
objects of :func:`~firecy.estimators._selection.select_on_paths` for the
Poisson and Cox losses, on the proximal-Newton outer loop
(:mod:`firecy.solver._irls`), and their validation losses.

Both read a *packed target*, one row per sample (the selection slices it by
rows): Poisson ``[count, offset]`` with the offset ``log(exposure) + c(x)``;
Cox ``[event, time, offset]`` with the offset ``c(x)``.
"""
import numpy as np

from firecy._validation import check_sample_weight
from firecy.datafits import CoxLoss, cox_deviance
from firecy.datafits import PoissonLoss, poisson_deviance
from firecy.solver import IRLSProblem, irls_path, irls_refine

__all__ = ["PoissonPaths", "CoxPaths", "poisson_validation_loss",
           "cox_validation_loss"]


class _IRLSPaths:
    # Refinement where the rule count jumps (the estimators' refine_path) is
    # implemented (irls_refine) but off for these losses: measured on the four
    # survival sets, 5-fold CV, two seeds, it gives FIRE and L1 the whole
    # budget (13-14 rules) for 1.5-2.5 times FIRE's CPU and does not change
    # the test concordance of either, nor FIRE against L1, beyond fold noise
    # (benchmarks/counts_survival/RESULTS.md, "Selection"). A benchmark sets
    # it on the class to measure again.
    refine = False
    #: irls_path fits unpenalised blocks first (a stable fit's kept pool)
    keeps_unpenalised_blocks = True

    def path(self, design, y, penalty, *, sample_weight=None, lambdas=None, n_lambdas=50,
             eps=1e-3, max_rules=None, fit_intercept=True, tol=1e-6, max_iter=None,
             progress=None, refine_path=False):
        s = check_sample_weight(sample_weight, y.shape[0])
        loss, offset = self.loss(y, s)
        problem = IRLSProblem(design, loss, offset, fit_intercept)
        path = irls_path(problem, penalty, lambdas=lambdas, n_lambdas=n_lambdas, eps=eps,
                         max_rules=max_rules, tol=tol, inner_max_iter=max_iter,
                         progress=progress)
        if refine_path and self.refine:
            path = irls_refine(problem, penalty, path, max_rules=max_rules, tol=tol,
                               inner_max_iter=max_iter, progress=progress)
        return path

    def predict(self, design, y, path):
        """Raw predictions (log rate + log exposure; log partial hazard),
        shape (n_rows, n_points)."""
        return (np.asarray(design.tocsc() @ path.coefs.T) + path.intercepts[None, :]
                + y[:, -1:])


class PoissonPaths(_IRLSPaths):
    """Paths of the Poisson loss; packed target ``[count, offset]``."""

    @staticmethod
    def loss(y, s):
        return PoissonLoss(y[:, 0], s), y[:, 1]


class CoxPaths(_IRLSPaths):
    """Paths of the Cox partial likelihood; packed target ``[event, time, offset]``;
    ``ties``: "breslow" or "efron" (:class:`~firecy.datafits._cox_loss.CoxLoss`)."""

    def __init__(self, ties="breslow"):
        self.ties = ties

    def loss(self, y, s):
        return CoxLoss(y[:, 0], y[:, 1], s, self.ties), y[:, 2]


def poisson_validation_loss(y, pred, sample_weight):
    """Mean Poisson deviance of each column of raw predictions ``pred``."""
    w = sample_weight if sample_weight.sum() > 0 else None
    return np.array([poisson_deviance(y[:, 0], np.exp(pred[:, k]), w)
                     for k in range(pred.shape[1])])


def cox_validation_loss(y, pred, sample_weight, ties="breslow"):
    """The Cox partial likelihood (Breslow or Efron ties) of each column of
    ``pred`` on the validation rows: their own risk sets, as glmnet's
    ``type.measure = "deviance"`` for ``family = "cox"`` does in its
    ungrouped form."""
    w = sample_weight if sample_weight.sum() > 0 else np.ones_like(sample_weight)
    return np.array([cox_deviance(y[:, 0], y[:, 1], pred[:, k], w, ties)
                     for k in range(pred.shape[1])])
