"""LightGBM adapter: ``LGBMModel`` (sklearn wrapper) and raw ``Booster``.

Read from ``Booster.dump_model()``.  LightGBM compares ``x <= threshold`` in
float64 (left).  Missing values depend on the node's ``missing_type``:

* ``"None"``: NaN is replaced by 0 and compared like any value;
* ``"NaN"``: NaN goes to the ``default_left`` side;
* ``"Zero"``: NaN and zero go to the ``default_left`` side.

Whatever the missing type, LightGBM reads every input value with
``|x| <= 1e-35`` (its ``kZeroThreshold``) as exactly 0: it drops them from the
rows it predicts on.  The conditions record this (``zero_threshold``).

A categorical split (``decision_type == "=="``, ``threshold`` like
``"1||3||5"``) sends the listed categories LEFT, everything else (other
categories, negative values, NaN) right; values are truncated to int.

Internal nodes are numbered by ``split_index`` and leaves by ``leaf_index``
(what ``pred_leaf`` returns; a single-leaf tree has no ``leaf_index`` and
returns 0).  Leaf values include the shrinkage, and boost-from-average is
folded into the first tree, so the baseline is 0.
"""
from __future__ import annotations

import numpy as np

from firecy.ensembles._tree import Adapter, Block, TreeStructure
from firecy.ensembles._condition import LIGHTGBM_ZERO_THRESHOLD, Condition


def _tree_structure(root: dict) -> tuple[TreeStructure, np.ndarray]:
    internal, leaves = [], []

    def collect(node):
        # Iterative walk: LightGBM trees can be deep (num_leaves up to 131072).
        stack = [node]
        while stack:
            nd = stack.pop()
            if "split_index" in nd:
                internal.append(nd)
                stack.append(nd["right_child"])
                stack.append(nd["left_child"])
            else:
                leaves.append(nd)

    collect(root)
    n_int = len(internal)
    n = n_int + len(leaves)

    def local(nd):
        if "split_index" in nd:
            return int(nd["split_index"])
        return n_int + int(nd.get("leaf_index", 0))

    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    values = np.zeros(n)
    leaf_id = np.full(n, -1, dtype=np.int64)
    cond_left = [None] * n
    cond_right = [None] * n
    for nd in internal:
        i = int(nd["split_index"])
        if i >= n_int:
            raise ValueError("unexpected LightGBM dump: split_index out of range")
        left[i] = local(nd["left_child"])
        right[i] = local(nd["right_child"])
        cond_left[i], cond_right[i] = _conditions(nd)
    for nd in leaves:
        j = local(nd)
        if j >= n:
            raise ValueError("unexpected LightGBM dump: leaf_index out of range")
        if "leaf_const" in nd:  # only linear trees carry a per-leaf model
            raise _linear_tree_error()
        values[j] = float(nd["leaf_value"])
        leaf_id[j] = j - n_int
    if n_int:  # the root must be node 0 (split_index 0)
        if int(root["split_index"]) != 0:
            raise ValueError("unexpected LightGBM dump: the root is not split 0")
    return TreeStructure(left, right, cond_left, cond_right, leaf_id), values


def _conditions(nd):
    f = int(nd["split_feature"])
    default_left = bool(nd.get("default_left", True))
    missing_type = str(nd.get("missing_type", "None"))
    if nd["decision_type"] == "==":
        cats = tuple(int(c) for c in str(nd["threshold"]).split("||") if c != "")
        kw = dict(dtype="float64", category_cast="trunc",
                  zero_threshold=LIGHTGBM_ZERO_THRESHOLD)
        return (
            Condition(f, "in", categories=cats, missing=False, **kw),
            Condition(f, "not in", categories=cats, missing=True, **kw),
        )
    if nd["decision_type"] != "<=":
        raise ValueError(f"unknown LightGBM decision_type {nd['decision_type']!r}")
    thr = float(nd["threshold"])
    if missing_type == "NaN":
        m, zero = default_left, False
    elif missing_type == "Zero":
        m, zero = default_left, True
    elif missing_type == "None":
        # NaN is read as 0.0 and compared with the threshold.
        m, zero = 0.0 <= thr, False
    else:
        raise ValueError(f"unknown LightGBM missing_type {missing_type!r}")
    kw = dict(dtype="float64", zero_as_missing=zero,
              zero_threshold=LIGHTGBM_ZERO_THRESHOLD)
    return (
        Condition(f, "<=", thr, missing=m, **kw),
        Condition(f, ">", thr, missing=not m, **kw),
    )


def _linear_tree_error():
    return ValueError(
        "LightGBM linear_tree models cannot be turned into rules: their leaves "
        "hold linear models, not constants"
    )


class LightGBMAdapter(Adapter):
    """LightGBM gbdt / rf / dart / goss models.

    Raw prediction: ``predict(X, raw_score=True)`` with the iterations the
    model predicts with (``best_iteration`` when set, else all), divided by
    the number of iterations in random-forest mode: LightGBM averages the
    trees of an ``rf`` model in ``predict`` but its ``raw_score`` output sums
    them, and the average is the model's actual margin.
    """

    source = "lightgbm"

    def __init__(self, model):
        import lightgbm as lgb

        if isinstance(model, lgb.LGBMModel):
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(model)
            booster = model.booster_
            names = getattr(model, "feature_names_in_", None)
        elif isinstance(model, lgb.Booster):
            booster = model
            names = None
        else:  # pragma: no cover - dispatch guarantees the type
            raise TypeError(f"not a LightGBM model: {type(model)!r}")
        self.booster = booster
        if booster.params.get("linear_tree") in (True, "true", "True", 1, "1"):
            raise _linear_tree_error()

        best = int(getattr(booster, "best_iteration", 0) or 0)
        n_iter = best if best > 0 else int(booster.current_iteration())
        if n_iter <= 0:
            raise ValueError("the LightGBM model has no trees")
        self.num_iteration = n_iter
        dump = booster.dump_model(num_iteration=n_iter)
        K = int(dump.get("num_tree_per_iteration", 1))
        self.n_outputs = K
        self.average = bool(dump.get("average_output", False))
        self.n_features_in = int(dump.get("max_feature_idx", -1)) + 1
        if names is None:
            names = dump.get("feature_names") or booster.feature_name()
        self.feature_names = [str(s) for s in names] if names is not None else None
        self.raw_prediction = (
            "predict(X, raw_score=True) / n_iterations" if self.average
            else "predict(X, raw_score=True)"
        )
        scale = 1.0 / n_iter if self.average else 1.0

        blocks = []
        for t, info in enumerate(dump["tree_info"]):
            struct, values = _tree_structure(info["tree_structure"])
            # Trees are laid out iteration-major: tree t belongs to class t % K.
            blocks.append(Block(struct, values, t % K, scale, t))
        self.blocks = blocks

    def apply(self, X):
        ids = self.booster.predict(X, pred_leaf=True, num_iteration=self.num_iteration)
        ids = np.asarray(ids)
        return ids.reshape(ids.shape[0], -1)

    def baseline(self, X):
        n = X.shape[0]
        return np.zeros(n) if self.n_outputs == 1 else np.zeros((n, self.n_outputs))

    def predict_raw(self, X):
        out = self.booster.predict(X, raw_score=True, num_iteration=self.num_iteration)
        out = np.asarray(out, dtype=np.float64)
        if self.average:
            out = out / self.num_iteration
        return out
