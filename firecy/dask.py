"""FIRE on rows that live in a Dask cluster (``docs/dask.rst``).

:meth:`FIRERegressor.fit <firecy.FIRERegressor.fit>` and
:meth:`FIREClassifier.fit <firecy.FIREClassifier.fit>` accept Dask arrays and
DataFrames and call :func:`fit_dask` with its defaults; ``predict``,
``decision_function``, ``predict_proba``, ``transform`` and ``score`` accept
them too (lazily: the in-memory method per partition).  The work runs on
Dask's scheduler: the ``distributed.Client`` you created, if any.  Importing
this module does not import Dask.
"""
import numpy as np

__all__ = ["fit_dask", "rule_supports"]


def fit_dask(estimator, X, y, sample_weight=None, *, sample_size="auto", refit=True,
             progress=None):
    """Fit a FIRE estimator on Dask collections.

    With at most ``sample_size`` rows, the partitions are gathered and the
    ordinary fit runs: the rules and weights are the in-memory fit's. With
    more, the rules are selected (cross-validation included) by the
    in-memory fit on a deterministic sample of about ``sample_size`` rows,
    then one pass over all rows, partition by partition, computes the kept
    rules' supports and the sample model's error on the rows outside the
    sample, and the kept rules' weights and intercept are refitted
    (unpenalised) on all rows from per-partition sums (``docs/dask.rst``).

    Parameters
    ----------
    estimator : FIRERegressor or FIREClassifier
        Fitted in place. An unfitted ``estimator.estimator`` (or the default
        forest) is fitted on the sample; to train the ensemble on every row,
        pass a model trained with ``xgboost.dask`` or ``lightgbm.dask``.
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
        Partitioned by rows (an array's column chunks are merged).
    y : dask.array.Array, dask.dataframe.Series or array-like of shape (n_samples,)
        Partitioned like X (the same number of rows in every partition).
    sample_weight : same kinds as y, default=None
    sample_size : int or "auto", default="auto"
        Rows of the selection sample. "auto": the smaller of 25,000,000
        divided by the model's number of trees (the selection's cost: 50,000
        rows at 500 trees, where the measured test error has stopped
        improving) and the memory budget
        (:func:`firecy.ensembles.memory_budget`) over 64 bytes per row and
        tree, between 10,000 and 1,000,000 rows.
    refit : bool, default=True
        Refit the kept rules' weights on all rows (squared loss, or binary
        logistic loss by Newton steps; a multiclass model keeps the weights
        selected on the sample).
    progress : callable, default=None
        Passed to the in-memory fit.

    Returns
    -------
    estimator : the fitted estimator
        With ``dask_info_``: a dict of ``n_rows``, ``sample_rows``,
        ``sampled``, ``refit``, ``n_partitions`` and, after a refit,
        ``holdout_loss`` (the sample model's mean loss on the rows outside
        the sample) and ``refit_training_loss``.

    Examples
    --------
    >>> import dask.array as da
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.dask import fit_dask
    >>> X, y = make_friedman1(n_samples=2000, random_state=0)
    >>> forest = RandomForestRegressor(50, max_depth=3, random_state=0).fit(X, y)
    >>> Xd, yd = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
    >>> fire = fit_dask(FIRERegressor(forest, random_state=0), Xd, yd, sample_size=1000)
    >>> fire.dask_info_["sampled"], fire.n_rules_ <= 14
    (True, True)
    >>> fire.predict(Xd).compute().shape
    (2000,)
    """
    from firecy._dask._fit import fit_dask as _fit

    return _fit(estimator, X, y, sample_weight, sample_size=sample_size, refit=refit,
                progress=progress)


def rule_supports(estimator, X, sample_weight=None):
    """The weighted fraction of the rows of ``X`` each kept rule selects.

    Parameters
    ----------
    estimator : fitted FIRE estimator
    X : array-like, DataFrame, or a Dask array or DataFrame
    sample_weight : array-like or Dask collection of shape (n_samples,), default=None

    Returns
    -------
    ndarray or dask.array.Array of shape ``(n_rules_,)``
        In the order of ``estimator.get_feature_names_out()``; a lazy Dask
        array (one pass, per partition) for Dask input.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeRegressor
    >>> from firecy import FIRERegressor
    >>> from firecy.dask import rule_supports
    >>> X = np.array([[1.0, 10.0], [1.0, 20.0], [3.0, 10.0], [3.0, 20.0]] * 5)
    >>> y = np.array([0.0, 1.0, 4.0, 6.0] * 5)
    >>> tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    >>> fire = FIRERegressor(tree, lam=0.5, fusion=0.0, linear_terms=False).fit(X, y)
    >>> rule_supports(fire, X)
    array([0.25, 0.25])
    """
    from sklearn.utils.validation import check_is_fitted

    from firecy._dask import is_dask
    from firecy._dask._methods import _support_reduce, _support_task

    check_is_fitted(estimator)
    kept = estimator._kept_columns()
    if not is_dask(X, sample_weight):
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return _support_reduce([_support_task(X, w, estimator, kept)])
    import dask
    import dask.array as da

    from firecy._dask._parts import aligned

    xp, _, wp, _ = aligned(X, None, sample_weight)
    est_d = dask.delayed(estimator, pure=True)
    pieces = [dask.delayed(_support_task)(x, w, est_d, kept) for x, w in zip(xp, wp)]
    return da.from_delayed(dask.delayed(_support_reduce)(pieces), shape=(len(kept),),
                           dtype=np.float64)
