"""Monotone constraints and signed linear terms (``monotone=``, ``linear_sign=``).

A FIRE model is additive: ``intercept + sum_j w_j v_j 1[x in rule_j] + sum_t
b_t (clip(x_f, lo, hi) - centre)``.  It is non-decreasing in a feature ``f``
for every value of the other features when every term is:

* a rule whose conditions on ``f`` are only lower bounds (``x > t``,
  ``x >= t``) is non-decreasing in ``x_f``: its contribution ``w_j v_j``
  must be ``>= 0``; only upper bounds (``x <= t``, ``x < t``): ``<= 0``;
  bounds on both sides (an interval) make a bump in ``x_f`` whatever the
  sign: the rule is held at zero (not offered);
* a rule constrained by two features whose requirements disagree is held at
  zero too;
* a linear term's slope takes the sign of its feature's constraint (or of
  ``linear_sign`` for an unconstrained feature): ``clip`` is non-decreasing.

The column bounds go to the solver through
:class:`firecy.penalties.SignConstrained`, over the design's global columns
(rules first, then the linear terms' ``(term, output)`` columns), so every
point of every path (and every validation fold) is monotone, not only the
selected one.  A column's contribution is its weight times its value, so the
bound on the weight carries the sign of the value.

Missing values are not ordered: the guarantee is over the non-missing values
of ``f`` (the values the model reads as missing: NaN, and 0 for a LightGBM
model with ``missing_type="Zero"``).  A row with ``f`` missing gets the rules
that send a missing value their way, and 0 from ``f``'s linear term
(``docs/monotone.rst``).
"""
import numbers

import numpy as np

from firecy.penalties import SignConstrained

__all__ = ["Constraints", "check_constraints", "resolve_constraints", "sign_bounds",
           "constrain_penalty"]

_LOWER_OPS = (">", ">=")
_UPPER_OPS = ("<", "<=")
#: a column held at zero: its rule is not offered
HELD = 2


class Constraints:
    """The resolved constraints of one fit.

    Attributes
    ----------
    monotone : ndarray of int8, shape (n_features,)
        -1 / 0 / +1 per feature.
    linear_sign : ndarray of int8, shape (n_features,)
        The sign of each feature's linear term (the monotone sign where
        there is one, else ``linear_sign``'s), 0 for a free slope.
    source : {"monotone", "model"}
        Whether the constraints are the user's or the model's own.
    names : list of str
        The features' names.
    """

    def __init__(self, monotone, linear_sign, names, source):
        self.monotone = np.asarray(monotone, dtype=np.int8)
        self.linear_sign = np.asarray(linear_sign, dtype=np.int8)
        self.names = list(names)
        self.source = source

    @property
    def any(self):
        return bool(np.any(self.monotone) or np.any(self.linear_sign))

    def as_dicts(self):
        """``({name: sign} of the monotone features, {name: sign} of the
        linear terms signed without a monotone constraint})``, in feature order."""
        mono = {self.names[f]: int(s) for f, s in enumerate(self.monotone) if s}
        lin = {self.names[f]: int(s) for f, s in enumerate(self.linear_sign)
               if s and not self.monotone[f]}
        return mono, lin


def _feature_names(data, n_features):
    return list(data.feature_names) if data.feature_names else [f"x{i}" for i in
                                                                range(n_features)]


