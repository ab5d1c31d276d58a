"""The Poisson loss (log link) for the proximal-Newton outer loop: value,
gradient and Hessian diagonal in the raw prediction ``eta`` (docs/datafits.rst).

    f(eta) = 1 / sum(s) * sum_i s_i (exp(eta_i) - y_i eta_i)

``eta_i = log(exposure_i) + c(x_i) + b + (M w)_i`` is the log of the expected
count; ``y`` are counts (non-negative, not necessarily integers). ``f`` is
half the mean Poisson deviance up to a constant in ``y``; with unit weights it
is skglm's ``Poisson`` datafit. Written in NumPy on whole arrays: the outer
loop calls it a few times per Newton step, the compiled engine does the rest.
"""
import numpy as np

__all__ = ["PoissonLoss", "check_counts", "log_exposure", "poisson_deviance"]

# exp overflows past ~709; a raw prediction that large is a diverged step,
# which the line search rejects (the value is then inf, never NaN)
_ETA_MAX = 700.0


def check_counts(y):
    """``y`` as float64 counts; negative or non-finite values are an error."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(y)):
        raise ValueError("Poisson targets must be finite")
    if np.any(y < 0):
        raise ValueError(
            f"Poisson targets must be non-negative counts, got the minimum {y.min()!r}")
    return y


def log_exposure(exposure, n_samples):
    """``log(exposure)`` (0 when None); a non-positive exposure is an error."""
    if exposure is None:
        return np.zeros(n_samples)
    e = np.asarray(exposure, dtype=np.float64).reshape(-1)
    if e.shape[0] != n_samples:
        raise ValueError(f"exposure has {e.shape[0]} values for {n_samples} samples")
    if not np.all(np.isfinite(e)) or np.any(e <= 0):
        raise ValueError("exposure must be positive and finite (a zero exposure carries no "
                         "information: drop the row or give it sample_weight 0)")
    return np.log(e)


def poisson_deviance(y, mu, sample_weight=None):
    """Weighted mean Poisson deviance ``2 (y log(y / mu) - y + mu)``."""
    y = np.asarray(y, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    ylogy = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0) / mu), 0.0)
    dev = 2.0 * (ylogy - y + mu)
    return float(np.average(dev, weights=sample_weight))


class PoissonLoss:
    """The Poisson loss on fixed data.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Counts.
    sample_weight : ndarray of shape (n_samples,)
        Non-negative, positive sum.
    """

    has_intercept = True

    def __init__(self, y, sample_weight):
        self.y = check_counts(y)
        s = np.asarray(sample_weight, dtype=np.float64)
        self.s = s / s.sum()   # the 1 / sum(s) of the objective, folded in

    def value(self, eta):
        """The datafit ``f(eta)``; ``inf`` past the overflow guard."""
        if eta.max() > _ETA_MAX:
            return np.inf
        return float(self.s @ (np.exp(eta) - self.y * eta))

    def gradient(self, eta):
        """``df / deta_i = s_i (exp(eta_i) - y_i) / sum(s)``."""
        return self.s * (np.exp(np.minimum(eta, _ETA_MAX)) - self.y)

    def hessian(self, eta):
        """The Hessian (diagonal: the loss is row-separable), ``s_i exp(eta_i) / sum(s)``."""
        return self.s * np.exp(np.minimum(eta, _ETA_MAX))

    def null_intercept(self, offset):
        """The optimal intercept at ``w = 0``: ``log(sum s y / sum s exp(offset))``."""
        num = float(self.s @ self.y)
        if num <= 0:
            raise ValueError("every count with positive weight is zero: a Poisson model "
                             "has no finite intercept")
        m = offset.max()
        return float(np.log(num) - m - np.log(self.s @ np.exp(offset - m)))

    def intercept_step(self, eta):
        """The exact intercept step (closed form for the log link)."""
        return float(np.log(self.s @ self.y) - np.log(self.s @ np.exp(np.minimum(eta, _ETA_MAX))))
