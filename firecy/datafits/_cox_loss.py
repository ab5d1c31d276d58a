"""The Cox partial likelihood (Breslow ties) for the proximal-Newton outer
loop: value, gradient and the Hessian diagonal in the raw prediction ``eta``
(the log partial hazard; docs/datafits.rst).

    f(eta) = 1 / sum(s) * sum_i s_i d_i (log R_i - eta_i),
    R_i = sum_{k : t_k >= t_i} s_k exp(eta_k)

with event indicators ``d``, times ``t`` and sample weights ``s``. Tied times
share one risk set (Breslow). Efron's approximation (``ties="efron"``) takes
the ``m_g`` events tied at time ``t_g`` out of the risk set in equal parts:

    f(eta) = 1 / sum(s) * (sum_g wbar_g sum_{r=0}^{m_g - 1} log(R_g - r / m_g E_g)
                           - sum_i s_i d_i eta_i),
    E_g = sum_{i event at t_g} s_i exp(eta_i),  wbar_g = (sum_{i event at t_g} s_i) / m_g

(the tied events' weights averaged, as R's ``coxph``); without tied events
it is Breslow's. With unit weights this is skglm's ``Cox``
datafit and glmnet's ``family="cox"`` objective. The loss does not change when
a constant is added to ``eta``: there is no intercept.

The rows are coupled through the risk sets, so the Hessian is not diagonal;
the outer loop uses its diagonal, as glmnet does, and a line search on the
true objective.
"""
import numpy as np

__all__ = ["CoxLoss", "check_survival_target", "cox_deviance"]


def check_survival_target(y):
    """(event as float 0/1, time as float) from a structured ``(event, time)``
    array as scikit-survival makes it (``sksurv.util.Surv``), or a 2-column
    array ``[event, time]``."""
    y = np.asarray(y)
    if y.dtype.names is not None:
        if len(y.dtype.names) != 2:
            raise ValueError(
                "a survival target is a structured array with two fields (event, time), "
                f"got the fields {y.dtype.names}")
        event, time = y[y.dtype.names[0]], y[y.dtype.names[1]]
    elif y.ndim == 2 and y.shape[1] == 2:
        event, time = y[:, 0], y[:, 1]
    else:
        raise ValueError(
            "a survival target is a structured array of (event, time) pairs "
            "(e.g. sksurv.util.Surv.from_arrays(event, time)) or an (n, 2) array "
            f"[event, time]; got an array of shape {y.shape} and dtype {y.dtype}")
    event = np.asarray(event).reshape(-1)
    if event.dtype != bool:
        ev = np.asarray(event, dtype=np.float64)
        if not np.all((ev == 0) | (ev == 1)):
            raise ValueError("the event indicator must be boolean or 0/1")
        event = ev.astype(bool)
    time = np.asarray(time, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(time)) or np.any(time <= 0):
        raise ValueError("survival times must be positive and finite")
    return event.astype(np.float64), time


def _risk_groups(time):
    """Rows sorted by time, the group (distinct time) of each sorted row and
    the first sorted position of each group."""
    order = np.argsort(time, kind="stable")
    ts = time[order]
    new = np.r_[True, ts[1:] != ts[:-1]]
    group = np.cumsum(new) - 1
    return order, group, np.flatnonzero(new)


