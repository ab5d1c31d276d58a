"""scikit-learn's HistGradientBoosting, read through its private node arrays.

It has no public tree API: the adapter checks the layout it knows (tested
with scikit-learn 1.4 to 1.9) and fails with a clear message on another.
Numeric splits compare the raw float64 input with the bin threshold;
categorical splits compare category values (``category_cast="exact"``).
"""
from __future__ import annotations

import numpy as np
import sklearn
from sklearn.utils.validation import check_is_fitted

from firecy.ensembles._condition import Condition
from firecy.ensembles._tree import Adapter, Block, SplitRule, TreeStructure, n_rows, names_from

__all__ = ["HistGradientBoostingAdapter"]

SPLIT_RULE = SplitRule("<=", ">", "float64")

_TESTED_HISTGB = "1.4 to 1.9"
_HISTGB_NODE_FIELDS = (
    "value", "feature_idx", "num_threshold", "missing_go_to_left", "left",
    "right", "is_leaf", "is_categorical", "bitset_idx",
)
_HISTGB_ATTRS = (
    "_predictors", "_baseline_prediction", "_bin_mapper", "_preprocessor",
    "_preprocess_X", "_raw_predict", "n_trees_per_iteration_",
)


def _histgb_layout_error(detail):
    return TypeError(
        "firecy reads the private tree layout of scikit-learn's "
        "HistGradientBoosting (it has no public tree API), and the layout in "
        f"scikit-learn {sklearn.__version__} is not the one firecy knows "
        f"(tested with scikit-learn {_TESTED_HISTGB}): {detail}. "
        "Please report this to firecy, or use a version firecy supports."
    )


def _check_histgb_layout(model):
    try:
        major, minor = (int(p) for p in sklearn.__version__.split(".")[:2])
    except ValueError:  # unusual version string: rely on the layout check
        major, minor = 1, 4
    if (major, minor) < (1, 4):
        raise _histgb_layout_error("scikit-learn older than 1.4")
    for attr in _HISTGB_ATTRS:
        if not hasattr(model, attr):
            raise _histgb_layout_error(f"the model has no attribute {attr!r}")
    for attr in ("make_known_categories_bitsets", "bin_thresholds_"):
        if not hasattr(model._bin_mapper, attr):
            raise _histgb_layout_error(f"its _bin_mapper has no {attr!r}")
    for preds in model._predictors:
        for pred in preds:
            nodes = getattr(pred, "nodes", None)
            names = getattr(getattr(nodes, "dtype", None), "names", None) or ()
            missing = [f for f in _HISTGB_NODE_FIELDS if f not in names]
            if missing:
                raise _histgb_layout_error(f"predictor nodes lack fields {missing}")
            if not hasattr(pred, "raw_left_cat_bitsets"):
                raise _histgb_layout_error("predictors lack raw_left_cat_bitsets")
    is_cat = getattr(model, "is_categorical_", None)
    if model._preprocessor is None and is_cat is not None and np.any(is_cat):
        raise _histgb_layout_error("categorical features without its preprocessor")
    if model._preprocessor is not None:
        pre = model._preprocessor
        if not (
            hasattr(pre, "output_indices_")
            and "encoder" in pre.output_indices_
            and "numerical" in pre.output_indices_
            and hasattr(pre, "named_transformers_")
            and hasattr(pre.named_transformers_.get("encoder"), "categories_")
        ):
            raise _histgb_layout_error("its categorical preprocessor changed")


def _bits(bitsets, rows, values):
    """Membership of integer ``values`` (< 256) in 256-bit bitsets ``bitsets[rows]``."""
    words = bitsets[rows, values >> 5]
    return ((words >> (values & 31).astype(np.uint32)) & 1).astype(bool)


class _HistTree:
    """Node arrays of one TreePredictor, in plain numpy types."""

    def __init__(self, pred):
        nodes = pred.nodes
        self.is_leaf = nodes["is_leaf"].astype(bool)
        self.left = np.where(self.is_leaf, -1, nodes["left"].astype(np.int64))
        self.right = np.where(self.is_leaf, -1, nodes["right"].astype(np.int64))
        self.feature = nodes["feature_idx"].astype(np.intp)
        self.threshold = nodes["num_threshold"].astype(np.float64)
        self.mgl = nodes["missing_go_to_left"].astype(bool)
        self.is_cat = nodes["is_categorical"].astype(bool)
        self.bitset_idx = nodes["bitset_idx"].astype(np.intp)
        self.value = nodes["value"].astype(np.float64)
        self.left_bitsets = np.asarray(pred.raw_left_cat_bitsets, dtype=np.uint32)

    def route(self, Xt, known_bitsets, f_idx_map):
        """Leaf node id of every row, as the library's raw-data predictor would."""
        n = Xt.shape[0]
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n) if not self.is_leaf[0] else np.empty(0, np.intp)
        while rows.size:
            nd = node[rows]
            x = Xt[rows, self.feature[nd]]
            go_left = x <= self.threshold[nd]
            nan = np.isnan(x)
            go_left[nan] = self.mgl[nd[nan]]
            cat = self.is_cat[nd] & ~nan
            if cat.any():
                c_nd, c_x = nd[cat], x[cat]
                # The library casts the value to uint8; codes from its
                # OrdinalEncoder are exact small integers.  Negative or
                # unknown categories are treated as missing.
                valid = (c_x >= 0) & (c_x < 256)
                v = np.where(valid, c_x, 0).astype(np.int64)
                in_left = _bits(self.left_bitsets, self.bitset_idx[c_nd], v) & valid
                f_map = f_idx_map[self.feature[c_nd]].astype(np.intp)
                in_known = _bits(known_bitsets, f_map, v) & valid
                go_left[cat] = np.where(
                    in_left, True, np.where(in_known, False, self.mgl[c_nd])
                )
            nxt = np.where(go_left, self.left[nd], self.right[nd])
            node[rows] = nxt
            rows = rows[~self.is_leaf[nxt]]
        return node


