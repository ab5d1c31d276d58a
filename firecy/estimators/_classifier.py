"""Rule extraction for classification: :class:`FIREClassifier`."""
import numbers
import warnings

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.model_selection import (
    ShuffleSplit,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
)
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from firecy._dask import is_dask
from firecy.estimators._base import FIREEstimatorBase
from firecy.estimators._class_models import booster_task, check_model_classes
from firecy.estimators._class_scoring import ClassificationLoss, check_scoring, probabilities
from firecy.estimators._logistic_paths import (
    BinaryLogisticPaths,
    MultinomialPaths,
    pack_target,
)
from firecy.estimators._model_inspection import is_classifier_model, is_fitted_model, unwrap
from firecy.estimators._params import penalty_grid
from firecy.estimators._selection import effective_n_jobs

__all__ = ["FIREClassifier"]


def _check_no_missing_labels(y):
    """A ValueError naming the missing labels (None or NaN among the labels of
    an object array), worded like scikit-learn's "Input y contains NaN.";
    NumPy's own error comes later, from sorting None with strings."""
    if y is None:
        return   # validate_data says y is required
    y = np.asarray(y)
    if y.dtype != object:
        return   # a float y with NaN: validate_data's own message
    flat = y.ravel()
    is_none = np.fromiter((v is None for v in flat), dtype=bool, count=flat.size)
    is_nan = np.fromiter((isinstance(v, numbers.Real) and v != v for v in flat),
                         dtype=bool, count=flat.size)
    for mask, what in ((is_none, "None"), (is_nan, "NaN")):
        if mask.any():
            rows = np.flatnonzero(mask)
            raise ValueError(
                f"Input y contains {what}: {rows.size} missing label(s), the first at "
                f"row {rows[0]}; FIREClassifier needs a label for every row (drop those "
                "rows or fill in their labels)")



def _label_list(classes, idx):
    """``'a', 'b'`` or ``3, 4``: the labels at ``idx``, as the user wrote them."""
    labels = [repr(v.item() if hasattr(v, "item") else v) for v in classes[idx][:5]]
    return ", ".join(labels) + (", ..." if len(idx) > 5 else "")


def _classes_phrase(classes, idx, singular, plural):
    """``class 'a' has`` or ``classes 'a', 'b' have``."""
    if len(idx) == 1:
        return f"class {_label_list(classes, idx)} {singular}"
    return f"classes {_label_list(classes, idx)} {plural}"


def check_rare_classes(classes, codes, sample_weight, selects):
    """The rare-class rules of :class:`FIREClassifier`, checked before any fit.

    A class whose rows (of positive weight) number exactly one cannot be
    selected for: the fold that holds its row out trains without it, every
    other fold trains on it and never scores it, and its only rules are
    leaves isolating that row (a separable logistic problem, whose MCP weight
    grows without bound).  Hence a ValueError when ``selects`` (lam is
    chosen on folds).  A class with no row of positive weight is left to the
    model (its probability stays about ``1 / (2n + 1)``): a UserWarning.

    Parameters
    ----------
    classes : ndarray
        The labels, sorted (``classes_``).
    codes : ndarray of int
        The class index of each row.
    sample_weight : ndarray of float
    selects : bool
        Whether lam is chosen on validation folds.
    """
    counts = np.bincount(codes[sample_weight > 0], minlength=classes.size)
    single = np.flatnonzero(counts == 1)
    if selects and single.size:
        raise ValueError(
            f"{_classes_phrase(classes, single, 'has', 'have')} a single row"
            + (" of positive sample weight" if np.any(sample_weight <= 0) else "")
            + ": choosing lam on validation folds needs at least 2 rows of every class "
            "(one to fit, one to score); drop or relabel the row, merge the class "
            "into another, or fix lam to fit without selection"
        )
    missing = np.flatnonzero(counts == 0)
    if missing.size:
        warnings.warn(
            f"{_classes_phrase(classes, missing, 'has', 'have')} no row of positive "
            "sample weight: "
            "no fit sees it, and its predicted probability stays at about 1 / (2n + 1) "
            "(n: the rows of positive weight)", UserWarning, stacklevel=5)