class CoxLoss:
    """The Cox partial likelihood (Breslow) on fixed data.

    Parameters
    ----------
    event, time : ndarray of shape (n_samples,)
    sample_weight : ndarray of shape (n_samples,)
    ties : {"breslow", "efron"}, default="breslow"
        How tied event times are handled (module docstring).
    """

    has_intercept = False

    def __init__(self, event, time, sample_weight, ties="breslow"):
        if ties not in ("breslow", "efron"):
            raise ValueError(f"ties must be 'breslow' or 'efron', got {ties!r}")
        self.ties = ties
        s = np.asarray(sample_weight, dtype=np.float64)
        self.event = np.asarray(event, dtype=np.float64)
        self.time = np.asarray(time, dtype=np.float64)
        if not np.any((self.event > 0) & (s > 0)):
            raise ValueError("no event among the rows of positive weight: every time is "
                             "censored, and the Cox partial likelihood is constant")
        self.s = s / s.sum()
        # the risk sets sum the raw weights (skglm's and glmnet's scale: with
        # unit weights R_i = sum exp(eta_k)); the events are normalised
        self.s_raw = s
        self.order, self.group, self.first = _risk_groups(self.time)
        sd = (self.s * self.event)[self.order]
        # D_g: the weighted events at each distinct time
        self.D = np.bincount(self.group, weights=sd, minlength=self.first.size)
        if ties == "efron":
            self._efron_setup()

    def _efron_setup(self):
        # one term per event: (its time group, r / m_g for r = 0 .. m_g - 1)
        ev = ((self.event > 0) & (self.s > 0))[self.order]
        self.ev_sorted = ev.astype(np.float64)
        m = np.bincount(self.group[ev], minlength=self.first.size)
        self.t_group = np.repeat(np.arange(m.size), m)
        start = np.cumsum(m) - m
        r = np.arange(self.t_group.size) - start[self.t_group]
        self.t_frac = r / m[self.t_group]
        self.t_wbar = (self.D[m > 0] / m[m > 0])[np.searchsorted(
            np.flatnonzero(m > 0), self.t_group)]

    def _efron_terms(self, eta):
        """``se`` (sorted), the Efron denominators ``R_g - r/m_g E_g`` (times
        ``exp(-m)``) of every event term, and ``m``."""
        se, R, m = self._sums(eta)
        E = np.bincount(self.group, weights=se * self.ev_sorted, minlength=R.size)
        den = R[self.t_group] - self.t_frac * E[self.t_group]
        return se, den, m

    def _efron_sums(self, values):
        return np.bincount(self.t_group, weights=values, minlength=self.first.size)

    def _sums(self, eta):
        """``s exp(eta - m)`` (sorted), the risk-set sums ``R_g exp(-m)`` and ``m``."""
        m = float(eta.max())
        se = (self.s_raw * np.exp(eta - m))[self.order]
        rev = np.cumsum(se[::-1])[::-1]
        return se, rev[self.first], m

    def value(self, eta):
        """The datafit ``f(eta)``."""
        if not np.all(np.isfinite(eta)):
            return np.inf
        if self.ties == "efron":
            _, den, m = self._efron_terms(eta)
            return float(self.t_wbar @ (np.log(den) + m) - (self.s * self.event) @ eta)
        _, R, m = self._sums(eta)
        ok = self.D > 0
        return float(self.D[ok] @ (np.log(R[ok]) + m) - (self.s * self.event) @ eta)

    def _cumulated(self, eta, power):
        se, R, m = self._sums(eta)
        ok = self.D > 0
        ratio = np.zeros_like(R)
        ratio[ok] = self.D[ok] / R[ok] ** power
        # A_g: the sum over event times up to t_g (the risk sets the row is in)
        return se, np.cumsum(ratio)[self.group]

    def gradient(self, eta):
        """``df / deta_k = s_k exp(eta_k) sum_{g: t_g <= t_k} D_g / R_g - s_k d_k``
        (normalised by ``sum(s)``); Efron: module docstring, differentiated."""
        if self.ties == "efron":
            se, den, _ = self._efron_terms(eta)
            q = self.t_wbar / den
            A1, A2 = self._efron_sums(q), self._efron_sums(q * self.t_frac)
            # the row is in the risk sets of every earlier time; if it is an
            # event, it leaves its own time's set in parts r / m_g
            g = np.empty_like(eta)
            g[self.order] = se * (np.cumsum(A1)[self.group] - self.ev_sorted * A2[self.group])
            return g - self.s * self.event
        se, A = self._cumulated(eta, 1)
        g = np.empty_like(eta)
        g[self.order] = se * A
        return g - self.s * self.event

    def hessian(self, eta):
        """The diagonal of the Hessian,
        ``s_k e_k A_k - (s_k e_k)^2 sum_{g: t_g <= t_k} D_g / R_g^2`` (Breslow;
        Efron: each term with the event's own share ``1 - r / m_g``)."""
        if self.ties == "efron":
            se, den, _ = self._efron_terms(eta)
            q, q2, f = self.t_wbar / den, self.t_wbar / den ** 2, self.t_frac
            A1, A2 = self._efron_sums(q), self._efron_sums(q * f)
            B1, B2, B3 = (self._efron_sums(q2), self._efron_sums(q2 * f),
                          self._efron_sums(q2 * f * f))
            d, grp = self.ev_sorted, self.group
            h = np.empty_like(eta)
            # an event row's own time contributes (1 - f)^2 / den^2, not 1 / den^2
            h[self.order] = np.maximum(
                se * (np.cumsum(A1)[grp] - d * A2[grp])
                - se * se * (np.cumsum(B1)[grp] - d * (2.0 * B2[grp] - B3[grp])), 0.0)
            return h
        se, A = self._cumulated(eta, 1)
        _, B = self._cumulated(eta, 2)
        h = np.empty_like(eta)
        h[self.order] = np.maximum(se * A - se * se * B, 0.0)
        return h


def cox_deviance(event, time, eta, sample_weight=None, ties="breslow"):
    """The Cox partial likelihood (Breslow or Efron ties, mean over the
    weights) of ``eta`` on these rows: the validation loss of the survival
    estimator."""
    s = np.ones(len(time)) if sample_weight is None else np.asarray(sample_weight, float)
    event = np.asarray(event, dtype=np.float64)
    if not np.any((event > 0) & (s > 0)):
        return 0.0
    return CoxLoss(event, time, s, ties).value(np.asarray(eta, dtype=np.float64))
