"""What a classifier needs to know about the model it is given: whether a
Booster is a classifier (:func:`booster_task`), and whether a fitted model's
classes are y's (:func:`check_model_classes`)."""
import json

import numpy as np

__all__ = ["booster_task", "check_model_classes"]


def check_model_classes(model, classes):
    """A fitted model's classes must be y's (a Booster has none to compare)."""
    model_classes = getattr(model, "classes_", None)
    if model_classes is None:
        return
    model_classes = np.asarray(model_classes)
    same = model_classes.shape == classes.shape and np.all(
        model_classes.astype(object) == classes.astype(object))
    if not same:
        unseen = [c for c in classes.tolist() if c not in set(model_classes.tolist())]
        detail = (f"y has the label(s) {unseen[:5]} the model never saw at fit"
                  if unseen else "the model knows classes y does not have")
        raise ValueError(
            f"the fitted {type(model).__name__} has classes {model_classes.tolist()} but y "
            f"has {classes.tolist()}: {detail}; pass y with the model's classes or an "
            "unfitted model"
        )


def booster_task(model):
    """"classification" / "regression" for an XGBoost or LightGBM Booster, else None."""
    module = type(model).__module__.split(".")[0]
    if type(model).__name__ != "Booster" or module not in ("xgboost", "lightgbm"):
        return None
    if module == "xgboost":
        try:
            objective = json.loads(model.save_config())["learner"]["objective"]["name"]
        except Exception:
            return None
        return ("classification" if objective.startswith(("binary:", "multi:"))
                else "regression")
    objective = str(model.params.get("objective", "")) if getattr(model, "params", None) else ""
    if not objective:
        header = model.model_to_string(num_iteration=0)
        line = next((ln for ln in header.splitlines() if ln.startswith("objective=")), "")
        objective = line.partition("=")[2]
    name = objective.split()[0] if objective else ""
    if name in ("binary", "multiclass", "softmax", "multiclassova", "multiclass_ova",
                "ova", "ovr", "cross_entropy", "xentropy"):
        return "classification"
    return "regression" if name else None
