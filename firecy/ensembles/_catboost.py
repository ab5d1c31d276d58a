"""CatBoost adapter: ``CatBoostRegressor``, ``CatBoostClassifier`` and ``CatBoost``.

Read from the model's JSON (``save_model(format="json")``, written to a
temporary directory: CatBoost has no in-memory JSON).  Only symmetric
(oblivious) trees, CatBoost's default ``grow_policy``: every level of a tree
has one split shared by all its nodes, so a tree of depth d has 2^d leaves.
The adapter lays each one out as a full binary tree whose level k is split k
of the JSON; CatBoost's leaf index is ``sum_k (condition k true) << k``
(checked against ``calc_leaf_indexes``).

Numeric splits (``FloatFeature``): CatBoost rounds the input to float32 and
sends ``x > border`` right, ``x <= border`` left (the border is a float32).
Missing values follow the feature's ``nan_value_treatment``: ``AsTrue``
(``nan_mode="Max"``) right, ``AsFalse`` (``"Min"``) and ``AsIs`` (no missing
value at fit: NaN compares false) left.  ``nan_mode="Forbidden"`` models get
no missing value: firecy refuses X with NaN in a numeric feature, as CatBoost
refuses it at fit.

One-hot splits (``OneHotFeature``) send ``x == label`` right.  The model
stores only a hash of the label, so the adapter needs the training data
(``X``) to read the labels: it asks CatBoost to hash X's categories (the JSON
written with a Pool of X).  Splits on target statistics of categories
(``OnlineCtr``) are not rules on the data: they are refused, naming the
features, with the fix (``one_hot_max_size``).

CatBoost's float feature index is not the column when categorical columns
come first: it is mapped through ``flat_feature_index``.  The raw prediction
is ``predict(X, prediction_type="RawFormulaVal")``: scale times the sum of the
leaf values, plus the bias (``get_scale_and_bias``: the boost-from-average
constant), which is the baseline.  A model early stopped with
``use_best_model`` keeps only its best trees, and CatBoost predicts with every
tree it keeps: so do the rules.
"""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import scipy.sparse as sp

from firecy.ensembles._condition import Condition
from firecy.ensembles._reading import _column
from firecy.ensembles._tree import Adapter, Block, SplitRule, TreeStructure, n_rows

__all__ = ["CatBoostAdapter"]

SPLIT_RULE = SplitRule("<=", ">", "float32")
_KNOWN_SPLITS = ("FloatFeature", "OneHotFeature", "OnlineCtr")


def _model_json(model, pool=None) -> dict:
    with tempfile.TemporaryDirectory(prefix="firecy-catboost-") as tmp:
        path = os.path.join(tmp, "model.json")
        model.save_model(path, format="json", pool=pool)
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)


def _params(doc) -> dict:
    return (doc.get("model_info", {}) or {}).get("params", {}) or {}


def _nan_mode(doc) -> str:
    binarization = _params(doc).get("data_processing_options", {}).get(
        "float_features_binarization", {})
    return str(binarization.get("nan_mode", "Min"))


def _full_tree(depth: int):
    """Children of a full binary tree of ``depth`` levels, breadth first:
    node i has children 2i+1 and 2i+2; the leaves are the last 2^depth nodes."""
    n = 2 ** (depth + 1) - 1
    n_internal = 2 ** depth - 1
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    inner = np.arange(n_internal, dtype=np.int64)
    left[:n_internal] = 2 * inner + 1
    right[:n_internal] = 2 * inner + 2
    level = np.zeros(n, dtype=np.int64)
    for d in range(1, depth + 1):
        level[2 ** d - 1:2 ** (d + 1) - 1] = d
    return left, right, level, n_internal


def _leaf_index(depth: int) -> np.ndarray:
    """CatBoost's leaf index of each leaf in left-to-right order: the leaf at
    position p took the right branch at level k when bit depth-1-k of p is
    set, and CatBoost sets bit k for it (a bit reversal)."""
    p = np.arange(2 ** depth, dtype=np.int64)
    out = np.zeros_like(p)
    for k in range(depth):
        out |= ((p >> (depth - 1 - k)) & 1) << k
    return out


