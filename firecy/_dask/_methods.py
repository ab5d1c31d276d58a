"""predict, decision_function, predict_proba, transform, score and the rules'
supports on Dask collections: the in-memory method per partition, lazily.

A Dask array in gives a Dask array out (row chunks kept); a Dask DataFrame
gives a Dask Series (one output) or DataFrame (several), on the partitions and
index of X.  The estimator enters the graph once, as one key every partition's
task reads.
"""
import numpy as np

from firecy._dask._parts import aligned, as_1d, check_rows, is_frame, row_partitions

__all__ = ["dask_method", "dask_score", "rule_supports"]


def _out_shape(est, name):
    """``(width or None for 1-D, dtype, column names)`` of ``est.<name>`` output."""
    classes = getattr(est, "classes_", None)
    if name == "predict":
        return None, (classes.dtype if classes is not None else np.dtype(np.float64)), None
    if name == "transform":
        names = list(est.get_feature_names_out())
        return len(names), np.dtype(np.float64), names
    K = len(classes)
    if name == "decision_function" and K == 2:
        return None, np.dtype(np.float64), None
    return K, np.dtype(np.float64), [str(c) for c in classes]


def _apply(x, est, name, width, dtype):
    if len(x) == 0:
        return np.empty((0,) if width is None else (0, width), dtype=dtype)
    return np.asarray(getattr(est, name)(x))


def _apply_frame(x, est, name, width, dtype, columns, label):
    import pandas as pd

    out = _apply(x, est, name, width, dtype)
    if width is None:
        return pd.Series(out, index=x.index, name=label, dtype=dtype)
    return pd.DataFrame(out, index=x.index, columns=columns)


def dask_method(est, name, X):
    """``est.<name>(X)`` per row partition of the Dask collection ``X``, lazily."""
    import dask
    import dask.array as da

    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    width, dtype, columns = _out_shape(est, name)
    est_d = dask.delayed(est, pure=True)
    parts, lengths = row_partitions(X)
    if is_frame(X):
        import dask.dataframe as dd
        import pandas as pd

        label = name if width is None else None
        if width is None:
            meta = pd.Series(np.empty(0, dtype=dtype), name=label, dtype=dtype)
        else:
            meta = pd.DataFrame(np.empty((0, width), dtype=dtype), columns=columns)
        outs = [dask.delayed(_apply_frame)(p, est_d, name, width, dtype, columns, label)
                for p in parts]
        divisions = X.divisions if X.known_divisions else None
        return dd.from_delayed(outs, meta=meta, divisions=divisions, verify_meta=False)
    if lengths is None:
        lengths = (np.nan,) * len(parts)
    blocks = [da.from_delayed(dask.delayed(_apply)(p, est_d, name, width, dtype),
                              shape=(m,) if width is None else (m, width), dtype=dtype)
              for p, m in zip(parts, lengths)]
    return da.concatenate(blocks, axis=0)


def _score_task(i, x, y, w, est, classify):
    y, w = as_1d(y), as_1d(w)
    n = check_rows(i, x, y, w)
    if n == 0:
        return None
    pred = est.predict(x)
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    W = float(w.sum())
    if classify:
        return W, float(w @ (pred == y))
    y = np.asarray(y, dtype=np.float64)
    mean = float(w @ y) / W if W > 0 else 0.0
    return W, mean, float(w @ (y - mean) ** 2), float(w @ (y - pred) ** 2)


def dask_score(est, X, y, sample_weight=None):
    """``est.score`` on Dask collections: R^2 (regressor) or accuracy
    (classifier) from per-partition sums, as a float."""
    import dask

    from firecy._dask._fit import _is_classifier

    classify = _is_classifier(est)
    xp, yp, wp, _ = aligned(X, y, sample_weight)
    est_d = dask.delayed(est, pure=True)
    res = [r for r in dask.compute(*[dask.delayed(_score_task)(i, xp[i], yp[i], wp[i], est_d,
                                                               classify)
                                     for i in range(len(xp))]) if r is not None]
    if classify:
        return sum(r[1] for r in res) / sum(r[0] for r in res)
    # pooled weighted variance (Chan et al.): exact, no cancellation
    W = mean = m2 = 0.0
    sse = 0.0
    for Wi, mi, m2i, ssei in res:
        if Wi <= 0:
            continue
        delta = mi - mean
        tot = W + Wi
        mean += delta * Wi / tot
        m2 += m2i + delta * delta * W * Wi / tot
        W = tot
        sse += ssei
    if m2 == 0.0:
        return 1.0 if sse == 0.0 else 0.0   # sklearn's r2_score convention
    return 1.0 - sse / m2


def _support_task(x, w, est, kept):
    w = as_1d(w)
    if len(x) == 0:
        return np.zeros(len(kept)), 0.0
    Xm = est._validate_predict_data(x)
    ens = est.ensemble_
    tree = np.searchsorted(np.asarray(ens.block_ptr), kept, side="right") - 1
    blocks, at = np.unique(tree, return_inverse=True)
    table = ens.leaf_table(Xm, blocks=blocks)  # the kept rules' trees only
    lands = table[:, at] == kept[None, :]
    if w is None:
        return lands.sum(axis=0).astype(np.float64), float(len(x))
    w = np.asarray(w, dtype=np.float64)
    return w @ lands, float(w.sum())


def _support_reduce(pieces):
    total = sum(p[1] for p in pieces)
    return sum(p[0] for p in pieces) / total if total > 0 else np.full(len(pieces[0][0]), np.nan)
