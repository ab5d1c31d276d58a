"""The kept rules as a JSON-ready dict: :func:`rules_json` (``firecy extract`` writes it)."""
from __future__ import annotations

import math

import numpy as np

from firecy.rules._antecedents import count_antecedents
from firecy.rules._report import estimator_intercept
from firecy.rules._simplify import CATEGORICAL, simplify_conditions
from firecy.rules._table import rules_table

__all__ = ["rules_json", "json_value", "condition_dict"]


def json_value(v):
    """``v`` as a JSON value: numpy scalars as Python ones, NaN and inf as None."""
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def condition_dict(c, names):
    """One Condition as a dict: everything needed to evaluate it as the library does."""
    d = {"feature": names[c.feature], "feature_index": int(c.feature), "op": c.op}
    if c.op in CATEGORICAL:
        d["categories"] = [json_value(v) for v in c.categories]
    else:
        d["threshold"] = float(c.threshold)
    d["missing"] = bool(c.missing)
    d["dtype"] = c.dtype
    if getattr(c, "zero_as_missing", False):
        d["zero_as_missing"] = True
    if getattr(c, "zero_threshold", 0.0):
        d["zero_threshold"] = float(c.zero_threshold)
    return d


def rules_json(est, feature_names, X=None, **metadata):
    """The rules of a fitted FIRE estimator as a JSON-ready dict.

    Parameters
    ----------
    est : fitted FIRE estimator
    feature_names : sequence of str
        Names to print the rules with.
    X : array-like of shape (n_samples, n_features), optional
        Data to measure each rule's support on, and to read the ensemble's
        baseline from (see :func:`rules_report`).
    **metadata
        Extra top-level entries (data file, options, ...).

    Returns
    -------
    dict
        ``intercept`` (the estimator's ``intercept_`` plus the ensemble's
        baseline), ``rules`` (the rows of :func:`rules_table` with each
        rule's simplified ``conditions``), the counts, and ``metadata``.
    """
    ens = est.ensemble_
    intercept, note = estimator_intercept(est, X)
    rows = rules_table(est, feature_names=feature_names, X=X, as_frame=False)
    for r in rows:
        conds = simplify_conditions(ens.rules[r["column"]])
        r["conditions"] = [condition_dict(c, feature_names) for c in conds]
        for k, v in list(r.items()):
            r[k] = json_value(v)
    from firecy import __version__

    return {
        "firecy_version": __version__,
        **{k: json_value(v) for k, v in metadata.items()},
        "source": ens.source,
        "feature_names": list(feature_names),
        # intercept_ plus the ensemble's baseline (a boosting model's initial
        # prediction), so that "prediction" below holds for every model
        "intercept": json_value(np.ravel(intercept)[0]) if np.size(intercept) == 1
        else [json_value(v) for v in np.ravel(intercept)],
        "intercept_note": note.strip(" ()"),
        "lambda": json_value(getattr(est, "lambda_", None)),
        "n_rules": len(rows),
        "n_antecedents": count_antecedents(ens, est.coef_),
        "prediction": "intercept + sum of the contributions of the rules a row satisfies",
        "rules": rows,
    }
