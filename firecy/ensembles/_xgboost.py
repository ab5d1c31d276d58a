"""XGBoost adapter: ``XGBModel`` (sklearn wrapper) and raw ``Booster``.

Read from the model's JSON (``save_raw("json")``), which carries everything:
children, split features and float32 split values, ``default_left``,
categorical splits (``split_type`` 1, with the categories that go RIGHT),
``tree_info`` (the class of each tree), ``iteration_indptr`` (trees per
boosting round, several with ``num_parallel_tree`` or multi-class), dart's
``weight_drop`` and the intercept ``base_score``.

XGBoost compares ``float32(x) < split`` (left) in float32, routes NaN by
``default_left``, and its leaf values already include the learning rate.
"""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import scipy.sparse as sp

from firecy.ensembles._reading import coded_column, column_as_float, sorted_labels
from firecy.ensembles._tree import Adapter, Block, SplitRule, TreeStructure, round_runs
from firecy.ensembles._condition import Condition

# How XGBoost turns base_score into a margin (ObjFunction::ProbToMargin).
# Checked against XGBoost 3.2: everything not listed is the identity,
# including binary:logitraw and the multi-class objectives (whose base_score
# is stored as a vector of margins).
_LOGIT_OBJECTIVES = {"binary:logistic", "reg:logistic"}
_LOG_OBJECTIVES = {
    "count:poisson", "reg:gamma", "reg:tweedie", "survival:cox", "survival:aft",
}


def _parse_base_score(text) -> np.ndarray:
    """``"[5E-1]"`` or ``"[1E-1,2E-1]"`` (XGBoost >= 3) or ``"0.5"`` -> floats."""
    text = str(text).strip().strip("[]")
    return np.array([float(np.float32(v)) for v in text.split(",") if v.strip()])


SPLIT_RULE = SplitRule("<", ">=", "float32")

# One leaf call's fixed cost (a slice of the booster and a predict call), in
# tree-row walks: about 1 ms, the walk of 30,000 rows through one depth-6
# tree (XGBoost 3.2, one thread; benchmarks/speed/predict_routing.py).
_LEAF_CALL_COST = 30_000


def _rows(X) -> int:
    if _is_dmatrix(X):
        return int(X.num_row())
    return int(X.shape[0]) if hasattr(X, "shape") else len(X)


# XGBoost 3.4 stores a string category container with byte offsets into its
# UTF-8 text.  XGBoost 3.1 to 3.3 built the container of a pandas frame with
# offsets counted in code points, and kept only as many bytes as there are
# code points: a label that is not ASCII is stored cut and shifted (dmlc/xgboost
# #12371).  An Arrow or polars frame was stored right, even then.
_EXACT_UTF8_SINCE = (3, 4, 0)


def _writer_version(model_json: dict) -> tuple:
    """The XGBoost version that wrote the model JSON, (0, 0, 0) if unknown."""
    try:
        return tuple(int(v) for v in model_json.get("version", ()))[:3] or (0, 0, 0)
    except (TypeError, ValueError):
        return (0, 0, 0)


def _version_text(version) -> str:
    return ".".join(map(str, version)) if any(version) else "of unknown version"


def _container_by_bytes(labels) -> tuple:
    """(offsets, bytes) of string ``labels``, offsets counted in UTF-8 bytes."""
    encoded = [s.encode("utf-8") for s in labels]
    offsets = [0]
    for b in encoded:
        offsets.append(offsets[-1] + len(b))
    return tuple(offsets), b"".join(encoded)


def _container_by_code_points(labels) -> tuple:
    """(offsets, bytes) of string ``labels`` as XGBoost 3.1 to 3.3 store a pandas
    frame's categories: offsets counted in code points, and only as many bytes
    of the UTF-8 text as it has code points."""
    offsets = [0]
    for s in labels:
        offsets.append(offsets[-1] + len(s))
    return tuple(offsets), "".join(labels).encode("utf-8")[:offsets[-1]]


def _decode_by_bytes(raw: bytes, offsets) -> tuple | None:
    """The labels of a container with byte offsets; None when it cannot be one
    (a segment that is not UTF-8, or two equal labels)."""
    try:
        labels = tuple(raw[a:b].decode("utf-8") for a, b in zip(offsets, offsets[1:]))
    except UnicodeDecodeError:
        return None
    return labels if len(set(labels)) == len(labels) else None


def _frame_categories(X, f):
    """The string categories of column ``f`` of a DataFrame ``X``, or None."""
    if X is None or not hasattr(X, "iloc") or f >= X.shape[1]:
        return None
    s = X.iloc[:, f]
    if getattr(s.dtype, "name", None) != "category":
        return None
    cats = tuple(s.cat.categories)
    return cats if all(isinstance(v, str) for v in cats) else None


