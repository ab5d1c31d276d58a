"""A fitted FIRE model as InterpretML explanations (needs ``interpret-core``).

:func:`explain_global` and :func:`explain_local` (also the estimators'
``explain_global()`` / ``explain_local(X)``) return InterpretML explanation
objects (subclasses of ``interpret.api.templates.FeatureValueExplanation``,
the class InterpretML's EBM and linear models return), so a FIRE model
sits in an InterpretML dashboard (``interpret.show``) beside an EBM:

* the **global** explanation lists the kept terms (rules and linear terms)
  with their importance, the mean absolute contribution over the training
  rows (``|weight * value| * support`` for a rule, ``|slope|`` times the mean
  of ``|clip(x, lower, upper) - center|`` for a linear term: the measure
  EBM's overall chart shows); each rule's own view is its contribution where
  it holds and 0 elsewhere, with its training support, a linear term's is
  its line over its clip range;
* the **local** explanation of a row lists every kept rule's contribution
  on that row (:meth:`explain`'s, on the model's raw scale: the log-odds,
  a class's margin, the log-rate, the risk score or the prediction) and
  the intercept plus the ensemble's baseline as InterpretML's
  ``"Intercept"``: they sum to the raw prediction. A multi-class model's
  terms carry one score per class (0 outside the class a rule speaks for),
  as EBM's do.

``data(key)`` returns these as dicts (InterpretML's format); ``visualize``
draws them with plotly (``pip install "firecy[interpret]"`` brings
``interpret-core`` and plotly). Nothing is fetched: the figures are
built in memory. Strings from the data (feature names, categories,
labels) are in ``data()`` as they are; ``visualize`` escapes them, so that
plotly does not read one as markup.
"""
import html

import numpy as np

__all__ = ["explain_global", "explain_local"]


def _require_interpret():
    try:
        from interpret.api.templates import FeatureValueExplanation
    except ImportError:
        raise ImportError(
            "InterpretML explanations need interpret-core: pip install interpret-core "
            "(or pip install 'firecy[interpret]')") from None
    return FeatureValueExplanation


_EXPLANATION_TYPE = None


def _explanation_type():
    """FIREExplanation: InterpretML's FeatureValueExplanation whose pictures
    show the data strings as text (escaped for plotly) and carry titles."""
    global _EXPLANATION_TYPE
    if _EXPLANATION_TYPE is not None:
        return _EXPLANATION_TYPE
    base = _require_interpret()

    class FIREExplanation(base):
        """A FIRE model's explanation, in InterpretML's format (see
        :mod:`firecy.interpret`)."""

        def visualize(self, key=None):
            """A plotly figure: the rules' importances (global, ``key=None``),
            one rule's contribution (global, ``key=k``) or one row's terms
            (local, ``key=i``)."""
            shown = self.__class__.__new__(self.__class__)
            shown.__dict__.update(self.__dict__)
            shown._internal_obj = _escaped(self._internal_obj)
            shown.feature_names = [html.escape(str(n)) for n in self.feature_names]
            fig = base.visualize(shown, key)
            if key is None and self.explanation_type == "global" and fig is not None:
                fig.update_layout(title="Rule importance: mean |contribution| on the "
                                        "training rows",
                                  xaxis_title="mean absolute contribution")
            return fig

    _EXPLANATION_TYPE = FIREExplanation
    return FIREExplanation