class HistGradientBoostingAdapter(Adapter):
    """HistGradientBoostingRegressor / HistGradientBoostingClassifier.

    Raw prediction: ``_raw_predict`` (= ``decision_function`` for classifiers,
    ``predict`` for the squared error, the log of ``predict`` for the Poisson
    and Gamma losses).  Leaf values already include the learning rate.  Rows
    are routed by firecy through the private node arrays, exactly as the
    library's predictor does.  Categorical features are encoded by the model's
    OrdinalEncoder; rules state categories in the original values.
    """

    source = "sklearn"
    split_rule = SPLIT_RULE

    def __init__(self, model):
        check_is_fitted(model)
        _check_histgb_layout(model)
        self.model = model
        self.n_features_in = int(model.n_features_in_)
        self.feature_names = names_from(model)
        K = int(model.n_trees_per_iteration_)
        self.n_outputs = K
        self.raw_prediction = "_raw_predict(X)"
        known_bitsets, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
        self._known_bitsets = np.asarray(known_bitsets, dtype=np.uint32)
        self._f_idx_map = np.asarray(f_idx_map, dtype=np.intp)
        self._orig_feature, self._cat_values = self._feature_maps(model)
        known_codes = model._bin_mapper.bin_thresholds_

        self._trees = []
        blocks = []
        for preds in model._predictors:
            for k, pred in enumerate(preds):
                ht = _HistTree(pred)
                struct = self._structure(ht, known_codes)
                blocks.append(Block(struct, ht.value, k, 1.0, len(self._trees)))
                self._trees.append(ht)
        self.blocks = blocks

    @staticmethod
    def _feature_maps(model):
        """Transformed column -> original feature; category code -> value."""
        n = int(model.n_features_in_)
        pre = model._preprocessor
        if pre is None:
            return np.arange(n), {}
        is_cat = np.asarray(model.is_categorical_, dtype=bool)
        orig = np.empty(n, dtype=np.intp)
        orig[pre.output_indices_["encoder"]] = np.flatnonzero(is_cat)
        orig[pre.output_indices_["numerical"]] = np.flatnonzero(~is_cat)
        encoder = pre.named_transformers_["encoder"]
        start = pre.output_indices_["encoder"].start
        cat_values = {
            start + i: np.asarray(cats, dtype=object)
            for i, cats in enumerate(encoder.categories_)
        }
        return orig, cat_values

    def _structure(self, ht, known_codes):
        feature = self._orig_feature[ht.feature]
        special = {}
        for i in np.flatnonzero(~ht.is_leaf & ht.is_cat).tolist():
            special[i] = self._categorical_split(ht, i, known_codes)
        return TreeStructure(ht.left, ht.right, feature, ht.threshold, ht.mgl,
                             SPLIT_RULE, special=special)

    def _categorical_split(self, ht, i, known_codes):
        ft = int(ht.feature[i])
        f = int(self._orig_feature[ft])
        m = bool(ht.mgl[i])
        codes = np.arange(256)
        bits = _bits(ht.left_bitsets, np.full(256, ht.bitset_idx[i]), codes)
        left_codes = codes[bits]
        known = np.asarray(known_codes[ft], dtype=np.int64)
        right_codes = np.setdiff1d(known, left_codes)
        values = self._cat_values.get(ft)
        if values is None:
            raise _histgb_layout_error(
                "a categorical split on a feature its preprocessor does not encode"
            )

        def to_values(codes):
            return tuple(v.item() if hasattr(v, "item") else v for v in values[codes])

        # Unknown categories and NaN follow missing_go_to_left, so the
        # branch that takes them is the complement ("not in") of the other.
        kw = dict(dtype="float64", category_cast="exact")
        if m:
            right_vals = to_values(right_codes)
            return (Condition(f, "not in", categories=right_vals, missing=True, **kw),
                    Condition(f, "in", categories=right_vals, missing=False, **kw))
        left_vals = to_values(left_codes)
        return (Condition(f, "in", categories=left_vals, missing=False, **kw),
                Condition(f, "not in", categories=left_vals, missing=True, **kw))

    def apply(self, X):
        return self._route(X, range(len(self._trees)))

    def apply_sources(self, X, sources):
        return self._route(X, sources)

    def _route(self, X, sources):
        Xt = np.asarray(self.model._preprocess_X(X, reset=False), dtype=np.float64)
        out = np.empty((Xt.shape[0], len(sources)), dtype=np.int32)
        for u, t in enumerate(sources):
            out[:, u] = self._trees[t].route(Xt, self._known_bitsets, self._f_idx_map)
        return out

    def baseline(self, X):
        n = n_rows(X)
        base = np.asarray(self.model._baseline_prediction, dtype=np.float64).reshape(-1)
        if self.n_outputs == 1:
            return np.full(n, base[0])
        return np.tile(base, (n, 1))

    def constant_baseline(self):
        return np.asarray(self.model._baseline_prediction, dtype=np.float64).reshape(-1)

    def predict_raw(self, X):
        raw = np.asarray(self.model._raw_predict(X), dtype=np.float64)
        return raw[:, 0] if self.n_outputs == 1 else raw
