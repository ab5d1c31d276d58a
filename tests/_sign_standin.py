"""A Python stand-in for ``firecy.penalties.SignConstrained`` on separable
penalties (L1, MCP, fusion 0), used by tests/test_monotone.py only while the
compiled one is not in firecy yet: the estimator side of ``monotone=`` can be
checked end to end before the solver side lands.  With the compiled one
there, the tests use it (``sign_constrained`` below).

For a separable penalty whose one-coordinate prox objective is unimodal (L1;
MCP scaled by the curvature, gamma > 1), the prox under ``lower <= x <=
upper`` is the unconstrained prox clipped to the interval.
"""
import numpy as np


class PySignConstrained:
    is_separable = True

    def __init__(self, penalty, lower, upper):
        self.inner = penalty
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        self._lam = penalty.lam

    @property
    def lam(self):
        return self._lam

    @lam.setter
    def lam(self, value):
        self._lam = value
        self.inner.lam = value

    def value(self, w, curvature, columns=None, block=0):
        return self.inner.value_of(w, curvature, columns=columns, block=block)

    def prox(self, z, step, curvature, columns=None, block=0):
        out = self.inner.prox_of(z, step, curvature, columns=columns, block=block)
        return np.clip(out, self.lower[columns], self.upper[columns])

    def subdiff(self, w, curvature, columns=None, block=0):
        lo, hi = self.inner.subdiff_of(w, curvature, columns=columns, block=block)
        at0 = w == 0
        lo = np.where(at0 & (self.lower[columns] == 0), -np.inf, lo)
        hi = np.where(at0 & (self.upper[columns] == 0), np.inf, hi)
        return lo, hi

    def lambda_max(self, grad, curvature, columns=None, block=0):
        lo, hi = self.lower[columns], self.upper[columns]
        g = np.where(lo == 0, np.minimum(grad, 0.0), grad)
        g = np.where(hi == 0, np.maximum(g, 0.0), g)
        return self.inner.lambda_max_of(g, curvature, columns=columns, block=block)

    def local_quadratic(self, w, curvature, columns=None, block=0):
        return None     # no Newton steps: they could cross a bound

    def check_blocks(self, block_ptr):
        if int(block_ptr[-1]) != self.lower.size:
            raise ValueError(f"{self.lower.size} bounds for {int(block_ptr[-1])} columns")

    def __deepcopy__(self, memo):
        import copy
        return PySignConstrained(copy.deepcopy(self.inner, memo), self.lower.copy(),
                                 self.upper.copy())
