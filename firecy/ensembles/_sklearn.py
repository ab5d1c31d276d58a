"""scikit-learn adapters: forests, extra trees, gradient boosting and single
trees (HistGradientBoosting: ``_sklearn_hist``).

sklearn trees compare ``float32(x) <= threshold`` (the input is validated to
float32, the threshold is a float64), send ``x > threshold`` right, and route a
NaN by ``missing_go_to_left`` (set at fit time even when no NaN was seen).
"""
from __future__ import annotations

import numpy as np
import sklearn
from joblib import effective_n_jobs
from scipy.sparse import issparse
from sklearn.base import is_classifier
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

try:
    from sklearn.utils.validation import validate_data
except ImportError:  # scikit-learn < 1.6
    def validate_data(estimator, X, ensure_all_finite=True, **kwargs):
        return estimator._validate_data(X, force_all_finite=ensure_all_finite, **kwargs)

from firecy.ensembles._layout import route_tree_float32
from firecy.ensembles._sklearn_hist import HistGradientBoostingAdapter
from firecy.ensembles._tree import Adapter, Block, SplitRule, TreeStructure, n_rows, names_from


SPLIT_RULE = SplitRule("<=", ">", "float32")


def tree_structure(tree_) -> TreeStructure:
    """:class:`TreeStructure` of a fitted ``sklearn.tree._tree.Tree`` (no copies)."""
    left = np.asarray(tree_.children_left)
    # Present since scikit-learn 1.3; before it NaN was rejected anyway.
    mgl = getattr(tree_, "missing_go_to_left", None)
    if mgl is None:
        mgl = np.zeros(left.shape[0], dtype=bool)
    else:
        mgl = np.asarray(mgl)
        mgl = mgl.view(bool) if mgl.dtype.itemsize == 1 else mgl.astype(bool)
    # the node id is the leaf id: apply() returns node ids
    return TreeStructure(left, np.asarray(tree_.children_right), np.asarray(tree_.feature),
                         np.asarray(tree_.threshold, dtype=np.float64), mgl, SPLIT_RULE)


# Fewer (row, tree) walks than this take one thread: joblib's thread pool
# costs about 3 ms of CPU to start, the walk of 7 fully grown trees over 100
# rows 0.5 ms (predict of a FIRE model keeps a few trees).
_MIN_THREADED_WALKS = 200_000


def route_forest(estimators, X32, n_jobs=None):
    """Leaf ids of ``X32`` in each tree: what ``forest.apply`` returns.

    Parameters
    ----------
    estimators : list of fitted scikit-learn decision trees
    X32 : ndarray of float32, shape (n, F), C-contiguous
        Rows as the forest's ``_validate_X_predict`` returns them.
    n_jobs : int or None
        Threads over the trees, as the forest's own ``apply`` uses
        (joblib's ``n_jobs``: None is one, or the active
        ``joblib.parallel_config``).

    Returns
    -------
    ndarray of intp, shape (n, n_trees)
    """
    trees = [e.tree_ for e in estimators]
    out = np.empty((X32.shape[0], len(trees)), dtype=np.intp)
    n_chunks = max(1, min(len(trees), int(effective_n_jobs(n_jobs))))
    if X32.shape[0] * len(trees) < _MIN_THREADED_WALKS:
        n_chunks = 1  # starting the threads would cost more than the walk
    bounds = np.linspace(0, len(trees), n_chunks + 1).astype(int)

    def run(t0, t1):
        for u in range(t0, t1):
            t = trees[u]
            mgl = getattr(t, "missing_go_to_left", None)  # scikit-learn >= 1.3
            mgl = (np.zeros(t.node_count, dtype=np.uint8) if mgl is None
                   else np.asarray(mgl).view(np.uint8))
            route_tree_float32(X32, t.children_left, t.children_right, t.feature,
                               t.threshold, mgl, out, u)

    if n_chunks == 1:
        run(0, len(trees))
    else:  # the walk releases the GIL; threads even under a process
        # backend (loky, Dask): the tasks write into one shared ``out``
        Parallel(n_jobs=n_chunks, require="sharedmem")(
            delayed(run)(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]))
    return out


