"""Confidence intervals for the kept terms that hold after selection: :meth:`inference`.

A weight fitted on the rows that chose its term is biased away from zero, and
its naive interval covers less often than it says: the rules were kept
because they fitted those rows well. The remedy that is valid by
construction is to refit the selected terms, unpenalised, on rows the
selection never saw (Cox 1975; Wasserman & Roeder 2009; R ``pre``'s advice):

* ``method="holdout"`` (the default): ``X, y`` are rows the model was not
  fitted on (a test set). The model's own kept terms are refitted on them;
  the intervals are about the model's terms. Passing the training rows is
  refused (:class:`ValueError`): that is the naive interval.
* ``method="split"``: one data set, split in two. A clone of the estimator
  (its tree model refitted too, unless it is a ``FrozenEstimator``) selects
  terms on one part, and they are refitted on the other: the intervals are
  about the clone's terms (which may differ from the model's).
* ``method="naive"``: the model's terms refitted on the rows given, however
  they were used. Not valid after selection; there to be compared with.

The refit is ordinary least squares for :class:`FIRERegressor` (classical
or heteroscedasticity-robust HC1 standard errors, Student-t intervals), a
logistic regression for a binary :class:`FIREClassifier`, a multinomial one
(each class its own intercept and terms) for a multi-class one, a Poisson
regression for :class:`FIREPoissonRegressor` and the Cox partial likelihood
(Breslow's ties) for :class:`FIRESurvivalRegressor` (Wald intervals from the
observed information), each weighted by ``sample_weight``. A rule's column
is its 0/1 indicator, so its estimate is on the scale of its contribution
("then +23"); a linear term's is ``clip(x, lower, upper) - center``, so its
estimate is a slope per unit. What an interval covers is the coefficient of
the term in the population's best approximation by the intercept and the
selected terms (the projection of ``E[y | x]`` on them; for the GLMs, the
coefficient of the population's best fit of that GLM): ``docs/inference.rst``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["InferenceMixin", "TermDesign", "term_design", "refit_intervals"]

INFERENCE_COLUMNS = ["term", "kind", "text", "estimate", "std_error", "lower", "upper",
                     "p_value"]
METHODS = ("holdout", "split", "naive")


@dataclass
class TermDesign:
    """A fitted model's kept terms as columns on some rows (see :func:`term_design`).

    Attributes
    ----------
    names, kinds, texts : list of str
        As ``explain`` names the terms (``rule_<column>``, ``linear_<feature>``).
    columns : list of int
        Each term's column (``rules_``'s ``column``).
    Z : ndarray of shape (n_samples, n_terms)
        A rule's 0/1 indicator, a linear term's ``clip(x, lower, upper) - center``.
    offset : ndarray of shape (n_samples,) or (n_samples, n_classes)
        The ensemble's baseline (0 for a forest); one column per class of a
        multi-class model.
    outputs : list of int
        The class (index among ``labels``) whose score each term adds to; all
        0 for one raw score.
    labels : list
        What each raw score is the score of: ``[None]`` (a regressor, a
        survival model), ``[classes_[1]]`` (binary), the classes (multi-class).
    """

    names: list
    kinds: list
    texts: list
    columns: list
    Z: np.ndarray
    offset: np.ndarray
    outputs: list = None
    labels: list = None


def term_design(est, X):
    """The kept terms of a fitted FIRE estimator on the rows of ``X``."""
    from firecy.estimators._model_terms import explained_labels, model_terms, term_texts

    labels = explained_labels(est)
    Xm = est._validate_predict_data(X)
    terms = model_terms(est, Xm)
    texts = term_texts(est, terms, X=Xm)
    keep = [k for k, kind in enumerate(terms.kind) if kind in ("rule", "linear")]
    base = [k for k, kind in enumerate(terms.kind) if kind == "baseline"]
    n = terms.value.shape[0]
    Z = np.empty((n, len(keep)))
    for q, k in enumerate(keep):
        Z[:, q] = terms.fires[:, k] if terms.kind[k] == "rule" else terms.value[:, k]
    offset = np.zeros((n, len(labels)))
    for k in base:
        offset[:, int(terms.output[k])] += terms.value[:, k]
    return TermDesign([terms.name[k] for k in keep], [terms.kind[k] for k in keep],
                      [texts[k] for k in keep], [int(terms.column[k]) for k in keep], Z,
                      offset[:, 0] if len(labels) == 1 else offset,
                      [int(terms.output[k]) for k in keep], labels)


def _check_columns(design, w):
    """A term constant on the rows of positive weight cannot be estimated: say which."""
    rows = w > 0
    for q, name in enumerate(design.names):
        col = design.Z[rows, q]
        if col.size and np.ptp(col) == 0:
            raise ValueError(
                f"term {name} ({design.texts[q]}) is constant on the {int(rows.sum())} "
                f"inference rows of positive weight: its weight cannot be estimated there "
                f"(more rows, or a model whose rules hold on some of them)")
    outputs = np.asarray(design.outputs if design.outputs is not None
                         else [0] * len(design.names), dtype=np.int64)
    for k in np.unique(outputs):
        # one score's terms beside its intercept (for the Cox loss, which has
        # none, a combination of terms that is constant is not identified either)
        own = np.flatnonzero(outputs == k)
        A = np.column_stack([np.ones(int(rows.sum())), design.Z[rows][:, own]])
        rank = np.linalg.matrix_rank(A)
        if rank < A.shape[1]:
            # the terms in a null vector of the design: e.g. every leaf of one
            # tree, which together hold on every row, as the intercept does
            null = np.linalg.svd(A)[2][-1]
            tied = [design.names[own[q - 1]] for q in np.flatnonzero(np.abs(null) > 1e-8)
                    if q > 0]
            raise ValueError(
                f"the terms {', '.join(tied)} and the intercept are linearly dependent on "
                f"the inference rows (rank {rank} of {A.shape[1]}; e.g. every leaf of one "
                "tree, which together hold on every row): their weights are not "
                "identified. Refit the model with a larger lam or fewer terms (max_rules), "
                "so that it keeps no such set")


def _ols(A, y, w, robust):
    n, p = A.shape
    sw = np.sqrt(w)
    Q, R = np.linalg.qr(A * sw[:, None])
    beta = np.linalg.solve(R, Q.T @ (y * sw))
    resid = y - A @ beta
    df = int(np.count_nonzero(w)) - p
    if df <= 0:
        raise ValueError(f"{int(np.count_nonzero(w))} inference rows of positive weight "
                         f"for {p} coefficients: no degrees of freedom are left")
    Rinv = np.linalg.inv(R)
    bread = Rinv @ Rinv.T                      # (A' W A)^-1
    if robust:
        meat = (A * (w * resid)[:, None]).T @ (A * (w * resid)[:, None])
        cov = bread @ meat @ bread * (n / df)
    else:
        sigma2 = float(np.sum(w * resid ** 2)) / df
        cov = sigma2 * bread
    return beta, cov, stats.t(df)


def _glm(A, y, w, offset, loss, max_iter=100, tol=1e-10):
    """Newton's method for the logistic or Poisson log-likelihood (weighted)."""
    p = A.shape[1]
    beta = np.zeros(p)
    if loss == "poisson":
        beta[0] = np.log(max(np.average(y / np.exp(offset), weights=w), 1e-300))
    for it in range(max_iter):
        eta = offset + A @ beta
        if loss == "logistic":
            mu = 1.0 / (1.0 + np.exp(-eta))
            curv = mu * (1.0 - mu)
        else:
            mu = np.exp(eta)
            curv = mu
        grad = A.T @ (w * (y - mu))
        H = (A * (w * curv)[:, None]).T @ A
        try:
            step = np.linalg.solve(H, grad)
        except np.linalg.LinAlgError:
            raise ValueError("the refit's information matrix is singular (a term that "
                             "separates the classes?): no Wald interval") from None
        beta += step
        if np.max(np.abs(step)) <= tol * (1.0 + np.max(np.abs(beta))):
            break
    else:
        warnings.warn(f"the {loss} refit did not converge in {max_iter} Newton steps "
                      "(a term that separates the classes?): its intervals are unreliable",
                      stacklevel=4)
    return beta, np.linalg.inv(H), stats.norm()