class _Features:
    """The model's feature layout: columns, names, categorical labels."""

    def __init__(self, model, doc, X):
        info = doc.get("features_info", {}) or {}
        self.float_features = info.get("float_features", []) or []
        self.cat_features = info.get("categorical_features", []) or []
        self.ctrs = info.get("ctrs", []) or []
        for kind in ("text_features", "embedding_features"):
            if info.get(kind):
                raise ValueError(
                    f"the CatBoost model uses {kind.replace('_', ' ')}: their splits are "
                    "on features CatBoost computes from the text, not rules on X's "
                    "columns; firecy cannot read it")
        self.float_column = [int(f["flat_feature_index"]) for f in self.float_features]
        self.cat_column = [int(f["flat_feature_index"]) for f in self.cat_features]
        names = list(getattr(model, "feature_names_", None) or [])
        n = max([len(names)] + [c + 1 for c in self.float_column + self.cat_column])
        self.n_features = n
        # CatBoost names the columns of an array "0", "1", ...: no names
        self.names = (None if not names or names == [str(i) for i in range(len(names))]
                      else [str(s) for s in names])
        self.treatment = [str(f.get("nan_value_treatment", "AsIs"))
                          for f in self.float_features]
        self._model, self._X = model, X
        self._labels = None

    def release(self):
        """Drop the data and the model, once every split is read."""
        self._X = self._model = self._labels = None

    def name(self, column) -> str:
        return self.names[column] if self.names else f"x{column}"

    def cat_name(self, cat_index) -> str:
        return self.name(self.cat_column[cat_index])

    def ctr_features(self, split_index) -> list:
        """Names of the categorical features of the CTR behind a split."""
        offset = sum(len(f.get("borders", []) or []) for f in self.float_features)
        offset += sum(len(f.get("values", []) or []) for f in self.cat_features)
        k = int(split_index) - offset
        for ctr in self.ctrs:
            n_borders = len(ctr.get("borders", []) or [])
            if 0 <= k < n_borders:
                return self._ctr_names([ctr])
            k -= n_borders
        return self._ctr_names(self.ctrs)   # an index firecy cannot place: all of them

    def _ctr_names(self, ctrs) -> list:
        out = []
        for ctr in ctrs:
            for el in ctr.get("elements", []) or []:
                if "cat_feature_index" in el:
                    name = self.cat_name(int(el["cat_feature_index"]))
                    if name not in out:
                        out.append(name)
        return out

    def label(self, cat_index, hashed):
        """The label of category hash ``hashed`` of categorical feature ``cat_index``."""
        if self._labels is None:
            self._labels = self._read_labels()
        labels = self._labels.get(cat_index, {})
        key = int(hashed) & 0xFFFFFFFF   # the JSON writes the uint32 hash as an int32
        if key not in labels:
            name = self.cat_name(cat_index)
            raise ValueError(
                f"the CatBoost model splits on a category of {name!r} that X's column "
                f"{name!r} does not hold: pass the data the model was fitted on as X")
        return labels[key]

    def _read_labels(self) -> dict:
        """``{cat_index: {hash: label}}`` of X's categories, hashed by CatBoost."""
        X = self._X
        if X is None:
            names = ", ".join(repr(self.cat_name(c)) for c in range(len(self.cat_features)))
            raise ValueError(
                "the CatBoost model has one-hot splits on categorical features "
                f"({names}), and CatBoost stores only a hash of each category: pass the "
                "data the model was fitted on as X (rule_ensemble_from_model(model, X=X)), "
                "from which firecy reads the labels")
        import catboost
        import pandas as pd   # a dependency of catboost

        # one row per label of each categorical column is enough to hash them all
        columns = {col: pd.Series(_column(X, col, codes=False)) for col in self.cat_column}
        rows = np.unique(np.concatenate(
            [np.flatnonzero(~s.duplicated().to_numpy()) for s in columns.values()]))
        few = X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X, dtype=object)[rows]
        pool = catboost.Pool(few, cat_features=sorted(self.cat_column))
        hashes = _model_json(self._model, pool).get("features_info", {}).get(
            "cat_features_hash", []) or []
        by_text = {int(h["hash"]): str(h["value"]) for h in hashes}
        out = {}
        for c, col in enumerate(self.cat_column):
            # CatBoost hashes the text of a label (str(3) for 3): map it back to
            # the value X holds, which is what the rules compare
            originals = {}
            for v in columns[col].iloc[rows]:
                originals.setdefault(str(v), v.item() if hasattr(v, "item") else v)
            out[c] = {h: originals.get(text, text) for h, text in by_text.items()
                      if text in originals}
        return out


