"""Confirmatory terms (``confirmatory=``): terms every fit keeps, unpenalised,
as R ``pre``'s ``confirmatory`` argument (``docs/confirmatory.rst``).

A confirmatory term is a feature name (or index): a linear term, read as
firecy reads its linear terms (clipped at its training quantiles, centred
at its training mean; ``_linear_terms``); or a rule text, as firecy prints
rules, read by :func:`~firecy.rules.parse_rule` into its 0/1 indicator.
``{term: sign}`` constrains a term's weight to be >= 0 (+1), <= 0 (-1) or
free (0).  Each term is a design column (one per output of a multi-class
model) after the rules' and the linear terms', a block of its own under the
fixed part of :class:`~firecy.penalties.BlockwisePenalty`
(:class:`~firecy.penalties.Unpenalised`, or its sign constraint), so that
no ``lam`` acts on it: the path starts where they are fitted
(:func:`~firecy.solver.fire_path`) and every point keeps them.

They are not counted against ``max_rules``: the budget bounds the terms
the path selects (rules and linear terms), and the confirmatory terms come
on top; every output says "N terms selected + K confirmatory".
"""
from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["ConfirmatoryTerms", "check_confirmatory", "add_confirmatory_terms",
           "with_confirmatory_penalty", "confirmatory_fitter", "split_confirmatory",
           "confirmatory_part", "n_fixed_columns"]


@dataclass(eq=False)
class ConfirmatoryTerms:
    """The confirmatory terms of a fit: what each reads and how.

    A fitted estimator's ``confirmatory_``. Term ``q`` is a rule
    (``kinds[q] == "rule"``: it adds its weight on the rows its conditions
    select) or a linear term (``"linear"``: it adds ``slope * (clip(x,
    lower, upper) - center)``, 0 for a missing ``x``); its weight is
    ``confirmatory_coef_[..., q]`` (per output of a multi-class model).

    Attributes
    ----------
    texts : list of str
        Each term as given (a linear term: its feature's name).
    kinds : list of {"rule", "linear"}
    signs : ndarray of int, shape (n_terms,)
        The sign constraint: +1 (weight >= 0), -1 (<= 0), 0 (free).
    parsed : list
        A rule's :class:`~firecy.rules.ParsedCondition` list (None for a
        linear term).
    features : list of tuple of int
        The features each term reads.
    lower, upper, center, scale, sd : ndarray of float, shape (n_terms,)
        A linear term's clip range, centre, design scale (the solver's
        weight times ``scale`` is the slope) and training standard
        deviation of its value; NaN (scale 1) for a rule.
    support : ndarray of float, shape (n_terms,)
        A rule's (weighted) fraction of the training rows; NaN for a
        linear term.
    """

    texts: list
    kinds: list
    signs: np.ndarray
    parsed: list
    features: list
    lower: np.ndarray
    upper: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    sd: np.ndarray
    support: np.ndarray
    mean_abs: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self):
        return len(self.texts)

    def values(self, X):
        """Each term's value on the rows of ``X``, shape (n_samples, n_terms):
        a rule's 0/1 indicator, a linear term's ``clip(x) - center`` (0 for
        a missing ``x``)."""
        from firecy.rules import numeric_columns

        n = int(X.shape[0])
        out = np.zeros((n, len(self)))
        for q, kind in enumerate(self.kinds):
            if kind == "linear":
                x = numeric_columns(X, self.features[q])[:, 0]
                x = np.clip(x, self.lower[q], self.upper[q])
                out[:, q] = np.where(np.isnan(x), 0.0, x - self.center[q])
            else:
                out[:, q] = _rule_mask(self.parsed[q], X)
        return out

    def design(self, X):
        """The design columns ``values * scale`` (original units)."""
        return self.values(X) * self.scale


def _rule_mask(parsed, X):
    """The rows of ``X`` a parsed rule selects (float64 reading: the rule
    is the user's text, not a library's split)."""
    from firecy.rules import ParsedCondition, evaluate_parsed, numeric_columns

    feats = sorted({int(c.feature) for c in parsed})
    if hasattr(X, "iloc") or not sp.issparse(X):
        if hasattr(X, "iloc"):
            return np.asarray(evaluate_parsed(parsed, X), dtype=np.float64)
        return np.asarray(evaluate_parsed(parsed, np.asarray(X, dtype=np.float64)),
                          dtype=np.float64)
    # a sparse matrix: only the columns the rule reads, densified
    cols = numeric_columns(X, feats)
    at = {f: i for i, f in enumerate(feats)}
    local = [ParsedCondition(at[int(c.feature)], c.op, c.value, c.missing, c.zero_missing)
             for c in parsed]
    return np.asarray(evaluate_parsed(local, cols), dtype=np.float64)