def _newton(loglik_parts, p, what, max_iter=100, tol=1e-10):
    """Newton's method on a concave log-likelihood given as ``theta -> (gradient,
    information)``; returns the estimate and the inverse information."""
    theta = np.zeros(p)
    for _ in range(max_iter):
        grad, info = loglik_parts(theta)
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            raise ValueError(f"the {what} refit's information matrix is singular (a term "
                             "that separates the classes?): no Wald interval") from None
        theta = theta + step
        if np.max(np.abs(step)) <= tol * (1.0 + np.max(np.abs(theta))):
            break
    else:
        warnings.warn(f"the {what} refit did not converge in {max_iter} Newton steps "
                      "(a term that separates the classes?): its intervals are unreliable",
                      stacklevel=5)
    grad, info = loglik_parts(theta)
    return theta, np.linalg.inv(info)


def _multinomial(Z, outputs, n_classes, codes, w, offset):
    """The multinomial logistic refit: each class's score is its intercept (class
    0's is 0, the reference: softmax scores are defined up to a constant) plus
    its own terms. Parameters: the K - 1 intercepts, then the terms."""
    n, m = Z.shape
    V = np.column_stack([np.ones((n, n_classes - 1)), Z])
    owner = np.concatenate([np.arange(1, n_classes), outputs])
    same = owner[:, None] == owner[None, :]
    Y = (codes[:, None] == np.arange(n_classes)[None, :]).astype(np.float64)

    def parts(theta):
        eta = offset.copy()
        for a in range(V.shape[1]):
            eta[:, owner[a]] += theta[a] * V[:, a]
        eta -= eta.max(axis=1, keepdims=True)
        prob = np.exp(eta)
        prob /= prob.sum(axis=1, keepdims=True)
        Pa = prob[:, owner]
        grad = ((Y[:, owner] - Pa) * V * w[:, None]).sum(axis=0)
        WP = V * Pa * w[:, None]
        info = (WP.T @ V) * same - WP.T @ (V * Pa)
        return grad, info

    theta, cov = _newton(parts, V.shape[1], "multinomial")
    return theta[n_classes - 1:], cov[n_classes - 1:, n_classes - 1:]