def apply_trees_sparse(estimators, Xv):
    """Leaf ids of validated sparse rows ``Xv`` in each tree, as the forest's
    and the boosting model's ``apply`` compute them (each tree's ``apply``
    without a second check), shape (n, n_trees)."""
    out = np.empty((Xv.shape[0], len(estimators)), dtype=np.intp)
    for u, est in enumerate(estimators):
        out[:, u] = est.apply(Xv, check_input=False)
    return out


# ---------------------------------------------------------------------------
# Forests, extra trees and single trees: leaves hold means (class fractions).
# ---------------------------------------------------------------------------
class ForestAdapter(Adapter):
    """RandomForest / ExtraTrees (regressor or classifier), or one decision tree.

    Raw prediction: ``predict`` for regressors (K = n_outputs), the positive
    class's ``predict_proba`` for binary classifiers (K = 1), ``predict_proba``
    for multi-class classifiers (K = n_classes, one block per (tree, class)).
    """

    source = "sklearn"
    split_rule = SPLIT_RULE

    def __init__(self, model, single_tree=False):
        check_is_fitted(model)
        self.model = model
        self.single_tree = single_tree
        estimators = [model] if single_tree else list(model.estimators_)
        self.n_features_in = int(model.n_features_in_)
        self.feature_names = names_from(model)
        self.is_classifier = is_classifier(model)
        n_est = len(estimators)
        scale = 1.0 / n_est
        if self.is_classifier:
            if model.n_outputs_ != 1:
                raise ValueError(
                    "multi-output classifiers are not supported: their leaves "
                    "hold one class distribution per output"
                )
            n_classes = int(np.atleast_1d(model.n_classes_)[0])
            if n_classes < 2:
                raise ValueError("the classifier was fitted on a single class")
            # Binary: one block per tree, the positive-class fraction.
            self.classes = [1] if n_classes == 2 else list(range(n_classes))
            self.n_outputs = 1 if n_classes == 2 else n_classes
            self.raw_prediction = (
                "predict_proba(X)[:, 1]" if n_classes == 2 else "predict_proba(X)"
            )
        else:
            self.classes = list(range(int(model.n_outputs_)))
            self.n_outputs = int(model.n_outputs_)
            self.raw_prediction = "predict(X)"
        blocks = []
        for e, est in enumerate(estimators):
            tree_ = est.tree_
            struct = tree_structure(tree_)
            value = np.asarray(tree_.value, dtype=np.float64)
            if self.is_classifier:
                # Normalise as DecisionTreeClassifier.predict_proba does (the
                # stored values are already fractions since sklearn 1.4).
                norm = value[:, 0, :].sum(axis=1)
                norm[norm == 0] = 1.0
                per_class = value[:, 0, :] / norm[:, None]
                for k, c in enumerate(self.classes):
                    cls = 0 if self.n_outputs == 1 else k
                    blocks.append(Block(struct, per_class[:, c], cls, scale, e))
            else:
                for k in self.classes:
                    blocks.append(Block(struct, value[:, k, 0], k, scale, e))
        self.blocks = blocks

    def apply(self, X):
        if self.single_tree:
            ids = self.model.apply(X)
            return ids.reshape(-1, 1) if ids.ndim == 1 else ids
        # the forest's own validation (float32, its NaN policy, feature
        # names and count), then firecy's walk for dense rows: the leaf ids
        # of model.apply at half its CPU (``route_forest``); sparse rows
        # take the library's sparse walk
        Xv = self.model._validate_X_predict(X)
        if issparse(Xv):
            return self.model.apply(X)
        return route_forest(self.model.estimators_, np.ascontiguousarray(Xv, dtype=np.float32),
                            self.model.n_jobs)

    def apply_sources(self, X, sources):
        if self.single_tree:
            return super().apply_sources(X, sources)
        # the same validation and walk as ``apply``, through these trees only
        Xv = self.model._validate_X_predict(X)
        trees = [self.model.estimators_[s] for s in sources]
        if issparse(Xv):
            return apply_trees_sparse(trees, Xv)
        return route_forest(trees, np.ascontiguousarray(Xv, dtype=np.float32), self.model.n_jobs)

    def baseline(self, X):
        n = n_rows(X)
        return np.zeros(n) if self.n_outputs == 1 else np.zeros((n, self.n_outputs))

    def predict_raw(self, X):
        if self.is_classifier:
            proba = self.model.predict_proba(X)
            return proba[:, 1] if self.n_outputs == 1 else proba
        return self.model.predict(X)


