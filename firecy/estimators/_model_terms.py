"""The additive terms of a fitted FIRE model, evaluated on rows: :func:`model_terms`.

A FIRE model is additive on its raw scale: the raw prediction of a row is the
sum of the intercept, the ensemble's baseline (a booster's initial score, 0
for a forest), one term per kept rule (``weight * value``, the rule's design
value where the row satisfies it, 0 elsewhere) and one per kept linear term
(its slope times ``clip(x, lower, upper) - center``). :func:`model_terms` is
the one place that says what the terms are and computes them on rows;
``explain``, the waterfall picture, the report, ``inference`` and the
InterpretML explanations read it.
"""
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from firecy.rules import feature_names_for, linear_slopes, term_text

__all__ = ["Terms", "model_terms", "explained_labels", "term_texts", "feature_values"]


@dataclass
class Terms:
    """The additive terms of a fitted model, evaluated on some rows (internal).

    ``m`` terms, ``n`` rows; the contribution of term ``k`` to row ``i`` is
    ``weight[k] * value[i, k]`` and adds to explained output ``output[k]``.

    Attributes
    ----------
    kind : list of str
        "intercept", "baseline", "rule", "linear" or "confirmatory" (a
        term of ``confirmatory=``: a rule's indicator or a linear term).
    name : list of str
        "intercept", "baseline", "rule_<column>" (as
        ``get_feature_names_out``), "linear_<feature index>".
    output : ndarray of int, shape (m,)
        The explained output (class index among :func:`explained_labels`).
    column : ndarray of int, shape (m,)
        The term's design column (-1 for the intercept and the baseline; a
        linear term's column follows the rules', as in ``path_.coefs``).
    features : list of tuple of int
        The features each term reads, in the order its conditions name them.
    weight : ndarray of float, shape (m,)
    value : ndarray of float, shape (n, m)
    fires : ndarray of bool, shape (n, m)
        Whether the row satisfies the rule (True for the other kinds).
        A linear term's value is ``clip(x, lower, upper) - center`` (0 for
        a missing ``x``) and its weight the slope ``linear_coef_``.
    """

    kind: list
    name: list
    output: np.ndarray
    column: np.ndarray
    features: list
    weight: np.ndarray
    value: np.ndarray
    fires: np.ndarray
    n_outputs: int = 1
    notes: dict = field(default_factory=dict)

    @property
    def contribution(self):
        """``weight * value``, shape (n, m)."""
        return self.value * self.weight[None, :]

    def totals(self):
        """Per row and explained output, the sum of the contributions, shape (n, K)."""
        out = np.zeros((self.value.shape[0], self.n_outputs))
        for k in range(self.n_outputs):
            out[:, k] = self.contribution[:, self.output == k].sum(axis=1)
        return out


def _folded_binary(est):
    """Whether ``est`` is a binary classifier whose ensemble has one score per
    class (XGBoost ``multi:softprob`` with two classes): its margin, the
    log-odds of ``classes_[1]``, is score 1 minus score 0."""
    classes = getattr(est, "classes_", None)
    return classes is not None and len(classes) == 2 and int(est.ensemble_.n_outputs) == 2


def explained_labels(est):
    """What each explained output is the raw score of: the class labels of a
    classifier (binary: ``[classes_[1]]``, whose log-odds the terms add to),
    ``[None]`` for a regressor."""
    classes = getattr(est, "classes_", None)
    if classes is None:
        return [None]
    labels = [c.item() if hasattr(c, "item") else c for c in np.asarray(classes)]
    return labels[1:] if len(labels) == 2 else labels


def _constant_terms(est, Xm, n_rows):
    """The intercept and the ensemble's baseline, one of each per explained output."""
    base = np.asarray(est.ensemble_.baseline(Xm), dtype=np.float64).reshape(n_rows, -1)
    b = np.atleast_1d(np.asarray(est.intercept_, dtype=np.float64)).reshape(-1)
    if base.shape[1] != b.size:
        b = np.broadcast_to(b, (base.shape[1],)).copy()
    if _folded_binary(est):
        base = base[:, 1:] - base[:, :1]
        b = b[1:] - b[:1]
    K = base.shape[1]
    value = np.empty((n_rows, 2 * K))
    value[:, 0::2] = 1.0
    value[:, 1::2] = base
    weight = np.empty(2 * K)
    weight[0::2] = b
    weight[1::2] = 1.0
    return dict(kind=["intercept", "baseline"] * K, name=["intercept", "baseline"] * K,
                output=np.repeat(np.arange(K), 2), column=np.full(2 * K, -1),
                features=[()] * (2 * K), weight=weight, value=value,
                fires=np.ones((n_rows, 2 * K), dtype=bool))