def _cox(Z, event, time, w, offset):
    """The Cox partial-likelihood refit (Breslow's ties, weighted: R ``coxph``'s
    ``ties="breslow"``); the log partial hazard has no intercept."""
    n, m = Z.shape
    if m * m * n > 5e8:
        raise ValueError(f"{m} terms on {n} rows: the Cox refit's information needs "
                         f"{m * m * n * 8 / 2**30:.1f} GiB; pass fewer rows")
    order = np.argsort(time, kind="stable")
    Zs, ds, ws, os_ = Z[order], (event * w)[order], w[order], offset[order]
    _, first = np.unique(time[order], return_index=True)
    # each row's risk set is every row at its time or later: reverse cumulative
    # sums, read at the first row of its tied group
    group = np.repeat(np.arange(first.size), np.diff(np.append(first, n)))

    def rcum(a):
        return np.cumsum(a[::-1], axis=0)[::-1][first][group]

    def parts(beta):
        eta = os_ + Zs @ beta
        r = ws * np.exp(eta - eta.max())
        S0 = rcum(r)
        S1 = rcum(r[:, None] * Zs)
        S2 = rcum(r[:, None, None] * Zs[:, :, None] * Zs[:, None, :])
        Zbar = S1 / S0[:, None]
        grad = (ds[:, None] * (Zs - Zbar)).sum(axis=0)
        info = np.einsum("i,ijk->jk", ds, S2 / S0[:, None, None] - Zbar[:, :, None] * Zbar[:, None, :])
        return grad, info

    return _newton(parts, m, "Cox")


def refit_intervals(design, y, sample_weight, loss, *, level=0.95, robust=False,
                    offset=None):
    """The unpenalised refit of the terms of ``design`` on its rows: one record per term.

    Parameters
    ----------
    design : TermDesign
    y : ndarray of shape (n_samples,), or a pair of them
        The target: 0/1 for the logistic loss, counts for Poisson, class codes
        ``0 .. K-1`` (indices of ``design.labels``) for the multinomial loss,
        ``(event, time)`` for the Cox loss.
    sample_weight : ndarray of shape (n_samples,)
    loss : {"squared", "logistic", "poisson", "multinomial", "cox"}
    level : float
        The intervals' confidence level.
    robust : bool
        HC1 standard errors for the squared loss.
    offset : ndarray, optional
        Added to the linear predictor (log exposure); the ensemble's baseline
        is added too.

    Returns
    -------
    list of dict
        ``term, kind, text, estimate, std_error, lower, upper, p_value``, and
        ``class`` for the multinomial loss.
    """
    w = np.asarray(sample_weight, dtype=np.float64)
    _check_columns(design, w)
    base = design.offset + (0.0 if offset is None else offset)
    m = design.Z.shape[1]
    if loss == "multinomial":
        beta, cov = _multinomial(design.Z, np.asarray(design.outputs), len(design.labels),
                                 np.asarray(y), w, np.asarray(base, dtype=np.float64))
        dist = stats.norm()
    elif loss == "cox":
        event, time = y
        beta, cov = _cox(design.Z, np.asarray(event, dtype=np.float64),
                         np.asarray(time, dtype=np.float64), w, np.asarray(base, np.float64))
        dist = stats.norm()
    else:
        A = np.column_stack([np.ones(design.Z.shape[0]), design.Z])
        if loss == "squared":
            beta, cov, dist = _ols(A, np.asarray(y, dtype=np.float64) - base, w, robust)
        else:
            beta, cov, dist = _glm(A, np.asarray(y, dtype=np.float64), w, base, loss)
        beta, cov = beta[1:], cov[1:, 1:]
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    q = float(dist.ppf(0.5 + level / 2))
    out = []
    for k in range(m):
        z = beta[k] / se[k] if se[k] > 0 else np.inf
        record = {"term": design.names[k], "kind": design.kinds[k],
                  "text": design.texts[k], "estimate": float(beta[k]),
                  "std_error": float(se[k]), "lower": float(beta[k] - q * se[k]),
                  "upper": float(beta[k] + q * se[k]),
                  "p_value": float(2 * dist.sf(abs(z)))}
        if loss == "multinomial":
            record["class"] = design.labels[design.outputs[k]]
        out.append(record)
    return out