def _escaped(obj):
    """``obj`` (the explanation's dicts) with every string HTML-escaped."""
    if isinstance(obj, str):
        return html.escape(obj)
    if isinstance(obj, dict):
        return {k: _escaped(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_escaped(v) for v in obj]
    return obj


def _term_names(columns, texts):
    """A unique name per term: its text, with its column where two texts are equal."""
    count = {}
    for t in texts:
        count[t] = count.get(t, 0) + 1
    return [t if count[t] == 1 else f"{t} (rule_{j})" for j, t in zip(columns, texts)]


def _kept_rules(est):
    """The kept rules as rules_table gives them (class, text, support, ...)."""
    from firecy.rules import rules_table

    return rules_table(est, as_frame=False)


def _record_key(row, est, class_index):
    """``(explain's term name, class index)`` of a rules_table row: a rule is
    ``rule_<column>``, a linear term ``linear_<feature>`` (its column is
    ``n_rule_columns + t * n_outputs + k``, ``t`` its index in
    ``linear_terms_``), a confirmatory term ``confirmatory_<q>``."""
    k = 0 if class_index is None else class_index[row["class"]]
    n_columns = len(est.ensemble_.leaf_values)
    n_out = int(getattr(est.ensemble_, "n_outputs", 1))
    if row.get("confirmatory"):
        # a confirmatory term (confirmatory=) after the linear terms' columns
        n_lin = len(getattr(est, "linear_terms_", ()) or ())
        return f"confirmatory_{(row['column'] - n_columns - n_lin * n_out) // n_out}", k
    if row.get("kind") != "linear":
        return f"rule_{row['column']}", k
    # explain names a linear term by its feature (a feature not offered, or
    # a confirmatory one, leaves a gap between term and feature indices)
    t = (row["column"] - n_columns) // n_out
    return f"linear_{int(est.linear_terms_.features[t])}", k


def _labels(est):
    classes = getattr(est, "classes_", None)
    return None if classes is None else [c.item() if hasattr(c, "item") else c
                                         for c in np.asarray(classes)]


def explain_global(est, name=None):
    """The kept rules of a fitted FIRE estimator as an InterpretML global explanation.

    Parameters
    ----------
    est : fitted FIRE estimator
    name : str, optional
        The explanation's name in a dashboard (default: the estimator's class).

    Returns
    -------
    interpret.api.templates.FeatureValueExplanation
        ``explanation_type`` "global". ``data()``: ``{"names": [term texts],
        "scores": [importances]}``, one per kept term (rules and linear
        terms, as ``est.model_`` lists them), the mean absolute contribution
        on the training rows, largest first; ``data(k)``: for a rule, its
        contribution where it holds and where it does not, with its training
        support as the density; for a linear term, its contribution at its
        lower clip, its centre and its upper clip. ``feature_names`` are the rule texts, ``selector`` a
        DataFrame of them.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> g = fire.explain_global()
    >>> g.explanation_type, g.data()["names"]
    ('global', ['x0 > 2.0 and x1 > 15.0', 'x0 > 2.0 and x1 <= 15.0'])
    >>> [round(s, 3) for s in g.data()["scores"]]    # |contribution| * support
    [1.375, 0.875]
    """
    import pandas as pd

    explanation = _explanation_type()
    # the fitted model's account: rules and linear terms, as every output counts them
    terms = est.model_.terms
    labels = _labels(est)
    multi = labels is not None and len(labels) > 2
    texts = [t.text if not multi else f"{t.text} [class {t.label}]" for t in terms]
    names = _term_names([t.column for t in terms], texts)
    scores = [t.mean_abs_contribution for t in terms]
    if any(s != s for s in scores):
        raise ValueError("a term's mean absolute contribution is unknown (a model fitted "
                         "outside firecy's fit, e.g. on Dask): no global explanation")
    order = sorted(range(len(terms)), key=lambda k: (-scores[k], terms[k].column))
    names = [names[k] for k in order]
    terms = [terms[k] for k in order]
    scores = [float(scores[k]) for k in order]
    specific = [_term_view(t) for t in terms]
    selector = pd.DataFrame({"Name": names,
                             "Type": ["categorical" if t.kind == "rule" else "continuous"
                                      for t in terms],
                             "# Unique": [2 if t.kind == "rule" else None for t in terms],
                             "% Non-zero": [t.support if t.kind == "rule" else None
                                            for t in terms]},
                            columns=["Name", "Type", "# Unique", "% Non-zero"])
    return explanation(
        "global",
        {"overall": {"type": "univariate", "names": list(names), "scores": scores},
         "specific": specific},
        feature_names=list(names),
        feature_types=["nominal" if t.kind == "rule" else "continuous" for t in terms],
        name=type(est).__name__ if name is None else name, selector=selector)


def _term_view(term):
    """One term's own view: a rule's contribution where it holds and where it
    does not (its support as the density); a linear term's contribution at
    its lower clip, its centre and its upper clip (a line between them)."""
    if term.kind == "linear":
        points = [term.lower, term.center, term.upper]
        return {"type": "univariate",
                "names": [f"{term.feature} = {v:.4g}" for v in points],
                "scores": [float(term.weight * (v - term.center)) for v in points]}
    s = float(term.support)
    return {"type": "univariate",
            "names": ["rule holds", "rule does not hold"],
            "scores": [float(term.contribution), 0.0],
            "density": {"names": ["rule holds", "rule does not hold"],
                        "scores": [s, 1.0 - s]}}


def _perf(est, X, y, n):
    """Per row, InterpretML's performance dict: predicted and actual (class
    indices and probabilities for a classifier)."""
    labels = _labels(est)
    if labels is None:
        pred = np.asarray(est.predict(X), dtype=np.float64).reshape(-1)
        actual = np.full(n, np.nan) if y is None else np.asarray(y, dtype=np.float64)
        return [{"is_classification": False, "actual": float(actual[i]),
                 "predicted": float(pred[i]), "actual_score": float(actual[i]),
                 "predicted_score": float(pred[i])} for i in range(n)]
    proba = est.predict_proba(X)
    index = {lab: k for k, lab in enumerate(labels)}
    out = []
    for i in range(n):
        k = int(np.argmax(proba[i]))
        a = np.nan
        if y is not None:
            lab = y[i].item() if hasattr(y[i], "item") else y[i]
            a = index.get(lab, np.nan)
        out.append({"is_classification": True, "actual": a, "predicted": k,
                    "actual_score": np.nan if a != a else float(proba[i, a]),
                    "predicted_score": float(proba[i, k])})
    return out


def _values_text(features):
    """A rule's features on a row, as InterpretML prints a term's value."""
    from firecy._escape import display_text

    def one(v):
        return f"{v:.6g}" if isinstance(v, float) else str(v)

    return ", ".join(f"{display_text(k)} = {display_text(one(v))}" for k, v in features.items())


def explain_local(est, X, y=None, name=None):
    """Rows of ``X`` explained by a fitted FIRE estimator, as an InterpretML
    local explanation.

    Parameters
    ----------
    est : fitted FIRE estimator
    X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), optional
        The rows' targets (labels for a classifier), shown beside the
        predictions.
    name : str, optional
        The explanation's name in a dashboard.

    Returns
    -------
    interpret.api.templates.FeatureValueExplanation
        ``explanation_type`` "local". ``data(i)`` for row i: ``names`` (the
        kept rules' texts, in the order of ``rules_``), ``scores`` (their
        contributions on the row, from :meth:`explain`; one per class for a
        multi-class model), ``values`` (the row's values of each rule's
        features), ``extra`` (``"Intercept"``: the intercept plus the
        ensemble's baseline), ``perf`` (prediction and actual) and, for a
        classifier, ``meta["label_names"]``. Scores plus the extra score
        sum to the raw prediction.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> row = fire.explain_local(X[3:4], y[3:4]).data(0)
    >>> row["names"], [round(s, 6) for s in row["scores"]], row["values"][0]
    (['x0 > 2.0 and x1 > 15.0', 'x0 > 2.0 and x1 <= 15.0'], [5.5, 0.0], 'x0 = 3, x1 = 20')
    >>> round(row["extra"]["scores"][0] + sum(row["scores"]), 6), row["perf"]["actual"]
    (6.0, 6.0)
    """

    explanation = _explanation_type()
    records = est.explain(X, as_frame=False)
    rules = _kept_rules(est)
    labels = _labels(est)
    multi = labels is not None and len(labels) > 2
    texts = [r["rule"] if not multi else f"{r['rule']} [class {r['class']}]" for r in rules]
    names = _term_names([r["column"] for r in rules], texts)
    class_index = {lab: k for k, lab in enumerate(labels)} if multi else None
    position = {_record_key(r, est, class_index): k for k, r in enumerate(rules)}
    n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
    y = None if y is None else np.asarray(y)
    if y is not None and y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows, X {n}")
    perf = _perf(est, X, y, n)
    K = len(labels) if multi else 1
    scores = np.zeros((n, len(rules), K))
    extra = np.zeros((n, K))
    values = [[""] * len(rules) for _ in range(n)]
    for r in records:
        k = class_index[r["class"]] if multi else 0
        if r["kind"] in ("intercept", "baseline"):
            extra[r["row"], k] += r["contribution"]
        else:
            j = position[(r["term"], k)]
            scores[r["row"], j, k] = r["contribution"]
            values[r["row"]][j] = _values_text(r["features"])
    specific = []
    for i in range(n):
        row_scores = [s.copy() for s in scores[i]] if multi else scores[i, :, 0].tolist()
        data = {"type": "univariate", "names": list(names), "scores": row_scores,
                "values": values[i],
                "extra": {"names": ["Intercept"],
                          "scores": [extra[i].copy() if multi else float(extra[i, 0])],
                          "values": [1]},
                "perf": perf[i]}
        if labels is not None:
            data["meta"] = {"label_names": list(labels)}
        specific.append(data)
    selector = _local_selector(perf, labels is not None)
    return explanation(
        "local", {"overall": None, "specific": specific},
        feature_names=list(names), feature_types=["nominal"] * len(names),
        name=type(est).__name__ if name is None else name, selector=selector)


def _local_selector(perf, classification):
    """The rows' table of a dashboard: actual, predicted, residual."""
    import pandas as pd

    table = pd.DataFrame({"Actual": [p["actual"] for p in perf],
                          "Predicted": [p["predicted"] for p in perf],
                          "PrScore": [p["predicted_score"] for p in perf],
                          "AcScore": [p["actual_score"] for p in perf]})
    table["Resid"] = table["AcScore"] - table["PrScore"]
    table["AbsResid"] = table["Resid"].abs()
    columns = (["Actual", "Predicted", "PrScore", "AcScore", "Resid", "AbsResid"]
               if classification else ["Actual", "Predicted", "Resid", "AbsResid"])
    return table[columns]
