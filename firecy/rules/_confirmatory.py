"""The confirmatory terms of a fitted estimator (``confirmatory=``) as the
outputs print them: rows of :func:`~firecy.rules.rules_table` (kind "rule"
or "linear", ``confirmatory`` True) and the counts' suffix
("+ 2 confirmatory"). The estimator holds them in ``confirmatory_``
(``firecy/estimators/_confirmatory.py``) and ``confirmatory_coef_``.
"""
import math

import numpy as np

__all__ = ["confirmatory_rows", "confirmatory_suffix"]


def confirmatory_rows(est, names, n_columns, labels=None, multi=False, digits=4):
    """The confirmatory terms as ``(output, row)`` of
    :func:`~firecy.rules.rules_table`: kind "rule" or "linear", with
    ``confirmatory`` True; a term's ``column`` is its position in
    ``path_.coefs`` (after the rules' and the linear terms')."""
    from firecy._escape import display_text
    from firecy.rules._linear import term_text

    conf = getattr(est, "confirmatory_", None)
    if conf is None:
        return []
    w = np.asarray(est.confirmatory_coef_, dtype=np.float64)
    w = w.reshape(1, -1) if w.ndim == 1 else w
    K = w.shape[0]
    n_lin = len(getattr(est, "linear_terms_", ()) or ())
    first = n_columns + n_lin * K
    rows = []
    for q, kind in enumerate(conf.kinds):
        for k in range(K):
            weight = float(w[k, q])
            if kind == "linear":
                f = int(conf.features[q][0])
                text = term_text(names[f], weight, conf.lower[q], conf.upper[q],
                                 conf.center[q], digits)
                row = {"rule": text, "weight": weight, "support": np.nan,
                       "importance": abs(weight) * float(conf.sd[q]),
                       "contribution": weight, "leaf_value": np.nan, "tree": None,
                       "n_conditions": 0}
            else:
                s = float(conf.support[q])
                row = {"rule": display_text(conf.texts[q]), "weight": weight, "support": s,
                       "importance": abs(weight) * math.sqrt(max(s * (1 - s), 0.0)),
                       "contribution": weight, "leaf_value": 1.0, "tree": None,
                       "n_conditions": len(conf.parsed[q])}
            row.update(column=int(first + q * K + k), kind=kind, confirmatory=True)
            if labels is not None:
                row = {"class": labels[k], **row}
            elif multi:
                row = {"class": int(k), **row}
            rows.append((k, row))
    return rows


def confirmatory_suffix(n_confirmatory):
    """``" + 2 confirmatory"`` (empty for none): what every count adds."""
    return f" + {n_confirmatory} confirmatory" if n_confirmatory else ""
