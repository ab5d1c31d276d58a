"""Linear terms beside the rules (``linear_terms=True``): which features are
offered, how each is clipped, centred and scaled, and the design columns
and penalty they bring (``docs/linear_terms.rst``).

Every numeric feature ``x`` of positive variation becomes the term
``clip(x, q_lo, q_hi)`` (the training quantiles :data:`QUANTILES`, sample
weights counted), centred at its training mean (a missing value takes the
mean, so it adds 0), in a design column scaled so that its standard
deviation is :data:`SCALE` times that of a typical rule column (the root
mean square over the rules of ``|v_j| sqrt(p_j (1 - p_j))``, ``v_j`` the
rule's value, ``p_j`` its training support): RuleFit's ``0.4 / sd`` for indicator rules
of support 0.2 is ``SCALE = 1``.  Each term is a block of one column per
output, after the rule blocks, under the rules' sparsity penalty (L1; MCP
with the rules' ``gamma``) through :class:`~firecy.penalties.BlockwisePenalty`.
"""
import math

import numpy as np
import scipy.sparse as sp

from firecy.rules import column_support
from firecy.rules import LinearTerms, numeric_columns

__all__ = ["QUANTILES", "SCALE", "offer_linear_terms", "linear_design", "with_linear_penalty",
           "split_coef"]

#: The clip bounds' training quantiles (R ``pre``'s ``winsfrac = 0.025``).
QUANTILES = (0.025, 0.975)
#: A term's design column has SCALE times the standard deviation of a
#: typical rule column (benchmarks/linear_terms/RESULTS.md measures it).
SCALE = 2.5
#: The terms' penalty: "same" (MCP with the rules' gamma under MCP, else L1)
#: or "l1" (always L1); benchmarks/linear_terms/RESULTS.md measures both.
LINEAR_PENALTY = "same"


#: Relative slack of a quantile's cumulative weight: a cumulative weight
#: within it of ``q * total`` reaches ``q`` (the weights' rounding: all
#: weights 1.1 must clip where all weights 1 do).
QUANTILE_SLACK = 1e-9


def _weighted_quantiles(x, w, qs):
    """The inverted-CDF quantiles of ``x`` under weights ``w`` (an integer
    weight is a repetition of the row; a cumulative weight within
    :data:`QUANTILE_SLACK` of ``q`` of the total counts as reaching it, so
    that a constant factor on ``w`` changes nothing)."""
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order])
    total = cum[-1]
    return [float(x[order][min(np.searchsorted(cum, q * total * (1 - QUANTILE_SLACK),
                                               side="left"), x.size - 1)])
            for q in qs]


def _spread(value, weights, total_weight):
    """The weighted mean and standard deviation of ``value`` (a missing
    row, weight in ``total_weight`` only, sits at the mean), computed on
    ``value / 2**k`` (``k``: the exponent of ``max |value|``), which is
    exact: neither the square of 1e154 overflows nor that of 1e-300
    underflows."""
    top = float(np.max(np.abs(value)))
    k = math.frexp(top)[1] if top > 0 else 0
    scaled = np.ldexp(value, -k)
    mean = float(np.average(scaled, weights=weights))
    var = float(np.sum(weights * (scaled - mean) ** 2) / total_weight)
    return math.ldexp(mean, k), math.ldexp(math.sqrt(var), k)


def _offered_features(data, n_features):
    """Indices of the numeric features (a native DataFrame's category columns
    are not linear terms)."""
    X = data.X
    if not data.native_categorical:
        return list(range(n_features))
    return [f for f in range(n_features)
            if str(getattr(X.dtypes.iloc[f], "name", "")) != "category"]


#: How a typical rule column's spread is taken: "median" or "rms" of the
#: rules' ``|v_j| sqrt(p_j (1 - p_j))`` (benchmarks/linear_terms/RESULTS.md).
TYPICAL = "rms"


def _typical_rule_sd(leaf_table, leaf_values, sample_weight):
    """The typical spread of a rule column: over the rule columns of
    training support in (0, 1), the root mean square (:data:`TYPICAL`) of
    ``|v_j| sqrt(p_j (1 - p_j))``."""
    p = column_support(leaf_table, len(leaf_values), sample_weight)
    inside = (p > 0) & (p < 1)
    if not np.any(inside):
        return 0.4
    sd = np.abs(leaf_values[inside]) * np.sqrt(p[inside] * (1 - p[inside]))
    if TYPICAL == "median":
        return float(np.median(sd))
    # on sd / 2**k, exactly (leaf values of 1e200, a y of that size, square to inf)
    top = float(np.max(sd))
    k = math.frexp(top)[1] if top > 0 else 0
    return math.ldexp(float(np.sqrt(np.mean(np.ldexp(sd, -k) ** 2))), k)


