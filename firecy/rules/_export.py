"""Rules that leave the library: :func:`rules_python` and :func:`rules_sql`.

The kept rules of a FIRE model become a standalone Python function (standard
library only) or a SQL expression, each reproducing the model's raw prediction
exactly (the conditions' tests: :mod:`firecy.rules._export_tests`; the
source text: :mod:`firecy.rules._export_render`).
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass

import numpy as np

from firecy.rules._export_render import render_python, render_sql
from firecy.rules._export_tests import condition_test, float64_comparison
from firecy.rules._inputs import (
    block_label,
    check_coef,
    column_class,
    is_estimator,
    model_tree_of,
    tree_of,
    unpack,
)
from firecy.ensembles import simplify_conditions
from firecy.rules._linear import linear_slopes

__all__ = ["rules_python", "rules_sql", "float64_comparison", "export_plan"]


@dataclass
class ExportPlan:
    """The kept rules of a model, grouped by output and tree, as tests."""

    source: str
    feature_names: list
    intercepts: list              # per output: intercept_ + baseline
    trees: list                   # (output, tree, [(tests, contribution), ...])
    used: list                    # feature indices the rules read
    labels: dict                  # feature -> the library's labels
    next_label: set               # features read as XGBoost reads unseen labels
    reading: str                  # the comparison conventions, for comments
    classes: list = None          # a classifier's class labels (what the margins mean)
    tree_labels: dict = None      # block -> its name in comments ("tree t[, depth d]")
    n_trees: int = None           # the model's trees the rules come from
    # the kept linear terms: (output, feature, lower, upper, center, slope),
    # each adding slope * (min(max(x, lower), upper) - center), 0 if x is missing
    linear: list = None
    # "monotone: income (-), age (+)": the fit's constraints ("" without any)
    constraints: str = ""
    # the confirmatory rules (confirmatory=): (output, [tests], weight), each
    # read in float64 as the user's text is; confirmatory linear terms are in
    # ``linear``; n_confirmatory counts both
    confirmatory: list = None
    n_confirmatory: int = 0


def _intercepts(ensemble, intercept, est):
    base = ensemble.constant_baseline()
    if base is None:
        raise ValueError(
            "the ensemble's baseline varies by row (a gradient boosting model with a "
            "custom init estimator): its rules cannot be exported as a constant "
            "intercept plus rules"
        )
    K = int(ensemble.n_outputs)
    b = np.broadcast_to(np.asarray(0.0 if intercept is None else intercept,
                                   dtype=np.float64).reshape(-1), (K,))
    return [float(b[k]) + float(base[k] if base.size > 1 else base[0]) for k in range(K)]


def export_plan(model, coef=None, intercept=None, feature_names=None):
    """The rules to export (see :func:`rules_python`)."""
    est = model if is_estimator(model) else None
    coef_given = coef
    linear = _linear_terms(est) if est is not None and coef is None else []
    conf_rules, conf_linear, n_conf = (_confirmatory_terms(est) if est is not None
                                       and coef is None else ([], [], 0))
    linear = linear + conf_linear
    ensemble, coef, intercept, est_names = unpack(model, coef, intercept)
    if feature_names is None:
        feature_names = est_names
    names = [str(n) for n in (feature_names if feature_names is not None
                              else ensemble.feature_names)]
    if len(names) != int(ensemble.n_features_in_):
        raise ValueError(f"{len(names)} feature names for {ensemble.n_features_in_} features")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"feature names must be unique: {repeated} appear more than once "
                         "(an exported rule reads each feature by its name)")
    coef = check_coef(ensemble, coef)
    cols = np.flatnonzero(coef)
    trees = tree_of(ensemble, cols)
    classes = column_class(ensemble, cols)
    groups = {}
    used, labels, next_label = set(), {}, set()
    for j, t, k in zip(cols.tolist(), trees.tolist(), classes.tolist()):
        conds = simplify_conditions(ensemble.rules[j])
        tests = [condition_test(c) for c in conds]
        for c in conds:
            used.add(c.feature)
            if c.labels:
                labels[c.feature] = c.labels
                if c.category_cast == "floor":
                    next_label.add(c.feature)
        contribution = float(coef[j] * ensemble.leaf_values[j])
        groups.setdefault((k, t), []).append((tests, contribution))
    reading = {
        "sklearn": "scikit-learn compares float32(x) with its thresholds (the float64 "
                   "comparisons below are equivalent); HistGradientBoosting compares "
                   "float64 x",
        "xgboost": "XGBoost compares float32(x) < split (the float64 comparisons below "
                   "are equivalent); XGBoost 3.2 reads a category it was not fitted "
                   "with as the next of its categories in sorted order, and refuses "
                   "one after the last (the SQL reads it as missing)",
        "lightgbm": "LightGBM compares float64 x <= threshold and reads every "
                    "|x| <= 1.0000000180025095e-35 (its kZeroThreshold, float32(1e-35)) "
                    "as 0; a category it was not fitted with counts as missing",
        "catboost": "CatBoost compares float32(x) <= border (the float64 comparisons "
                    "below are equivalent); a category it was not fitted with equals "
                    "none of its one-hot labels",
    }.get(ensemble.source, "")
    used.update(f for _, f, *_ in linear)
    used.update(t.feature for _, tests, _ in conf_rules for t in tests)
    constraints = ""
    if est is not None and coef_given is None:
        from firecy.rules._account import _constraint_dicts, _constraints_text

        constraints = _constraints_text(*_constraint_dicts(est, names))
    return ExportPlan(
        source=ensemble.source, feature_names=names,
        intercepts=_intercepts(ensemble, intercept, est),
        trees=[(k, t, rules) for (k, t), rules in sorted(groups.items())],
        used=sorted(used), labels=labels, next_label=next_label, reading=reading,
        classes=_class_labels(est),
        tree_labels={t: block_label(ensemble, t) for t in set(trees.tolist())},
        n_trees=len(set(model_tree_of(ensemble, cols).tolist())),
        linear=linear,
        constraints=constraints,
        confirmatory=conf_rules,
        n_confirmatory=n_conf,
    )


def _confirmatory_terms(est):
    """A fitted estimator's confirmatory terms (``confirmatory=``) as the plan
    lists them: ``(rules, linear terms, count)``, a rule as ``(output, tests,
    weight)`` with its conditions read in float64 (as the user's text is, by
    :func:`~firecy.rules.evaluate_parsed`), a linear term as the plan's
    linear terms are."""
    from firecy.rules._export_tests import NumericTest

    conf = getattr(est, "confirmatory_", None)
    if conf is None:
        return [], [], 0
    W = np.asarray(est.confirmatory_coef_, dtype=np.float64)
    W = W.reshape(1, -1) if W.ndim == 1 else W
    rules, linear, count = [], [], 0
    for q, kind in enumerate(conf.kinds):
        for k in range(W.shape[0]):
            w = float(W[k, q])
            if w == 0.0:
                continue
            count += 1
            if kind == "linear":
                linear.append((k, int(conf.features[q][0]), float(conf.lower[q]),
                               float(conf.upper[q]), float(conf.center[q]), w))
                continue
            tests = []
            for c in conf.parsed[q]:
                if c.op not in ("<", "<=", ">", ">=") or c.zero_missing:
                    raise NotImplementedError(
                        f"confirmatory rule {conf.texts[q]!r}: a set of categories or a "
                        "zero-as-missing condition is not exported yet; rules_json holds "
                        "the term")
                tests.append(NumericTest(int(c.feature), c.op, float(c.value), bool(c.missing)))
            rules.append((k, tests, w))
    return rules, linear, count


def _linear_terms(est):
    """A fitted estimator's kept linear terms as the plan lists them."""
    found = linear_slopes(est)
    if found is None:
        return []
    terms, slopes = found
    return [(k, int(terms.features[t]), float(terms.lower[t]), float(terms.upper[t]),
             float(terms.center[t]), float(slopes[t, k]))
            for k in range(slopes.shape[1]) for t in range(len(terms)) if slopes[t, k] != 0.0]