def _rule_features(conditions):
    return tuple(dict.fromkeys(int(c.feature) for c in conditions))


def _rule_terms(est, Xm, n_rows):
    """One term per kept rule: its weight, and its value where the row lands in it."""
    ens = est.ensemble_
    kept = est._kept_columns()
    if kept.size:
        tree = np.searchsorted(np.asarray(ens.block_ptr), kept, side="right") - 1
        blocks, at = np.unique(tree, return_inverse=True)
        # the rows routed through the kept rules' trees only, as predict does
        table = np.asarray(ens.leaf_table(Xm, blocks=blocks))
        fires = table[:, at] == kept[None, :]
        outputs = np.asarray(ens.tree_class)[tree]
    else:
        fires = np.zeros((n_rows, 0), dtype=bool)
        outputs = np.zeros(0, dtype=np.int64)
    leaf = np.asarray(ens.leaf_values, dtype=np.float64)[kept]
    weight = np.asarray(est.coef_, dtype=np.float64).reshape(len(ens.leaf_values), -1)[kept, 0]
    if _folded_binary(est):
        # class 0's scores subtract from the log-odds of class 1
        weight = np.where(outputs == 1, weight, -weight)
        outputs = np.zeros_like(outputs)
    return dict(kind=["rule"] * kept.size, name=[f"rule_{j}" for j in kept.tolist()],
                output=outputs.astype(np.int64), column=kept.astype(np.int64),
                features=[_rule_features(ens.rules[j]) for j in kept.tolist()],
                weight=weight, value=np.where(fires, leaf[None, :], 0.0), fires=fires)


def _linear_block(est, Xm, n_rows):
    """One term per kept (linear term, output): its slope, and its value
    ``clip(x, lower, upper) - center`` on the rows (0 where x is missing)."""
    found = linear_slopes(est)
    if found is None:
        return None
    terms, slopes = found
    K = slopes.shape[1]
    R = len(est.ensemble_.leaf_values)
    t_idx, k_idx = np.nonzero(slopes)
    centered = terms.centered(Xm)
    weight = slopes[t_idx, k_idx]
    outputs = k_idx.astype(np.int64)
    if _folded_binary(est):
        weight = np.where(outputs == 1, weight, -weight)
        outputs = np.zeros_like(outputs)
    features = [int(terms.features[t]) for t in t_idx.tolist()]
    return dict(kind=["linear"] * t_idx.size, name=[f"linear_{f}" for f in features],
                output=outputs, column=(R + t_idx * K + k_idx).astype(np.int64),
                features=[(f,) for f in features], weight=weight,
                value=centered[:, t_idx], fires=np.ones((n_rows, t_idx.size), dtype=bool))


def _confirmatory_block(est, Xm, n_rows):
    """One term per (confirmatory term, output) of a fit with ``confirmatory=``
    (kind "confirmatory"): its weight, and its value on the rows (a rule's
    0/1 indicator, a linear term's ``clip(x) - center``)."""
    conf = getattr(est, "confirmatory_", None)
    if conf is None:
        return None
    w = np.asarray(est.confirmatory_coef_, dtype=np.float64)
    w = w.reshape(1, -1) if w.ndim == 1 else w
    K, m = w.shape
    values = conf.values(Xm)
    R = len(est.ensemble_.leaf_values)
    n_lin = len(getattr(est, "linear_terms_", ()) or ())
    q_idx = np.repeat(np.arange(m), K)
    k_idx = np.tile(np.arange(K), m)
    weight = w[k_idx, q_idx]
    outputs = k_idx.astype(np.int64)
    if _folded_binary(est):
        weight = np.where(outputs == 1, weight, -weight)
        outputs = np.zeros_like(outputs)
    return dict(kind=["confirmatory"] * q_idx.size,
                name=[f"confirmatory_{q}" for q in q_idx.tolist()], output=outputs,
                column=(R + n_lin * K + q_idx * K + k_idx).astype(np.int64),
                features=[tuple(conf.features[q]) for q in q_idx.tolist()], weight=weight,
                value=values[:, q_idx],
                fires=np.where(np.asarray([conf.kinds[q] == "rule" for q in q_idx])[None, :],
                               values[:, q_idx] != 0, True))