# ---------------------------------------------------------------------------
# GradientBoosting: leaves need learning_rate, baseline from the init estimator.
# ---------------------------------------------------------------------------
class GradientBoostingAdapter(Adapter):
    """GradientBoostingRegressor / GradientBoostingClassifier.

    Raw prediction: ``predict`` (regressor) / ``decision_function``
    (classifier).  Baseline: the init estimator's raw prediction, per row (a
    custom ``init`` makes it vary), read through ``_raw_predict_init``.
    """

    source = "sklearn"
    split_rule = SPLIT_RULE

    def __init__(self, model):
        check_is_fitted(model)
        if not hasattr(model, "_raw_predict_init"):
            raise TypeError(
                f"scikit-learn {sklearn.__version__}'s gradient boosting has no "
                "_raw_predict_init; firecy cannot compute its baseline"
            )
        self.model = model
        self.is_classifier = is_classifier(model)
        self.n_features_in = int(model.n_features_in_)
        self.feature_names = names_from(model)
        est = np.asarray(model.estimators_, dtype=object)
        n_stages, K = est.shape
        self.n_outputs = K
        self.raw_prediction = "decision_function(X)" if self.is_classifier else "predict(X)"
        lr = float(model.learning_rate)
        blocks = []
        for i in range(n_stages):
            for k in range(K):
                tree_ = est[i, k].tree_
                values = np.asarray(tree_.value, dtype=np.float64)[:, 0, 0]
                # apply() returns (n, n_stages, K): column i*K + k once flattened.
                blocks.append(Block(tree_structure(tree_), values, k, lr, i * K + k))
        self.blocks = blocks

    def _checked(self, X):
        """X validated by the boosting model itself (feature names checked
        against its own): its apply() and _raw_predict_init() hand a
        DataFrame to trees fitted without names, which warn about it."""
        return validate_data(self.model, X, reset=False, dtype=np.float32,
                             accept_sparse="csr", ensure_all_finite="allow-nan")

    def apply(self, X):
        ids = self.model.apply(self._checked(X))
        return ids.reshape(ids.shape[0], -1)

    def apply_sources(self, X, sources):
        # id column i*K + k is estimators_[i, k] (see ``apply``)
        Xc = self._checked(X)
        flat = np.asarray(self.model.estimators_, dtype=object).reshape(-1)
        trees = [flat[s] for s in sources]
        if issparse(Xc):
            return apply_trees_sparse(trees, Xc)
        # sklearn's own apply walks each tree in turn (no threads)
        return route_forest(trees, np.ascontiguousarray(Xc, dtype=np.float32))

    def baseline(self, X):
        raw = np.asarray(self.model._raw_predict_init(self._checked(X)), dtype=np.float64)
        return raw[:, 0] if self.n_outputs == 1 else raw

    def predict_raw(self, X):
        if self.is_classifier:
            return self.model.decision_function(X)
        return self.model.predict(X)

    def constant_baseline(self):
        from sklearn.dummy import DummyClassifier, DummyRegressor

        init = self.model.init_
        if isinstance(init, str) and init == "zero":
            return np.zeros(self.n_outputs)
        if not isinstance(init, (DummyRegressor, DummyClassifier)):
            return None  # a custom init estimator: the baseline varies by row
        X = np.zeros((1, self.n_features_in))
        return np.asarray(self.model._raw_predict_init(X), dtype=np.float64).reshape(-1)


def sklearn_adapter(model):
    """The adapter for a scikit-learn model, or None if it is not one we know."""
    from sklearn.ensemble import (
        ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
        GradientBoostingRegressor, HistGradientBoostingClassifier,
        HistGradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor,
    )
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    if isinstance(model, (RandomForestRegressor, RandomForestClassifier,
                          ExtraTreesRegressor, ExtraTreesClassifier)):
        return ForestAdapter(model)
    if isinstance(model, (DecisionTreeRegressor, DecisionTreeClassifier)):
        return ForestAdapter(model, single_tree=True)
    if isinstance(model, (GradientBoostingRegressor, GradientBoostingClassifier)):
        return GradientBoostingAdapter(model)
    if isinstance(model, (HistGradientBoostingRegressor, HistGradientBoostingClassifier)):
        return HistGradientBoostingAdapter(model)
    return None