# --- the parameter -----------------------------------------------------------
def check_confirmatory(value):
    """``confirmatory`` as a list of ``(term, sign)`` (``term``: a str or an
    int), or ValueError naming what is wrong."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)):
        raise ValueError(f"confirmatory must be a list of terms (feature names or indices, "
                         f"rule texts) or a dict {{term: sign}}, got the string {value!r}: "
                         f"use [{value!r}]")
    if isinstance(value, dict):
        items = list(value.items())
    else:
        try:
            items = [(t, 0) for t in value]
        except TypeError:
            raise ValueError(f"confirmatory must be a list of terms or a dict {{term: sign}}, "
                             f"got {value!r}") from None
    out = []
    for term, sign in items:
        if isinstance(term, (bool, np.bool_)) or not isinstance(term, (str, numbers.Integral)):
            raise ValueError(f"a confirmatory term is a feature name or index or a rule "
                             f"text, got {term!r}")
        if isinstance(sign, (bool, np.bool_)) or not isinstance(sign, numbers.Real) \
                or sign not in (-1, 0, 1):
            raise ValueError(f"the sign of confirmatory term {term!r} must be +1, -1 or 0, "
                             f"got {sign!r}")
        key = term.strip() if isinstance(term, str) else int(term)
        if any(key == t for t, _ in out):
            raise ValueError(f"confirmatory term {term!r} is given twice")
        if isinstance(key, str) and not key:
            raise ValueError("a confirmatory term is an empty text")
        out.append((key, int(sign)))
    return out


def _resolve(items, names):
    """Each item as ``(kind, text, features, parsed, sign)``."""
    from firecy.rules import RuleParseError, parse_rule

    n = len(names)
    resolved = []
    for term, sign in items:
        if isinstance(term, numbers.Integral):
            if not 0 <= term < n:
                raise ValueError(f"confirmatory term {term}: X has {n} features "
                                 f"(indices 0 .. {n - 1})")
            resolved.append(("linear", names[term], (int(term),), None, sign))
            continue
        if term in names:
            f = names.index(term)
            resolved.append(("linear", term, (f,), None, sign))
            continue
        try:
            parsed = parse_rule(term, names)
        except RuleParseError as error:
            raise ValueError(f"confirmatory term {term!r} is neither a feature name nor a "
                             f"rule firecy reads ({error})") from None
        if not parsed:
            raise ValueError(f"confirmatory term {term!r} holds on every row: the intercept "
                             f"is that term")
        feats = tuple(dict.fromkeys(int(c.feature) for c in parsed))
        resolved.append(("rule", term, feats, parsed, sign))
    seen = {}
    for kind, text, feats, _, _ in resolved:
        if kind == "linear":
            if feats[0] in seen:
                raise ValueError(f"confirmatory terms {seen[feats[0]]!r} and {text!r} are "
                                 f"the same linear term")
            seen[feats[0]] = text
    return resolved


# --- the fit -------------------------------------------------------------------
def add_confirmatory_terms(est, fit, rules, data):
    """Step 3c (``confirmatory=``): the confirmatory terms' columns after the
    linear terms' in ``fit.extra`` (solver units, one per (term, output)),
    their outputs in ``fit.extra_class``, and ``fit.confirmatory``. A
    feature given as a confirmatory linear term is not also offered as a
    penalised one. Nothing to do without the parameter."""
    items = check_confirmatory(getattr(est, "confirmatory", None))
    fit.confirmatory = None
    if not items:
        return None
    from firecy.estimators._linear_terms import offer_linear_terms

    ens = rules.ensemble
    names = data.feature_names or [str(n) for n in ens.feature_names]
    resolved = _resolve(items, names)
    K = int(ens.n_outputs)
    w = np.asarray(data.sample_weight, dtype=np.float64)
    rows = w > 0
    m = len(resolved)
    lower, upper, center = (np.full(m, np.nan) for _ in range(3))
    scale, sd, support = np.ones(m), np.full(m, np.nan), np.full(m, np.nan)
    lin_q = [q for q, r in enumerate(resolved) if r[0] == "linear"]
    if lin_q:
        feats = [resolved[q][2][0] for q in lin_q]
        if data.native_categorical:
            for q, f in zip(lin_q, feats):
                if str(getattr(data.X.dtypes.iloc[f], "name", "")) == "category":
                    raise ValueError(f"confirmatory term {resolved[q][1]!r} is a categorical "
                                     f"feature: give a rule on it (e.g. "
                                     f"\"{names[f]} in {{...}}\")")
        sub = dataclasses.replace(data, X=_columns(data.X, feats))
        terms = offer_linear_terms(sub, [names[f] for f in feats], rules.leaf_table,
                                   np.asarray(ens.leaf_values, dtype=np.float64))
        offered = {int(t): i for i, t in enumerate(terms.features)}
        reasons = dict(terms.not_offered)
        for i, (q, f) in enumerate(zip(lin_q, feats)):
            if i not in offered:
                raise ValueError(f"confirmatory term {resolved[q][1]!r}: the feature is "
                                 f"{reasons.get(names[f], 'not numeric')} on the training rows")
            t = offered[i]
            lower[q], upper[q] = terms.lower[t], terms.upper[t]
            center[q], scale[q], sd[q] = terms.center[t], terms.scale[t], terms.sd[t]
    conf = ConfirmatoryTerms(
        texts=[r[1] for r in resolved], kinds=[r[0] for r in resolved],
        signs=np.array([r[4] for r in resolved], dtype=np.int64),
        parsed=[r[3] for r in resolved], features=[r[2] for r in resolved],
        lower=lower, upper=upper, center=center, scale=scale, sd=sd, support=support)
    values = conf.values(data.X)
    ws = w[rows] / np.sum(w[rows])
    for q, kind in enumerate(conf.kinds):
        if kind != "rule":
            continue
        p = float(np.sum(ws * values[rows, q]))
        if not np.any(values[rows, q]):
            raise ValueError(f"confirmatory rule {conf.texts[q]!r} selects no training row")
        if np.all(values[rows, q]):
            raise ValueError(f"confirmatory rule {conf.texts[q]!r} holds on every training "
                             f"row: it is constant (the intercept is that term)")
        support[q] = p
    conf.mean_abs = np.sum(ws[:, None] * np.abs(values[rows]), axis=0)
    _drop_linear(fit, [f for kind, _, (f, *_), _, _ in resolved if kind == "linear"], names, K)
    cols = np.repeat(np.ldexp(values * conf.scale, -fit.scale.kv), K, axis=1)
    if fit.extra is None:
        fit.extra, fit.extra_class = cols, np.tile(np.arange(K), m)
    else:
        fit.extra = np.hstack([fit.extra, cols])
        fit.extra_class = np.r_[fit.extra_class, np.tile(np.arange(K), m)]
    fit.confirmatory = conf
    fit.n_confirmatory_columns = m * K
    return conf


def _columns(X, features):
    """The columns ``features`` of ``X``, in the same kind of container."""
    if hasattr(X, "iloc"):
        return X.iloc[:, list(features)]
    if sp.issparse(X):
        return sp.csc_matrix(X)[:, list(features)]
    return np.asarray(X)[:, list(features)]


def _drop_linear(fit, features, names, K):
    """Take the confirmatory linear terms' features out of the penalised
    linear terms (a column twice, once penalised, is a tie)."""
    from firecy.rules import LinearTerms

    terms = fit.linear
    if not len(terms) or not features:
        return
    keep = ~np.isin(terms.features, features)
    if keep.all():
        return
    fit.linear = LinearTerms(
        features=terms.features[keep], names=[n for n, k in zip(terms.names, keep) if k],
        lower=terms.lower[keep], upper=terms.upper[keep], center=terms.center[keep],
        scale=terms.scale[keep], sd=terms.sd[keep],
        not_offered=list(terms.not_offered) + [(names[int(f)], "confirmatory")
                                               for f in terms.features[~keep]])
    col_keep = np.repeat(keep, K)
    fit.extra = fit.extra[:, col_keep] if col_keep.any() else None
    fit.extra_class = fit.extra_class[col_keep] if col_keep.any() else None


def n_fixed_columns(fit):
    """The confirmatory columns at the end of ``fit.extra`` (0 without)."""
    return int(getattr(fit, "n_confirmatory_columns", 0) or 0) \
        if getattr(fit, "confirmatory", None) is not None else 0


def penalised_extra(fit):
    """``fit.extra`` without the confirmatory columns (None when nothing is
    left): the linear terms' columns."""
    n = n_fixed_columns(fit)
    if not n or fit.extra is None:
        return fit.extra
    return fit.extra[:, :-n] if fit.extra.shape[1] > n else None