def warn_absent_from_folds(classes, codes, sample_weight, splits):
    """One UserWarning naming the classes some folds train without.

    In such a fold no rule speaks for the absent class and its intercept is
    the log-odds of half an observation, ``1 / (2n + 1)`` (``n`` the fold's
    training rows of positive weight), against the other classes on
    average: its held-out rows of that class get a small but nonzero
    probability, hence a finite loss.
    """
    K = classes.size
    everywhere = np.bincount(codes[sample_weight > 0], minlength=K) > 0
    lacking = np.zeros(K, dtype=np.intp)
    for train, _ in splits:
        train = np.asarray(train)
        rows = train[sample_weight[train] > 0]
        lacking += everywhere & (np.bincount(codes[rows], minlength=K) == 0)
    absent = np.flatnonzero(lacking)
    if absent.size:
        n_folds = len(splits)
        worst = int(lacking.max())
        warnings.warn(
            f"{_classes_phrase(classes, absent, 'has', 'have')} no training row in {worst} "
            f"of the {n_folds} validation fold(s): there no rule speaks for it and its "
            "intercept is the log-odds of half an observation, 1 / (2n + 1)",
            UserWarning, stacklevel=7)

class FIREClassifier(ClassifierMixin, FIREEstimatorBase):
    r"""Extract a small weighted rule set from a tree ensemble classifier (FIRE).

    Every leaf of every tree is a rule. For a binary model, FIRE learns one
    weight per rule by minimising the logistic loss of the margin
    :math:`\eta = c(x) + b + M w` (the log-odds of ``classes_[1]``) plus the
    penalty of :class:`~firecy.FIRERegressor`:

    .. math::

        F(w, b) = \frac{1}{\sum_i s_i} \sum_i s_i
                  \bigl(\log(1 + e^{\eta_i}) - y_i \eta_i\bigr)
                + \sum_j \mathrm{MCP}_\gamma(w_j; \lambda_s)
                + \lambda_f \sum_t \sum_{j \in t,\, j > \mathrm{first}} |w_j - w_{j-1}|
                + \lambda_0 \, \#\{t : w_t \neq 0\}

    ``M[i, j]`` is the value of leaf ``j`` (a random forest's class-1
    fraction, a boosting tree's leaf output) when row ``i`` lands in it,
    ``c(x)`` the ensemble's baseline margin (0 for a forest, the initial
    log-odds for boosting) and ``s`` the sample weights. The coordinate
    curvature that scales MCP's ``gamma`` uses the logistic bound 1/4
    (``docs/datafits.rst``).

    **Multi-class** (K classes): every rule speaks for one class. A boosting
    model already has one tree per class and round; a random forest leaf
    gives K rules, one per class, valued by that class's fraction. The margin
    of class k is :math:`\eta_k = c_k(x) + b_k + M_k w_k`, the probabilities
    their softmax, and the loss the multinomial negative log-likelihood
    :math:`\log \sum_k e^{\eta_{ik}} - \eta_{i y_i}`, with the same penalty
    summed over all rules. It is minimised by block coordinate descent over
    the classes: with the other classes fixed, the loss in class k's margin is
    exactly a binary logistic loss with a per-row offset, solved warm-started
    by the same engine (``docs/classification.rst``). The rule budget counts
    the rules of all classes.

    ``lam`` is chosen on a warm-started path from ``lambda_max`` (no rule)
    down to ``eps * lambda_max`` by the validation loss (``scoring``, the
    log-loss by default) among the points with at most ``max_rules`` rules,
    on stratified folds; ``gamma``, ``fusion`` and ``group_l0`` may be lists
    (a grid), as for :class:`~firecy.FIRERegressor`.

    Parameters
    ----------
    estimator : estimator, default=None
        The tree ensemble classifier: a scikit-learn random forest,
        extra-trees, gradient boosting or histogram gradient boosting
        classifier, an XGBoost or LightGBM classifier (sklearn wrapper, or a
        Booster with a binary or multi-class objective). A fitted model is
        used as is (its ``classes_`` must be the classes of ``y``; a Booster's
        classes are ``y``'s labels in sorted order); an unfitted one is cloned
        and fitted on ``X`` and the class indices ``0 .. K-1`` of ``y`` (with
        ``sample_weight`` when its ``fit`` accepts it). ``None`` fits
        ``RandomForestClassifier(n_estimators=500, max_depth=3,
        random_state=random_state)``. Wrap a fitted model in
        :class:`sklearn.frozen.FrozenEstimator` to keep it fitted through
        :func:`sklearn.base.clone`.
    penalty : {"mcp", "l1"}, str or penalty object, default="mcp"
        As in :class:`~firecy.FIRERegressor`.
    lam : float, default=None
        Fixed :math:`\lambda_s`; ``None`` selects it on a path. Alone, the
        problem is solved from zero at ``lam``. With ``lambdas`` it is the
        end of the warm path through the ``lambdas`` above it: a fitted
        model's ``lambda_`` with its ``warm_lambdas_`` fits the same model
        again (``clone(fire).set_params(lam=fire.lambda_,
        lambdas=fire.warm_lambdas_, **fire.best_params_)``). MCP is
        non-convex: its solution depends on where the solve starts, so ``lam``
        alone generally gives another model than the selected one at the
        same lambda.
    lambdas : array-like of float, default=None
        The path's lambda grid (decreasing order not needed), instead of
        ``n_lambdas`` values from ``lambda_max``; selection runs over it (and
        refinement inserts points between its values). Needed by a penalty
        whose ``lambda_max`` is infinite (e.g. a ridge plug-in). With ``lam``:
        the warm path down to ``lam`` (see ``lam``).
    gamma : float or list of float, default=1.1
        MCP concavity (> 1), scale-free.
    fusion : float or list of float, default=0.5
        Fusion ratio :math:`\lambda_f / \lambda_s` (>= 0).
    group_l0 : float or list of float, default=0.0
        :math:`\lambda_0`, the price of every tree (block) with a rule.
    max_rules : int, default=14
        Rule budget over all classes (fewer than 15, the FIRE paper's).
        ``None``: no budget.
    rule_depth : "auto", int, tuple of int or None, default="auto"
        Which nodes of each tree are rules, as in
        :class:`~firecy.FIRERegressor` (the depth used is ``rule_depth_``).
    rule_values : {"auto", "leaf", "unit"}, default="auto"
        The value in each rule's design column, as in
        :class:`~firecy.FIRERegressor` ("unit": indicators, ``coef_`` the
        rule's effect on the class margin; "auto": "unit" for boosted
        ensembles, "leaf" for forests; the choice made is ``rule_values_``).
    n_lambdas : int, default=50
    eps : float, default=1e-3
    selection : {"cv", "validation", "budget"}, default="cv"
        Mean validation loss over the stratified folds of ``cv``, or the loss
        on one stratified held-out split of ``validation_fraction``.
        ``"budget"``: no validation; the path point with the most rules
        within ``max_rules`` (then the smallest lambda), the model size
        fixed by the user as for a risk score (about a sixth of the cost of
        5-fold CV; ``validation_error_`` is NaN). Needs one penalty (no
        parameter lists).
    validation_fraction : float, default=0.2
    cv : int, cross-validation splitter or iterable, default=5
        An int means shuffled ``StratifiedKFold`` seeded with
        ``random_state``.
    refine_path : bool, default=True
        Bisect the path where the rule count jumps, so that the selection is
        offered rule sets of every size (as in :class:`~firecy.FIRERegressor`).
    one_se : bool, default=False
        One-standard-error rule, as in :class:`~firecy.FIRERegressor`.
    scoring : {"log_loss", "brier", "error_rate", "roc_auc"} or callable, default="log_loss"
        What the selection minimises on held-out rows, weighted by
        ``sample_weight``: the log-loss, the Brier score, the error rate,
        or 1 - ROC AUC (one-vs-rest macro average for K > 2). A callable
        ``scoring(y_true, proba, sample_weight)`` gets the labels, the
        probabilities (n_rows, n_classes) and the weights (None when
        unweighted) and returns a value to minimise (negate a score).
    fit_intercept : bool, default=True
        Fit the unpenalised intercept (one per class).
    tol : float, default=1e-6
        Solver tolerance; also the relative decrease below which the cycles
        over the classes stop.
    max_iter : int, default=None
        Maximum block updates per solve.
    n_jobs : int, default=None
        Threads for the selection's independent paths (one per grid point,
        then one per fold x grid point), through joblib; the engine releases
        the GIL, and the fitted model is bitwise the same for any value.
        None uses the cores this process may use, at most one per task, as
        XGBoost, LightGBM and scikit-learn's HistGradientBoosting do:
        :func:`joblib.cpu_count` (it honours the CPU affinity mask and a
        cgroup quota), at most ``OMP_NUM_THREADS`` when that is set; inside
        ``joblib.parallel_config(n_jobs=k)`` it is ``k``, and inside a joblib
        worker (a nested call, e.g. ``cross_validate(est, n_jobs=2)``) 1.
        ``1`` runs every path in the calling thread; ``-1`` uses every core.
        Under ``joblib.parallel_backend("dask")`` the tasks run on a Dask
        cluster. Also the default forest's ``n_jobs`` (None: the same cores).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    estimator_ : estimator
        The fitted ensemble model used.
    ensemble_ : RuleEnsemble
        The ensemble's rules; ``ensemble_.tree_class[t]`` is the class (index
        into ``classes_``) block t speaks for (all 0 for one output: class 1).
    coef_ : ndarray of shape (n_rules_total,)
        Rule weights (mostly zero).
    rule_depth_ : int, tuple of int or None
        The depth the trees were cut at (None: every leaf is a rule; a
        tuple: the depths of a union of cuts).
    rule_values_ : {"leaf", "unit"}
        The rule values solved on (``rule_values`` with "auto" resolved).
    intercept_ : float or ndarray of shape (n_classes,)
        The intercept ``b`` on top of the baseline: one value for a binary
        model with one output, one per class otherwise.
    n_rules_, lambda_, warm_lambdas_, best_params_, penalty_, path_, paths_, n_iter_, validation_error_
        As in :class:`~firecy.FIRERegressor`; ``validation_error_`` is the
        ``scoring`` loss, and ``path_.intercepts`` has one column per class
        for a multi-class model.
    rules_ : pandas.DataFrame
        The selected rules with a ``class`` column: the label each rule
        speaks for (see :func:`firecy.rules.rules_table`).
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Rare classes (``docs/classification.rst``, "Rare classes"; rows counted
    with positive ``sample_weight``):

    * a class with a single row is a ValueError before anything is fitted
      when lam is selected on folds: the fold holding the row out trains
      without the class, the others never score it, and its only rules
      isolate that row (a separable problem: an MCP weight without bound).
      Fix ``lam`` to fit it without selection;
    * fewer rows than folds: scikit-learn's ``StratifiedKFold`` warning, and
      the fit goes on (every stratified fold still trains on the class);
    * a class some folds train without (a user's ``cv``): a UserWarning;
      there it gets no rule and the probability of about half an
      observation, ``1 / (2n + 1)``, so its held-out rows score finitely;
    * ``predict_proba`` always has one column per entry of ``classes_``,
      whether or not a class is ever predicted.

    See Also
    --------
    firecy.risk.risk_card : the integer-point risk score of a binary model.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from firecy import FIREClassifier
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> forest = RandomForestClassifier(n_estimators=100, max_depth=3, random_state=0)
    >>> fire = FIREClassifier(forest, random_state=0).fit(X, y)
    >>> fire.n_rules_ <= 14
    True
    >>> fire.predict_proba(X[:2]).shape
    (2, 2)
    """

    _y_numeric = False

    def __init__(
        self,
        estimator=None,
        *,
        penalty="mcp",
        lam=None,
        lambdas=None,
        gamma=1.1,
        fusion=0.5,
        group_l0=0.0,
        max_rules=14,
        rule_depth="auto",
        rule_values="auto",
        n_lambdas=50,
        eps=1e-3,
        selection="cv",
        validation_fraction=0.2,
        cv=5,
        refine_path=True,
        one_se=False,
        scoring="log_loss",
        fit_intercept=True,
        tol=1e-6,
        max_iter=None,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.penalty = penalty
        self.lam = lam
        self.lambdas = lambdas
        self.gamma = gamma
        self.fusion = fusion
        self.group_l0 = group_l0
        self.max_rules = max_rules
        self.rule_depth = rule_depth
        self.rule_values = rule_values
        self.n_lambdas = n_lambdas
        self.eps = eps
        self.selection = selection
        self.validation_fraction = validation_fraction
        self.cv = cv
        self.refine_path = refine_path
        self.one_se = one_se
        self.scoring = scoring
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- fit ------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None, progress=None):
        """Fit the ensemble (unless fitted), then select and fit the rule weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
        progress : callable, default=None
            Called as ``progress(k, n_points, result)`` after every solved path
            point (see :meth:`firecy.FIRERegressor.fit`).

        Returns
        -------
        self : object
        """
        check_scoring(self.scoring)
        if is_dask(X, y, sample_weight):   # rows in a Dask cluster: firecy.dask
            from firecy._dask._fit import fit_dask

            return fit_dask(self, X, y, sample_weight, progress=progress)
        # before scikit-learn's checks, whose message for NaN among object
        # labels ("Input contains NaN") does not say it is y
        _check_no_missing_labels(y)
        super().fit(X, y, sample_weight=sample_weight, progress=progress)
        self.classes_ = self._classes
        return self

    # -- the hooks of FIREEstimatorBase ----------------------------------------
    def _default_model(self):
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(
            n_estimators=500, max_depth=3, random_state=self.random_state,
            n_jobs=effective_n_jobs(self.n_jobs, 500),
        )

    def _check_model_kind(self, model):
        task = booster_task(model)
        if task is None:
            task = "classification" if is_classifier_model(model) else "regression"
        if task != "classification":
            raise TypeError(
                f"FIREClassifier needs a classification ensemble, got the regressor "
                f"{type(model).__name__} (use FIRERegressor for regression)"
            )

    def _validate_target(self, y):
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                f"FIREClassifier needs at least two classes; y has a single class "
                f"({classes[0]!r})"
            )
        self._classes = classes
        return codes.astype(np.intp)

    def _fit_model(self, X, y, sample_weight, weighted):
        weighted_classes = np.unique(y[sample_weight > 0])
        if weighted_classes.size < 2:
            found = (f"they hold the single class {self._classes[weighted_classes[0]]!r}"
                     if weighted_classes.size else "no row has a positive weight")
            raise ValueError(
                "FIREClassifier needs at least two classes among the rows with "
                f"positive sample weight; {found}"
            )
        # before the ensemble is fitted: a class the selection cannot handle
        # is an error that costs nothing
        check_rare_classes(self._classes, y, sample_weight,
                           self.lam is None or len(penalty_grid(self)) > 1)
        prefitted = self.estimator is not None and is_fitted_model(self.estimator)
        model = super()._fit_model(X, y, sample_weight, weighted)
        if prefitted:
            check_model_classes(unwrap(model), self._classes)
        return model

    def _check_ensemble(self, ensemble):
        K = self._classes.size
        n_outputs = int(getattr(ensemble, "n_outputs", 1))
        if not ((n_outputs == 1 and K == 2) or n_outputs == K):
            raise ValueError(
                f"the ensemble has {n_outputs} output(s) but y has {K} classes: a "
                f"classifier of {K} classes has "
                + ("one output (binary)" if K == 2 else f"{K} outputs")
            )

    def _fit_target(self, y, baseline):
        return pack_target(y, baseline)

    def _path_fitter(self, ensemble):
        # the class of each block of the fit's design: a union of depth cuts
        # repeats the trees once per depth (``union_of_cuts``)
        if int(ensemble.n_outputs) == 1:
            return BinaryLogisticPaths()
        return MultinomialPaths(np.asarray(ensemble.tree_class, dtype=np.intp),
                                int(ensemble.n_outputs))

    @property
    def _validation_loss(self):
        return ClassificationLoss(self.scoring, self._classes)

    def _splits(self, n):
        """Stratified folds (stratified split), falling back to plain
        shuffled ones when a class is too small to stratify; a warning names
        the classes some folds train without."""
        splits = self._stratified_splits(n)
        warn_absent_from_folds(self._classes, self._codes_for_splits(), self._split_weights,
                               splits)
        return splits

    def _stratified_splits(self, n):
        codes = self._codes_for_splits()
        X0 = np.zeros((n, 1))
        if self.selection == "validation":
            try:
                return list(StratifiedShuffleSplit(
                    n_splits=1, test_size=self.validation_fraction,
                    random_state=self.random_state).split(X0, codes))
            except ValueError:
                return list(ShuffleSplit(
                    n_splits=1, test_size=self.validation_fraction,
                    random_state=self.random_state).split(X0))
        if isinstance(self.cv, numbers.Integral):
            if self.cv > n:
                raise ValueError(
                    f"cv={self.cv} folds need at least {self.cv} samples, got {n}")
            if np.bincount(codes).max() >= self.cv:
                splitter = StratifiedKFold(self.cv, shuffle=True,
                                           random_state=self.random_state)
                return list(splitter.split(X0, codes))
            return super()._splits(n)
        return list(check_cv(self.cv, codes, classifier=True).split(X0, codes))

    def _codes_for_splits(self):
        return self._split_codes

    def _select(self, grid, leaf_table, leaf_values, block_ptr, target, sw, n, progress=None,
                fitter=None):
        self._split_codes = target[:, 0].astype(np.intp)
        self._split_weights = sw
        try:
            super()._select(grid, leaf_table, leaf_values, block_ptr, target, sw, n,
                            progress=progress, fitter=fitter)
        finally:
            del self._split_codes, self._split_weights

    # -- predict --------------------------------------------------------------
    def decision_function(self, X):
        """The margin: log-odds of ``classes_[1]`` (binary), or one score per class.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
            ``baseline(X) + intercept_ + M w`` per class; for a binary model
            with one score per class (e.g. XGBoost ``multi:softprob`` with two
            classes) the difference of the two.
        """
        if is_dask(X):
            from firecy._dask._methods import dask_method

            return dask_method(self, "decision_function", X)
        raw = self._raw_prediction(X)
        if raw.ndim == 2 and raw.shape[1] == 2 and self.classes_.size == 2:
            return raw[:, 1] - raw[:, 0]
        return raw

    def predict_proba(self, X):
        """Class probabilities: the sigmoid (binary) or softmax of the margins.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        if is_dask(X):
            from firecy._dask._methods import dask_method

            return dask_method(self, "predict_proba", X)
        check_is_fitted(self)
        raw = self._raw_prediction(X)
        return probabilities(raw, 1 if raw.ndim == 1 else raw.shape[1])

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        if is_dask(X):
            from firecy._dask._methods import dask_method

            return dask_method(self, "predict_log_proba", X)
        from scipy.special import log_expit, log_softmax

        check_is_fitted(self)
        raw = self._raw_prediction(X)
        if raw.ndim == 1:
            return np.column_stack([log_expit(-raw), log_expit(raw)])
        return log_softmax(raw, axis=1)

    def predict(self, X):
        """The most probable class.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        if is_dask(X):
            from firecy._dask._methods import dask_method

            return dask_method(self, "predict", X)
        check_is_fitted(self)
        raw = self._raw_prediction(X)
        if raw.ndim == 1:
            return self.classes_[(raw > 0).astype(np.intp)]
        return self.classes_[np.argmax(raw, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on ``X`` (weighted by ``sample_weight``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            A Dask collection is scored partition by partition.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        if is_dask(X, y, sample_weight):
            from firecy._dask._methods import dask_score

            return dask_score(self, X, y, sample_weight)
        return super().score(X, y, sample_weight=sample_weight)
