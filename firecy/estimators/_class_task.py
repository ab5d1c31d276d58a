"""What a classifier's fit needs: :func:`classification_task`.

The labels encoded as class indices (``classes_`` sorted), the checks on
rare classes that cost nothing before any fit, the default forest, the
binary-logistic or multinomial path fitter for the fit's rules, and the
validation loss (``scoring``).  ``docs/classification.rst`` explains the
rare-class rules.
"""
import numbers
import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from firecy._warn import user_stacklevel
from firecy.estimators._base import default_forest
from firecy.estimators._class_scoring import ClassificationLoss
from firecy.estimators._fit import Task
from firecy.estimators._logistic_paths import BinaryLogisticPaths, MultinomialPaths, pack_target
from firecy.estimators._params import penalty_grid
from firecy.estimators._splits import classes_phrase

__all__ = ["check_no_missing_labels", "check_rare_classes", "classification_task"]


def check_no_missing_labels(y):
    """A ValueError naming the missing labels (None or NaN among the labels of
    an object array), worded like scikit-learn's "Input y contains NaN.";
    NumPy's own error comes later, from sorting None with strings."""
    if y is None:
        return   # validate_data says y is required
    y = np.asarray(y)
    if y.dtype != object:
        return   # a float y with NaN: validate_data's own message
    flat = y.ravel()
    is_none = np.fromiter((v is None for v in flat), dtype=bool, count=flat.size)
    is_nan = np.fromiter((isinstance(v, numbers.Real) and v != v for v in flat),
                         dtype=bool, count=flat.size)
    for mask, what in ((is_none, "None"), (is_nan, "NaN")):
        if mask.any():
            rows = np.flatnonzero(mask)
            raise ValueError(
                f"Input y contains {what}: {rows.size} missing label(s), the first at "
                f"row {rows[0]}; FIREClassifier needs a label for every row (drop those "
                "rows or fill in their labels)")



def check_rare_classes(classes, codes, sample_weight, selects):
    """The rare-class rules of :class:`FIREClassifier`, checked before any fit.

    A class whose rows (of positive weight) number exactly one cannot be
    selected for: the fold that holds its row out trains without it, every
    other fold trains on it and never scores it, and its only rules are
    leaves isolating that row (a separable logistic problem, whose MCP weight
    grows without bound).  Hence a ValueError when ``selects`` (lam is
    chosen on folds).  A class with no row of positive weight is left to the
    model (its probability stays about ``1 / (2n + 1)``): a UserWarning.

    Parameters
    ----------
    classes : ndarray
        The labels, sorted (``classes_``).
    codes : ndarray of int
        The class index of each row.
    sample_weight : ndarray of float
    selects : bool
        Whether lam is chosen on validation folds.
    """
    counts = np.bincount(codes[sample_weight > 0], minlength=classes.size)
    single = np.flatnonzero(counts == 1)
    if selects and single.size:
        raise ValueError(
            f"{classes_phrase(classes, single, 'has', 'have')} a single row"
            + (" of positive sample weight" if np.any(sample_weight <= 0) else "")
            + ": choosing lam on validation folds needs at least 2 rows of every class "
            "(one to fit, one to score); drop or relabel the row, merge the class "
            "into another, or fix lam to fit without selection"
        )
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        warnings.warn(
            f"{classes_phrase(classes, missing, 'has', 'have')} no row of positive "
            "sample weight: "
            "no fit sees it, and its predicted probability stays at about 1 / (2n + 1) "
            "(n: the rows of positive weight)", UserWarning, stacklevel=user_stacklevel())


def classification_fitter(ensemble):
    """The path fitter for the fit's rules: binary logistic for one output,
    multinomial with each block's class (a union of depth cuts repeats the
    trees once per depth, ``union_of_cuts``) for K."""
    if int(ensemble.n_outputs) == 1:
        return BinaryLogisticPaths()
    return MultinomialPaths(np.asarray(ensemble.tree_class, dtype=np.intp),
                            int(ensemble.n_outputs))


def classification_task(est, data):
    """The :class:`~firecy.estimators._fit.Task` of :class:`FIREClassifier`.

    Encodes the labels (``classes`` sorted, ``codes`` per row) and checks,
    before any model is fitted, that two classes have rows of positive
    weight and that no class is too rare for the selection.
    """
    y = data.y
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"FIREClassifier needs at least two classes; y has a single class "
            f"({classes[0]!r})")
    codes = codes.astype(np.intp)
    sw = data.sample_weight
    weighted_classes = np.unique(codes[sw > 0])
    if weighted_classes.size < 2:
        found = (f"they hold the single class {classes[weighted_classes[0]]!r}"
                 if weighted_classes.size else "no row has a positive weight")
        raise ValueError(
            "FIREClassifier needs at least two classes among the rows with positive "
            f"sample weight; {found}")
    # a class of one row breaks validation folds; selection="budget" has none
    folds = (est.lam is None or len(penalty_grid(est)) > 1) and est.selection != "budget"
    check_rare_classes(classes, codes, sw, folds)
    return Task(kind="classification", default_model=default_forest(est, "classification"),
                model_y=codes, pack_target=lambda baseline: pack_target(codes, baseline),
                fitter=classification_fitter,
                validation_loss=ClassificationLoss(est.scoring, classes),
                classes=classes, codes=codes, loss="logistic")
