"""Harrell's concordance index, written here so that firecy needs no
survival package: the fraction of comparable pairs whose risk scores are
ordered as their times are."""
import numpy as np

__all__ = ["concordance_index"]


def concordance_index(event, time, risk, chunk=1024):
    """Harrell's C: over pairs ``(i, j)`` with ``time_i < time_j`` and an event
    at ``time_i``, the fraction with ``risk_i > risk_j`` (ties in risk count
    one half). Pairs with equal times are not comparable (as in
    scikit-survival's ``concordance_index_censored``).

    Parameters
    ----------
    event : array-like of bool, shape (n_samples,)
    time : array-like of float, shape (n_samples,)
    risk : array-like of float, shape (n_samples,)
        Higher means an earlier event.
    chunk : int
        Rows compared at once (memory ``chunk * n``).

    Returns
    -------
    float
        NaN when no pair is comparable.

    Examples
    --------
    >>> from firecy.estimators._survival_metrics import concordance_index
    >>> float(concordance_index([1, 1, 0], [1.0, 2.0, 3.0], [3.0, 2.0, 1.0]))
    1.0
    """
    event = np.asarray(event, dtype=bool)
    time = np.asarray(time, dtype=np.float64)
    risk = np.asarray(risk, dtype=np.float64)
    idx = np.flatnonzero(event)
    concordant = tied = comparable = 0.0
    # O(n^2) in chunks of event rows: exact, and fast enough for the sizes
    # rules are fitted on (0.2 s at n = 5000)
    for lo in range(0, idx.size, chunk):
        i = idx[lo:lo + chunk]
        later = time[None, :] > time[i, None]
        comparable += later.sum()
        concordant += (later & (risk[None, :] < risk[i, None])).sum()
        tied += (later & (risk[None, :] == risk[i, None])).sum()
    if comparable == 0:
        return np.nan
    return (concordant + 0.5 * tied) / comparable
