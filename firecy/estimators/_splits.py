"""The validation folds of a fit's selection: :func:`validation_splits`.

Plain K-fold (or one shuffled split) for regression, counts and survival;
stratified by class for a classifier, falling back to plain folds when a
class is too small to stratify, with a warning that names the classes some
folds train without.
"""
import numbers
import warnings

import numpy as np
from sklearn.model_selection import (
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
)

from firecy._warn import user_stacklevel

__all__ = ["validation_splits", "check_fold_weights", "warn_absent_from_folds",
           "classes_phrase"]


def _label_list(classes, idx):
    """``'a', 'b'`` or ``3, 4``: the labels at ``idx``, as the user wrote them."""
    labels = [repr(v.item() if hasattr(v, "item") else v) for v in classes[idx][:5]]
    return ", ".join(labels) + (", ..." if len(idx) > 5 else "")


def classes_phrase(classes, idx, singular, plural):
    """``class 'a' has`` or ``classes 'a', 'b' have``."""
    if len(idx) == 1:
        return f"class {_label_list(classes, idx)} {singular}"
    return f"classes {_label_list(classes, idx)} {plural}"


def warn_absent_from_folds(classes, codes, sample_weight, splits):
    """One UserWarning naming the classes some folds train without.

    In such a fold no rule speaks for the absent class and its intercept is
    the log-odds of half an observation, ``1 / (2n + 1)`` (``n`` the fold's
    training rows of positive weight), against the other classes on
    average: its held-out rows of that class get a small but nonzero
    probability, hence a finite loss.
    """
    K = classes.size
    everywhere = np.bincount(codes[sample_weight > 0], minlength=K) > 0
    lacking = np.zeros(K, dtype=np.intp)
    for train, _ in splits:
        train = np.asarray(train)
        rows = train[sample_weight[train] > 0]
        lacking += everywhere & (np.bincount(codes[rows], minlength=K) == 0)
    absent = np.flatnonzero(lacking)
    if absent.size:
        warnings.warn(
            f"{classes_phrase(classes, absent, 'has', 'have')} no training row in "
            f"{int(lacking.max())} of the {len(splits)} validation fold(s): there no rule "
            "speaks for it and its intercept is the log-odds of half an observation, "
            "1 / (2n + 1)", UserWarning, stacklevel=user_stacklevel())


def _plain_splits(est, n):
    if est.selection == "validation":
        splitter = ShuffleSplit(n_splits=1, test_size=est.validation_fraction,
                                random_state=est.random_state)
    elif isinstance(est.cv, numbers.Integral):
        if est.cv > n:
            raise ValueError(f"cv={est.cv} folds need at least {est.cv} samples, got {n}")
        splitter = KFold(est.cv, shuffle=True, random_state=est.random_state)
    else:
        splitter = check_cv(est.cv)
    return list(splitter.split(np.zeros((n, 1))))


def _stratified_splits(est, codes):
    n = codes.shape[0]
    X0 = np.zeros((n, 1))
    if est.selection == "validation":
        try:
            return list(StratifiedShuffleSplit(
                n_splits=1, test_size=est.validation_fraction,
                random_state=est.random_state).split(X0, codes))
        except ValueError:   # a class too small to stratify
            return _plain_splits(est, n)
    if isinstance(est.cv, numbers.Integral):
        if est.cv > n:
            raise ValueError(f"cv={est.cv} folds need at least {est.cv} samples, got {n}")
        if np.bincount(codes).max() >= est.cv:
            return list(StratifiedKFold(est.cv, shuffle=True, random_state=est.random_state)
                        .split(X0, codes))
        return _plain_splits(est, n)
    return list(check_cv(est.cv, codes, classifier=True).split(X0, codes))


def validation_splits(est, n, *, codes=None, classes=None, sample_weight=None):
    """The (train, test) index pairs of ``est``'s selection.

    Parameters
    ----------
    est : FIRE estimator
        Reads ``selection``, ``cv``, ``validation_fraction``, ``random_state``.
    n : int
        Rows.
    codes, classes, sample_weight : ndarray, optional
        A classifier's class index per row, its labels and the weights:
        the folds are stratified, and a warning names the classes some
        folds train without.

    Raises
    ------
    ValueError
        When a fold trains on no row of positive ``sample_weight``.
    """
    splits = _plain_splits(est, n) if codes is None else _stratified_splits(est, codes)
    if sample_weight is not None:
        check_fold_weights(est, splits, sample_weight)
    if codes is not None:
        warn_absent_from_folds(classes, codes, sample_weight, splits)
    return splits


def check_fold_weights(est, splits, sample_weight):
    """A ValueError naming ``sample_weight`` when a fold trains on no row of
    positive weight (too few such rows for the folds): no path can be fitted
    on that fold's rows."""
    positive = np.asarray(sample_weight) > 0
    empty = [k for k, (train, _) in enumerate(splits) if not positive[np.asarray(train)].any()]
    if not empty:
        return
    n_pos = int(positive.sum())
    folds = ("the validation split" if est.selection == "validation"
             else f"cv={est.cv!r}" if isinstance(est.cv, numbers.Integral) else "the cv splits")
    raise ValueError(
        f"sample_weight is positive on {n_pos} row{'s' * (n_pos != 1)} only, too few for "
        f"{folds}: the training rows of {len(empty)} of the {len(splits)} fold(s) all have "
        "zero weight, so no model can be fitted there; give positive weight to more rows, "
        "use fewer folds, or fix lam to fit without selection")
