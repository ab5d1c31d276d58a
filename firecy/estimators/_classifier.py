"""Rule extraction for classification: :class:`FIREClassifier`."""
import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from firecy._dask import is_dask
from firecy.estimators._base import FIREEstimatorBase
from firecy.estimators._class_scoring import check_scoring, probabilities
from firecy.estimators._class_task import check_no_missing_labels, classification_task
from firecy.estimators._data import validate_fit_data
from firecy.estimators._fit import fit_rule_model
from firecy.estimators._shared_doc import parameter_entry

__all__ = ["FIREClassifier"]


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
    max_rules : "auto", int or None, default="auto"
        Rule budget over all classes: "auto" is 14 (fewer than 15, the FIRE
        paper's), and 10 with ``stable=True``, linear terms and two classes,
        where the pool is kept (SIRUS's size; see ``stable``). ``None``: no
        budget.
    rule_depth : "auto", int, tuple of int or None, default="auto"
        Which nodes of each tree are rules, as in
        :class:`~firecy.FIRERegressor` (the depth used is ``rule_depth_``).
    rule_values : {"auto", "leaf", "unit"}, default="auto"
        The value in each rule's design column, as in
        :class:`~firecy.FIRERegressor` ("unit": indicators, ``coef_`` the
        rule's effect on the class margin; "auto": "unit" for boosted
        ensembles, "leaf" for forests; the choice made is ``rule_values_``).
    linear_terms : bool, default=True
        Offer every numeric feature as a linear term beside the rules, as
        :class:`~firecy.FIRERegressor` does (one term per class for a
        multi-class model, each a column of its class's margin); a kept
        term counts against ``max_rules``. ``False``: rules only, which
        :func:`~firecy.risk.risk_card` needs (it refuses a linear term).
{stable}
{confirmatory}
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
        Rule weights (mostly zero), equal rules of different trees merged
        into one, as in :class:`~firecy.FIRERegressor`.
    max_rules_ : int or None
        The budget ``max_rules`` stood for ("auto" resolved: 14, or 10 for a
        ``stable=True`` fit that keeps its pool).
    rule_depth_ : int, tuple of int or None
        The depth the trees were cut at (None: every leaf is a rule; a
        tuple: the depths of a union of cuts).
    rule_values_ : {"leaf", "unit"}
        The rule values solved on (``rule_values`` with "auto" resolved).
    intercept_ : float or ndarray of shape (n_classes,)
        The intercept ``b`` on top of the baseline: one value for a binary
        model with one output, one per class otherwise.
    linear_terms_, n_terms_, monotone_, linear_sign_
        As in :class:`~firecy.FIRERegressor`.
    confirmatory_, confirmatory_coef_
        As for :class:`~firecy.FIRERegressor` (one weight per class and term
        for a multi-class model).
    linear_coef_ : ndarray of shape (n_linear_terms,) or (n_classes, n_linear_terms)
        The effect of each linear term per unit of its feature on the
        margin: the log-odds of ``classes_[1]`` for one output, each class's
        margin (one row per class) otherwise.
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
        max_rules="auto",
        rule_depth="auto",
        rule_values="auto",
        linear_terms=True,
        monotone=None,
        linear_sign=None,
        stable=False,
        confirmatory=None,
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
        self.linear_terms = linear_terms
        self.monotone = monotone
        self.linear_sign = linear_sign
        self.stable = stable
        self.confirmatory = confirmatory
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
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            As in :meth:`firecy.FIRERegressor.fit`.
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
        check_no_missing_labels(y)
        data = validate_fit_data(self, X, y, sample_weight, y_numeric=False,
                                 default_model_name="RandomForestClassifier")
        task = classification_task(self, data)
        fit_rule_model(self, data, task, progress)
        self.classes_ = task.classes
        return self

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


FIREClassifier.__doc__ = FIREClassifier.__doc__.replace(
    "{stable}\n", parameter_entry("monotone") + parameter_entry("linear_sign")
    + parameter_entry("stable"))
FIREClassifier.__doc__ = FIREClassifier.__doc__.replace("{confirmatory}\n",
                                                        parameter_entry("confirmatory"))
