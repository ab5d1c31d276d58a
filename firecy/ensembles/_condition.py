"""One split condition of a tree, evaluated the way its library evaluates it.

The three libraries disagree on almost every detail of a split: the operator
(sklearn and LightGBM send ``x <= thr`` left, XGBoost sends ``x < split``
left), the precision of the comparison (sklearn and XGBoost round the input to
float32 first, LightGBM compares in float64), where a missing value goes, and
how a categorical value is read.  A :class:`Condition` records all of it, so
that evaluating a rule on data selects exactly the rows the library routes to
that leaf.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from firecy.ensembles._reading import (
    coded_column, _column, _isin_exact, _isnan_any, label_index,
)
from firecy.ensembles._condition_text import format_conditions

__all__ = ["Condition", "LIGHTGBM_ZERO_THRESHOLD"]

_NUMERIC_OPS = ("<=", "<", ">", ">=")
_CATEGORICAL_OPS = ("in", "not in")
_CATEGORY_CASTS = ("trunc", "floor", "exact")
_DTYPES = ("float32", "float64")
_OPS = frozenset(_NUMERIC_OPS + _CATEGORICAL_OPS)

# LightGBM's kZeroThreshold (the float constant 1e-35f).  LightGBM drops every
# input value with |x| <= kZeroThreshold from the row it predicts on, so such a
# value is read as exactly 0 (and is missing under missing_type Zero).
LIGHTGBM_ZERO_THRESHOLD = float(np.float32(1e-35))


@dataclass(frozen=True, eq=False)
class Condition:
    """A single split condition on one feature.

    Parameters
    ----------
    feature : int
        Column index of the feature in the model's input.
    op : {"<=", "<", ">", ">=", "in", "not in"}
        The comparison, in the library's own operator: sklearn and LightGBM
        split ``x <= threshold`` / ``x > threshold``, XGBoost
        ``x < split`` / ``x >= split``.
    threshold : float, default=nan
        Threshold of a numeric split (NaN for a categorical split).  For
        XGBoost it is the float32 split value, stored exactly in a float64.
    categories : tuple, default=()
        The categories of an ``"in"`` / ``"not in"`` condition.
    missing : bool, default=False
        Whether a missing value (NaN) satisfies this condition, i.e. takes this
        branch.
    dtype : {"float32", "float64"}, default="float64"
        Precision of the input when the library compares it: the input is
        rounded to this type and then compared with the float64 threshold.
    zero_as_missing : bool, default=False
        LightGBM ``missing_type == "Zero"``: zero is missing too (and goes
        where ``missing`` says).
    zero_threshold : float, default=0.0
        Values with ``|x| <= zero_threshold`` are read as exactly 0 before the
        comparison.  LightGBM conditions use its ``kZeroThreshold`` (1e-35 as
        a float32): LightGBM drops such values from the rows it predicts on.
    category_cast : {"trunc", "floor", "exact"}, default="trunc"
        How a value is read as a category.  ``"trunc"`` (LightGBM): truncated
        toward zero to an integer.  ``"floor"`` (XGBoost): values below 0 are
        invalid and match no category, others are truncated (the same as
        ``floor``).  ``"exact"`` (scikit-learn HistGradientBoosting): the raw
        value must equal one of ``categories`` (which then hold the original
        category values, possibly strings).
    labels : tuple, default=()
        The library's own categories of the feature, in code order (code
        ``k`` means ``labels[k]``), for a model fitted on a pandas categorical
        column that its library re-codes by label (XGBoost, LightGBM).  A
        categorical condition then lists labels in ``categories``, a numeric
        one compares the code.  A DataFrame's category column is read by
        label, whatever its own category order.  A label that is not in
        ``labels`` reads as the library reads it: as missing (LightGBM,
        ``category_cast="trunc"``); as the next label in sorted order, or an
        error after the last one (XGBoost 3.1 and 3.2, ``"floor"``; a
        UserWarning says so).
        A numeric column is read as the code itself, as the libraries do.
    exact_text : bool, default=False
        Display only: print a float64 threshold as its exact ``repr`` rather
        than the shortest decimal that is exact for every 15-digit input
        (:func:`firecy.ensembles._threshold_text.format_threshold`).  Not
        part of the condition's identity.

    Notes
    -----
    Conditions are immutable and hashable; two conditions compare equal when
    all their fields do (two NaN thresholds count as equal).

    Examples
    --------
    A numeric split; a missing value satisfies it only with ``missing=True``:

    >>> import numpy as np
    >>> from firecy.ensembles import Condition
    >>> cond = Condition(0, "<=", 2.5)
    >>> cond.to_text(["age"])
    'age <= 2.5'
    >>> X = np.array([[1.0], [2.5], [3.0], [np.nan]])
    >>> cond.evaluate(X)
    array([ True,  True, False, False])
    >>> Condition(0, "<=", 2.5, missing=True).evaluate(X)
    array([ True,  True, False,  True])

    A categorical split reads a number as a category code (truncated, as
    LightGBM does):

    >>> colour = Condition(1, "in", categories=(1, 4))
    >>> colour.to_text(["age", "colour"])
    'colour in {1, 4}'
    >>> colour.evaluate(np.array([[0.0, 1.0], [0.0, 4.7], [0.0, 2.0]]))
    array([ True,  True, False])
    >>> Condition(0, "<=", 2.5) == cond
    True
    """

    feature: int
    op: str
    threshold: float = math.nan
    categories: tuple = ()
    missing: bool = False
    dtype: str = "float64"
    zero_as_missing: bool = False
    zero_threshold: float = 0.0
    category_cast: str = "trunc"
    labels: tuple = ()
    # display only: print a float64 threshold exactly (its repr), not in its
    # shortest 15-digit-exact form (firecy.ensembles._threshold_text)
    exact_text: bool = dataclasses.field(default=False, repr=False)

    def __post_init__(self):
        if self.op not in _OPS:
            raise ValueError(f"unknown operator {self.op!r}")
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {self.dtype!r}")
        if self.category_cast not in _CATEGORY_CASTS:
            raise ValueError(
                f"category_cast must be one of {_CATEGORY_CASTS}, "
                f"got {self.category_cast!r}"
            )
        # Normalise the field types, so that equality and hashing do not depend
        # on whether a caller passed numpy scalars or Python ones.  Writing to
        # __dict__ is how a frozen dataclass sets its own fields; the type
        # tests keep this cheap, as adapters create tens of thousands.
        d = self.__dict__
        if type(self.feature) is not int:
            d["feature"] = int(self.feature)
        if type(self.threshold) is not float:
            d["threshold"] = float(self.threshold)
        if type(self.categories) is not tuple:
            d["categories"] = tuple(self.categories)
        if type(self.missing) is not bool:
            d["missing"] = bool(self.missing)
        if type(self.zero_as_missing) is not bool:
            d["zero_as_missing"] = bool(self.zero_as_missing)
        if type(self.zero_threshold) is not float:
            d["zero_threshold"] = float(self.zero_threshold)
        if type(self.labels) is not tuple:
            d["labels"] = tuple(self.labels)
        if self.labels and self.is_categorical:
            index = label_index(self.labels)
            unknown = [c for c in self.categories if c not in index]
            if unknown:
                raise ValueError(f"categories {unknown!r} are not among the labels")

    # -- identity -----------------------------------------------------------
    def _identity(self) -> tuple:
        key = self.__dict__.get("_identity_key")
        if key is None:
            thr = self.threshold
            key = (
                self.feature,
                self.op,
                None if thr != thr else thr,  # all NaN thresholds are equal
                self.categories,
                self.missing,
                self.dtype,
                self.zero_as_missing,
                self.zero_threshold,
                self.category_cast if self.op in _CATEGORICAL_OPS else None,
                self.labels,
            )
            self.__dict__["_identity_key"] = key
        return key

    def __eq__(self, other):
        if not isinstance(other, Condition):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity())

    @property
    def is_categorical(self) -> bool:
        """Whether this is an ``"in"`` / ``"not in"`` condition."""
        return self.op in _CATEGORICAL_OPS

    # -- evaluation ---------------------------------------------------------
    def evaluate(self, X) -> np.ndarray:
        """Rows of ``X`` that satisfy this condition.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A 2-D numpy array or a pandas DataFrame.  A column of category
            dtype is read by label when the condition has ``labels``, as its
            category values for ``category_cast="exact"``, else as its
            integer codes (-1 as missing).

        Returns
        -------
        mask : ndarray of bool, shape (n_samples,)
        """
        if self.labels:
            col = coded_column(X, self.feature, self.labels,
                               unseen="next" if self.category_cast == "floor" else "missing")
        else:
            col = _column(X, self.feature, codes=self.category_cast != "exact")
        if self.is_categorical:
            return self._evaluate_categorical(col)
        x = self._read(col)
        # np.float64 (not a Python float) keeps the comparison in float64:
        # under NumPy 2 promotion a Python float would be rounded to float32
        # for a float32 array, which misroutes rows next to sklearn's float64
        # thresholds.
        thr = np.float64(self.threshold)
        if self.op == "<=":
            out = x <= thr
        elif self.op == "<":
            out = x < thr
        elif self.op == ">":
            out = x > thr
        else:
            out = x >= thr
        miss = np.isnan(x)
        if self.zero_as_missing:
            miss |= x == 0.0
        out[miss] = self.missing
        return out

    def _read(self, col) -> np.ndarray:
        x = np.asarray(col, dtype=self.dtype)
        if self.zero_threshold > 0.0:
            # NaN compares False, so it stays NaN.
            x = np.where(np.abs(x) <= self.zero_threshold, 0.0, x).astype(self.dtype)
        return x

    def category_codes(self) -> tuple:
        """The library's codes of ``categories`` (the categories themselves
        unless the condition has ``labels``)."""
        if not self.labels:
            return self.categories
        index = label_index(self.labels)
        return tuple(index[c] for c in self.categories)

    def _evaluate_categorical(self, col) -> np.ndarray:
        if self.category_cast == "exact":
            col = np.asarray(col)
            miss = _isnan_any(col)
            member = np.zeros(col.shape[0], dtype=bool)
            ok = ~miss
            if ok.any():
                member[ok] = _isin_exact(col[ok], self.categories)
        else:
            x = self._read(col)
            miss = np.isnan(x)
            if self.zero_as_missing:
                miss |= x == 0.0
            safe = np.where(miss, -1.0, x)
            if self.category_cast == "floor":
                # XGBoost: a negative value is an invalid category and goes
                # left, i.e. matches no listed category; others truncate.
                cat = np.where(safe < 0, -1.0, np.trunc(safe))
            else:
                # LightGBM: static_cast<int>(x), so -0.5 reads as category 0.
                cat = np.trunc(safe)
            member = np.isin(cat, np.asarray(self.category_codes(), dtype=np.float64))
            member[miss] = False
        out = member if self.op == "in" else ~member
        out[miss] = self.missing
        return out

    def as_label_set(self) -> "Condition":
        """The same condition over the labels of a labelled feature.

        A numeric condition on a feature with ``labels`` (LightGBM splits an
        ordered pandas categorical by its codes) becomes the ``"in"`` /
        ``"not in"`` condition that selects the same labels (and missing
        values): ``"not in"`` when missing values satisfy it, so that a label
        LightGBM does not know, which it reads as missing, satisfies it too.
        Any other condition is returned unchanged.
        """
        if not self.labels or self.is_categorical:
            return self
        codes = np.arange(len(self.labels), dtype=np.float64).reshape(-1, 1)
        inside = dataclasses.replace(self, labels=()).evaluate(codes)
        labels = np.empty(len(self.labels), dtype=object)
        labels[:] = self.labels
        if self.missing:
            op, cats = "not in", tuple(labels[~inside])
        else:
            op, cats = "in", tuple(labels[inside])
        return Condition(self.feature, op, categories=cats, missing=self.missing,
                         dtype=self.dtype, zero_threshold=self.zero_threshold,
                         category_cast=self.category_cast, labels=self.labels)

    # -- text ---------------------------------------------------------------
    def to_text(self, feature_names=None, *, precision=None, show_missing=False) -> str:
        """Human-readable form, e.g. ``"petal_width <= 0.8"``.

        The text of a one-condition rule: the same as
        :func:`firecy.rules.format_conditions` ``([cond], ...)``, which
        follows firecy's one convention for rules (see :mod:`firecy.rules`):
        the library's operator, the threshold exact in the library's
        precision, categories as Python literals (labels when the library
        knows them).

        Parameters
        ----------
        feature_names : sequence of str, optional
            Names to use; ``x{feature}`` when omitted.
        precision : int, optional
            Significant digits of the threshold (display only).
        show_missing : bool, default=False
            Append ``" (or missing)"`` when missing values take this branch.
            A LightGBM zero-as-missing condition always ends in
            ``" (or zero/missing)"`` or ``" (not zero/missing)"``.

        Returns
        -------
        str
        """
        return format_conditions([self], feature_names, show_missing=show_missing,
                                 precision=precision, simplify=False)
