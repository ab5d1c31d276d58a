"""``fit`` on Dask collections: exact on small data, sample-select-refit on large.

The method (``docs/dask.rst``):

* At most ``sample_size`` rows: the partitions are gathered and the ordinary
  in-memory fit runs; its rules and weights are the in-memory fit's exactly.
* More rows: a deterministic Bernoulli sample of about ``sample_size`` rows
  (a hash of each row's global position and ``random_state``, so it does not
  depend on the partitioning; classes with few rows are kept in full and the
  sample reweighted) is gathered and the in-memory FIRE (ensemble if not
  fitted, rule depth, cross-validated selection) runs on it.  One pass over
  all rows, per partition, then computes the kept rules' columns (from the
  partition's leaf table: rows x trees at most), the rules' supports and the
  loss of the sample's model on the rows outside the sample (an honest
  validation error); the kept rules' weights (and the kept linear terms'
  slopes) and the intercept are refitted, unpenalised, on all rows from
  per-partition reductions: the k x k Gram of the kept terms (squared loss)
  or a few Newton steps (logistic loss), k being the number of kept terms.
"""
import numbers
import time
import warnings

import numpy as np
import scipy.linalg
from scipy.special import expit

from firecy._dask._parts import aligned, as_1d, check_rows, concat, partition_lengths
from firecy.rules import tree_of, unknown_outside_blocks

__all__ = ["fit_dask", "default_sample_size"]

_MAX_SAMPLE = 1_000_000
_MIN_SAMPLE = 10_000
# bytes per (sample row, tree) of an in-memory fit: leaf ids and table
# (12), the CSC design (12) and its fold copies; a generous 64
_BYTES_PER_ENTRY = 64
# (sample row, tree) entries the default selection is given: the cost of the
# cross-validated path grows with them (friedman1, 500 depth-3 trees: 13 s of
# CPU at 10,000 rows, 31 s at 30,000, 166 s at 100,000) while the test error of
# the refitted rules stops improving by 10,000-30,000 rows
# (benchmarks/scale/RESULTS.md); 25e6 is 50,000 rows at 500 trees
_SELECTION_ENTRIES = 25_000_000
# rows of a class below which the class is kept in full in the sample
_MIN_CLASS_ROWS = 1000


# Kept rules can be exactly collinear (a depth-1 rule and its two depth-2
# children under a union of depths, with the intercept): the refit then takes
# the minimum-norm solution, not one fixed by rounding.  Relative to the
# largest singular value of the Gram (or Hessian), the square of the design's
# condition: exact collinearity rounds to ~1e-16, a full-rank design of
# condition up to 1e6 stays full rank.
_RANK_TOL = 1e-12