def _parse(value, param, names):
    """``value`` (a dict {name or index: sign}, a sequence of length
    n_features, or XGBoost's string ``"(1,0,-1)"``) as an int8 array."""
    n = len(names)
    out = np.zeros(n, dtype=np.int8)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("(") and text.endswith(")"):
            text = text[1:-1]
        try:
            value = [int(v) for v in text.split(",")] if text.strip() else []
        except ValueError:
            raise ValueError(f"{param} must be a dict {{feature: +1 or -1}}, a sequence of "
                             f"-1/0/+1 or a string like '(1,0,-1)'; got {value!r}") from None
    if isinstance(value, dict):
        index = {name: i for i, name in enumerate(names)}
        for key, sign in value.items():
            if isinstance(key, numbers.Integral) and not isinstance(key, bool):
                f = int(key)
                if not 0 <= f < n:
                    raise ValueError(f"{param}: feature index {f} is not among the "
                                     f"{n} features")
            elif isinstance(key, str) and key in index:
                f = index[key]
            else:
                raise ValueError(f"{param}: unknown feature {key!r}; the features are "
                                 + ", ".join(map(repr, names[:10]))
                                 + (", ..." if n > 10 else "")
                                 + " (or their indices)")
            out[f] = _sign(sign, param, names[f])
        return out
    if isinstance(value, (bytes, set, frozenset)) or not hasattr(value, "__len__"):
        raise TypeError(f"{param} must be a dict {{feature: +1 or -1}}, a sequence of "
                        f"-1/0/+1 or a string like '(1,0,-1)'; got {value!r}")
    values = list(value)
    if len(values) != n:
        raise ValueError(f"{param} has {len(values)} entries, X has {n} features")
    for f, sign in enumerate(values):
        out[f] = _sign(sign, param, names[f])
    return out


def _sign(sign, param, name):
    ok = (isinstance(sign, numbers.Real) and not isinstance(sign, bool)
          and sign in (-1, 0, 1))
    if not ok:
        raise ValueError(f"{param}[{name!r}] must be -1, 0 or +1, got {sign!r}")
    return int(sign)


def check_constraints(est, data):
    """The user's ``monotone`` and ``linear_sign`` as int8 arrays (``monotone``
    None: the model's own, resolved later), checked against each other; raised
    before the model is fitted."""
    n = int(est.n_features_in_)
    names = _feature_names(data, n)
    mono = getattr(est, "monotone", None)
    mono = None if mono is None else _parse(mono, "monotone", names)
    lin = getattr(est, "linear_sign", None)
    lin = np.zeros(n, dtype=np.int8) if lin is None else _parse(lin, "linear_sign", names)
    if mono is not None:
        _check_agree(mono, lin, names)
    return mono, lin


def _check_agree(mono, lin, names):
    bad = [names[f] for f in np.flatnonzero((mono != 0) & (lin != 0) & (mono != lin))]
    if bad:
        raise ValueError("linear_sign disagrees with monotone on "
                         + ", ".join(map(repr, bad))
                         + ": a monotone feature's linear term takes its constraint's sign")


def _model_constraints(model, n_features, names):
    try:
        from firecy.ensembles import model_monotone_constraints
    except ImportError:     # before the reader is there: no model constraints
        return None
    found = model_monotone_constraints(model, n_features, names)
    return None if found is None else np.asarray(found, dtype=np.int8)


def resolve_constraints(checked, model, ensemble, data):
    """The fit's :class:`Constraints` (None without any): the user's, or the
    model's own when ``monotone`` is None; a constraint on a feature whose
    order the model does not define (a category column, a categorical split)
    is a ValueError naming it."""
    mono, lin = checked
    n = lin.size
    names = _feature_names(data, n)
    source = "monotone"
    if mono is None:
        mono = _model_constraints(model, n, names)
        source = "model"
        if mono is None:
            mono = np.zeros(n, dtype=np.int8)
        else:
            _check_agree(mono, lin, names)
    if not (np.any(mono) or np.any(lin)):
        return None
    _check_ordered(mono, lin, ensemble, data, names)
    return Constraints(mono, np.where(mono != 0, mono, lin), names, source)


