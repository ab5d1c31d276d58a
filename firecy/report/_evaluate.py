"""What the report measures: the rule model against the full tree model, a
classifier's calibration, and the rows it explains."""
from dataclasses import dataclass

import numpy as np

__all__ = ["Evaluation", "evaluation", "comparison_rows", "calibration", "chosen_rows",
           "task_of"]


@dataclass
class Evaluation:
    """The rows the report measures on: the test rows if given, else the training rows."""

    X: object
    y: object
    exposure: object
    which: str          # "test" or "training"

    @property
    def n(self):
        return int(self.X.shape[0])

    def sentence(self):
        if self.which == "test":
            return f"on the {self.n} test rows given (held out from the fit)"
        return (f"on the {self.n} training rows (no test rows were given: training "
                "error, optimistic for both models)")


def task_of(est):
    """"classification", "poisson", "survival" or "regression"."""
    if getattr(est, "classes_", None) is not None:
        return "classification"
    scale = getattr(est, "_raw_scale", "prediction")
    return {"log-rate": "poisson"}.get(scale, "survival" if scale.startswith("risk")
                                       else "regression")


def evaluation(X, y, X_test, y_test, exposure=None, exposure_test=None):
    """The rows to measure on, or None without labelled rows."""
    if (X_test is None) != (y_test is None):
        raise ValueError("pass X_test and y_test together")
    if X_test is not None:
        return Evaluation(X_test, y_test, exposure_test, "test")
    if X is not None and y is not None:
        return Evaluation(X, y, exposure, "training")
    return None


def _n_leaves(est):
    ens = est.ensemble_
    return int((ens.uncut or ens).n_rules)


def _scores(task, est, model, ev):
    """The task's scores of the rule model (``model=None``) or of the full model."""
    from sklearn.metrics import accuracy_score, log_loss

    y = ev.y
    if task == "classification":
        classes = est.classes_
        unknown = ~np.isin(np.asarray(y), classes)
        if np.any(unknown):
            from firecy._escape import display_value

            raise ValueError(
                f"the {ev.which} rows hold labels the model was not fitted with: "
                + ", ".join(display_value(v) for v in pd_unique(np.asarray(y)[unknown])[:5]))
        if model is None:
            proba = est.predict_proba(ev.X)
        else:
            proba = np.asarray(model.predict_proba(est._validate_predict_data(ev.X)))
        from firecy._metrics import roc_auc

        codes = np.searchsorted(classes, np.asarray(y))
        return {"accuracy": float(accuracy_score(np.asarray(y),
                                                 classes[np.argmax(proba, axis=1)])),
                "log-loss": float(log_loss(y, np.clip(proba, 1e-15, 1.0), labels=classes)),
                "AUC": float(roc_auc(codes, proba, None))}
    if task == "poisson":
        from firecy.datafits import poisson_deviance

        counts = np.asarray(y, dtype=np.float64)
        e = np.ones_like(counts) if ev.exposure is None else np.asarray(ev.exposure, float)
        mu = (est.predict(ev.X, exposure=e) if model is None else
              np.asarray(model.predict(est._validate_predict_data(ev.X)), float) * e)
        null = e * counts.sum() / e.sum()
        dev, dev0 = poisson_deviance(counts, mu), poisson_deviance(counts, null)
        return {"mean deviance": float(dev),
                "D\u00b2": float(1.0 - dev / dev0) if dev0 > 0 else float("nan")}
    if task == "survival":
        from firecy._metrics import concordance_index

        risk = (est.predict(ev.X) if model is None else
                np.asarray(model.predict(est._validate_predict_data(ev.X)), float))
        return {"C-index": float(concordance_index(y["event"], y["time"], risk))}
    target = np.asarray(y, dtype=np.float64)
    pred = (est.predict(ev.X) if model is None else
            np.asarray(model.predict(est._validate_predict_data(ev.X)), float))
    mse = float(np.mean((target - pred) ** 2))
    ss = float(np.sum((target - target.mean()) ** 2))
    return {"MSE": mse, "R\u00b2": 1.0 - float(np.sum((target - pred) ** 2)) / ss
            if ss else float("nan")}


def pd_unique(values):
    """Distinct values in order of appearance (labels of any type)."""
    return list(dict.fromkeys(v.item() if hasattr(v, "item") else v for v in values))


def comparison_rows(est, ev):
    """The rule model and the full tree model: terms (rules and linear terms),
    antecedents and scores on ``ev``.

    The full model's rules are its leaves; a score it cannot give (a model
    without ``predict_proba``) is NaN, with the reason in ``note``."""
    task = task_of(est)
    model = est.estimator_
    counts = est.model_.counts()
    rows = [dict(name=f"FIRE ({type(est).__name__})", n_terms=counts["n_terms"],
                 n_rules=counts["n_rules"], n_linear_terms=counts["n_linear_terms"],
                 n_antecedents=counts["n_antecedents"])]
    # the full model's terms are its leaves
    leaves = _n_leaves(est)
    rows.append(dict(name=f"full model ({type(model).__name__})", n_terms=leaves,
                     n_rules=leaves, n_linear_terms=0, n_antecedents=None))
    if ev is None:
        return rows
    rows[0].update(_scores(task, est, None, ev))
    try:
        rows[1].update(_scores(task, est, model, ev))
    except (AttributeError, TypeError, ValueError) as exc:
        rows[1]["note"] = f"not scored: {type(exc).__name__}: {exc}"
    return rows


def calibration(est, ev, n_bins=10):
    """A classifier's reliability on ``ev``: binary, the predicted risk of
    ``classes_[1]``; multi-class, the top class's probability against the
    frequency with which it is right. Returns (table, CAL, what)."""
    from firecy._escape import display_value
    from firecy.risk import calibration_error, reliability_table

    proba = est.predict_proba(ev.X)
    y = np.asarray(ev.y)
    if len(est.classes_) == 2:
        event = (y == est.classes_[1]).astype(np.float64)
        p = proba[:, 1]
        what = f"predicted risk of {display_value(est.classes_[1])}"
    else:
        event = (est.classes_[np.argmax(proba, axis=1)] == y).astype(np.float64)
        p = proba.max(axis=1)
        what = "probability of the predicted class (its accuracy is observed)"
    return (reliability_table(event, p, n_bins=n_bins),
            float(calibration_error(event, p, n_bins=n_bins)), what)


def chosen_rows(est, X, rows=None, n_rows=3):
    """Positions of the rows to explain: ``rows``, or ``n_rows`` spread over the
    range of predictions (the lowest, the highest, evenly between)."""
    n = int(X.shape[0])
    if rows is not None:
        rows = [int(r) for r in np.atleast_1d(rows)]
        bad = [r for r in rows if not -n <= r < n]
        if bad:
            raise ValueError(f"rows {bad} are outside the {n} rows to explain")
        return [r % n for r in rows]
    if n_rows <= 0 or n == 0:
        return []
    if hasattr(est, "decision_function"):
        score = np.asarray(est.decision_function(X)).reshape(n, -1).max(axis=1)
    else:
        score = np.asarray(est.predict(X), dtype=np.float64)
    order = np.argsort(score, kind="stable")
    picks = np.unique(np.round(np.linspace(0, n - 1, min(n_rows, n))).astype(int))
    return [int(order[p]) for p in picks]
