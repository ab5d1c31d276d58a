"""One account of a fitted FIRE model: :class:`FittedRuleModel` (``est.model_``).

Every output of a fitted estimator (its summary, ``rules_``, the JSON
export, the HTML report, the command line's text, the pictures' captions and
the InterpretML explanations) reads the counts, the terms and the sentences
it prints from here, so that no two outputs of one fit can disagree. A new
kind of term is added in :class:`Term` and :func:`fitted_model`, and nowhere
else.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from firecy.ensembles import simplify_conditions
from firecy.rules._antecedents import count_antecedents
from firecy.rules._confirmatory import confirmatory_suffix
from firecy.rules._inputs import column_class, feature_names_of, n_outputs
from firecy.rules._linear import linear_slopes
from firecy.rules._table import class_labels, rules_table

__all__ = ["Term", "FittedRuleModel", "fitted_model", "estimator_intercept", "raw_scale_name",
           "feature_names_for",
           "counts_sentence", "prediction_sentence", "plural"]

# what the prediction of a row is, said once for every output
RULES_SENTENCE = "the contributions of the rules a row satisfies"
LINEAR_SENTENCE = ("for each linear term, slope \u00d7 (x clipped to [lower, upper] "
                   "\u2212 centre), 0 for a missing x")


def estimator_intercept(est, X):
    """A fitted estimator's constant term: ``intercept_`` plus the ensemble's baseline.

    The estimator predicts ``baseline(X) + intercept_ + M w``; the baseline
    (a boosting model's initial prediction, 0 for a random forest) is the same
    for every row except for a gradient boosting model with a custom ``init``
    estimator, which the report then mentions.

    Returns
    -------
    total : float or ndarray of shape (n_outputs,)
    note : str or tuple of str
        What the report prints after the intercept: one text, or one per
        output (class) of a multi-output model, each with its own numbers.
    """
    b = np.asarray(est.intercept_, dtype=np.float64)
    ens = est.ensemble_
    try:
        if X is not None:
            base = np.asarray(ens.baseline(X), dtype=np.float64)
        else:
            base = np.asarray(ens.baseline(np.zeros((1, int(ens.n_features_in_)))),
                              dtype=np.float64)
    except Exception:  # e.g. a model that needs a DataFrame: report intercept_ alone
        return b, " (plus the ensemble's baseline)"
    if base.size == 0:
        return b, ""
    base = base.reshape(base.shape[0], -1)
    first = base[0]
    if not np.allclose(base, first, rtol=1e-12, atol=1e-12):
        return b, " (plus the ensemble's baseline, which varies by row)"
    if not np.any(first):
        return b, ""
    total = b + (first if first.size > 1 else first[0])
    own = np.broadcast_to(np.ravel(b), first.shape) if first.size > 1 else np.ravel(b)[:1]
    notes = tuple(f" (FIRE intercept {float(v):.4g} + ensemble baseline)" for v in own)
    return total, notes if len(notes) > 1 else notes[0]


def counts_sentence(n_rules, n_trees, n_antecedents, n_linear=0):
    """``"4 rules from 4 trees, 12 distinct antecedents (split nodes to read),
    and 6 linear terms"``: the counts line of every text output."""
    return (f"{n_rules} {plural(n_rules, 'rule')} from {n_trees} {plural(n_trees, 'tree')}, "
            + (f"{n_antecedents} distinct antecedent (split node to read)" if n_antecedents == 1
               else f"{n_antecedents} distinct antecedents (split nodes to read)")
            + (f", and {n_linear} linear {plural(n_linear, 'term')}" if n_linear else ""))


def prediction_sentence(name="prediction", has_linear=False):
    """How a row's value is computed from the printed terms, in one sentence."""
    return (f"{name} = intercept + {RULES_SENTENCE}"
            + (f" + {LINEAR_SENTENCE}" if has_linear else ""))


def plural(n, word):
    """``word`` for one, ``word + "s"`` otherwise."""
    return word if n == 1 else word + "s"


@dataclass(frozen=True)
class Term:
    """One kept term of a fitted model: a rule or a linear term.

    Attributes
    ----------
    kind : {"rule", "linear"}
    name : str
        ``"rule_<column>"`` (as ``get_feature_names_out`` and ``explain``
        name it) or ``"linear_<feature index>"``.
    column : int
        The term's column: a rule's design column, a linear term's position
        after the rules' (as in ``path_.coefs``).
    output : int
        The output (class score) it adds to.
    label : object
        The class label it speaks for (None for a regressor).
    text, exact_text : str
        The text a reader sees (exact for inputs of at most 15 significant
        digits) and the text exact for every input. A linear term's text
        gives its slope, clip range and centre.
    weight : float
        The fitted weight (``coef_``; a linear term's slope per unit).
    contribution : float
        What a rule adds where it holds (``weight * leaf_value``); a linear
        term's slope.
    importance : float
        The standard deviation of the term over the training rows
        (``|contribution| * sqrt(s (1 - s))`` for a rule of support ``s``,
        ``|slope| * sd`` for a linear term).
    support : float
        The (weighted) fraction of the training rows a rule holds on (NaN for
        a linear term, or when unknown).
    mean_abs_contribution : float
        The term's mean absolute contribution over the training rows
        (``|contribution| * support`` for a rule, ``|slope|`` times the mean
        of ``|clip(x, lower, upper) - center|`` for a linear term; NaN when
        unknown): InterpretML's global importance.
    stability : float or None
        The rule's selection frequency over half fits, once measured.
    tree : int or None
        The rule's tree (None for a linear term).
    leaf_value : float or None
        The rule's design value (None for a linear term).
    conditions : tuple of Condition
        The rule's conditions, simplified (empty for a linear term).
    features : tuple of int
        The features the term reads.
    feature : str or None
        A linear term's feature name.
    lower, upper, center : float or None
        A linear term's clip range and centre: it adds
        ``slope * (clip(x, lower, upper) - center)``.
    interval : tuple of float or None
        After ``inference(X_test, y_test)``: the held-out refit's interval of
        the term's effect (a rule's contribution, a linear term's slope).
    p_value : float or None
        Its p-value.
    confirmatory : bool
        A confirmatory term (``confirmatory=``): kept at every ``lam``,
        unpenalised, not counted among the selected terms. A confirmatory
        rule has no tree, leaf value 1 and the conditions of its text
        (``conditions`` empty: its text is as given).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(200, 2))
    >>> y = np.where(X[:, 0] > 5, 3.0, 0.0) + 0.5 * X[:, 1]
    >>> tree = DecisionTreeRegressor(max_depth=1).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.01, fusion=0.0, random_state=0).fit(X, y)
    >>> line = fire.model_.linear_terms[0]
    >>> line.feature, round(line.weight, 2), line.lower <= line.center <= line.upper
    ('x1', 0.5, True)
    """

    kind: str
    name: str
    column: int
    output: int
    label: object
    text: str
    exact_text: str
    weight: float
    contribution: float
    importance: float
    support: float = math.nan
    mean_abs_contribution: float = math.nan
    stability: float | None = None
    tree: int | None = None
    leaf_value: float | None = None
    conditions: tuple = ()
    features: tuple = ()
    feature: str | None = None
    lower: float | None = None
    upper: float | None = None
    center: float | None = None
    interval: tuple | None = None
    p_value: float | None = None
    confirmatory: bool = False


@dataclass(frozen=True, eq=False)
class FittedRuleModel:
    """The account of a fitted FIRE model that every output reads.

    Build it with a fitted estimator's ``model_`` (or :func:`fitted_model`).

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    raw_scale : str
        What the terms add to ("prediction", "log-odds of 'yes'", "log-rate").
    labels : list
        Per output, the class label whose score it is ([None] for a regressor).
    intercept : ndarray of shape (n_outputs,)
        The fitted intercept (``intercept_``).
    constant : ndarray of shape (n_outputs,)
        What every row starts from: ``intercept`` plus the ensemble's baseline
        when the baseline is the same for every row (a booster's initial
        score; 0 for a forest).
    constant_note : str or tuple of str
        How ``constant`` is made up, as the texts print it after the
        intercept ("" when it is the intercept alone).
    terms : tuple of Term
        Every kept term, per output the rules by decreasing ``|contribution|``,
        then the linear terms by decreasing importance.
    n_antecedents : int
        The distinct split nodes on the kept rules' paths.
    lambda_ : float or None
        The selected penalty strength.
    max_rules : int or None
        The budget the fit resolved (``max_rules_``).
    stable_pool : bool
        Whether the rules are a stable fit's kept pool (``stable=True`` with
        linear terms): the budget then counts rules, and linear terms come
        on top.
    linear_offered : int
        The linear terms the fit offered (0 with ``linear_terms=False``).
    monotone : dict
        ``{feature name: +1 or -1}``: the features the model is monotone in
        (``monotone=``, or the tree model's own constraints).
    linear_sign : dict
        ``{feature name: +1 or -1}``: linear terms signed by ``linear_sign=``
        alone (a monotone feature's term has its constraint's sign).
    notes : dict
        What the account was built from (``"rows"``: the records of
        ``rules_``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(200, 2))
    >>> y = np.where(X[:, 0] > 5, 3.0, 0.0) + 0.5 * X[:, 1]
    >>> tree = DecisionTreeRegressor(max_depth=1).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.01, fusion=0.0, random_state=0).fit(X, y)
    >>> model = fire.model_
    >>> model.counts_text()
    '2 rules from 1 tree, 1 distinct antecedent (split node to read), and 1 linear term'
    >>> [t.kind for t in model.terms]
    ['rule', 'rule', 'linear']
    """

    estimator: str
    raw_scale: str
    labels: list
    intercept: np.ndarray
    constant: np.ndarray
    constant_note: object
    terms: tuple
    n_antecedents: int
    lambda_: float | None = None
    max_rules: int | None = None
    stable_pool: bool = False
    linear_offered: int = 0
    notes: dict = field(default_factory=dict)
    monotone: dict = field(default_factory=dict)
    linear_sign: dict = field(default_factory=dict)

    # --- the counts --------------------------------------------------------
    @property
    def rules(self):
        """The rule terms the path selected (not the confirmatory ones)."""
        return tuple(t for t in self.terms if t.kind == "rule" and not t.confirmatory)

    @property
    def linear_terms(self):
        """The linear terms the path selected (not the confirmatory ones)."""
        return tuple(t for t in self.terms if t.kind == "linear" and not t.confirmatory)

    @property
    def confirmatory(self):
        """The confirmatory terms (``confirmatory=``): rules and linear
        terms kept at every ``lam``, unpenalised."""
        return tuple(t for t in self.terms if t.confirmatory)

    @property
    def n_confirmatory(self):
        """Confirmatory terms (one per term and class of a multi-class model)."""
        return len(self.confirmatory)

    @property
    def n_rules(self):
        """Kept rules (a rule kept for two classes counts twice)."""
        return len(self.rules)

    @property
    def n_linear_terms(self):
        """Kept linear terms (one per feature and class)."""
        return len(self.linear_terms)

    @property
    def n_terms(self):
        """Rules and linear terms the path selected (the confirmatory terms
        come on top: :attr:`n_confirmatory`)."""
        return self.n_rules + self.n_linear_terms

    @property
    def n_trees(self):
        """Distinct trees that hold a kept rule."""
        return len({t.tree for t in self.rules})

    def counts(self):
        """The counts as a dict: ``n_terms``, ``n_rules``, ``n_linear_terms``,
        ``n_trees``, ``n_antecedents`` (and ``n_confirmatory`` with
        confirmatory terms)."""
        counts = {"n_terms": self.n_terms, "n_rules": self.n_rules,
                  "n_linear_terms": self.n_linear_terms, "n_trees": self.n_trees,
                  "n_antecedents": self.n_antecedents}
        if self.n_confirmatory:
            counts["n_confirmatory"] = self.n_confirmatory
        return counts

    # --- the sentences -----------------------------------------------------
    def counts_text(self):
        """``"4 rules from 4 trees, 12 distinct antecedents (split nodes to read),
        and 6 linear terms"``."""
        return counts_sentence(self.n_rules, self.n_trees, self.n_antecedents,
                               self.n_linear_terms) + confirmatory_suffix(self.n_confirmatory)

    def terms_text(self):
        """``"4 rules and 6 linear terms"`` (``"4 rules"`` without linear terms)."""
        r, n_lin = self.n_rules, self.n_linear_terms
        return (f"{r} {plural(r, 'rule')}"
                + (f" and {n_lin} linear {plural(n_lin, 'term')}" if n_lin else "")
                + confirmatory_suffix(self.n_confirmatory))

    def has_linear(self, output=None):
        """Whether a linear term is kept (for ``output``, when given)."""
        return any((output is None or t.output == output) and t.kind == "linear"
                   for t in self.terms)

    def prediction_text(self, name="prediction", output=None):
        """How a row's value is computed from the printed terms, in one sentence."""
        return prediction_sentence(name, self.has_linear(output))

    def budget_text(self):
        """What the budget ``max_rules`` bounds, in words."""
        if self.max_rules is None:
            return ""
        if self.n_confirmatory:
            return self._budget_text() + " (the confirmatory terms on top)"
        return self._budget_text()

    def _budget_text(self):
        if self.stable_pool:
            return (f"the stable pool's {self.max_rules} most frequent rules, with linear "
                    f"terms on top")
        if self.linear_offered:
            return f"at most {self.max_rules} terms (rules and linear terms)"
        return f"at most {self.max_rules} rules"

    def constraints_text(self):
        """``"monotone: income (-), age (+)"`` (then ``"; linear terms signed:
        ..."``), or "" without a constraint."""
        return _constraints_text(self.monotone, self.linear_sign)

    def term_rows(self):
        """The terms as ``rules_``'s records (a list of dicts)."""
        return [dict(r) for r in self.notes["rows"]]


def _constraint_dicts(est, names):
    """A fitted estimator's ``({name: sign} of its monotone features, {name:
    sign} of the linear terms signed by ``linear_sign`` alone)``."""
    mono = getattr(est, "monotone_", None)
    lin = getattr(est, "linear_sign_", None)
    if mono is None:
        return {}, {}
    return ({names[f]: int(s) for f, s in enumerate(mono) if s},
            {names[f]: int(s) for f, s in enumerate(lin) if s and not mono[f]})


def _constraints_text(monotone, linear_sign=None):
    """``"monotone: income (-), age (+)"`` (and ``"; linear terms signed: x (+)"``),
    or "" without a constraint."""
    sign = {1: "+", -1: "-"}
    parts = []
    if monotone:
        parts.append("monotone: " + ", ".join(f"{n} ({sign[s]})" for n, s in monotone.items()))
    if linear_sign:
        parts.append("linear terms signed: "
                     + ", ".join(f"{n} ({sign[s]})" for n, s in linear_sign.items()))
    return "; ".join(parts)


def _confirmatory_term(est, row, names, n_rule_columns, common_fields):
    """The account's Term of a confirmatory row of ``rules_``."""
    conf = est.confirmatory_
    w = np.asarray(est.confirmatory_coef_)
    K = 1 if w.ndim == 1 else w.shape[0]
    n_lin = len(getattr(est, "linear_terms_", ()) or ())
    q, k = divmod(int(row["column"]) - n_rule_columns - n_lin * K, K)
    feats = tuple(int(f) for f in conf.features[q])
    mean_abs = abs(float(row["weight"])) * float(conf.mean_abs[q]) \
        if len(conf.mean_abs) > q else math.nan
    if conf.kinds[q] == "linear":
        f = feats[0]
        return Term(kind="linear", name=f"confirmatory_{q}", output=int(k),
                    mean_abs_contribution=mean_abs, features=feats, feature=names[f],
                    lower=float(conf.lower[q]), upper=float(conf.upper[q]),
                    center=float(conf.center[q]), confirmatory=True, **common_fields)
    return Term(kind="rule", name=f"confirmatory_{q}", output=int(k),
                support=float(row["support"]), leaf_value=1.0, mean_abs_contribution=mean_abs,
                features=feats, confirmatory=True, **common_fields)


def _estimator_names(est, feature_names):
    if feature_names is not None:
        return [str(n) for n in feature_names]
    names = getattr(est, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    names = feature_names_of(est.ensemble_, None)
    if names is None:
        names = [f"x{i}" for i in range(int(est.ensemble_.n_features_in_))]
    return names


def raw_scale_name(est, label=None):
    """The model's raw scale in words, e.g. "log-odds of 'yes'", "log-rate"."""
    from firecy._escape import display_value

    classes = getattr(est, "classes_", None)
    if classes is not None:
        if len(classes) == 2:
            return f"log-odds of {display_value(label)}"
        return f"margin (softmax score) of class {display_value(label)}"
    return getattr(est, "_raw_scale", "prediction")


def feature_names_for(est, feature_names=None):
    """The names the texts use: ``feature_names`` (checked), else the estimator's."""
    if feature_names is None:
        return est._rule_feature_names()
    names = [str(n) for n in feature_names]
    if len(names) != est.n_features_in_:
        raise ValueError(f"feature_names has {len(names)} names; the model has "
                         f"{est.n_features_in_} features")
    return names


def _raw_scale(est, labels):
    from firecy._escape import display_value

    classes = getattr(est, "classes_", None)
    if classes is not None:
        if len(classes) == 2:
            return f"log-odds of {display_value(labels[0])}"
        return "margin (softmax score) of each class"
    return getattr(est, "_raw_scale", "prediction")


def fitted_model(est, feature_names=None, *, precision=None, digits=4):
    """The account of a fitted FIRE estimator (what ``est.model_`` returns).

    Parameters
    ----------
    est : fitted FIRE estimator
    feature_names : sequence of str, optional
        The names the texts use (default: the estimator's).
    precision : int, optional
        Round the thresholds in the short texts (display only).
    digits : int, default=4
        Significant digits of a linear term's numbers in its text.

    Returns
    -------
    FittedRuleModel

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.rules import fitted_model
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, linear_terms=False).fit(X, y)
    >>> model = fitted_model(fire, ["age", "dose"])
    >>> model.counts()
    {'n_terms': 2, 'n_rules': 2, 'n_linear_terms': 0, 'n_trees': 1, 'n_antecedents': 2}
    >>> [t.text for t in model.terms]
    ['age > 2.0 and dose > 15.0', 'age > 2.0 and dose <= 15.0']
    """
    ens = est.ensemble_
    names = _estimator_names(est, feature_names)
    classes = getattr(est, "classes_", None)
    K = n_outputs(ens)
    common = dict(feature_names=names, as_frame=False, classes=classes,
                  support=getattr(est, "_train_support", None),
                  stability=getattr(est, "_rule_stability", None))
    short = rules_table(est, precision=precision, **common)
    exact = rules_table(est, exact=True, **common)
    labels = class_labels(ens, classes) if classes is not None else [None] * K
    found = linear_slopes(est)
    R = len(ens.leaf_values)
    terms = []
    for row, ex in zip(short, exact):
        col = int(row["column"])
        label = row.get("class")
        stability = row.get("stability")
        common_fields = dict(
            column=col, label=label, text=row["rule"], exact_text=ex["rule"],
            weight=float(row["weight"]), contribution=float(row["contribution"]),
            importance=float(row["importance"]),
            stability=None if stability is None or stability != stability else float(stability),
            interval=None if row.get("lower", math.nan) != row.get("lower", math.nan)
            or "lower" not in row else (float(row["lower"]), float(row["upper"])),
            p_value=None if "lower" not in row or row["p_value"] != row["p_value"]
            else float(row["p_value"]))
        if row.get("confirmatory"):
            terms.append(_confirmatory_term(est, row, names, R, common_fields))
        elif row["kind"] == "linear":
            lin, slopes = found
            t, k = divmod(col - R, slopes.shape[1])
            f = int(lin.features[t])
            mean_abs = getattr(est, "_linear_mean_abs", None)
            terms.append(Term(kind="linear", name=f"linear_{f}", output=int(k),
                              mean_abs_contribution=math.nan if mean_abs is None
                              else abs(float(row["weight"])) * float(mean_abs[t]),
                              features=(f,), feature=names[f], lower=float(lin.lower[t]),
                              upper=float(lin.upper[t]), center=float(lin.center[t]),
                              **common_fields))
        else:
            conds = tuple(simplify_conditions(ens.rules[col]))
            k = int(column_class(ens, [col])[0])
            terms.append(Term(kind="rule", name=f"rule_{col}", output=k,
                              support=float(row["support"]), tree=int(row["tree"]),
                              mean_abs_contribution=abs(float(row["contribution"]))
                              * float(row["support"]),
                              leaf_value=float(row["leaf_value"]), conditions=conds,
                              features=tuple(dict.fromkeys(int(c.feature) for c in conds)),
                              **common_fields))
    constant, note = estimator_intercept(est, None)
    intercept = np.atleast_1d(np.asarray(est.intercept_, dtype=np.float64)).copy()
    lam = getattr(est, "lambda_", None)
    offered = getattr(est, "linear_terms_", None)
    monotone, linear_sign = _constraint_dicts(est, names)
    return FittedRuleModel(
        estimator=type(est).__name__,
        raw_scale=_raw_scale(est, labels),
        labels=list(labels),
        intercept=intercept,
        constant=np.atleast_1d(np.asarray(constant, dtype=np.float64)).copy(),
        constant_note=note,
        terms=tuple(terms),
        n_antecedents=int(count_antecedents(ens, est.coef_)),
        lambda_=None if lam is None else float(lam),
        max_rules=getattr(est, "max_rules_", None),
        stable_pool=bool(getattr(est, "_kept_pool", False)),
        linear_offered=0 if offered is None else len(offered),
        notes={"rows": short},
        monotone=monotone,
        linear_sign=linear_sign,
    )
