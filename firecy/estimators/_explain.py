"""Per-row explanations of a fitted FIRE estimator: :class:`ExplainMixin`.

A FIRE model is additive on its raw scale: the raw prediction of a row is
the sum of its terms, the intercept, the ensemble's baseline (the part of
the tree model's prediction no leaf carries: a booster's initial score, 0
for a forest) and one term per kept rule, ``weight * value`` with ``value``
the rule's design value (its leaf value, or 1 for an indicator) where the
row satisfies the rule and 0 elsewhere.  Those terms are the exact
attribution of the prediction (``docs/explanations.rst``); no sampling, no
approximation.

:func:`~firecy.estimators._model_terms.model_terms` is the one place that
says what the terms are and computes them on rows; the table of :meth:`ExplainMixin.explain`, the
waterfall picture (:func:`firecy.plotting.plot_explanation`), the report and
the InterpretML explanations (:mod:`firecy.interpret`) all read it.  A
linear term (``linear_terms=True``) is one more block there, of kind
"linear": its slope times ``clip(x, lower, upper) - center``.
"""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from firecy.ensembles import EnsembleTooLargeError, _gb, memory_budget
from firecy.estimators._model_terms import (  # noqa: F401  (explain's own and its callers')
    Terms,
    _plain_value,
    explained_labels,
    feature_values,
    model_terms,
    term_texts,
)
from firecy.rules import feature_names_for, linear_slopes

__all__ = ["ExplainMixin", "ExplanationTooLargeError", "Terms", "model_terms", "explained_labels"]

# the table's columns, in order; classifiers add "class" after "row"
EXPLAIN_COLUMNS = ["row", "term", "kind", "text", "fires", "value", "weight",
                   "contribution", "features"]
_KIND_ORDER = {"intercept": 0, "baseline": 1}
#: Bytes per (row, term) of the table at its peak: the record (a dict of ten
#: keys, its floats and its ``features`` dict) and the DataFrame built from
#: the records (750 measured with tracemalloc on friedman1, 16 terms).
RECORD_BYTES = 768
#: Bytes per (row, term) of :func:`model_terms`' dense arrays (value,
#: fires, contribution, the lexsort keys).
TERM_ARRAY_BYTES = 40


class ExplanationTooLargeError(EnsembleTooLargeError):
    """``explain``'s table would not fit in the memory budget
    (:func:`~firecy.ensembles.memory_budget`): raised before it is built."""


def _n_terms(est):
    """The number of terms per row :func:`model_terms` returns."""
    found = linear_slopes(est)
    n_linear = 0 if found is None else int(np.count_nonzero(found[1]))
    return 2 * len(explained_labels(est)) + int(est._kept_columns().size) + n_linear


def check_explain_memory(n_rows, n_terms, n_records=None):
    """Raise :class:`ExplanationTooLargeError` if ``explain``'s table of
    ``n_rows x n_terms`` (``n_records`` records, default all) would exceed
    the memory budget; return the estimate in bytes."""
    n_records = int(n_rows) * int(n_terms) if n_records is None else int(n_records)
    need = n_records * RECORD_BYTES + int(n_rows) * int(n_terms) * TERM_ARRAY_BYTES
    budget = memory_budget()
    if budget is not None and need > budget:
        raise ExplanationTooLargeError(
            f"explaining {n_rows:,} rows x {n_terms:,} terms ({n_records:,} table rows) needs "
            f"about {_gb(need)}, more than the memory budget of {_gb(budget)} (half the "
            "available memory; set the environment variable FIRECY_MEMORY_BUDGET, e.g. to "
            "16G, to change it). Explain fewer rows, pass fired_only=True (only the rules "
            "each row satisfies), or explain X in chunks of rows (X[i:i + 10_000]).")
    return need