def model_terms(est, Xm):
    """Every additive term of ``est``'s raw prediction, on the rows of ``Xm``.

    Parameters
    ----------
    est : fitted FIRE estimator
    Xm : the rows, as ``est._validate_predict_data`` returns them

    Returns
    -------
    Terms
        Per row and explained output, the contributions sum to the raw
        prediction (``decision_function`` of a classifier, the raw score of
        a regressor) up to rounding.
    """
    n = int(Xm.shape[0])
    blocks = [_constant_terms(est, Xm, n), _rule_terms(est, Xm, n)]
    linear = _linear_block(est, Xm, n)
    if linear is not None:
        blocks.append(linear)
    confirmatory = _confirmatory_block(est, Xm, n)
    if confirmatory is not None:
        blocks.append(confirmatory)
    return Terms(
        kind=[k for b in blocks for k in b["kind"]],
        name=[k for b in blocks for k in b["name"]],
        output=np.concatenate([b["output"] for b in blocks]),
        column=np.concatenate([b["column"] for b in blocks]),
        features=[f for b in blocks for f in b["features"]],
        weight=np.concatenate([b["weight"] for b in blocks]),
        value=np.concatenate([b["value"] for b in blocks], axis=1),
        fires=np.concatenate([b["fires"] for b in blocks], axis=1),
        n_outputs=len(explained_labels(est)),
    )


def term_texts(est, terms, X=None, precision=None, names=None):
    """The text of every term: a rule's conditions (as in ``rules_``), the
    intercept's and the baseline's names."""
    from firecy.ensembles import simplify_conditions
    from firecy.rules import format_conditions
    from firecy.rules import missing_features

    ens = est.ensemble_
    names = feature_names_for(est) if names is None else names
    show = missing_features(X, "auto")
    texts = []
    found = linear_slopes(est)
    for kind, col, w in zip(terms.kind, terms.column.tolist(), terms.weight.tolist()):
        if kind == "rule":
            texts.append(format_conditions(simplify_conditions(ens.rules[col]), names,
                                           show_missing=show, precision=precision,
                                           simplify=False))
        elif kind == "linear":
            lin, slopes = found
            t = (col - len(ens.leaf_values)) // slopes.shape[1]
            texts.append(term_text(names[int(lin.features[t])], w, lin.lower[t], lin.upper[t],
                                   lin.center[t], precision or 4))
        elif kind == "confirmatory":
            texts.append(_confirmatory_text(est, col, w, names, precision))
        else:
            texts.append({"intercept": "intercept", "baseline": "ensemble baseline"}[kind])
    return texts


def _confirmatory_text(est, col, w, names, precision):
    """A confirmatory term's text: the rule as given, or the linear term's
    sentence, marked "(confirmatory)"."""
    from firecy._escape import display_text

    conf = est.confirmatory_
    K = max(1, int(np.size(est.confirmatory_coef_)) // len(conf))
    n_lin = len(getattr(est, "linear_terms_", ()) or ())
    q = (col - len(est.ensemble_.leaf_values) - n_lin * K) // K
    if conf.kinds[q] == "linear":
        text = term_text(names[int(conf.features[q][0])], w, conf.lower[q], conf.upper[q],
                         conf.center[q], precision or 4)
    else:
        text = display_text(conf.texts[q])
    return text + " (confirmatory)"


def _plain_value(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def feature_values(est, Xm, features):
    """{feature index: that feature's values on the rows} for ``features``,
    as the model reads them: a category's label, a sparse matrix's entries
    (NaN where XGBoost reads an unstored entry as missing)."""
    features = sorted(set(features))
    if not features:
        return {}
    if hasattr(Xm, "iloc"):
        sparse_cols = [f for f in features
                       if str(getattr(Xm.dtypes.iloc[f], "name", "")).startswith("Sparse")]
        if not sparse_cols:
            return {f: Xm.iloc[:, f].to_numpy() for f in features}
        Xm = sp.csr_matrix(Xm.sparse.to_coo())
    if sp.issparse(Xm):
        # only the features' columns are made dense (a wide sparse X never is)
        sub = sp.csc_matrix(Xm)[:, features]
        dense = np.asarray(est.ensemble_.dense_for_rules(sub), dtype=np.float64)
        return {f: dense[:, q] for q, f in enumerate(features)}
    arr = np.asarray(Xm)
    return {f: arr[:, f] for f in features}