def default_sample_size(estimator):
    """Rows a sampled fit selects on: ``sample_size="auto"``.

    The smaller of ``25e6 / n_trees`` (the selection's cost; 50,000 rows at
    500 trees) and ``firecy.ensembles.memory_budget()`` over 64 bytes per
    (row, tree) (its memory), kept in [1e4, 1e6]; ``n_trees`` is the model's
    ``n_estimators`` (500 when unknown).
    """
    from firecy.ensembles import memory_budget

    budget = memory_budget()
    model = _unfrozen(estimator.estimator)
    n_trees = getattr(model, "n_estimators", None) if model is not None else 500
    if not isinstance(n_trees, numbers.Integral) or n_trees < 1:
        n_trees = 500
    rows = _SELECTION_ENTRIES // n_trees
    if budget is not None:
        rows = min(rows, budget // (_BYTES_PER_ENTRY * n_trees))
    return int(min(_MAX_SAMPLE, max(_MIN_SAMPLE, rows)))


def _seed(random_state):
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(np.random.RandomState(random_state).randint(0, 2**31 - 1))  # noqa: NPY002


def uniforms(offset, n, seed):
    """U(0, 1) per row from its global position (splitmix64): partition-free."""
    with np.errstate(over="ignore"):
        z = np.arange(offset, offset + n, dtype=np.uint64)
        z = z + np.uint64((seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % 2**64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


# by class name: firecy.estimators imports this package, not the reverse
def _classes_of(est):
    return {c.__name__ for c in type(est).__mro__}


def _is_classifier(est):
    return "FIREClassifier" in _classes_of(est)


def _check_supported(est):
    names = _classes_of(est)
    if not names & {"FIRERegressor", "FIREClassifier"} or names & {
            "FIREPoissonRegressor", "FIRESurvivalRegressor"}:
        raise TypeError(
            f"{type(est).__name__}.fit does not take Dask collections; FIRERegressor and "
            "FIREClassifier do (compute the data first, e.g. X.compute())")
    if getattr(est, "confirmatory", None):
        raise NotImplementedError(
            "confirmatory= is not available for Dask collections yet: compute the data "
            "first (e.g. X.compute())")


# -- per-partition tasks ---------------------------------------------------------
def _codes(i, y, classes):
    """Class index of each label; an error for a label the sample did not see."""
    codes = np.searchsorted(classes, y)
    codes = np.minimum(codes, len(classes) - 1)
    bad = classes[codes] != y
    if np.any(bad):
        raise ValueError(
            f"row partition {i}: label {y[np.flatnonzero(bad)[0]]!r} is not among the "
            f"classes found in y {list(classes)[:10]}")
    return codes


def _stats_task(i, x, y, w, classify):
    """Rows, and per-class (or total) weights, checking what comes cheap."""
    y, w = as_1d(y), as_1d(w)
    n = check_rows(i, x, y, w)
    if w is not None and n and not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError(f"row partition {i}: sample_weight has negative or non-finite values")
    if not classify:
        return n, None
    if n and y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(f"row partition {i}: Input y contains NaN")
    classes, counts = np.unique(y, return_counts=True)
    return n, (classes, counts)


def _sample_task(i, x, y, w, offset, seed, rates, classes):
    y, w = as_1d(y), as_1d(w)
    n = check_rows(i, x, y, w)
    u = uniforms(offset, n, seed)
    rate = rates[0] if classes is None else rates[_codes(i, y, classes)]
    keep = np.flatnonzero(u < rate)
    xs = x.iloc[keep] if hasattr(x, "iloc") else np.asarray(x)[keep]
    ys = y[keep]
    ws = None if w is None else w[keep]
    return xs, ys, ws, (None if classes is None else rate[keep])


def _compact_task(i, x, y, w, est, kept, offset, seed, rates, classify, kept_lin=()):
    """One all-rows pass over partition ``i``: what the refit and the report need.

    Returns the kept rules' indicators (bit-packed, rows x ceil(k/8) bytes),
    the target (y - baseline, or class codes and the baseline), the weights,
    the rows outside the sample, the weighted count of rows per design
    column of the kept rules' trees (the rules' supports) and the rows'
    total weight.
    """
    y, w = as_1d(y), as_1d(w)
    n = check_rows(i, x, y, w)
    ens = est.ensemble_
    R = len(ens.leaf_values)
    if n == 0:
        return None
    if classify:
        codes = _codes(i, y, est.classes_)
    else:
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError(f"row partition {i}: Input y contains NaN or infinity")
    try:
        Xm = est._validate_predict_data(x)
    except ValueError as err:
        raise ValueError(f"row partition {i}: {err}") from err
    # the kept rules' trees only (a few of hundreds): the supports the
    # report reads are the kept rules', and the refit needs no other column
    tree = np.searchsorted(np.asarray(ens.block_ptr), kept, side="right") - 1
    blocks, at = np.unique(tree, return_inverse=True)
    table = ens.leaf_table(Xm, blocks=blocks) if blocks.size \
        else np.empty((n, 0), dtype=np.int32)
    base = np.asarray(ens.baseline(Xm), dtype=np.float64)
    T = table.shape[1]
    counts = np.bincount(table.reshape(-1), weights=None if w is None else np.repeat(w, T),
                         minlength=R).astype(np.float64)
    lands = table[:, at] == kept[None, :]
    del table
    u = uniforms(offset, n, seed)
    rate = rates[0] if not classify else rates[codes]
    out = {
        "bits": np.packbits(lands, axis=1),
        # the kept linear terms' values (clipped, centred): their slopes refit too
        "lin": est.linear_terms_.centered(Xm)[:, list(kept_lin)] if len(kept_lin) else None,
        "w": None if w is None else np.asarray(w, dtype=np.float64),
        "outside": u >= rate,
        "counts": counts,
        "weight": float(n if w is None else np.sum(w)),
    }
    if classify:
        out["code"] = codes.astype(np.int32)
        out["base"] = base
    else:
        out["r"] = y - base
    return out


def _design(c, values, fit_intercept):
    k = len(values)
    lands = np.unpackbits(c["bits"], axis=1, count=k).astype(np.float64)
    Z = lands * values[None, :]
    if c.get("lin") is not None:
        Z = np.column_stack([Z, c["lin"]])
    if fit_intercept:
        Z = np.column_stack([Z, np.ones(Z.shape[0])])
    return Z


def _squared_task(c, values, fit_intercept, beta_sample):
    if c is None:
        return None
    Z = _design(c, values, fit_intercept)
    w = np.ones(Z.shape[0]) if c["w"] is None else c["w"]
    r = c["r"]
    res = r - Z @ beta_sample
    out = c["outside"]
    return {"G": Z.T @ (Z * w[:, None]), "b": Z.T @ (w * r), "rr": float(w @ (r * r)),
            "hold": float(w[out] @ (res[out] ** 2)), "hold_w": float(w[out].sum())}


def _logistic_task(c, values, fit_intercept, beta, beta_sample=None):
    if c is None:
        return None
    Z = _design(c, values, fit_intercept)
    w = np.ones(Z.shape[0]) if c["w"] is None else c["w"]
    yy = c["code"].astype(np.float64)
    eta = c["base"] + Z @ beta
    p = expit(eta)
    loss = float(w @ (np.logaddexp(0.0, eta) - yy * eta))
    out = {"loss": loss, "g": Z.T @ (w * (p - yy)),
           "H": Z.T @ (Z * (w * p * (1.0 - p))[:, None])}
    if beta_sample is not None:
        o = c["outside"]
        eta_s = c["base"][o] + Z[o] @ beta_sample
        out["hold"] = float(w[o] @ (np.logaddexp(0.0, eta_s) - yy[o] * eta_s))
        out["hold_w"] = float(w[o].sum())
    return out


def _counts(c):
    return None if c is None else (c["counts"], c["weight"])


def _sum(results, key):
    vals = [r[key] for r in results if r is not None]
    return sum(vals[1:], vals[0]) if vals else 0.0


# -- the fit ---------------------------------------------------------------------
def _unfrozen(model):
    """A ``FrozenEstimator``'s model, else ``model`` itself.

    Only a FrozenEstimator is unwrapped: other models' ``estimator``
    attribute means something else (a forest's is its base tree).
    """
    if type(model).__name__ == "FrozenEstimator":
        return model.estimator
    return model


def _local_model(model):
    """An ``xgboost.dask`` model's Booster: its ``apply`` takes in-memory rows."""
    inner = _unfrozen(model)
    if inner is not None and type(inner).__module__.startswith("xgboost.dask"):
        try:
            return inner.get_booster()
        except Exception:   # not fitted: fitted on the sample as it is
            return model
    return model


def fit_dask(est, X, y, sample_weight=None, *, sample_size="auto", refit=True,
             progress=None):
    """Fit ``est`` (a FIRERegressor or FIREClassifier) on Dask collections; see
    :func:`firecy.dask.fit_dask`."""
    _check_supported(est)
    given = est.estimator
    est.estimator = _local_model(given)
    try:
        return _fit(est, X, y, sample_weight, sample_size, refit, progress)
    finally:
        est.estimator = given


def _fit(est, X, y, sample_weight, sample_size, refit, progress):
    import dask

    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None")
    if sample_size == "auto" or sample_size is None:
        sample_size = default_sample_size(est)
    if not isinstance(sample_size, numbers.Integral) or sample_size < 2:
        raise ValueError(f"sample_size must be an int >= 2 or 'auto', got {sample_size!r}")
    classify = _is_classifier(est)
    xp, yp, wp, lengths = aligned(X, y, sample_weight)
    if lengths is None:
        lengths = partition_lengths(xp)
    n = int(sum(lengths))

    if n <= sample_size:
        # exact: the ordinary fit on every row
        pieces = dask.compute(xp, yp, wp)
        xs, ys, ws = pieces
        for i in range(len(xs)):
            check_rows(i, xs[i], ys[i], ws[i])
        Xc = concat(xs)
        yc = concat([np.asarray(as_1d(v)) for v in ys])
        wc = None if sample_weight is None else concat([as_1d(v) for v in ws])
        est.fit(Xc, yc, sample_weight=wc, progress=progress)
        est.dask_info_ = {"n_rows": n, "sample_rows": n, "sampled": False, "refit": False,
                          "n_partitions": len(xp)}
        return est

    t0 = time.perf_counter()
    seed = _seed(est.random_state)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    p = sample_size / n
    # pass 1: row checks; the classes and their weights
    stats = dask.compute(*[dask.delayed(_stats_task)(i, xp[i], yp[i], wp[i], classify)
                           for i in range(len(xp))])
    classes = None
    rates = np.array([p])
    if classify:
        found = [s[1] for s in stats if s[1] is not None and len(s[1][0])]
        classes = np.unique(np.concatenate([f[0] for f in found]))
        counts = np.zeros(len(classes), dtype=np.int64)
        for cl, ct in found:
            counts[np.searchsorted(classes, cl)] += ct
        # stratified: a class of few rows enters the sample whole
        rates = np.minimum(1.0, np.maximum(p, _MIN_CLASS_ROWS / np.maximum(counts, 1)))
    # pass 2: the sample, gathered on the client
    parts = dask.compute(*[dask.delayed(_sample_task)(i, xp[i], yp[i], wp[i], int(offsets[i]),
                                                      seed, rates, classes)
                           for i in range(len(xp))])
    Xs = concat([q[0] for q in parts])
    ys = concat([np.asarray(q[1]) for q in parts])
    ws = None if sample_weight is None else concat([q[2] for q in parts])
    if classify and np.any(rates > p):
        # rows of a boosted class count 1/rate times less (relative to p)
        inv = p / concat([q[3] for q in parts])
        ws = inv if ws is None else ws * inv
    del parts
    t_fit = time.perf_counter()
    t_gather = t_fit - t0
    est.fit(Xs, ys, sample_weight=ws, progress=progress)
    t_fit = time.perf_counter() - t_fit
    t1 = time.perf_counter()
    n_sample = len(ys)

    ens = est.ensemble_
    coef = np.asarray(est.coef_)
    single = coef.ndim == 1 and np.ndim(est.intercept_) == 0
    kept = np.flatnonzero(coef.reshape(len(ens.leaf_values), -1).any(axis=1))
    values = np.asarray(ens.leaf_values, dtype=np.float64)[kept]
    fit_intercept = bool(est.fit_intercept)
    slopes = np.asarray(getattr(est, "linear_coef_", np.zeros(0)), dtype=np.float64)
    kept_lin = np.flatnonzero(slopes) if single and slopes.ndim == 1 else np.zeros(0, int)
    beta_s = np.concatenate([coef[kept], slopes[kept_lin]]
                            + ([[est.intercept_]] if fit_intercept else [])) \
        if single else None
    # pass 3: all rows, per partition; the small results stay on the workers
    est_d = dask.delayed(est, pure=True)
    compact = dask.persist(*[
        dask.delayed(_compact_task)(i, xp[i], yp[i], wp[i], est_d, kept, int(offsets[i]), seed,
                                    rates, classify, kept_lin)
        for i in range(len(xp))])
    pieces = [c for c in dask.compute(*[dask.delayed(_counts)(c) for c in compact])
              if c is not None]
    counts = sum(c[0] for c in pieces)
    total = float(sum(c[1] for c in pieces))
    # known for the columns of the kept rules' trees (the ones routed), NaN
    # for the others, as rules.leaf_support(columns=) gives them
    est._train_support = unknown_outside_blocks(ens, counts / total,
                                                np.unique(tree_of(ens, kept)))
    info = {"n_rows": n, "sample_rows": int(n_sample), "sampled": True, "refit": False,
            "n_partitions": len(xp), "sample_fraction": p}
    passes = 3
    # an unconstrained refit would undo monotone / linear_sign's signs
    signed = bool(np.any(getattr(est, "monotone_", 0)) or np.any(getattr(est, "linear_sign_", 0)))
    if refit and signed:
        warnings.warn("a FIRE fit under monotone or linear_sign keeps the weights it selected "
                      "on the sample (the refit on all rows is unconstrained)", UserWarning,
                      stacklevel=3)
    elif refit and single and len(kept) + len(kept_lin):
        if classify:
            beta, hold, hold_w, loss_all, steps = _newton(compact, values, fit_intercept, beta_s)
            passes += steps
        else:
            res = dask.compute(*[dask.delayed(_squared_task)(c, values, fit_intercept, beta_s)
                                 for c in compact])
            passes += 1
            G, b = _sum(res, "G"), _sum(res, "b")
            beta = scipy.linalg.lstsq(G, b, cond=_RANK_TOL, lapack_driver="gelsy")[0]
            hold, hold_w = _sum(res, "hold"), _sum(res, "hold_w")
            loss_all = float(_sum(res, "rr") - 2 * beta @ b + beta @ G @ beta)
        new = np.zeros_like(coef)
        new[kept] = beta[:len(kept)]
        est.coef_ = new
        if len(kept_lin):
            lin = np.zeros_like(slopes)
            lin[kept_lin] = beta[len(kept):len(kept) + len(kept_lin)]
            est.linear_coef_ = lin
        if fit_intercept:
            est.intercept_ = float(beta[-1])
        est.n_rules_ = int(np.count_nonzero(new))
        est.n_terms_ = est.n_rules_ + int(np.count_nonzero(est.linear_coef_))
        info.update(refit=True, holdout_loss=float(hold / hold_w) if hold_w else float("nan"),
                    refit_training_loss=float(loss_all / total))
    elif refit and not single:
        warnings.warn("a multiclass FIREClassifier keeps the weights it selected on the "
                      "sample (the refit on all rows is for one output)", UserWarning,
                      stacklevel=3)
    info["passes"] = passes
    info["seconds"] = {"check_and_sample": t_gather, "fit_on_sample": t_fit,
                       "all_rows_passes_and_refit": time.perf_counter() - t1}
    est.dask_info_ = info
    del compact
    return est


def _newton(compact, values, fit_intercept, beta0, max_steps=50):
    """Unpenalised logistic refit of the kept rules: damped Newton, per-partition sums."""
    import dask

    def evaluate(beta, with_hold=False):
        res = dask.compute(*[dask.delayed(_logistic_task)(
            c, values, fit_intercept, beta, beta0 if with_hold else None) for c in compact])
        return res

    res = evaluate(beta0, with_hold=True)
    hold, hold_w = _sum(res, "hold"), _sum(res, "hold_w")
    beta = beta0
    loss, g, H = _sum(res, "loss"), _sum(res, "g"), _sum(res, "H")
    steps = 1
    for _ in range(max_steps):
        step = scipy.linalg.lstsq(H, g, cond=_RANK_TOL, lapack_driver="gelsy")[0]
        decrement = float(g @ step)
        if decrement <= 1e-12 * max(abs(loss), 1.0):
            break
        t = 1.0
        while True:
            cand = beta - t * step
            res = evaluate(cand)
            steps += 1
            new_loss = _sum(res, "loss")
            if new_loss <= loss - 1e-4 * t * decrement or t < 1e-8:
                break
            t *= 0.5
        if new_loss > loss:
            break
        beta, loss, g, H = cand, new_loss, _sum(res, "g"), _sum(res, "H")
    return beta, hold, hold_w, loss, steps