class ExplainMixin:
    """``explain`` (and InterpretML's ``explain_global`` / ``explain_local``)
    for a fitted FIRE estimator (internal)."""

    def explain(self, X, *, fired_only=False, precision=None, feature_names=None,
                as_frame=None):
        """Each row's prediction as the sum of the model's terms.

        The exact, additive explanation of a FIRE model: for every row of
        ``X`` and every kept rule, the rule's contribution ``weight * value``
        (``value``: the rule's design value where the row satisfies it, 0
        elsewhere), with the intercept and the ensemble's baseline, on the
        model's raw scale. Per row (and class), the contributions sum to
        ``decision_function`` (a classifier: the log-odds of ``classes_[1]``
        for two classes, one margin per class otherwise), or to the raw
        prediction of a regressor: ``predict`` for :class:`FIRERegressor`,
        the log-rate ``log(predict(X))`` for
        :class:`FIREPoissonRegressor`, the risk score ``predict`` for
        :class:`FIRESurvivalRegressor`.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            An ``X`` of zero rows gives an empty table (with the columns).
        fired_only : bool, default=False
            Keep only the rules each row satisfies (the others contribute 0;
            the sums are unchanged).
        precision : int, optional
            Round the thresholds in the rule texts to this many significant
            digits (default: exact, as in ``rules_``).
        feature_names : sequence of str, optional
            The names the texts and ``features`` use (default:
            ``feature_names_in_``, else the ensemble's ``x0, x1, ...``).
        as_frame : bool, optional
            A pandas DataFrame (the default when pandas is importable) or,
            with ``as_frame=False`` or without pandas, a list of dicts with
            the same keys.

        Returns
        -------
        pandas.DataFrame or list of dict
            One row per (row of ``X``, term), grouped by row (and class), the
            intercept and the baseline first, then the rules by decreasing
            ``|contribution|`` (ties by design column). Columns:

            ``row``: the row's position in ``X``;
            ``class`` (classifiers only): the label whose score the term adds
            to (for two classes, ``classes_[1]``: every term adds to its
            log-odds);
            ``term``: ``"intercept"``, ``"baseline"``, ``"rule_<column>"``
            (the name of the rule's column in :meth:`transform`) or
            ``"linear_<feature index>"`` (a linear term);
            ``kind``: ``"intercept"``, ``"baseline"``, ``"rule"`` or
            ``"linear"``;
            ``text``: the rule's conditions as in :attr:`rules_` (the names
            of the other terms);
            ``fires``: whether the row satisfies the rule (True for the
            intercept and the baseline);
            ``value``: the term's value on the row: the rule's design value
            (``leaf_value`` in :attr:`rules_`) where it fires, else 0; 1 for
            the intercept; the baseline; for a linear term
            ``clip(x, lower, upper) - center`` (0 where ``x`` is missing);
            ``weight``: the fitted weight (``coef_``, ``intercept_``; 1 for
            the baseline; a linear term's slope, ``linear_coef_``);
            ``contribution``: ``weight * value``;
            ``features``: a dict, the row's value of every feature the rule
            tests (a category's label; a sparse matrix's entry as the model
            reads it), empty for the other terms.

            The baseline is the part of the tree model's raw prediction that
            no leaf carries (a booster's initial score, 0 for a random
            forest): one term of its own, so that ``intercept_`` stays the
            fitted intercept. For a binary model with one score per class
            (XGBoost ``multi:softprob``), class 0's terms are subtracted:
            their weights are negated.

        Raises
        ------
        ExplanationTooLargeError
            A ``MemoryError`` (a subclass of
            :class:`~firecy.ensembles.EnsembleTooLargeError`), before the
            table is built, when it would exceed the memory budget
            (:func:`~firecy.ensembles.memory_budget`; about 0.75 KiB per row
            and term): the message gives rows x terms, the estimate and what
            to do (fewer rows, ``fired_only=True``, or chunks of rows).

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from firecy import FIRERegressor
        >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
        >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
        >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
        >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10,
        ...                      linear_terms=False).fit(X, y)
        >>> table = fire.explain(X[3:4])
        >>> for term, text, fires, c in zip(table["term"], table["text"], table["fires"],
        ...                                 table["contribution"]):
        ...     print(f"{term:<9} {text:<23} {fires!s:<5} {c:+.2f}")
        intercept intercept               True  +0.50
        baseline  ensemble baseline       True  +0.00
        rule_3    x0 > 2.0 and x1 > 15.0  True  +5.50
        rule_2    x0 > 2.0 and x1 <= 15.0 False +0.00
        >>> bool(np.isclose(table["contribution"].sum(), fire.predict(X[3:4])[0], rtol=1e-12))
        True
        >>> table["features"][2]
        {'x0': 3.0, 'x1': 20.0}
        """
        from firecy._dask import is_dask

        check_is_fitted(self)
        if is_dask(X):
            raise TypeError("explain takes in-memory rows (an array, a DataFrame or a "
                            "sparse matrix): compute the Dask collection's rows first")
        Xm = self._validate_predict_data(X, min_rows=0)
        names = feature_names_for(self, feature_names)
        classifier = getattr(self, "classes_", None) is not None
        if Xm.shape[0] == 0:
            # nothing to explain (and the tree libraries refuse zero rows)
            return _as_table([], classifier, as_frame)
        n_terms = _n_terms(self)
        # sized before anything is built: the table is about 0.75 KiB per (row, term)
        check_explain_memory(Xm.shape[0], n_terms, 0 if fired_only else None)
        terms = model_terms(self, Xm)
        if fired_only:
            rule = np.array([k == "rule" for k in terms.kind], dtype=bool)
            check_explain_memory(Xm.shape[0], n_terms, int(terms.fires[:, rule].sum())
                                 + Xm.shape[0] * int((~rule).sum()))
        texts = term_texts(self, terms, X=Xm, precision=precision, names=names)
        records = _records(self, Xm, terms, texts, fired_only, names)
        return _as_table(records, classifier, as_frame)

    def explain_global(self, name=None):
        """The kept rules as an InterpretML global explanation.

        Needs ``interpret-core`` (``pip install "firecy[interpret]"``); see
        :func:`firecy.interpret.explain_global`.

        Parameters
        ----------
        name : str, optional
            The explanation's name in an InterpretML dashboard.

        Returns
        -------
        interpret.api.templates.FeatureValueExplanation
        """
        from firecy.interpret import explain_global

        return explain_global(self, name=name)

    def explain_local(self, X, y=None, name=None):
        """Rows' explanations as an InterpretML local explanation.

        Needs ``interpret-core`` (``pip install "firecy[interpret]"``); see
        :func:`firecy.interpret.explain_local`.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            The rows' targets, shown beside the predictions.
        name : str, optional
            The explanation's name in an InterpretML dashboard.

        Returns
        -------
        interpret.api.templates.FeatureValueExplanation
        """
        from firecy.interpret import explain_local

        return explain_local(self, X, y=y, name=name)