class CatBoostAdapter(Adapter):
    """CatBoost models with symmetric trees.

    Raw prediction: ``predict(X, prediction_type="RawFormulaVal")``, with the
    trees the model keeps.  ``tree_scale`` is the model's scale, the baseline
    its bias (``get_scale_and_bias``).
    """

    source = "catboost"
    split_rule = SPLIT_RULE

    def __init__(self, model, X=None):
        if not model.is_fitted():
            raise ValueError(f"this {type(model).__name__} instance is not fitted yet: "
                             "call fit first")
        self.model = model
        doc = _model_json(model)
        if "oblivious_trees" not in doc:
            policy = _params(doc).get("tree_learner_options", {}).get("grow_policy", "?")
            raise ValueError(
                f"the CatBoost model was grown with grow_policy={policy!r}: firecy reads "
                "symmetric trees only; refit with grow_policy='SymmetricTree' (the default)")
        self.nan_forbidden = _nan_mode(doc) == "Forbidden"
        feats = _Features(model, doc, X)
        self._features = feats
        self.n_features_in = feats.n_features
        self.feature_names = feats.names
        scale, bias = doc.get("scale_and_bias", [1.0, [0.0]])
        bias = np.atleast_1d(np.asarray(bias, dtype=np.float64))
        trees = doc["oblivious_trees"]
        if not trees:
            raise ValueError("the CatBoost model has no trees")
        depth0 = len(trees[0].get("splits", []) or [])
        K = max(1, len(trees[0]["leaf_values"]) // 2 ** depth0)
        self.n_outputs = K
        self._bias = bias if bias.size == K else np.full(K, float(bias[0]) if bias.size else 0.0)
        self.raw_prediction = 'predict(X, prediction_type="RawFormulaVal")'
        self._check_no_ctr(trees)

        blocks = []
        for t, tree in enumerate(trees):
            struct, values = self._tree_structure(tree, K)
            for k in range(K):
                blocks.append(Block(struct, values[:, k], k, float(scale), t))
        self.blocks = blocks
        feats.release()   # the labels are read: keep no copy of X in the ensemble

    def _check_no_ctr(self, trees):
        splits = [s for tree in trees for s in (tree.get("splits", []) or [])]
        unknown = sorted({str(s.get("split_type")) for s in splits} - set(_KNOWN_SPLITS))
        if unknown:
            raise ValueError(f"the CatBoost model has splits of type {unknown}, which "
                             "firecy cannot read as rules")
        ctr = [s for s in splits if s.get("split_type") == "OnlineCtr"]
        if not ctr:
            return
        names = []
        for s in ctr:
            for name in self._features.ctr_features(s.get("split_index", -1)):
                if name not in names:
                    names.append(name)
        shown = ", ".join(repr(n) for n in names) or "a categorical feature"
        counts = self._label_counts(names)
        raise ValueError(
            f"the CatBoost model splits on target statistics (CTRs) of {shown}: such a "
            "split compares a statistic of the training targets of each category, not "
            "the category itself, so it is no rule on X. Refit with one_hot_max_size "
            f"at least the number of labels of {shown}{counts}, so that CatBoost splits "
            "on the labels themselves (one-hot)")

    def _label_counts(self, names) -> str:
        """" (X holds 4 labels of 'colour')", or "" without X."""
        X = self._features._X
        if X is None or not names or self._features.names is None:
            return ""
        counts = []
        for name in names:
            try:
                col = self._features.names.index(name)
                n = len(set(_column(X, col, codes=False).tolist()))
            except Exception:   # X is not the model's frame: no count
                return ""
            counts.append(f"{n} labels of {name!r}" if not counts else f"{n} of {name!r}")
        return " (X holds " + ", ".join(counts) + ")"

    def _tree_structure(self, tree, K):
        splits = tree.get("splits", []) or []
        depth = len(splits)
        leaf_values = np.asarray(tree["leaf_values"], dtype=np.float64)
        if leaf_values.size != K * 2 ** depth:
            raise ValueError(
                f"unexpected CatBoost model: a tree of depth {depth} with "
                f"{leaf_values.size} leaf values for {K} output(s)")
        left, right, level, n_internal = _full_tree(depth)
        n = left.shape[0]
        feature = np.zeros(n, dtype=np.int64)
        threshold = np.zeros(n)
        missing_left = np.zeros(n, dtype=bool)
        special = {}
        per_level = [self._split(s) for s in splits]
        for i in range(n_internal):
            f, thr, m_left, pair = per_level[int(level[i])]
            feature[i], threshold[i], missing_left[i] = f, thr, m_left
            if pair is not None:
                special[i] = pair
        leaf_id = np.full(n, -1, dtype=np.int64)
        leaf_id[n_internal:] = _leaf_index(depth)
        values = np.zeros((n, K))
        values[n_internal:] = leaf_values.reshape(-1, K)[leaf_id[n_internal:]]
        struct = TreeStructure(left, right, feature, threshold, missing_left, SPLIT_RULE,
                               leaf_id=leaf_id, special=special)
        return struct, values

    def _split(self, s):
        """(column, threshold, missing goes left, special pair or None) of a split."""
        feats = self._features
        if s["split_type"] == "FloatFeature":
            i = int(s["float_feature_index"])
            border = float(np.float32(s["border"]))
            # AsTrue: NaN reads as +inf (right); AsFalse, AsIs: it goes left
            return feats.float_column[i], border, feats.treatment[i] != "AsTrue", None
        c = int(s["cat_feature_index"])
        col = feats.cat_column[c]
        label = feats.label(c, s["value"])
        kw = dict(category_cast="exact")
        # x == label goes right; CatBoost refuses missing categories, so the
        # missing flags only keep the two branches complementary
        pair = (Condition(col, "not in", categories=(label,), missing=True, **kw),
                Condition(col, "in", categories=(label,), missing=False, **kw))
        return col, 0.0, True, pair

    # -- data ---------------------------------------------------------------
    def _check_missing(self, X):
        if not self.nan_forbidden:
            return
        if sp.issparse(X):   # only the stored entries can be NaN
            X = sp.csc_matrix(X)
        for col in self._features.float_column:
            if sp.issparse(X):
                x = X.data[X.indptr[col]:X.indptr[col + 1]]
            else:
                x = np.asarray(_column(X, col), dtype=np.float64)
            if np.isnan(x).any():
                raise ValueError(
                    f"X has missing values in {self._features.name(col)!r}, and the "
                    "CatBoost model was fitted with nan_mode='Forbidden': it has no "
                    "branch for them. Impute them, or refit with nan_mode='Min' or 'Max'")

    def apply(self, X):
        self._check_missing(X)
        return np.asarray(self.model.calc_leaf_indexes(X), dtype=np.int64)

    def apply_sources(self, X, sources):
        """Leaf ids of the trees ``sources`` only: one call over the range
        of trees that holds them (``ntree_start``, ``ntree_end``)."""
        sources = np.asarray(sources, dtype=np.int64)
        if not sources.size:
            return super().apply_sources(X, sources)
        self._check_missing(X)
        lo, hi = int(sources.min()), int(sources.max()) + 1
        ids = self.model.calc_leaf_indexes(X, ntree_start=lo, ntree_end=hi)
        return np.asarray(ids, dtype=np.int64).reshape(n_rows(X), -1)[:, sources - lo]

    def baseline(self, X):
        n = n_rows(X)
        if self.n_outputs == 1:
            return np.full(n, self._bias[0])
        return np.tile(self._bias, (n, 1))

    def constant_baseline(self):
        return self._bias.copy()

    def predict_raw(self, X):
        self._check_missing(X)
        return np.asarray(self.model.predict(X, prediction_type="RawFormulaVal"),
                          dtype=np.float64)

    def rules_input(self, X):
        self._check_missing(X)
        return X