def _loss_of(est):
    kind = type(est).__name__
    if kind == "FIRERegressor":
        return "squared"
    if kind == "FIREClassifier":
        return "logistic" if len(est.classes_) == 2 else "multinomial"
    if kind == "FIREPoissonRegressor":
        return "poisson"
    if kind == "FIRESurvivalRegressor":
        return "cox"
    raise ValueError(f"inference is not available for {kind} (its loss has no refit here "
                     "yet): FIRERegressor, FIREClassifier, FIREPoissonRegressor and "
                     "FIRESurvivalRegressor have it")


class InferenceMixin:
    """:meth:`inference` for the FIRE estimators (internal)."""

    def inference(self, X, y, *, level=0.95, method="holdout", robust=False, split=0.5,
                  random_state=None, sample_weight=None, exposure=None, as_frame=None):
        """Confidence intervals for the kept terms' weights, valid after selection.

        The kept terms are refitted without penalty on rows the selection did
        not see, and the refit's intervals reported (see the module notes and
        ``docs/inference.rst``): ``method="holdout"`` refits this model's
        terms on the rows given, which must not be its training rows;
        ``method="split"`` selects on part of the rows given (a clone of the
        estimator) and refits on the rest; ``method="naive"`` refits this
        model's terms on the rows given, however they were used (not valid
        after selection: its intervals cover less often than they say).

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            The target; for :class:`FIRESurvivalRegressor`, the (event, time)
            pairs its ``fit`` takes.
        level : float, default=0.95
            The confidence level of the intervals.
        method : {"holdout", "split", "naive"}, default="holdout"
        robust : bool, default=False
            Heteroscedasticity-robust (HC1) standard errors for the squared loss.
        split : float, default=0.5
            ``method="split"``: the fraction of the rows the clone selects on.
        random_state : int, RandomState instance or None, default=None
            ``method="split"``: seeds the split (the clone keeps the
            estimator's own ``random_state``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the rows of the refit (and of the selection's fit).
        exposure : array-like of shape (n_samples,), default=None
            :class:`FIREPoissonRegressor`: the rows' exposures.
        as_frame : bool, optional
            A pandas DataFrame (the default when pandas is importable) or a
            list of dicts.

        Returns
        -------
        pandas.DataFrame or list of dict
            One row per kept term (named as :meth:`explain` names it; for a
            multi-class classifier one per kept (term, class), with a
            ``class`` column):
            ``term``, ``kind``, ``text``, ``estimate`` (a rule: its effect where
            it holds; a linear term: its slope per unit), ``std_error``,
            ``lower``, ``upper``, ``p_value``. Also stored as ``inference_``,
            with ``inference_design_`` (:class:`TermDesign` maker: call it on
            rows to get the terms' columns the intervals are about). After
            ``method="holdout"``, ``rules_`` gains the columns ``lower``,
            ``upper`` and ``p_value`` and ``summary()`` prints each term's
            interval beside its weight: the interval is the refit's (on the
            held-out rows), the weight the penalised fit's.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from firecy import FIRERegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.uniform(0, 10, size=(400, 2))
        >>> y = 3.0 * (X[:, 0] > 5) + rng.normal(size=400)
        >>> fire = FIRERegressor(DecisionTreeRegressor(max_depth=1), lam=0.1,
        ...                      linear_terms=False, random_state=0).fit(X[:200], y[:200])
        >>> table = fire.inference(X[200:], y[200:], as_frame=False)
        >>> [(r["text"], r["lower"] < 3.0 < r["upper"]) for r in table]
        [('x0 > 5.0...', True)]
        """
        from sklearn.utils.validation import check_is_fitted

        from firecy._validation import check_sample_weight

        check_is_fitted(self)
        if getattr(self, "confirmatory_", None) is not None:
            # the refit would leave the confirmatory terms out of the model it tests
            raise NotImplementedError(
                "inference of a model with confirmatory terms (confirmatory=) is not "
                "available yet: refit without them for intervals")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if not 0.0 < float(level) < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level!r}")
        loss = _loss_of(self)
        n = int(X.shape[0])
        y = np.asarray(y)
        if y.ndim == 0 or y.shape[0] != n:
            raise ValueError(f"X has {n} rows but y has {y.shape[0]}")
        w = check_sample_weight(sample_weight, n)
        if not np.any(w > 0):
            raise ValueError("sample_weight is zero on every row: nothing to refit on")
        offset = None
        if exposure is not None:
            from firecy.datafits import log_exposure

            offset = log_exposure(exposure, n)
        from firecy.estimators._data import training_fingerprint

        seen = getattr(self, "_train_fingerprint", None)
        if method == "holdout" and seen is not None and seen == training_fingerprint(X):
            raise ValueError(
                "these are the rows the model was fitted on: a refit on the rows that "
                "selected the terms gives intervals that cover less often than they say. "
                "Pass held-out rows, or method='split' to select on part of these rows "
                "and refit on the rest")
        model = self
        rows = np.arange(n)
        if method == "split":
            from sklearn.base import clone
            from sklearn.utils import check_random_state

            if not 0.0 < float(split) < 1.0:
                raise ValueError(f"split must be in (0, 1), got {split!r}")
            order = check_random_state(random_state).permutation(n)
            cut = int(round(float(split) * n))
            if not 0 < cut < n:
                raise ValueError(f"split={split} leaves no rows on one side of {n}")
            pick, rows = order[:cut], np.sort(order[cut:])
            fit_kw = {} if sample_weight is None else {"sample_weight": w[pick]}
            if exposure is not None:
                fit_kw["exposure"] = np.asarray(exposure, dtype=np.float64)[pick]
            model = clone(self).fit(_take(X, pick), y[pick], **fit_kw)
        Xr = _take(X, rows)
        target = y[rows]
        if loss in ("logistic", "multinomial"):
            classes = model.classes_
            if not np.all(np.isin(target, classes)):
                raise ValueError("y holds labels the classifier does not know")
            codes = np.searchsorted(classes, target)
            target = (codes == 1).astype(np.float64) if loss == "logistic" else codes
            present = np.unique(codes[w[rows] > 0])
            if present.size == 1:
                raise ValueError(f"the inference rows hold one class only: no {loss} "
                                 "refit")
            if present.size < len(classes):
                missing = [c for q, c in enumerate(classes.tolist()) if q not in present]
                raise ValueError(f"the inference rows hold no row of the classes {missing}: "
                                 "their intercepts run to -infinity, no multinomial refit")
        elif loss == "cox":
            from firecy.datafits import check_survival_target

            event, time = check_survival_target(target)
            if not np.any(event[w[rows] > 0] > 0):
                raise ValueError("the inference rows hold no event: no Cox refit")
            target = (event, time)
        design = term_design(model, Xr)
        if not design.names:
            records = []
        else:
            records = refit_intervals(design, target, w[rows], loss, level=float(level),
                                      robust=robust,
                                      offset=None if offset is None else offset[rows])
        self.inference_ = records
        self.inference_design_ = lambda Xn, _m=model: term_design(_m, Xn)
        # the model's own terms (not a clone's, not the naive refit): shown
        # beside their weights in rules_, the summary, the JSON and the report
        self._term_intervals = None if method != "holdout" or not records else {
            c: (r["lower"], r["upper"], r["p_value"])
            for c, r in zip(design.columns, records)}
        self._interval_level = float(level)
        return _frame(records, as_frame)


def _take(X, idx):
    return X.iloc[idx] if hasattr(X, "iloc") else X[idx]


def _frame(records, as_frame):
    if as_frame is False:
        return records
    try:
        import pandas as pd
    except ImportError:
        if as_frame:
            raise ImportError("inference(as_frame=True) needs pandas") from None
        return records
    columns = list(INFERENCE_COLUMNS)
    if records and "class" in records[0]:
        columns.insert(1, "class")
    return pd.DataFrame(records, columns=columns)