def _decode_categories(cats, n_features, names, version=(0, 0, 0), X=None):
    """Category labels per feature from the model JSON's ``cats`` (XGBoost >= 3.1).

    XGBoost stores, for each feature it re-codes by label, either the UTF-8
    bytes of string labels with their offsets, or numeric labels.  Features
    without labels (numeric, or categorical data given as codes) map to ().

    Returns ``(labels, from_frame)``: ``from_frame`` holds the features whose
    labels the model does not store exactly (XGBoost < 3.4 and labels that are
    not ASCII), which are then taken from the categories of ``X``'s column,
    checked against what XGBoost stored of them.
    """
    enc = cats.get("enc", [])
    if not enc:
        return {}, frozenset()
    if len(enc) != n_features:
        raise ValueError(
            f"unexpected XGBoost model: categories for {len(enc)} features, "
            f"the model has {n_features}"
        )
    out, from_frame = {}, set()
    for f, e in enumerate(enc):
        values = e.get("values", [])
        if "offsets" not in e:
            if values:
                out[f] = tuple(v if isinstance(v, (int, str)) else float(v) for v in values)
            continue
        offsets = tuple(int(o) for o in e["offsets"])
        if len(offsets) < 2:
            continue
        name = names[f] if names else f"x{f}"
        # the stored bytes are int8 values (UBJSON has no unsigned 8-bit arrays)
        raw = np.asarray(values, dtype=np.int64).astype(np.uint8).tobytes()
        if offsets[0] != 0 or offsets[-1] != len(raw) or any(
                a > b for a, b in zip(offsets, offsets[1:])):
            raise ValueError(
                f"unexpected XGBoost model: the stored categories of feature {name!r} "
                "are inconsistent (their offsets do not cover their text)"
            )
        if raw.isascii():  # one byte per code point: both layouts agree
            out[f] = tuple(raw[a:b].decode("ascii") for a, b in zip(offsets, offsets[1:]))
            continue
        frame = _frame_categories(X, f)
        if frame is not None and (offsets, raw) in (_container_by_bytes(frame),
                                                    _container_by_code_points(frame)):
            out[f] = frame
            from_frame.add(f)
            continue
        labels = _decode_by_bytes(raw, offsets) if version >= _EXACT_UTF8_SINCE else None
        if labels is None:
            raise ValueError(
                f"the XGBoost model stores the categories of feature {name!r} cut short: "
                f"XGBoost {_version_text(version)} (before 3.4) keeps a pandas "
                "frame's category labels that are not ASCII only in part, so they "
                "cannot be read from the model. Pass the data the model was fitted on "
                "(its category columns, same categories in the same order) as X to "
                "rule_ensemble_from_model, or refit with XGBoost >= 3.4"
                + ("" if frame is None else
                   f"; X's categories of {name!r} are not the ones XGBoost stored")
            )
        out[f] = labels
    _check_sort_order(cats, {f: v for f, v in out.items() if f not in from_frame})
    return out, frozenset(from_frame)


def _check_sort_order(cats, labels):
    """XGBoost re-codes a label by binary search in its sorted categories
    (``sorted_idx``); firecy sorts them in Python, which must agree."""
    seg, order = cats.get("feature_segments"), cats.get("sorted_idx")
    if seg is None or order is None:
        return
    for f, lab in labels.items():
        if f + 1 >= len(seg):
            break
        mine = sorted_labels(lab)[1]
        theirs = tuple(int(k) for k in order[int(seg[f]):int(seg[f + 1])])
        if theirs and theirs != mine:
            raise ValueError(
                f"XGBoost sorts the categories of feature {f} in another order than "
                "Python does; firecy cannot reproduce how it re-codes new data"
            )