def _class_labels(est):
    """A fitted classifier's labels, as plain Python values (None otherwise)."""
    classes = getattr(est, "classes_", None) if est is not None else None
    return None if classes is None else [c.item() if hasattr(c, "item") else c
                                         for c in classes]


def rules_python(model, coef=None, intercept=None, *, feature_names=None,
                 function_name="predict"):
    """The kept rules as the source of a standalone Python function.

    The function needs the standard library only (``math``), and returns the
    FIRE model's raw prediction for one row, exactly as the estimator
    computes it: ``predict`` for a regressor; for a classifier, the margin
    (``decision_function``) to which its link applies.

    Parameters
    ----------
    model : fitted FIRE estimator or RuleEnsemble
    coef : array-like of shape (n_rules,), optional
        Rule weights (an estimator's ``coef_`` by default).
    intercept : float or array-like of shape (n_outputs,), optional
        The model's intercept (an estimator's ``intercept_`` by default; 0
        for an ensemble).  The ensemble's baseline is added to it.
    feature_names : sequence of str, optional
        The keys the function reads from its row (the estimator's
        ``feature_names_in_``, else the ensemble's names).
    function_name : str, default="predict"

    Returns
    -------
    str
        Python source defining ``function_name(row)``: ``row`` maps each
        feature name to a number (``None`` or NaN for a missing value) or,
        for a categorical feature, its category label.  It returns a float,
        or a list of floats (one per class) for a multi-output ensemble.
        An estimator fitted with ``linear_terms=True`` adds its kept linear
        terms, ``slope * (min(max(x, lower), upper) - center)`` (0 for a
        missing ``x``), as ``predict`` does.

    Raises
    ------
    ValueError
        If the ensemble's baseline varies by row (a gradient boosting model
        with a custom ``init`` estimator), or a category label is not a str,
        int, float, bool or None (numpy scalars are read as those).

    Notes
    -----
    Feature names and labels are written as Python literals, and the
    module docstring shows them escaped: whatever their characters, the
    source is valid UTF-8 Python that only defines the function when
    imported.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> from firecy.rules import rules_python
    >>> source = rules_python(fire, feature_names=["age", "dose"])
    >>> print(source[source.index("def predict"):].strip())
    def predict(row):
        ...
        x0 = _num(row['age'])
        x1 = _num(row['dose'])
        out = ...
        # tree 0
        if (x0 is None or x0 > 2.0000001192092896) and (x1 is not None and x1 <= 15.000000476837158):
            out += ...
        elif (x0 is None or x0 > 2.0000001192092896) and (x1 is None or x1 > 15.000000476837158):
            out += ...
        return out

    The function gives the estimator's predictions, without firecy:

    >>> namespace = {}
    >>> exec(source, namespace)
    >>> rows = [{"age": a, "dose": d} for a, d in X]
    >>> bool(np.allclose([namespace["predict"](row) for row in rows], fire.predict(X)))
    True
    """
    name = str(function_name)
    if (not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_")
            or name in ("math", "bisect")):
        raise ValueError(
            f"function_name must be a Python identifier that is not a keyword, does not "
            f"start with '_' (the source's helpers) and is not math or bisect (the "
            f"modules it imports), got {function_name!r}")
    return render_python(export_plan(model, coef, intercept, feature_names), function_name)


