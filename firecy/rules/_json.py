"""The kept rules as a JSON-ready dict: :func:`rules_json` (``firecy extract`` writes it)."""
from __future__ import annotations

import math

import numpy as np

from firecy.rules._inputs import feature_names_of
from firecy.rules._linear import linear_slopes
from firecy.rules._account import estimator_intercept, fitted_model
from firecy.ensembles import CATEGORICAL, simplify_conditions
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


def _linear_entries(est, names):
    """(entry, output, term) of every kept linear term: what it reads and adds."""
    found = linear_slopes(est)
    if found is None:
        return []
    terms, slopes = found
    return [({"feature": names[int(terms.features[t])],
              "feature_index": int(terms.features[t]),
              "lower": float(terms.lower[t]), "upper": float(terms.upper[t]),
              "center": float(terms.center[t]), "slope": float(slopes[t, k])}, k, t)
            for t in range(len(terms)) for k in range(slopes.shape[1]) if slopes[t, k] != 0]


def rules_json(est, feature_names=None, X=None, *, exact=False, **metadata):
    """The rules of a fitted FIRE estimator as a JSON-ready dict.

    Parameters
    ----------
    est : fitted FIRE estimator
    feature_names : sequence of str, optional
        Names to print the rules with. Default: the estimator's
        ``feature_names_in_``, else the ensemble's names, else ``x0, x1, ...``.
    X : array-like of shape (n_samples, n_features), optional
        Data to measure each rule's support on, and to read the ensemble's
        baseline from (see :func:`rules_report`).
    exact : bool, default=False
        Each rule's ``rule`` text exact for every input (see
        :func:`format_conditions`); its ``conditions`` hold the exact
        thresholds either way.
    **metadata
        Extra top-level entries (data file, options, ...).

    Returns
    -------
    dict
        ``intercept`` (the estimator's ``intercept_`` plus the ensemble's
        baseline), ``rules`` (the rows of :func:`rules_table` with each
        rule's simplified ``conditions``; a linear term's row, of kind
        "linear", has ``linear``: its ``feature``, ``feature_index``,
        ``lower``, ``upper``, ``center`` and ``slope``, adding ``slope *
        (min(max(x, lower), upper) - center)``, 0 for a missing ``x``), the
        counts of the fitted model's account (``est.model_.counts()``:
        ``n_terms``, ``n_rules``, ``n_linear_terms``, ``n_trees``,
        ``n_antecedents``; ``n_confirmatory`` with confirmatory terms),
        ``monotone`` and ``linear_sign`` (the account's constraints,
        ``{feature name: +1 or -1}``, empty without any), and the
        ``metadata`` entries. A confirmatory term's row (``confirmatory``
        True) has, for a rule, the ``conditions`` of its text (and
        ``leaf_value`` 1: it adds ``contribution`` where it holds), for a
        linear term ``linear`` as above.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, tol=1e-10, linear_terms=False).fit(X, y)
    >>> import json
    >>> from firecy.rules import rules_json
    >>> doc = json.loads(json.dumps(rules_json(fire, ["age", "dose"], X, data="doses.csv")))
    >>> doc["n_rules"], doc["n_antecedents"], doc["data"]
    (2, 2, 'doses.csv')
    >>> rule = doc["rules"][0]
    >>> rule["rule"], round(rule["contribution"], 6), rule["support"]
    ('age > 2.0 and dose > 15.0', 5.5, 0.25)
    >>> [(c["feature"], c["op"], c["threshold"], c["dtype"]) for c in rule["conditions"]]
    [('age', '>', 2.0, 'float32'), ('dose', '>', 15.0, 'float32')]
    """
    ens = est.ensemble_
    if feature_names is None:
        feature_names = feature_names_of(ens, getattr(est, "feature_names_in_", None))
    if feature_names is None:
        feature_names = [f"x{i}" for i in range(int(ens.n_features_in_))]
    intercept, note = estimator_intercept(est, X)
    rows = rules_table(est, feature_names=feature_names, X=X, as_frame=False, exact=exact)
    linear = {(k, int(t)): r for r, k, t in _linear_entries(est, feature_names)}
    found = linear_slopes(est)
    K = found[1].shape[1] if found is not None else 1
    for r in rows:
        if r.get("confirmatory"):
            r.update(_confirmatory_entry(est, r, feature_names))
        elif r["kind"] == "linear":
            offset = r["column"] - len(ens.leaf_values)
            r["linear"] = linear[(offset % K, offset // K)]
        else:
            conds = simplify_conditions(ens.rules[r["column"]])
            r["conditions"] = [condition_dict(c, feature_names) for c in conds]
        for k, v in list(r.items()):
            r[k] = json_value(v)
    # the counts every output prints: the fitted model's account
    account = fitted_model(est, feature_names)
    counts = account.counts()
    n_linear = counts["n_linear_terms"]
    from firecy._version import __version__

    own = {
        "source": ens.source,
        "feature_names": list(feature_names),
        # intercept_ plus the ensemble's baseline (a boosting model's initial
        # prediction), so that "prediction" below holds for every model
        "intercept": json_value(np.ravel(intercept)[0]) if np.size(intercept) == 1
        else [json_value(v) for v in np.ravel(intercept)],
        "intercept_note": note.strip(" ()") if isinstance(note, str)
        else [n.strip(" ()") for n in note],
        "lambda": json_value(getattr(est, "lambda_", None)),
        **counts,
        # {feature: +1 or -1}: the model is monotone in these (exactly, over
        # non-missing values); linear terms signed without monotonicity
        "monotone": dict(account.monotone),
        "linear_sign": dict(account.linear_sign),
        "prediction": "intercept + sum of the contributions of the rules a row satisfies"
        + (" + sum over the linear terms of slope * (min(max(x, lower), upper) - center), "
           "0 for a missing x" if n_linear or any(
               r.get("confirmatory") and r["kind"] == "linear" for r in rows) else ""),
        "rules": rows,
    }
    clash = sorted(set(metadata) & (set(own) | {"firecy_version"}))
    if clash:
        raise ValueError(f"metadata keys {clash} are rules_json's own keys; rename them")
    return {"firecy_version": __version__,
            **{k: json_value(v) for k, v in metadata.items()}, **own}


def _confirmatory_entry(est, row, names):
    """A confirmatory row's ``conditions`` (a rule: its parsed text, each
    condition as the user wrote it, compared in float64) or ``linear``."""
    conf = est.confirmatory_
    w = np.asarray(est.confirmatory_coef_)
    K = 1 if w.ndim == 1 else w.shape[0]
    n_lin = len(getattr(est, "linear_terms_", ()) or ())
    q, k = divmod(int(row["column"]) - len(est.ensemble_.leaf_values) - n_lin * K, K)
    if conf.kinds[q] == "linear":
        f = int(conf.features[q][0])
        return {"linear": {"feature": names[f], "feature_index": f,
                           "lower": json_value(conf.lower[q]), "upper": json_value(conf.upper[q]),
                           "center": json_value(conf.center[q]),
                           "slope": json_value(row["weight"])}}
    conds = []
    for c in conf.parsed[q]:
        entry = {"feature": names[int(c.feature)], "feature_index": int(c.feature), "op": c.op}
        if isinstance(c.value, frozenset):
            entry["categories"] = [json_value(v) for v in sorted(c.value, key=str)]
        else:
            entry["threshold"] = json_value(c.value)
        entry.update(missing=bool(c.missing), dtype="float64")
        conds.append(entry)
    return {"conditions": conds}