def _tree_structure(tree: dict, labels: dict) -> tuple[TreeStructure, np.ndarray]:
    param = tree.get("tree_param", {})
    if int(param.get("size_leaf_vector", "1") or 1) > 1:
        raise ValueError(
            "XGBoost vector-leaf trees (multi_strategy='multi_output_tree') are "
            "not supported: a leaf holds one value per output"
        )
    left = np.asarray(tree["left_children"], dtype=np.int64)
    right = np.asarray(tree["right_children"], dtype=np.int64)
    feature = np.asarray(tree["split_indices"], dtype=np.int64)
    # Split values and leaf values share one float32 field; round-tripping the
    # JSON's shortest decimal through float32 recovers the exact float32.
    cond = np.asarray(tree["split_conditions"], dtype=np.float32).astype(np.float64)
    default_left = np.asarray(tree["default_left"], dtype=bool)
    cats = tree.get("categories", [])
    special = {}
    for nid, beg, size in zip(tree.get("categories_nodes", []),
                              tree.get("categories_segments", []),
                              tree.get("categories_sizes", [])):
        i = int(nid)
        f = int(feature[i])
        m = bool(default_left[i])
        c = tuple(int(v) for v in cats[int(beg):int(beg) + int(size)])
        f_labels = labels.get(f, ())
        if f_labels:
            if max(c, default=-1) >= len(f_labels):
                raise ValueError(
                    f"unexpected XGBoost model: a split on category {max(c)} of feature "
                    f"{f}, which has {len(f_labels)} categories"
                )
            c = tuple(f_labels[k] for k in c)
        # XGBoost sends the listed categories RIGHT; negative values are
        # invalid categories and go left (category_cast="floor").
        kw = dict(dtype="float32", category_cast="floor", labels=f_labels)
        special[i] = (Condition(f, "not in", categories=c, missing=m, **kw),
                      Condition(f, "in", categories=c, missing=not m, **kw))
    split_type = np.asarray(tree.get("split_type", []), dtype=np.int64)
    if split_type.size and np.any((split_type == 1) & (left >= 0)):
        missing = set(np.flatnonzero((split_type == 1) & (left >= 0)).tolist()) - set(special)
        for i in missing:  # a categorical split with no category listed
            f, m = int(feature[i]), bool(default_left[i])
            kw = dict(dtype="float32", category_cast="floor", labels=labels.get(f, ()))
            special[i] = (Condition(f, "not in", categories=(), missing=m, **kw),
                          Condition(f, "in", categories=(), missing=not m, **kw))
    struct = TreeStructure(left, right, feature, cond, default_left, SPLIT_RULE,
                           special=special)
    return struct, cond


def _is_dmatrix(X) -> bool:
    import xgboost as xgb

    return isinstance(X, xgb.DMatrix)