def _records(est, Xm, terms, texts, fired_only, names):
    """The table's rows: per row and output, intercept, baseline, then the
    rules by decreasing |contribution|."""
    n = int(Xm.shape[0])
    values = feature_values(est, Xm, [f for fs in terms.features for f in fs])
    labels = explained_labels(est)
    contribution = terms.contribution
    rank = np.array([_KIND_ORDER.get(k, 2) for k in terms.kind])
    records = []
    for i in range(n):
        c = contribution[i]
        order = np.lexsort((terms.column, np.where(rank == 2, -np.abs(c), 0.0), rank,
                            terms.output))
        for k in order.tolist():
            fires = bool(terms.fires[i, k])
            if fired_only and terms.kind[k] == "rule" and not fires:
                continue
            record = {"row": i}
            if labels[0] is not None:
                record["class"] = labels[terms.output[k]]
            record.update(
                term=terms.name[k], kind=terms.kind[k], text=texts[k], fires=fires,
                value=float(terms.value[i, k]), weight=float(terms.weight[k]),
                contribution=float(c[k]),
                features={names[f]: _plain_value(values[f][i]) for f in terms.features[k]})
            records.append(record)
    return records


def _as_table(records, classifier, as_frame):
    if as_frame is False:
        return records
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise ImportError("explain(as_frame=True) needs pandas: pip install pandas "
                              "(or pip install 'firecy[pandas]')") from None
        return records
    columns = EXPLAIN_COLUMNS[:1] + (["class"] if classifier else []) + EXPLAIN_COLUMNS[1:]
    if records:
        try:
            return pd.DataFrame(records, columns=columns)
        except UnicodeEncodeError:
            # pandas' Arrow strings hold UTF-8 only: a name or label with a lone
            # surrogate stays a Python str, in an object column
            pass
    # (and no row: the numeric columns keep their types)
    frame = pd.DataFrame({c: pd.Series([r.get(c) for r in records], dtype=object)
                          for c in columns})
    return frame.astype({"row": np.int64, "fires": bool, "value": np.float64,
                         "weight": np.float64, "contribution": np.float64})