def fixed_penalty(fit):
    """The penalty of the confirmatory blocks: :class:`Unpenalised`, or its
    sign constraint (``SignConstrained``) for terms given a sign, its bounds
    one per confirmatory column (the fixed part of
    :class:`~firecy.penalties.BlockwisePenalty` sees its own columns,
    numbered from 0)."""
    from firecy.penalties import Unpenalised

    conf = fit.confirmatory
    if not np.any(conf.signs):
        return Unpenalised()
    try:
        from firecy.penalties import SignConstrained
    except ImportError:  # pragma: no cover - the sign wrapper arrives with h-signs
        raise NotImplementedError("confirmatory={term: sign} needs "
                                  "firecy.penalties.SignConstrained") from None
    K = int(fit.n_confirmatory_columns // len(conf))
    sign = np.repeat(conf.signs, K)
    lower = np.where(sign > 0, 0.0, -np.inf)
    upper = np.where(sign < 0, 0.0, np.inf)
    return SignConstrained(Unpenalised(), lower, upper)


def with_confirmatory_penalty(fit, pen, n_rule_blocks=None):
    """``pen`` (a :class:`BlockwisePenalty` of the rules and the linear
    terms) with the confirmatory blocks under the fixed penalty; ``pen``
    itself without confirmatory terms."""
    from firecy.penalties import BlockwisePenalty

    n = n_fixed_columns(fit)
    if not n:
        return pen
    n_rules = pen.n_rule_blocks if n_rule_blocks is None else n_rule_blocks
    n_linear = fit.extra.shape[1] - n
    return BlockwisePenalty(pen.rules, pen.linear, n_rules, fixed_penalty(fit),
                            n_linear_blocks=n_linear)


class _BudgetExcludingFixed:
    """A path fitter whose ``n_rules`` leave the confirmatory columns out
    (they are not counted against ``max_rules``); every other attribute is
    the wrapped fitter's."""

    def __init__(self, inner, n_fixed):
        self._inner = inner
        self._n_fixed = int(n_fixed)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def path(self, design, y, penalty, **kwargs):
        budget = kwargs.get("max_rules")
        if budget is not None:
            # the solver counts every nonzero column: the confirmatory ones on top
            kwargs["max_rules"] = int(budget) + self._n_fixed
        path = self._inner.path(design, y, penalty, **kwargs)
        coefs = np.asarray(path.coefs)
        if coefs.ndim == 2 and coefs.shape[0]:
            fixed = np.count_nonzero(coefs[:, -self._n_fixed:], axis=1)
            path.n_rules = np.asarray(path.n_rules, dtype=np.intp) - fixed.astype(np.intp)
        if getattr(path, "skipped_counts", None) is not None:
            # the counts in 1..top a refined path jumps over, recounted (as
            # firecy.solver's refinement counts them)
            seen = np.unique(path.n_rules)
            top = int(seen.max()) if seen.size else 0
            top = top if budget is None else min(top, int(budget))
            path.skipped_counts = np.setdiff1d(np.arange(1, top + 1), seen).astype(np.intp)
        return path


def confirmatory_fitter(fit, fitter):
    """``fitter``, counting the rules and linear terms only (the
    confirmatory columns are not counted against ``max_rules``)."""
    n = n_fixed_columns(fit)
    return fitter if not n else _BudgetExcludingFixed(fitter, n)


def split_confirmatory(coef, fit):
    """A path point's weights without the confirmatory columns, and the
    confirmatory weights per unit (a rule's contribution where it holds, a
    linear term's slope): shape (n_terms,) for one output, (n_outputs,
    n_terms) for several; None without confirmatory terms."""
    n = n_fixed_columns(fit)
    if not n:
        return coef, None
    coef = np.asarray(coef, dtype=np.float64)
    conf = fit.confirmatory
    K = n // len(conf)
    w = coef[-n:].reshape(len(conf), K) * conf.scale[:, None]
    if K > 2:
        # the softmax is unchanged by a shift of a term's weight in every
        # class: the free terms' weights are stated summing to zero over the
        # classes, as the intercepts are (a signed term's stay as fitted)
        free = conf.signs == 0
        w[free] -= w[free].mean(axis=1, keepdims=True)
    return coef[:-n], (w[:, 0].copy() if K == 1 else w.T.copy())


def set_confirmatory(est, fit):
    """The fitted confirmatory attributes (``confirmatory_``, and
    ``confirmatory_coef_`` already set by the split)."""
    est.confirmatory_ = getattr(fit, "confirmatory", None)
    w = getattr(est, "confirmatory_coef_", None)
    est.n_confirmatory_ = 0 if est.confirmatory_ is None else int(np.size(w))


def confirmatory_part(est, Xm):
    """Per output, the confirmatory terms' sum on the rows of ``Xm`` (0
    without one)."""
    conf = getattr(est, "confirmatory_", None)
    if conf is None:
        return 0.0
    w = np.asarray(est.confirmatory_coef_, dtype=np.float64)
    values = conf.values(Xm)
    return values @ (w if w.ndim == 1 else w.T)
