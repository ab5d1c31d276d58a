"""XGBoost's stored categories, read back: :func:`decode_categories`.

An XGBoost model fitted on a pandas frame with category columns stores each
column's labels (its "category container") in the model's JSON; a new frame
is re-coded by label.  Which bytes the container holds depends on the
XGBoost version that wrote it (below), so the writer's version is read too.
"""
from __future__ import annotations

import numpy as np

from firecy.ensembles._reading import sorted_labels

__all__ = ["decode_categories", "writer_version"]


# XGBoost 3.4 stores a string category container with byte offsets into its
# UTF-8 text.  XGBoost 3.1 to 3.3 built the container of a pandas frame with
# offsets counted in code points, and kept only as many bytes as there are
# code points: a label that is not ASCII is stored cut and shifted (dmlc/xgboost
# #12371).  An Arrow or polars frame was stored right, even then.
_EXACT_UTF8_SINCE = (3, 4, 0)


def writer_version(model_json: dict) -> tuple:
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


def decode_categories(cats, n_features, names, version=(0, 0, 0), X=None):
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