def rules_sql(model, coef=None, intercept=None, *, feature_names=None, columns=None,
              alias=None, table="data"):
    """The kept rules as a SQL expression: a sum of ``CASE`` expressions.

    Missing values are ``NULL``.  Thresholds are float64 literals in the
    library's exact comparison (float32 comparisons become the equivalent
    float64 ones); categorical features compare their category labels.

    Parameters
    ----------
    model, coef, intercept, feature_names
        As in :func:`rules_python`.
    columns : mapping of str to str, optional
        SQL expression of each feature (by feature name), written as given;
        default: the column of that name (see ``table``).
    alias : str, optional
        Append ``AS alias``.  A multi-output ensemble gives one expression
        per output, ``AS "<alias>_<k>"`` (alias ``margin`` by default),
        separated by commas.
    table : str or None, default="data"
        The table the columns are read from, as the query's ``FROM`` clause
        names it (its alias if it has one): every column is written
        ``"table"."name"``, so a column the table lacks is an error in every
        database.  ``None`` writes a bare ``"name"``, which SQLite reads as
        the string ``'name'`` when the table has no such column (a misspelled
        or missing column then gives wrong predictions, silently): use it only
        where the database refuses unknown columns (DuckDB, PostgreSQL).

    Returns
    -------
    str
        One SQL expression (after a comment naming its source), to use as
        ``SELECT <expression> AS prediction FROM data`` (with
        ``table="data"``).  A kept linear term is a ``CASE`` expression
        too: 0 for ``NULL``, else its slope times the clipped value minus
        its center.  Numeric columns are assumed finite or NULL (SQL
        has no NaN).  Names and labels are quoted as standard SQL (a
        backslash is an ordinary character, as in SQLite, DuckDB and
        PostgreSQL).

    Raises
    ------
    ValueError
        If a feature name or category label cannot be held by a SQL
        statement (a NUL character, a lone surrogate), or if the ensemble's
        baseline varies by row.

    Examples
    --------
    scikit-learn's float32 comparisons become the equivalent float64 ones
    (``dose <= 15`` in float32 is ``dose <= 15.000000476837158``):

    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> from firecy.rules import rules_sql
    >>> sql = rules_sql(fire, feature_names=["age", "dose"], alias="prediction",
    ...                 table="data")
    >>> print(sql)
    /* Rules extracted by firecy ... */
    ...
      + CASE WHEN ("data"."age" IS NULL OR "data"."age" > 2.0000001192092896)
                  AND ("data"."dose" IS NOT NULL AND "data"."dose" <= 15.000000476837158) THEN ...
             WHEN ("data"."age" IS NULL OR "data"."age" > 2.0000001192092896)
                  AND ("data"."dose" IS NULL OR "data"."dose" > 15.000000476837158) THEN ...
             ELSE 0.0 END  /* tree 0 */
      AS "prediction"

    The database then computes the estimator's predictions:

    >>> import sqlite3
    >>> db = sqlite3.connect(":memory:")
    >>> _ = db.execute('CREATE TABLE data ("age" REAL, "dose" REAL)')
    >>> _ = db.executemany("INSERT INTO data VALUES (?, ?)", X.tolist())
    >>> got = [value for value, in db.execute(f"SELECT {sql} FROM data")]
    >>> bool(np.allclose(got, fire.predict(X)))
    True

    and a table without one of the columns is an error, not a string:

    >>> _ = db.execute('CREATE TABLE typo ("age" REAL, "dosage" REAL)')
    >>> db.execute(f"SELECT {sql} FROM typo AS data")
    Traceback (most recent call last):
    ...
    sqlite3.OperationalError: no such column: data.dose
    """
    return render_sql(export_plan(model, coef, intercept, feature_names), columns, alias,
                      table)