def _check_ordered(mono, lin, ensemble, data, names):
    X = data.X
    wanted = (mono != 0) | (lin != 0)
    if data.native_categorical:
        for f in np.flatnonzero(wanted):
            if str(getattr(X.dtypes.iloc[f], "name", "")) == "category":
                raise ValueError(f"a monotone constraint or linear sign on {names[f]!r}, a "
                                 "category column: its order is not defined")
    bad = set()
    for conds in (_conditions(ensemble) if np.any(mono) else ()):
        for c in conds:
            if mono[c.feature] and (c.is_categorical or c.labels):
                bad.add(c.feature)
    if bad:
        raise ValueError("a monotone constraint on "
                         + ", ".join(repr(names[f]) for f in sorted(bad))
                         + ", which the model splits as a category: its order is not defined")


def _conditions(ensemble):
    return (ensemble.rules[j] for j in range(int(ensemble.n_rules)))


def rule_signs(ensemble, monotone):
    """Per design column, the sign its contribution must take: +1, -1, 0
    (free) or :data:`HELD` (held at zero: an interval on a constrained
    feature, or two constrained features asking for opposite signs)."""
    out = np.zeros(int(ensemble.n_rules), dtype=np.int8)
    if not np.any(monotone):
        return out
    for j, conds in enumerate(_conditions(ensemble)):
        sides = {}
        for c in conds:
            s = int(monotone[c.feature])
            if not s:
                continue
            side = 1 if c.op in _LOWER_OPS else -1 if c.op in _UPPER_OPS else 0
            sides.setdefault(c.feature, set()).add(side)
        need = set()
        for f, side in sides.items():
            if len(side) != 1 or 0 in side:
                need.add(HELD)
            else:
                need.add(side.pop() * int(monotone[f]))
        if HELD in need or len(need) > 1:
            out[j] = HELD
        elif need:
            out[j] = need.pop()
    return out


class SignBounds:
    """The sign bounds of a fit's columns (rules, then linear terms).

    Attributes
    ----------
    rule_sign : ndarray of int8, shape (n_rules,)
        See :func:`rule_signs`.
    rule_lower, rule_upper : ndarray of float64, shape (n_rules,)
        The bounds on the rules' weights (``-inf``/0, 0/``+inf``).
    linear_lower, linear_upper : ndarray of float64
        The bounds on the linear terms' ``(term, output)`` columns.
    """

    def __init__(self, rule_sign, leaf_values, linear_sign, n_outputs):
        self.rule_sign = rule_sign
        v = np.sign(np.asarray(leaf_values, dtype=np.float64))
        coef_sign = np.where(rule_sign == HELD, 0, rule_sign * v)
        held = (rule_sign == HELD) | ((rule_sign != 0) & (v == 0))
        self.rule_lower = np.where(coef_sign > 0, 0.0, -np.inf)
        self.rule_upper = np.where(coef_sign < 0, 0.0, np.inf)
        self.rule_lower[held] = 0.0
        self.rule_upper[held] = 0.0
        lin = np.repeat(np.asarray(linear_sign, dtype=np.float64), int(n_outputs))
        self.linear_lower = np.where(lin > 0, 0.0, -np.inf)
        self.linear_upper = np.where(lin < 0, 0.0, np.inf)

    @property
    def offered(self):
        """The rules that may take a weight."""
        return ~((self.rule_lower == 0) & (self.rule_upper == 0))

    def bounds(self, columns=None):
        """``(lower, upper)`` over the global columns: the rules (``columns``:
        a stable pool's, else all), then the linear terms'."""
        lo, hi = self.rule_lower, self.rule_upper
        if columns is not None:
            lo, hi = lo[columns], hi[columns]
        return (np.concatenate([lo, self.linear_lower]),
                np.concatenate([hi, self.linear_upper]))

    @property
    def trivial(self):
        return not (np.any(np.isfinite(self.rule_lower)) or np.any(np.isfinite(self.rule_upper))
                    or np.any(np.isfinite(self.linear_lower))
                    or np.any(np.isfinite(self.linear_upper)))


