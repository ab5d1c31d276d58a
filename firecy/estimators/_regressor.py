"""Rule extraction for regression: :class:`FIRERegressor`."""
import numpy as np
from sklearn.base import RegressorMixin

from firecy._dask import is_dask
from firecy.estimators._base import FIREEstimatorBase, default_forest
from firecy.estimators._data import validate_fit_data
from firecy.estimators._fit import Task, fit_rule_model
from firecy.estimators._selection import SquaredLossPaths, weighted_squared_error

__all__ = ["FIRERegressor", "regression_task"]


def regression_task(est, data):
    """The :class:`~firecy.estimators._fit.Task` of :class:`FIRERegressor`:
    the squared loss on ``y`` minus the ensemble's baseline."""
    y = np.asarray(data.y, dtype=np.float64)
    return Task(kind="regression", default_model=default_forest(est, "regression"),
                model_y=y, pack_target=lambda baseline: y - baseline,
                fitter=lambda ensemble: SquaredLossPaths(), validation_loss=weighted_squared_error,
                loss="squared")


class FIRERegressor(RegressorMixin, FIREEstimatorBase):
    r"""Extract a small weighted rule set from a tree ensemble (FIRE).

    Every leaf of every tree is a rule (the conjunction of the splits on its
    path). FIRE learns one weight per rule by minimising, over rule weights
    ``w`` and an unpenalised intercept ``b``,

    .. math::

        F(w, b) = \frac{1}{2 \sum_i s_i} \sum_i s_i
                  \bigl(y_i - c(x_i) - b - (M w)_i\bigr)^2
                + \sum_j \mathrm{MCP}_\gamma(w_j; \lambda_s)
                + \lambda_f \sum_t \sum_{j \in t,\, j > \mathrm{first}} |w_j - w_{j-1}|
                + \lambda_0 \, \#\{t : w_t \neq 0\}

    where ``M[i, j]`` is the value of leaf ``j`` when row ``i`` lands in it
    (else 0), ``c(x)`` the ensemble's baseline (0 for a random forest, the
    initial prediction for boosting), ``s`` the sample weights, and the leaves
    of each tree are in left-to-right order. In code: :math:`\lambda_s` is
    ``lam``, :math:`\lambda_f = \texttt{fusion} \cdot \lambda_s` and
    :math:`\lambda_0` is ``group_l0``. With ``penalty="l1"`` the MCP term is
    :math:`\lambda_s \sum_j |w_j|`. The MCP concavity is scaled by each
    rule's curvature, so ``gamma`` is scale-free (``gamma -> 1+`` selects like
    L0, ``gamma -> inf`` is the lasso); ``docs/objective.rst`` states every
    term exactly. A rule with zero weight is pruned.

    With no argument but the ensemble, ``FIRERegressor(forest)`` returns at
    most 14 rules ("fewer than 15", the paper's budget) selected with MCP
    (``gamma=1.1``) plus light fusion (``fusion=0.5``) by 5-fold
    cross-validation: the settings that, measured on ten real datasets, beat
    L1 (RuleFit-style) selection at the same budget on every one (see
    ``docs/selection.rst``).

    ``lam`` is either given or chosen on a warm-started path
    of ``n_lambdas`` values from ``lambda_max`` (all weights zero) down to
    ``eps * lambda_max``, refined by bisection where the rule count jumps
    (``refine_path``), by validation error (K-fold cross-validation or one
    held-out split) among the path points with at most ``max_rules`` rules.
    ``gamma``, ``fusion`` and ``group_l0`` may be lists: every combination
    gets its own path and the best (combination, lambda) pair wins. The
    selected model is the full-data path taken at the selected lambda.

    Parameters
    ----------
    estimator : estimator, default=None
        The tree ensemble the rules come from: a scikit-learn random forest,
        extra-trees, gradient boosting or histogram gradient boosting
        regressor, an XGBoost or LightGBM regressor (sklearn wrapper or
        Booster). A fitted model is used as is (never refitted, never
        copied); an unfitted one is cloned and fitted on ``X, y`` (with
        ``sample_weight`` when its ``fit`` accepts it). ``None`` fits
        ``RandomForestRegressor(n_estimators=500, max_depth=3,
        random_state=random_state)``, the paper's setting. Note that
        :func:`sklearn.base.clone` (and so cross-validation and grid search)
        clones a fitted estimator into an unfitted one; wrap it in
        :class:`sklearn.frozen.FrozenEstimator` to keep it fitted through
        cloning. The ensemble is fitted once on all of ``X``; selection
        only re-fits rule weights on each fold.
    penalty : {"mcp", "l1"}, str or penalty object, default="mcp"
        The sparsity penalty by name (a name registered with
        :func:`firecy.penalties.register_penalty` also works), or a penalty
        object (a :class:`firecy.penalties.Penalty` or an object with the
        Python penalty protocol); with an object or another registered name
        ``gamma`` and ``fusion`` are ignored and ``group_l0`` must be 0
        (build them into the object). The path varies the object's ``lam``.
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
        MCP concavity, > 1. The paper's choice for very sparse rule sets is
        1.1; larger values shrink more and select less aggressively. A list
        adds it to the selection grid. Ignored for ``penalty="l1"``.
    fusion : float or list of float, default=0.5
        Fusion ratio :math:`\lambda_f / \lambda_s` (>= 0) for ``penalty="mcp"``
        or ``"l1"``; 0 turns fusion off. The paper uses 0.1-0.5 for sparse
        selection ("light fusion") and up to 2 for more fused, more readable
        rule sets. 0.5 predicted better than 0 on average at 14 rules; it
        makes kept rules share split conditions only on some data (the
        README's diabetes example keeps 6 rules from 6 trees, no split
        shared): values of 1-2 share more (examples/plot_fusion_antecedents.py
        counts them). A list adds it to the selection grid (one set of paths
        per value).
    group_l0 : float or list of float, default=0.0
        :math:`\lambda_0`, the price of every tree that contributes a rule (>= 0);
        under a union of depths (a tuple ``rule_depth``), of every (depth,
        tree) block (a warning says so). A list adds it to the selection grid.
    max_rules : "auto", int or None, default="auto"
        Rule budget: only path points with at most ``max_rules`` nonzero
        weights in the final (full-data) model are eligible, and paths stop
        after the first point beyond it. "auto" is 14, the paper's "fewer
        than 15 rules", and 10 with ``stable=True`` and linear terms, where
        it is the number of rules kept (see ``stable``; SIRUS's ten rules: a
        pool of 10 from 2,000 trees reached SIRUS's stability on 12 of 12
        benchmark sets, one of 14 on 9). With ``stable=True`` it is the size
        of the rule pool. None: no budget.
    rule_depth : "auto", int, tuple of int or None, default="auto"
        Which nodes of each tree are rules: an int ``d`` takes the leaves of
        each tree cut at depth ``d`` (every node at depth ``d``, and every
        leaf above it), None every leaf. "auto" takes the largest depth, at
        most 3, whose nodes hold a median of at least ``max(10, 1%)`` of the
        training rows: the paper's depth-3 forests keep every leaf, fully
        grown forests and deep boosted trees (whose leaves hold a few rows,
        valid rules that do not generalise) are cut. A cut rule selects the
        rows the library routes through its node (missing values and
        categories included); its value is the model's prediction averaged
        over the node's training rows (``docs/objective.rst``). The depth
        used is ``rule_depth_``; ``summary()`` says what was done, and a
        warning says when the kept rules hold too few rows. A tuple of
        depths takes the nodes at each depth at once, one block per depth
        and tree (``(1, 2)``: single conditions and pairs, RuleFit's design).
    rule_values : {"auto", "leaf", "unit"}, default="auto"
        The value in each rule's design column. "leaf": the tree's value for
        the node (the library's leaf value, or the node value of a depth
        cut), so ``coef_[j]`` multiplies what the tree predicts there (1 is
        the tree's own contribution). "unit": every rule's column is its
        indicator (value 1, as RuleFit), so ``coef_[j]`` is the rule's effect
        on the raw score. The penalty prices a unit of effect at
        ``lambda / |value|``: a booster's values shrink along its sequence
        (learning rate, residuals), so under "leaf" its later trees' rules
        cost more and FIRE keeps rules of the first few trees. "auto": "unit"
        for boosted ensembles (GradientBoosting, HistGradientBoosting,
        XGBoost, LightGBM and CatBoost boosters of more than one round), "leaf" for
        forests, extra trees and single trees (and one boosting round, and
        XGBoost / LightGBM in random-forest mode), whose
        trees share one scale. The choice made is ``rule_values_``;
        ``ensemble_.leaf_values`` hold the values solved on, which
        ``predict``, ``rules_``, ``transform`` and the exported code use
        (under "unit" the tree's values move into ``ensemble_.column_scale``,
        so ``ensemble_.predict_raw(X)`` is still the library's prediction, or
        the cut trees' when ``rule_depth_`` cut them;
        ``docs/objective.rst``).
    linear_terms : bool, default=True
        Offer every numeric feature as a linear term beside the rules (as
        RuleFit and R ``pre`` do, by default too): the term of ``x`` is ``clip(x, q_lo,
        q_hi) - center`` (the 2.5% and 97.5% training quantiles, the training
        mean; a missing value adds 0), in a design column scaled to compete
        with the rules, under the rules' sparsity penalty (L1, or MCP with
        ``gamma``; fusion and group-L0 do not apply to it). A kept term
        counts against ``max_rules``, which becomes a budget of terms (not
        in the stable mode that keeps its pool: see ``stable``).
        Constant and all-missing features are not offered (``summary()``
        says which); categorical features never are. The fitted terms are
        ``linear_terms_`` and their effects per unit of ``x``
        ``linear_coef_``; ``docs/linear_terms.rst`` describes them. The
        default because rules and lines together were at least as good as
        rules alone on every benchmark data set, within seed-to-seed noise
        (``benchmarks/linear_terms/RESULTS.md``). ``False``: rules only.
    monotone : dict, sequence, str or None, default=None
        Features the model must be monotone in: ``{feature name or index:
        +1 or -1}``, or the boosting libraries' form (a sequence of -1/0/+1
        per feature, or XGBoost's string ``"(1,0,-1)"``). +1: the fitted
        model (every output's score, through ``predict`` and every export)
        is non-decreasing in the feature for every value of the other
        features, exactly; -1: non-increasing. A rule whose conditions on a
        constrained feature are only lower bounds (``x > t``) gets a
        contribution of the constraint's sign, only upper bounds
        (``x <= t``) the opposite sign; a rule with an interval on it, or
        two constrained features asking for opposite signs, is not offered;
        a linear term's slope takes the constraint's sign. Over non-missing
        values: a row with the feature missing gets the rules that send a
        missing value its way (``docs/monotone.rst``). None: the model's own
        constraints (XGBoost and LightGBM ``monotone_constraints``,
        scikit-learn ``monotonic_cst``, CatBoost), if it has any; ``{}``:
        none. A category feature, or one the model splits as a category, is
        an error. The constraints applied are ``monotone_`` and
        ``linear_sign_``.
    linear_sign : dict, sequence, str or None, default=None
        The sign of linear terms (``linear_terms=True``), in the forms of
        ``monotone``: ``{feature: +1}`` keeps the term's slope ``>= 0``
        (-1: ``<= 0``) without constraining the rules. A monotone feature's
        term takes its constraint's sign already; a ``linear_sign`` that
        disagrees with it is an error.
    stable : bool, default=False
        A rule set that random halves of the data agree on
        (``docs/stability.rst``): the default forest (2,000 trees of depth 2,
        a third of the features per split) gives rules of one or two
        conditions (``rule_depth=(1, 2)`` unless ``rule_depth`` is set), and
        the ``max_rules`` most frequent of them over the trees form the pool
        (SIRUS's; the two sides of a split, ``x <= t`` and ``x > t``, count
        as one rule; a rule equal to a more frequent one up to each
        feature's deciles, a feature of at most ten values compared threshold
        by threshold, or a linear combination of more frequent ones and
        the constant, is left out). With the linear terms (``linear_terms``, the
        default), this estimator and the binary classifier keep every pool
        rule, with no sparsity penalty but a small fixed ridge (without it
        a classifier's rule that holds one class runs off, and 14 free rules
        overfit a small sample), and FIRE's path and cross-validation choose
        only the linear terms beside them (``max_rules`` is then the number
        of rules, the linear terms come on top). Otherwise (``linear_terms=False``; the
        multi-class classifier; the Poisson and survival estimators, not
        measured kept) FIRE's path and cross-validation select and weight
        rules in the pool, a rule's penalty growing as its frequency falls
        (``f_max / f`` under L1), so that rules enter in about the order of
        their frequency. ``rules_`` then has a
        ``stability`` column (each rule's frequency over the trees) and
        ``path_.stability`` the agreement of the terms (rules and linear
        terms) of 20 fits on random halves of the rows at each point of the
        path, beside its validation error. About 3 times the CPU of a default fit
        with the default forest (most of it growing the 2,000 trees); more with a large model of your own, whose
        rules at depths 1 and 2 form the pool.
    confirmatory : list or dict, default=None
        Terms every fit keeps whatever ``lam``, unpenalised (R ``pre``'s
        ``confirmatory``; ``docs/confirmatory.rst``): a feature's name or
        index is a linear term (clipped and centred as the linear terms
        are, and then not offered as a penalised one), any other text a
        rule as firecy prints rules (``"bmi > 30 and bp > 100"``, read by
        :func:`~firecy.rules.parse_rule`: its 0/1 indicator). A dict
        ``{term: sign}`` constrains a term's weight: +1 (>= 0), -1 (<= 0),
        0 (free). A multi-class model has one per class (a free term's weights
        summing to zero over the classes: the softmax ignores a common
        shift). They are not
        counted against ``max_rules`` (which bounds the terms the path
        selects): the outputs say "N rules ... + K confirmatory", and
        ``confirmatory_`` and ``confirmatory_coef_`` hold them. A rule that
        selects no training row or every one, a text that neither names a
        feature nor parses, a constant feature: ValueError.
    n_lambdas : int, default=50
        Number of path points.
    eps : float, default=1e-3
        The path ends at ``eps * lambda_max``.
    selection : {"cv", "validation", "budget"}, default="cv"
        How lambda (and the grid point) is selected: the mean validation
        error over the folds of ``cv`` (each fold fits its own path on the
        full path's lambdas), or the error on one held-out split of
        ``validation_fraction`` of the rows (5x cheaper, noisier on small
        data). Errors are weighted by ``sample_weight``.
        ``"budget"``: no validation; the path point with the most rules
        within ``max_rules`` (then the smallest lambda), the model size
        fixed by the user as for a risk score (about a sixth of the cost of
        5-fold CV; ``validation_error_`` is NaN). Needs one penalty (no
        parameter lists).
    validation_fraction : float, default=0.2
        Held-out fraction for ``selection="validation"``, in (0, 1).
    cv : int, cross-validation splitter or iterable, default=5
        Folds for ``selection="cv"``; an int means shuffled ``KFold`` seeded
        with ``random_state``.
    refine_path : bool, default=True
        Where the number of rules jumps by more than one between neighbouring
        lambdas below ``max_rules``, insert lambdas by bisection in log
        lambda (warm-started) until every count is reached or the jump is
        narrower than 1e-3 in log lambda, so that the selection is offered
        rule sets of every size (see :func:`firecy.solver.fire_path`).
    one_se : bool, default=False
        One-standard-error rule (needs ``selection="cv"``): among the
        eligible points whose mean validation error is within one standard
        error (over the folds) of the lowest, take the one with the fewest
        rules. Fewer rules, slightly higher error.
    fit_intercept : bool, default=True
        Fit the unpenalised intercept ``b``.
    tol : float, default=1e-6
        Solver tolerance (see :func:`firecy.solver.solve`).
    max_iter : int, default=None
        Maximum block updates per path point (default ``1000 * n_trees``).
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
        Seeds the default forest and the validation / CV split. An
        ``estimator`` you pass keeps its own ``random_state``.

    Attributes
    ----------
    estimator_ : estimator
        The fitted ensemble model used.
    ensemble_ : RuleEnsemble
        The ensemble's rules, leaf values and design
        (see :func:`firecy.ensembles.rule_ensemble_from_model`).
    coef_ : ndarray of shape (n_rules_total,)
        Rule weights (mostly zero): the selected path point's, with the
        weights of kept rules that hold the same conditions in different
        trees summed onto one of them (same predictions), so that every
        kept rule is a distinct rule.
    intercept_ : float
        The intercept ``b`` (on top of the ensemble's baseline).
    rule_depth_ : int, tuple of int or None
        The depth the trees were cut at (None: every leaf is a rule; a
        tuple: the depths of a union of cuts).
    rule_values_ : {"leaf", "unit"}
        The rule values solved on (``rule_values`` with "auto" resolved).
    n_rules_ : int
        Number of nonzero rule weights.
    linear_terms_ : LinearTerms
        The linear terms offered (none with ``linear_terms=False``): their
        features, names, clip bounds ``lower`` / ``upper``, ``center`` (the
        value a missing ``x`` takes), design ``scale`` and ``not_offered``.
    confirmatory_ : ConfirmatoryTerms or None
        The confirmatory terms (``confirmatory``): each one's text, kind
        ("rule" or "linear"), sign constraint, and a linear term's clip
        range and centre. None without them.
    confirmatory_coef_ : ndarray of shape (n_confirmatory,) or (n_classes, n_confirmatory), or None
        Their weights: a rule's contribution where it holds, a linear
        term's slope per unit of ``x``.
    n_confirmatory_ : int
        The confirmatory weights (terms times classes of a multi-class
        model); 0 without them. ``n_terms_`` does not count them.
    linear_coef_ : ndarray of shape (n_linear_terms,)
        The effect of each term per unit of its feature (0: not kept);
        the raw prediction adds ``linear_coef_[t] * (clip(x, lower[t],
        upper[t]) - center[t])``.
    monotone_ : ndarray of int8 of shape (n_features,)
        The monotone constraints applied (``monotone``, or the model's own):
        -1, 0 or +1 per feature (``docs/monotone.rst``).
    linear_sign_ : ndarray of int8 of shape (n_features,)
        The sign each feature's linear term was held to (its monotone sign,
        else ``linear_sign``'s; 0: free).
    n_terms_ : int
        Kept rules plus kept linear terms (what ``max_rules`` bounds).
    max_rules_ : int or None
        The budget ``max_rules`` stood for ("auto" resolved: 14, or 10 for a
        ``stable=True`` fit that keeps its pool).
    lambda_ : float
        The selected (or given) ``lam``.
    warm_lambdas_ : ndarray of float
        The lambdas of the warm-started solves that lead to the model, ending
        at ``lambda_``: with ``lam=lambda_`` they fit it again (see ``lam``).
    best_params_ : dict
        The selected ``gamma``, ``fusion``, ``group_l0`` (or ``penalty``).
    penalty_ : Penalty
        The penalty at the selected point (``penalty_.lam == lambda_``).
    path_ : FIREPath
        The selected grid point's path: arrays ``lambdas``, ``n_rules``,
        ``objectives``, ``validation_error`` (also ``coefs``,
        ``intercepts``, ``validation_error_std``, ``eligible``, ``inserted``,
        ``skipped_counts``; dict-style access works too).
    paths_ : list of FIREPath
        One path per grid point.
    n_iter_ : int
        Block updates the solver made at the selected path point (full data,
        warm-started from the previous point).
    validation_error_ : float
        Validation error of the selected point (NaN when nothing was
        selected: fixed ``lam`` and a single grid point).
    rules_ : pandas.DataFrame
        The selected rules (see :func:`firecy.rules.rules_table`).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X``; they name the rules' features.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from firecy import FIRERegressor
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> fire = FIRERegressor(random_state=0).fit(X, y)
    >>> fire.n_rules_ <= 14
    True
    """

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
            Numeric features; a DataFrame's column names name the rules'
            features. Category-dtype columns are passed through to an
            ``estimator`` that handles them natively. A SciPy sparse matrix
            (CSR or CSC) is read by the model as its library reads sparse
            input (``docs/ensembles.rst``). A Dask array or DataFrame fits
            with :func:`firecy.dask.fit_dask` (``docs/dask.rst``).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Weights ``s`` of the objective; also passed to the ensemble's
            ``fit`` and used in the validation error.
        progress : callable, default=None
            Called as ``progress(k, n_points, result)`` after every solved
            path point (full-data paths and validation folds, from worker
            threads: make it thread-safe). ``firecy.cli`` passes a progress
            bar. Needs joblib's thread backend (the default) to be called in
            this process.

        Returns
        -------
        self : object
        """
        if is_dask(X, y, sample_weight):   # rows in a Dask cluster: firecy.dask
            from firecy._dask._fit import fit_dask

            return fit_dask(self, X, y, sample_weight, progress=progress)
        data = validate_fit_data(self, X, y, sample_weight, y_numeric=True,
                                 default_model_name="RandomForestRegressor")
        return fit_rule_model(self, data, regression_task(self, data), progress)

    # -- predict --------------------------------------------------------------
    def predict(self, X):
        """Predict with the selected rules.

        ``predict(X) = ensemble_.predict_raw(X, coef_) + intercept_``, i.e. the
        ensemble's baseline plus ``b + M w``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        if is_dask(X):
            from firecy._dask._methods import dask_method

            return dask_method(self, "predict", X)
        return self._raw_prediction(X).reshape(-1)

    def score(self, X, y, sample_weight=None):
        """The coefficient of determination R^2 of :meth:`predict` on ``X``.

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