class XGBoostAdapter(Adapter):
    """XGBoost gbtree / dart models.

    Raw prediction: ``predict(X, output_margin=True)``, using the trees the
    model predicts with: ``best_iteration + 1`` rounds for a sklearn wrapper
    fitted with early stopping, every tree for a raw ``Booster`` (as
    ``Booster.predict`` does).  ``tree_scale`` is dart's ``weight_drop`` (1 for
    gbtree).  Baseline: ``base_score`` through the objective's link.

    ``X``, a DataFrame of the training data (optional), is read only for the
    category labels XGBoost 3.1 to 3.3 store cut short (labels of a pandas
    frame that are not ASCII); those features' labels are then X's
    categories, once checked against what the model stored.
    """

    source = "xgboost"
    split_rule = SPLIT_RULE
    _indptr = None  # an adapter pickled before apply_sources routes every tree

    def __init__(self, model, X=None):
        import xgboost as xgb

        if isinstance(model, xgb.XGBModel):
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(model)
            self.wrapper = model
            booster = model.get_booster()
            try:
                n_rounds = int(model.best_iteration) + 1
            except AttributeError:
                n_rounds = None
            missing = getattr(model, "missing", np.nan)
            if missing is not None and not (isinstance(missing, float) and math.isnan(missing)):
                # firecy's own rule evaluation reads it as missing (rules_input)
                self.missing_value = float(missing)
                warnings.warn(
                    f"the XGBoost model treats {missing!r} as missing; firecy reads "
                    f"{missing!r} as missing when it evaluates rules, but the printed "
                    "and exported rules treat only NaN as missing, so replace "
                    f"{missing!r} by NaN before applying them to data elsewhere",
                    UserWarning,
                    stacklevel=3,
                )
        elif isinstance(model, xgb.Booster):
            self.wrapper = None
            booster = model
            n_rounds = None
        else:  # pragma: no cover - dispatch guarantees the type
            raise TypeError(f"not an XGBoost model: {type(model)!r}")
        self.booster = booster

        doc = json.loads(booster.save_raw(raw_format="json"))
        learner = doc["learner"]
        gb = learner["gradient_booster"]
        name = gb.get("name")
        if name == "gblinear":
            raise ValueError(
                "an XGBoost gblinear model has no trees, hence no rules; "
                "use booster='gbtree' or 'dart'"
            )
        if name == "dart":
            weight_drop = np.asarray(gb.get("weight_drop", []), dtype=np.float64)
            model_json = gb["gbtree"]["model"]
        elif name == "gbtree":
            weight_drop = None
            model_json = gb["model"]
        else:
            raise TypeError(f"unknown XGBoost booster {name!r}")

        trees = model_json["trees"]
        tree_info = np.asarray(model_json["tree_info"], dtype=np.int64)
        indptr = model_json.get("iteration_indptr")
        if n_rounds is not None and indptr is not None:
            n_rounds = min(n_rounds, len(indptr) - 1)
            n_trees = int(indptr[n_rounds])
        else:
            n_trees = len(trees)
            n_rounds = 0  # 0 = all, in XGBoost's iteration_range
        self.iteration_range = (0, n_rounds)
        if indptr is not None:
            # tree boundaries of the rounds the model predicts with
            last = n_rounds if n_rounds > 0 else len(indptr) - 1
            self._indptr = np.asarray(indptr[:last + 1], dtype=np.int64)
            if self._indptr[-1] != n_trees:
                self._indptr = None  # not a layout firecy knows: route every tree
        if n_trees == 0:
            raise ValueError("the XGBoost model has no trees")

        param = learner["learner_model_param"]
        n_class = int(param.get("num_class", "0") or 0)
        n_target = int(param.get("num_target", "1") or 1)
        self.n_outputs = max(n_class, n_target, 1, int(tree_info.max()) + 1)
        self.n_features_in = int(param["num_feature"])
        names = booster.feature_names
        self.feature_names = list(names) if names is not None else None
        self.raw_prediction = "predict(X, output_margin=True)"

        base = _parse_base_score(param.get("base_score", "0"))
        if base.size == 1:
            base = np.repeat(base, self.n_outputs)
        objective = learner.get("objective", {}).get("name", "")
        if objective in _LOGIT_OBJECTIVES:
            base = np.log(base / (1.0 - base))
        elif objective in _LOG_OBJECTIVES:
            base = np.log(base)
        self._base = base

        # Features whose labels come from X: XGBoost < 3.4 misreads frames
        # with those labels, so firecy re-codes frames itself and gives
        # XGBoost the codes (see _coded_dmatrix).
        self.labels, self._labels_from_frame = _decode_categories(
            model_json.get("cats", {}), self.n_features_in, self.feature_names,
            _writer_version(doc), X)
        blocks = []
        for t in range(n_trees):
            struct, values = _tree_structure(trees[t], self.labels)
            scale = 1.0 if weight_drop is None else float(weight_drop[t])
            # pred_leaf columns follow the order of the JSON trees
            # (round x class x parallel tree).
            blocks.append(Block(struct, values, int(tree_info[t]), scale, t))
        self.blocks = blocks

    def _recodes(self, X) -> bool:
        """Whether firecy re-codes the frame ``X`` for XGBoost (see _coded_dmatrix)."""
        return bool(self._labels_from_frame) and hasattr(X, "iloc") and not _is_dmatrix(X)

    def _coded_dmatrix(self, X):
        """The DataFrame ``X`` as a DMatrix of XGBoost's category codes.

        XGBoost < 3.4 re-codes a frame by comparing its labels, cut as the
        model's are, with the model's: a frame in another category order is
        misread, and even the training frame when two labels are cut to the
        same bytes.  Given codes, XGBoost re-codes nothing (as in training),
        and routes the rows by label as firecy's rules read them.
        """
        import xgboost as xgb

        missing = np.nan if self.wrapper is None else self.wrapper.missing
        return xgb.DMatrix(
            self.library_input(X),
            missing=np.nan if missing is None else missing,
            feature_names=self.booster.feature_names,
            feature_types=self.booster.feature_types,
            enable_categorical=True,
        )

    def _dmatrix(self, X):
        import xgboost as xgb

        if isinstance(X, xgb.DMatrix):
            return X
        if self._recodes(X):
            return self._coded_dmatrix(X)
        if hasattr(X, "iloc"):  # a DataFrame carries its own names and types
            return xgb.DMatrix(X, enable_categorical=True)
        return xgb.DMatrix(
            X,
            feature_names=self.booster.feature_names,
            feature_types=self.booster.feature_types,
            enable_categorical=True,
        )

    def apply(self, X):
        if self.wrapper is not None and not _is_dmatrix(X) and not self._recodes(X):
            ids = self.wrapper.apply(X, iteration_range=self.iteration_range)
        else:
            ids = self.booster.predict(
                self._dmatrix(X), pred_leaf=True, iteration_range=self.iteration_range
            )
        ids = np.asarray(ids)
        # A single tree gives a 1-D array.
        return ids.reshape(ids.shape[0], -1)

    def apply_sources(self, X, sources):
        """Leaf ids of the trees ``sources`` only.

        XGBoost's leaf call routes the rounds ``[0, stop)`` only
        (``iteration_range`` must start at 0), so a run of rounds that starts
        later is routed by a slice of the booster (``booster[start:stop]``,
        the same trees).  A slice drops the model's category container, by
        which XGBoost >= 3.1 re-codes a frame's categories: for a model with
        categorical features, one call routes the rounds up to the last one
        needed.  One DMatrix serves every call.
        """
        indptr = self._indptr
        sources = np.asarray(sources, dtype=np.int64)
        if indptr is None or not sources.size:
            return super().apply_sources(X, sources)
        n_rounds = indptr.shape[0] - 1
        rounds = np.unique(np.searchsorted(indptr, sources, side="right") - 1)
        if self._has_categories():
            runs = [(0, int(rounds[-1]) + 1)]
        else:
            runs = round_runs(rounds, n_rounds, _rows(X), indptr[-1] / n_rounds,
                              _LEAF_CALL_COST)
            if runs is None:
                return super().apply_sources(X, sources)
        dm = self._leaf_dmatrix(X)
        out = np.empty((dm.num_row(), sources.size), dtype=np.float32)
        for r0, r1 in runs:
            if r0 == 0:
                ids = self.booster.predict(dm, pred_leaf=True, iteration_range=(0, r1))
            else:
                ids = self.booster[r0:r1].predict(dm, pred_leaf=True)
            ids = np.asarray(ids).reshape(dm.num_row(), -1)
            sel = (sources >= indptr[r0]) & (sources < indptr[r1])
            out[:, sel] = ids[:, sources[sel] - indptr[r0]]
        return out

    def _has_categories(self) -> bool:
        types = self.booster.feature_types
        return bool(self.labels) or (types is not None and "c" in types)

    def _leaf_dmatrix(self, X):
        """The DMatrix ``apply`` routes: the sklearn wrapper's own (its
        ``missing``, feature types and categorical flag) or :meth:`_dmatrix`."""
        import xgboost as xgb

        if self.wrapper is not None and not _is_dmatrix(X) and not self._recodes(X):
            w = self.wrapper
            return xgb.DMatrix(X, missing=w.missing, feature_types=w.feature_types,
                               nthread=w.n_jobs, enable_categorical=w.enable_categorical)
        return self._dmatrix(X)

    def baseline(self, X):
        n = X.num_row() if _is_dmatrix(X) else X.shape[0]
        if self.n_outputs == 1:
            return np.full(n, self._base[0])
        return np.tile(self._base, (n, 1))

    def constant_baseline(self):
        return np.array(self._base[:self.n_outputs], dtype=np.float64)

    def predict_raw(self, X):
        if self.wrapper is not None and not _is_dmatrix(X) and not self._recodes(X):
            out = self.wrapper.predict(X, output_margin=True, iteration_range=self.iteration_range)
        else:
            out = self.booster.predict(
                self._dmatrix(X), output_margin=True, iteration_range=self.iteration_range
            )
        out = np.asarray(out, dtype=np.float64)
        if self.n_outputs == 1:
            return out.reshape(-1)
        return out.reshape(out.shape[0], self.n_outputs)

    missing_value = None   # the wrapper's ``missing`` when it is not NaN

    def rules_input(self, X):
        """:meth:`library_input`, with NaN where XGBoost reads the wrapper's
        ``missing`` value as missing (the DMatrix is built with it)."""
        X = self.library_input(X)
        if self.missing_value is None:
            return X
        X = np.array(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
        X[X == self.missing_value] = np.nan
        return X

    def library_input(self, X):
        """``X`` as the numbers XGBoost's trees compare.

        A scipy sparse matrix becomes a dense float64 array with NaN (missing)
        where no entry is stored; a DataFrame with columns XGBoost re-codes by
        label becomes float64 codes (a category XGBoost was not fitted with
        reads as the next training category in sorted order, and is an error
        after the last one, as in XGBoost 3.2).  Anything else is returned as is.
        """
        if sp.issparse(X):
            csr = sp.csr_matrix(X, copy=True)
            csr.sum_duplicates()
            dense = np.full(csr.shape, np.nan)
            rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
            dense[rows, csr.indices] = csr.data
            return dense
        if not self.labels or not hasattr(X, "iloc"):
            return X
        out = np.empty(X.shape, dtype=np.float64)
        for j in range(X.shape[1]):
            labels = self.labels.get(j)
            if labels:
                out[:, j] = coded_column(X, j, labels, unseen="next")
            else:
                out[:, j] = column_as_float(X, j)
        return out
