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

Pandas categoricals: LightGBM keeps the training categories of every category
column (``pandas_categorical``) and re-codes a new frame by label (a label it
does not know becomes NaN).  The i-th category column of a frame gets the
i-th list, whichever feature it is; the features are matched to the lists
when LightGBM treats exactly that many features as categorical (the usual
case), and the conditions on them then hold labels.

``dump_model`` clamps every threshold to [-1e300, 1e300] (LightGBM's
``AvoidInf``) while ``predict`` compares with the threshold itself: a
threshold the dump gives as +-1e300 is read from the model text
(``model_to_string``, 17 significant digits), which holds it exactly.

Internal nodes are numbered by ``split_index`` and leaves by ``leaf_index``
(what ``pred_leaf`` returns; a single-leaf tree has no ``leaf_index`` and
returns 0).  Leaf values include the shrinkage.

LightGBM folds boost-from-average into the leaves of each class's first tree.
For the regression objectives that constant is the target's location (its
mean, median, or log-mean for the log-link objectives), set by where the
target's origin lies rather than by the model: left in the leaves, the first
tree's rules carry values orders of magnitude above every other tree's (log
house prices: 11 against 0.02), the penalty barely weighs them, and FIRE's
regularisation path runs out before it reaches the other trees; a shift of
the target would change the rules FIRE keeps.  For these objectives the
adapter moves the first tree's root value (``internal_value``: the folded
constant plus the root's own shrunk output, which least squares makes 0)
from its leaves to the baseline: predictions are unchanged, the first tree's
rules are on the scale of the others.  The classification objectives'
constant (the base rate's log-odds) is on the margin's own scale and no
change of units moves it: it stays folded, as it does in random-forest mode,
where every tree carries the mean alike.
"""
from __future__ import annotations

import functools
import json
import math
import warnings

import numpy as np

from firecy.ensembles._condition import LIGHTGBM_ZERO_THRESHOLD, Condition
from firecy.ensembles._reading import codes_from_labels, column_as_float
from firecy.ensembles._tree import Adapter, Block, SplitRule, TreeStructure, round_runs

# One leaf call's fixed cost in tree-row walks: about 1.8 ms, the walk of
# 70,000 rows through one 31-leaf tree (LightGBM 4.7, one thread;
# benchmarks/speed/predict_routing.py).  A DataFrame is converted at every call.
_LEAF_CALL_COST = 70_000


def _tree_structure(root: dict, split_rule, exact_thresholds=None
                    ) -> tuple[TreeStructure, np.ndarray]:
    """The tree ``root`` of the dump; ``exact_thresholds()``: this tree's
    thresholds by split index, read from the model text, called only for a
    threshold the dump clamped (module docstring)."""
    internal, leaves = [], []
    # Iterative walk: LightGBM trees can be deep (num_leaves up to 131072).
    stack = [root]
    while stack:
        nd = stack.pop()
        if "split_index" in nd:
            internal.append(nd)
            stack.append(nd["right_child"])
            stack.append(nd["left_child"])
        else:
            leaves.append(nd)
    n_int = len(internal)
    n = n_int + len(leaves)

    def local(nd):
        if "split_index" in nd:
            return int(nd["split_index"])
        return n_int + int(nd.get("leaf_index", 0))

    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    feature = np.zeros(n, dtype=np.int64)
    threshold = np.zeros(n)
    missing_left = np.zeros(n, dtype=bool)
    zero_as_missing = np.zeros(n, dtype=bool)
    values = np.zeros(n)
    leaf_id = np.full(n, -1, dtype=np.int64)
    special = {}
    for nd in internal:
        i = int(nd["split_index"])
        if i >= n_int:
            raise ValueError("unexpected LightGBM dump: split_index out of range")
        left[i] = local(nd["left_child"])
        right[i] = local(nd["right_child"])
        f = int(nd["split_feature"])
        feature[i] = f
        if nd["decision_type"] == "==":
            special[i] = _categorical_conditions(nd, split_rule.labels.get(f, ()))
            continue
        if nd["decision_type"] != "<=":
            raise ValueError(f"unknown LightGBM decision_type {nd['decision_type']!r}")
        thr = float(nd["threshold"])
        if abs(thr) >= _DUMP_CLAMP:
            thr = _unclamped(thr, exact_thresholds, i)
        missing_type = str(nd.get("missing_type", "None"))
        default_left = bool(nd.get("default_left", True))
        threshold[i] = thr
        if missing_type == "NaN":
            missing_left[i] = default_left
        elif missing_type == "Zero":
            missing_left[i], zero_as_missing[i] = default_left, True
        elif missing_type == "None":
            # NaN is read as 0.0 and compared with the threshold.
            missing_left[i] = 0.0 <= thr
        else:
            raise ValueError(f"unknown LightGBM missing_type {missing_type!r}")
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
    struct = TreeStructure(left, right, feature, threshold, missing_left, split_rule,
                           leaf_id=leaf_id, zero_as_missing=zero_as_missing, special=special)
    return struct, values


# dump_model writes every threshold beyond +-1e300 as +-1e300 (AvoidInf)
_DUMP_CLAMP = 1e300


def _unclamped(thr, exact_thresholds, i):
    """The exact threshold of split ``i`` whose dump value ``thr`` is clamped."""
    exact = exact_thresholds() if exact_thresholds is not None else None
    if exact is None or i >= len(exact):
        raise ValueError("unexpected LightGBM model text: a threshold missing")
    value = float(exact[i])
    # the model text's value must be the one the dump clamped
    if not (abs(value) >= _DUMP_CLAMP and math.copysign(1.0, value) == math.copysign(1.0, thr)):
        raise ValueError(f"unexpected LightGBM model text: threshold {value!r} where "
                         f"the dump has {thr!r}")
    return value


def _model_text_thresholds(booster, n_iter):
    """``[thresholds of tree t by split index]`` from ``model_to_string``
    (the ``threshold=`` line of each ``Tree=`` block)."""
    thresholds, tree = [], None
    for line in booster.model_to_string(num_iteration=n_iter).splitlines():
        if line.startswith("Tree="):
            tree = int(line[5:])
            if tree != len(thresholds):
                raise ValueError("unexpected LightGBM model text: trees out of order")
            thresholds.append(None)
        elif line.startswith("threshold=") and tree is not None:
            thresholds[tree] = [float(v) for v in line[10:].split()]
        elif line == "end of trees":
            break
    return thresholds


def _categorical_conditions(nd, labels):
    """(left, right) of a categorical split: the listed categories go LEFT."""
    f = int(nd["split_feature"])
    cats = tuple(int(c) for c in str(nd["threshold"]).split("||") if c != "")
    if labels:
        # a code beyond the training categories has no label, and no row
        # re-coded by label carries it
        cats = tuple(labels[c] for c in cats if 0 <= c < len(labels))
    kw = dict(dtype="float64", category_cast="trunc",
              zero_threshold=LIGHTGBM_ZERO_THRESHOLD, labels=labels)
    return (Condition(f, "in", categories=cats, missing=False, **kw),
            Condition(f, "not in", categories=cats, missing=True, **kw))


def _dump_model(booster, n_iter):
    """``Booster.dump_model``, with a clear error where LightGBM writes bad JSON."""
    try:
        return booster.dump_model(num_iteration=n_iter)
    except json.JSONDecodeError:
        bad = [n for n in booster.feature_name() if any(ord(ch) < 32 for ch in n)]
        if not bad:
            raise
        raise ValueError(
            f"LightGBM cannot describe this model: the feature names {bad!r} hold "
            "control characters (tabs, ...), which its JSON dump does not escape; "
            "rename these columns before fitting"
        ) from None


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def _codes(values):
    """The category codes of a feature_infos "values" entry (a list or a
    "a:b:c" string, depending on the LightGBM version)."""
    if isinstance(values, str):
        values = values.split(":")
    return [int(float(v)) for v in values if str(v) != ""]


def _feature_labels(dump, pandas_categorical, names):
    """``{feature: labels}`` for the features LightGBM re-codes by label."""
    lists = [tuple(_plain(v) for v in cats) for cats in (pandas_categorical or [])]
    if not lists:
        return {}
    infos = dump.get("feature_infos", {}) or {}
    categorical = [f for f, name in enumerate(names or [])
                   if isinstance(infos.get(name), dict) and infos[name].get("values")]
    paired = dict(zip(categorical, lists))
    # LightGBM pairs its label lists with the frame's category columns in
    # order, ordered ones included, while only unordered ones (or an explicit
    # categorical_feature list) split by category: equal counts can still
    # pair a list with the wrong feature. A feature whose split codes reach
    # beyond its list's length shows that; the counts alone cannot.
    if len(categorical) == len(lists) and all(
            max(_codes(infos[names[f]]["values"]), default=-1) < len(labels)
            for f, labels in paired.items()):
        return paired
    warnings.warn(
        f"the LightGBM model was fitted on a DataFrame with {len(lists)} category "
        f"column(s) and treats {len(categorical)} feature(s) as categorical, not "
        "those columns one for one (ordered categoricals, or an explicit "
        "categorical_feature): firecy cannot tell which features LightGBM "
        "re-codes by label, so rules print category codes. "
        "Evaluating rules on a DataFrame (RuleEnsemble.rule_mask) still re-codes it "
        "as LightGBM does.",
        UserWarning,
        stacklevel=4,
    )
    return {}


def lightgbm_feature_name(name) -> str:
    """The name LightGBM gives a DataFrame column (what ``feature_name()`` returns).

    LightGBM replaces every space by ``_``, and its model text ends a name at
    the first line break or NUL.
    """
    name = str(name)
    for stop in ("\n", "\r", "\x00"):
        k = name.find(stop)
        if k >= 0:
            name = name[:k]
    return name.replace(" ", "_")


def _linear_tree_error():
    return ValueError(
        "LightGBM linear_tree models cannot be turned into rules: their leaves "
        "hold linear models, not constants"
    )


# Objectives (as the dump names them) whose boost-from-average constant is
# the target's location: moved to the baseline (module docstring).
_LOCATION_OBJECTIVES = frozenset({
    "regression", "regression_l1", "huber", "fair", "quantile", "mape",
    "poisson", "gamma", "tweedie",
})


class LightGBMAdapter(Adapter):
    """LightGBM gbdt / rf / dart / goss models.

    Raw prediction: ``predict(X, raw_score=True)`` with the iterations the
    model predicts with (``best_iteration`` when set, else all), divided by
    the number of iterations in random-forest mode: LightGBM averages the
    trees of an ``rf`` model in ``predict`` but its ``raw_score`` output sums
    them, and the average is the model's actual margin.
    """

    source = "lightgbm"
    pandas_categorical = None
    _base = None  # an adapter pickled before the baseline was read has none

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
        dump = _dump_model(booster, n_iter)
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
        self.pandas_categorical = [
            tuple(_plain(v) for v in cats)
            for cats in (getattr(booster, "pandas_categorical", None) or [])
        ]
        self.labels = _feature_labels(dump, self.pandas_categorical,
                                      dump.get("feature_names") or booster.feature_name())
        self.split_rule = SplitRule("<=", ">", "float64", LIGHTGBM_ZERO_THRESHOLD,
                                    labels=self.labels)

        blocks = []
        self._base = np.zeros(K)
        objective = str(dump.get("objective", "")).split(" ")[0]
        move = objective in _LOCATION_OBJECTIVES and not self.average
        # read (once) only when the dump clamped a threshold
        text_thresholds = functools.cache(lambda: _model_text_thresholds(booster, n_iter))
        for t, info in enumerate(dump["tree_info"]):
            root = info["tree_structure"]
            struct, values = _tree_structure(
                root, self.split_rule,
                lambda t=t: (text_thresholds()[t] if t < len(text_thresholds()) else None))
            if t < K and move and "split_index" in root:
                # boost-from-average lives in these leaves (module docstring)
                c = float(root.get("internal_value", 0.0))
                values[struct.left < 0] -= c
                self._base[t] = c
            # Trees are laid out iteration-major: tree t belongs to class t % K.
            blocks.append(Block(struct, values, t % K, scale, t))
        self.blocks = blocks

    def apply(self, X):
        ids = self.booster.predict(X, pred_leaf=True, num_iteration=self.num_iteration)
        ids = np.asarray(ids)
        return ids.reshape(ids.shape[0], -1)

    def apply_sources(self, X, sources):
        """Leaf ids of the trees ``sources`` only: one leaf call per run of
        iterations (``start_iteration``, ``num_iteration``) holding them."""
        sources = np.asarray(sources, dtype=np.int64)
        if not sources.size:
            return super().apply_sources(X, sources)
        K = self.n_outputs  # trees per iteration
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        runs = round_runs(np.unique(sources // K), self.num_iteration, n, K,
                          _LEAF_CALL_COST)
        if runs is None:
            return super().apply_sources(X, sources)
        out = np.empty((n, sources.size), dtype=np.int32)
        for r0, r1 in runs:
            ids = self.booster.predict(X, pred_leaf=True, start_iteration=r0,
                                       num_iteration=r1 - r0)
            ids = np.asarray(ids).reshape(n, -1)
            sel = (sources >= r0 * K) & (sources < r1 * K)
            out[:, sel] = ids[:, sources[sel] - r0 * K]
        return out

    def baseline(self, X):
        base = self.constant_baseline()
        if self.n_outputs == 1:
            return np.full(X.shape[0], base[0])
        return np.tile(base, (X.shape[0], 1))

    def constant_baseline(self):
        return np.zeros(self.n_outputs) if self._base is None else self._base.copy()

    def predict_raw(self, X):
        out = self.booster.predict(X, raw_score=True, num_iteration=self.num_iteration)
        out = np.asarray(out, dtype=np.float64)
        if self.average:
            out = out / self.num_iteration
        return out

    def library_input(self, X):
        """A DataFrame re-coded as LightGBM does, as float64; anything else as is.

        The i-th category column of the frame is re-coded by label with the
        i-th list of training categories (a label not in it becomes NaN); a
        frame with a different number of category columns is refused, as
        LightGBM refuses it.
        """
        if not hasattr(X, "iloc") or not hasattr(X, "dtypes"):
            return X
        cat_cols = [j for j, dt in enumerate(X.dtypes)
                    if getattr(dt, "name", None) == "category"]
        lists = self.pandas_categorical or []
        if lists and len(cat_cols) != len(lists):
            raise ValueError(
                f"X has {len(cat_cols)} category column(s), the LightGBM model was "
                f"fitted with {len(lists)}: LightGBM refuses such data"
            )
        out = np.empty(X.shape, dtype=np.float64)
        for j in range(X.shape[1]):
            out[:, j] = column_as_float(X, j)
        for j, cats in zip(cat_cols, lists):
            s = X.iloc[:, j]
            pos = codes_from_labels(list(s.cat.categories), cats)
            codes = s.cat.codes.to_numpy()
            col = np.full(codes.shape[0], np.nan)
            col[codes >= 0] = pos[codes[codes >= 0]]
            out[:, j] = col
        return out