def sign_bounds(constraints, ensemble, leaf_values, linear):
    """The :class:`SignBounds` of a fit (None without constraints):
    ``linear`` the offered :class:`~firecy.rules.LinearTerms` (empty
    without linear terms)."""
    if constraints is None:
        return None
    signs = rule_signs(ensemble, constraints.monotone)
    features = np.asarray(getattr(linear, "features", ()), dtype=np.int64) if linear is not None \
        and len(linear) else np.zeros(0, dtype=np.int64)
    out = SignBounds(signs, leaf_values, constraints.linear_sign[features],
                     int(ensemble.n_outputs))
    return None if out.trivial else out


def constrain_penalty(penalty, bounds, columns=None, n_fixed=0):
    """``penalty`` under the sign bounds (``columns``: a stable pool's rule
    columns; ``n_fixed``: confirmatory columns after the linear terms', free
    here: their signs are their own), or ``penalty`` itself without bounds."""
    if bounds is None:
        return penalty
    lower, upper = bounds.bounds(columns)
    n_own = lower.size
    lower = np.concatenate([lower, np.full(n_fixed, -np.inf)])
    upper = np.concatenate([upper, np.full(n_fixed, np.inf)])
    n_rules = bounds.rule_lower.size if columns is None else len(columns)
    try:
        return _bounded(penalty, lower, upper, n_rules, n_own)
    except TypeError as error:     # a penalty SignConstrained cannot bound (yet)
        raise ValueError(f"monotone / linear_sign cannot constrain this penalty: {error}") \
            from error


class PartSignConstrained(SignConstrained):
    """SignConstrained as a part of a BlockwisePenalty (its rules' or linear
    terms' penalty), whose bounds stay over the global columns when the path
    restricts Blockwise to some blocks: the solver restricts to the fixed
    (confirmatory) blocks alone, where this part has no block, or to the
    others, a prefix of the columns, where every bound keeps its column.  So
    a design of fewer columns than bounds is accepted (more is refused: the
    nogil methods index the bounds by column)."""

    def check_blocks(self, block_ptr):
        block_ptr = np.asarray(block_ptr)
        n = int(block_ptr[-1]) if block_ptr.size else 0
        if n > self.lower.size:
            raise ValueError(f"SignConstrained has bounds for {self.lower.size} columns, "
                             f"the design has {n}")
        self.inner.check_blocks(block_ptr)

    def __reduce__(self):
        return (type(self), (self.inner, self.lower, self.upper))


def _bounded(penalty, lower, upper, n_rules, n_own, part=SignConstrained):
    """``penalty`` with the bounds (over every global column) where
    SignConstrained takes them: inside group-L0 (whose keep-or-zero must see
    them); around a separable Blockwise (SignConstrained passes on its
    unpenalised blocks and restricts the bounds with the design); inside
    the parts of a Blockwise of group-L0 rules, the rules' part with the
    bounds of the rule columns (the first ``n_rules``, which Blockwise checks
    it against), the linear part with those of the rules and linear terms
    (the first ``n_own``: its blocks' columns are global)."""
    from firecy.penalties import BlockwisePenalty, GroupL0

    if isinstance(penalty, GroupL0):
        out = GroupL0(_bounded(penalty.inner, lower, upper, n_rules, n_own, part),
                      penalty.lam0)
        out.lam = penalty.lam
        return out
    if isinstance(penalty, BlockwisePenalty) and not (penalty.flags & 1):
        fixed = dict(fixed=penalty.fixed, n_linear_blocks=penalty.n_linear_blocks) \
            if penalty.fixed is not None else {}
        out = BlockwisePenalty(
            _bounded(penalty.rules, lower[:n_rules], upper[:n_rules], n_rules, n_rules,
                     PartSignConstrained),
            PartSignConstrained(penalty.linear, lower[:n_own], upper[:n_own]),
            penalty.n_rule_blocks, **fixed)
        out.lam = penalty.lam
        return out
    return part(penalty, lower, upper)