def _feature_columns(X, features):
    """``(feature, its column as float64)`` for each of ``features``, one at a
    time (None for a sparse column without a stored entry: all 0); a sparse matrix is read column by column from CSC (an unstored
    entry is 0), never made dense (a 20k x 200k matrix is 30 GiB dense)."""
    if sp.issparse(X):
        csc = sp.csc_matrix(X)
        n = int(csc.shape[0])
        for f in features:
            lo, hi = csc.indptr[f], csc.indptr[f + 1]
            if lo == hi:
                # no stored entry: the column is 0 throughout (constant)
                yield f, None
                continue
            col = np.zeros(n)
            lo, hi = csc.indptr[f], csc.indptr[f + 1]
            # np.add.at: duplicate entries add, as toarray() does
            np.add.at(col, csc.indices[lo:hi], csc.data[lo:hi])
            yield f, col
        return
    if hasattr(X, "iloc"):
        for f in features:
            yield f, numeric_columns(X, [f])[:, 0]
        return
    arr = np.asarray(X)
    for f in features:
        yield f, np.asarray(arr[:, f], dtype=np.float64)


def offer_linear_terms(data, names, leaf_table, leaf_values):
    """The :class:`~firecy.rules._linear.LinearTerms` of a fit.

    Parameters
    ----------
    data : FitData
    names : list of str
        The features' names (for ``not_offered`` and the texts).
    leaf_table, leaf_values
        The rules on the training rows, in the fit's original units (the
        scale is set against them).
    """
    n_features = int(data.X.shape[1])
    features = _offered_features(data, n_features)
    w = np.asarray(data.sample_weight, dtype=np.float64)
    rows = w > 0
    # normalised: a constant factor on the weights changes nothing (nor overflows)
    w = w[rows] / np.max(w[rows])
    typical = _typical_rule_sd(leaf_table, np.asarray(leaf_values, dtype=np.float64),
                               data.sample_weight)
    kept, lower, upper, center, sd, dropped, infinite = [], [], [], [], [], [], []
    for f, col in _feature_columns(data.X, features):
        if col is None:
            dropped.append((names[f], "constant"))
            continue
        if np.isinf(col).any():
            infinite.append(names[f])
            continue
        col = col[rows]
        present = ~np.isnan(col)
        if not present.any():
            dropped.append((names[f], "all missing"))
            continue
        xs, ws = col[present], w[present]
        lo, hi = _weighted_quantiles(xs, ws, QUANTILES)
        if not hi > lo:
            # the quantiles coincide (a rare second value): the whole range
            lo, hi = float(xs.min()), float(xs.max())
        if not hi > lo:
            dropped.append((names[f], "constant"))
            continue
        value = np.clip(xs, lo, hi)
        mean, spread = _spread(value, ws, np.sum(w))
        if not spread > 0:
            dropped.append((names[f], "constant"))
            continue
        if not math.isfinite(SCALE * typical / spread):
            # a spread among float64's subnormals: the column's scale overflows
            dropped.append((names[f], "too small for float64"))
            continue
        kept.append(f)
        lower.append(lo)
        upper.append(hi)
        center.append(mean)
        sd.append(spread)
    if infinite:
        raise ValueError(f"Input X contains infinity (feature(s) {', '.join(map(repr, infinite))}): "
                         "a linear term needs finite values or NaN for missing ones")
    if not kept:
        return LinearTerms.empty(dropped)
    sd = np.asarray(sd)
    return LinearTerms(features=np.asarray(kept, dtype=np.int64), names=[names[f] for f in kept],
                       lower=np.asarray(lower), upper=np.asarray(upper),
                       center=np.asarray(center), scale=SCALE * typical / sd, sd=sd,
                       not_offered=dropped)


def linear_design(terms, X, n_outputs, kv=0):
    """The terms' design columns on ``X`` in solver units (divided by
    ``2**kv``, the leaf values' power-of-two scale), one per (term, output)
    in that order, and each column's output."""
    cols = np.ldexp(terms.design(X), -kv)
    K = int(n_outputs)
    return np.repeat(cols, K, axis=1), np.tile(np.arange(K), len(terms))


def with_linear_penalty(pen, params, n_rule_blocks, linear_penalty=LINEAR_PENALTY):
    """``pen`` on the rule blocks and the linear terms' penalty on the others:
    under ``linear_penalty`` "same" (:data:`LINEAR_PENALTY`), MCP with the
    rules' ``gamma`` under the built-in MCP, else L1; "l1": always L1; a
    number (a benchmark's): MCP with that ``gamma`` under the built-in MCP."""
    from firecy.penalties import MCP, L1, BlockwisePenalty

    gamma = params.get("gamma")
    if gamma is not None and linear_penalty not in ("same", "l1"):
        gamma = float(linear_penalty)      # a benchmark's own concavity
    use_mcp = gamma is not None and linear_penalty != "l1"
    linear = MCP(1.0, gamma) if use_mcp else L1(1.0)
    return BlockwisePenalty(pen, linear, n_rule_blocks)


def split_coef(coef, n_rules, terms, n_outputs):
    """A path point's full weights as (rule weights, slopes): the slopes per
    unit of ``x`` of shape (n_terms,) for one output, (n_outputs, n_terms)
    for several."""
    coef = np.asarray(coef, dtype=np.float64)
    lin = coef[n_rules:].reshape(len(terms), int(n_outputs)) * terms.scale[:, None]
    return coef[:n_rules], (lin[:, 0] if n_outputs == 1 else lin.T.copy())
