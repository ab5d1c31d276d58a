"""How a FIRE fit flows, top to bottom: :func:`fit_rule_model`.

Every estimator's ``fit`` validates its data (``_data.validate_fit_data``),
builds a :class:`Task` (what its loss needs: the encoded target, the default
model, the path fitter, the validation loss, a classifier's classes) and
calls :func:`fit_rule_model`, which runs these steps in order, each once:

1. **the model** (``_model.fitted_model``): the given fitted model, checked
   against ``X``; or the given unfitted model, cloned and fitted; or the
   task's default forest;
2. **its rules** (:func:`rule_set`): the model's
   :class:`~firecy.ensembles.RuleEnsemble`, cut at ``rule_depth``
   (``_rule_depth``), with its rule values (``_rule_values``), and the leaf
   table of ``X``;
3. **the design** (:func:`design`): the target the paths fit (the task's
   packing of ``y`` and the ensemble's baseline), and the leaf values, both
   rescaled exactly by powers of two for the squared loss (``_scaling``);
4. **a check that the data fit the model** (``_diagnostics``);
5. **the paths and the selection** (:func:`select`): one path per penalty
   grid point, scored on the validation folds (``_selection``);
6. **the fitted attributes** (:func:`set_fitted`): ``coef_``,
   ``intercept_``, ``lambda_``, ``path_``, ``ensemble_``, ...

Nothing here calls back into the estimator: what differs between
regression, classification, counts and survival is data in the
:class:`Task`.  ``docs/fit_flow.rst`` walks through it for contributors.
"""
import copy
import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from firecy.estimators import _confirmatory as confirm
from firecy.estimators._data import model_input
from firecy.estimators._diagnostics import check_model_matches_data
from firecy.estimators._fit_design import FitDesign
from firecy.estimators._fit_options import fit_options
from firecy.estimators._linear_terms import (LINEAR_PENALTY, linear_design, offer_linear_terms,
                                             split_coef, with_linear_penalty)
from firecy.estimators._model import fitted_model
from firecy.estimators._monotone import (check_constraints, constrain_penalty,
                                         resolve_constraints, sign_bounds)
from firecy.estimators._merge_rules import merge_equal_rules
from firecy.estimators._model_inspection import unwrap
from firecy.estimators._params import (BUILTIN_PENALTIES, check_lambdas, check_params,
                                       penalty_grid, rule_budget)
from firecy.estimators._rule_depth import rules_at_depth, warn_small_rules
from firecy.estimators._rule_values import apply_rule_values
from firecy.estimators._scaling import PowerOfTwoScale, check_finite_design
from firecy.estimators._selection import select_on_paths
from firecy.estimators._splits import validation_splits
from firecy.penalties import bind_ensemble
from firecy.rules import column_support
from firecy.rules import LinearTerms

__all__ = ["Task", "fit_rule_model"]


@dataclass
class Task:
    """What one estimator's fit needs that another's does not.

    Attributes
    ----------
    kind : {"regression", "classification"}
        The kind of tree model the task reads.
    default_model : estimator
        The unfitted model to fit when ``estimator`` is None.
    model_y : ndarray
        What an unfitted model is fitted on (y; class indices; rates;
        martingale residuals ...).
    pack_target : callable
        ``pack_target(baseline)``: the per-row target the paths fit, given
        the ensemble's baseline on the training rows (regression:
        ``y - baseline``; the others pack ``y`` with the baseline as an
        offset).
    fitter : callable
        ``fitter(ensemble)``: the path fitter for the fit's rules (see
        ``_selection.SquaredLossPaths``).
    validation_loss : callable
        ``loss(y, pred, sample_weight)`` per column of ``pred``.
    model_weight : ndarray, optional
        Weights the model is fitted with instead of the sample weights
        (Poisson: ``exposure * sample_weight``).
    classes : ndarray, optional
        A classifier's labels; ``codes`` its class index per row (the folds
        are stratified on them).
    loss : {"squared", "logistic", "poisson", "cox"}
        The datafit, for what depends on it here: the squared loss is
        solved in power-of-two units (it is homogeneous), and a constant
        target then selects no rule, at one lambda.
    """

    kind: str
    default_model: object
    model_y: np.ndarray
    pack_target: Callable
    fitter: Callable
    validation_loss: Callable
    model_weight: Optional[np.ndarray] = None
    classes: Optional[np.ndarray] = None
    codes: Optional[np.ndarray] = None
    loss: str = "squared"


@dataclass
class RuleSet:
    """Step 2's result: the fit's rules and how they were made."""

    ensemble: object
    leaf_table: np.ndarray
    model_X: object                   # X in the form the model reads it
    cut: object                       # _rule_depth.DepthCut
    rule_values: str
    notes: list = field(default_factory=list)


@dataclass
class Design:
    """Step 3's result: the arrays the paths fit, in solver units."""

    target: np.ndarray
    leaf_values: np.ndarray
    block_ptr: np.ndarray
    scale: PowerOfTwoScale
    baseline: np.ndarray              # the ensemble's, on the training rows
    linear: LinearTerms = field(default_factory=LinearTerms.empty)
    extra: Optional[np.ndarray] = None   # the linear terms' columns, solver units
    extra_class: Optional[np.ndarray] = None   # and each column's output
    linear_penalty: str = LINEAR_PENALTY   # the terms' penalty (_fit_options)
    signs: object = None              # monotone / linear_sign bounds (_monotone)

    @property
    def n_rule_blocks(self):
        return len(self.block_ptr) - 1


def fit_rule_model(est, data, task, progress=None):
    """Fit ``est``'s rule weights on ``data`` (a :class:`~firecy.estimators._data.FitData`).

    Returns ``est``, fitted.
    """
    check_params(est)
    constraints = check_constraints(est, data)
    # confirmatory='s form, before any model is fitted (its terms are read at step 3c)
    confirm.check_confirmatory(getattr(est, "confirmatory", None))
    grid = penalty_grid(est)
    model, model_names = fitted_model(est, data, task)
    data = relative_weights(data)
    rules = rule_set(est, model, data, model_names, task)
    # a penalty on per-rule data (rule lengths, node hierarchy) reads the rules here
    grid = [(params, bind_ensemble(pen, rules.ensemble)) for params, pen in grid]
    # only the built-in penalties are known to scale with the loss
    rescale = task.loss == "squared" and isinstance(est.penalty, str) \
        and est.penalty.lower() in BUILTIN_PENALTIES
    fit = design(rules, data, task, model, rescale)
    options = fit_options(est)
    fit.linear_penalty = options.linear_penalty
    if getattr(est, "linear_terms", False):
        add_linear_terms(fit, rules, data)
    # confirmatory terms: unpenalised columns after the linear terms' (_confirmatory)
    confirm.add_confirmatory_terms(est, fit, rules, data)
    constraints = resolve_constraints(constraints, unwrap(model), rules.ensemble, data)
    fit.signs = sign_bounds(constraints, rules.ensemble, fit.leaf_values, fit.linear)
    check_model_matches_data(unwrap(model), rules.ensemble, rules.leaf_table, data, task,
                             baseline=fit.baseline, prefitted=model is est.estimator)
    pool, empty_pool = None, False
    budget = rule_budget(est)
    if getattr(est, "stable", False):
        # SIRUS's pool (the most frequent distinct rules), FIRE's selection in it
        from firecy.estimators._stable import keeps_pool_rules, stable_pool

        keep = keeps_pool_rules(confirm.penalised_extra(fit), _rules_fitter(task, rules),
                                task.loss,
                                options.keep_pool_losses)
        # "auto": 10 rules for a stable fit that keeps its pool
        budget = rule_budget(est, kept_pool=keep is not None)
        pool = stable_pool(est, rules, fit.leaf_values, data.sample_weight, extra=fit.extra,
                           keep_rules=keep, size=budget,
                           offered=None if fit.signs is None else fit.signs.offered,
                           **options.pool())
        if not len(pool[1]):
            # no rule splits the rows of positive weight (a constant y: every
            # tree is one leaf): nothing to rank, and no rule could take a
            # weight; fitted as without stable=True (the intercept, and any
            # linear terms), with no rule's stability
            pool = None
            empty_pool = True
    paths, best = select(est, grid, rules, fit, data, task, progress, budget,
                         source=None if pool is None else pool[0])
    if pool is not None:
        # shown beside the validation error, not used to choose: preferring the
        # most stable point within one SE of the lowest error bought no
        # stability over the lowest error (benchmarks/stability/RESULTS.md)
        _record_path_stability(est, grid, fit, data, task, rules, pool[0], paths, best,
                               options.n_subsamples)
    set_fitted(est, model, model_names, rules, fit, paths, best, grid, data,
               None if pool is None else pool[1:], None if pool is None else pool[0])
    n = int(est.n_features_in_)
    est.monotone_ = np.zeros(n, np.int8) if constraints is None else constraints.monotone
    est.linear_sign_ = np.zeros(n, np.int8) if constraints is None else constraints.linear_sign
    if empty_pool:
        est.stable_columns_ = np.zeros(0, dtype=np.intp)
        est._rule_stability = np.full(len(fit.leaf_values), np.nan)
        for path in paths:
            path.stability = np.full(len(path.lambdas), np.nan)
    est.max_rules_ = budget
    # a stable fit that keeps its pool: the budget counts its rules, lines on top
    est._kept_pool = pool is not None and keep is not None
    return est


def relative_weights(data):
    """``data`` with its sample weights divided by the largest (a copy).

    Everything after the model reads the weights only relative to each
    other, so a constant factor on them must change nothing; dividing by the
    largest makes all-equal weights exactly ones, so that weights of 1.1 or
    7 fit exactly what no weights fit (a non-convex path amplifies the
    rounding of unnormalised sums into another local solution). The model
    itself saw the weights as given (the default forest draws
    ``sum(sample_weight)`` rows per tree: an integer weight is a repetition).
    """
    w = data.sample_weight
    top = float(np.max(w)) if w.size else 0.0
    if top <= 0 or top == 1.0:
        return data
    return dataclasses.replace(data, sample_weight=w / top)


def rule_set(est, model, data, model_names, task):
    """Step 2: the model's rules on ``X``, cut and valued as ``est`` asks."""
    from firecy.ensembles import rule_ensemble_from_model

    inner = unwrap(model)
    Xm = model_input(data.X, model_names, data.native_categorical)
    # the DataFrame's columns name the rules (a model fitted on an array has
    # no names; LightGBM renames columns with spaces); the training frame
    # also gives XGBoost < 3.4 the non-ASCII labels it keeps only in part
    ens = rule_ensemble_from_model(inner, feature_names=data.feature_names, X=Xm)
    _check_outputs(ens, task, type(est).__name__)
    n_model = getattr(ens, "n_features_in_", None)
    if n_model is not None and int(n_model) != est.n_features_in_:
        raise ValueError(
            f"X has {est.n_features_in_} features, but the estimator "
            f"{type(inner).__name__} was fitted with {int(n_model)}")
    # stable=True: single conditions and pairs unless rule_depth says otherwise
    depth = (1, 2) if getattr(est, "stable", False) and est.rule_depth == "auto" else None
    ens, table, cut = rules_at_depth(est, ens, Xm,
                                     data.sample_weight if data.weighted else None, depth)
    ens, values, values_note = apply_rule_values(est.rule_values, inner, ens)
    notes = [cut.note] + ([values_note] if values_note else [])
    return RuleSet(ens, table, Xm, cut, values, notes)


def _check_outputs(ensemble, task, owner):
    n_outputs = int(getattr(ensemble, "n_outputs", 1))
    if task.classes is None:
        if n_outputs != 1:
            raise ValueError(f"{owner} needs a single-output regression ensemble; this one "
                             f"has {n_outputs} outputs")
        return
    K = task.classes.size
    if not ((n_outputs == 1 and K == 2) or n_outputs == K):
        raise ValueError(
            f"the ensemble has {n_outputs} output(s) but y has {K} classes: a classifier "
            f"of {K} classes has " + ("one output (binary)" if K == 2 else f"{K} outputs"))


def design(rules, data, task, model, rescale):
    """Step 3: the target and leaf values the paths fit, in solver units
    (``rescale``: by powers of two, exactly)."""
    ens = rules.ensemble
    leaf_values = np.ascontiguousarray(ens.leaf_values, dtype=np.float64)
    block_ptr = np.asarray(ens.block_ptr, dtype=np.int64)
    baseline = np.asarray(ens.baseline(rules.model_X), dtype=np.float64)
    target = task.pack_target(baseline)
    # a regression target is y minus the baseline; the others pack y with
    # the baseline (their own checks hold for it)
    check_finite_design(target if target.ndim == 1 else None, leaf_values, block_ptr,
                        unwrap(model), X=data.X)
    # solve in units where target and leaf values are of order one (exact),
    # from the rows the fit sees: a zero-weight row is as good as absent
    scale = PowerOfTwoScale(target[data.sample_weight > 0], leaf_values, enabled=rescale)
    target_s, leaf_values_s = scale.scale_data(target, leaf_values)
    return Design(target_s, leaf_values_s, block_ptr, scale, baseline)


def add_linear_terms(fit, rules, data):
    """Step 3b (``linear_terms=True``): the linear terms offered, and their
    design columns in solver units, one per (term, output)."""
    ens = rules.ensemble
    names = data.feature_names or [str(n) for n in ens.feature_names]
    fit.linear = offer_linear_terms(data, names, rules.leaf_table,
                                    np.asarray(ens.leaf_values, dtype=np.float64))
    if len(fit.linear):
        fit.extra, fit.extra_class = linear_design(fit.linear, data.X, ens.n_outputs,
                                                   fit.scale.kv)


def _fixed_lambdas(est, task, fit, sample_weight):
    """The lambda grid of the paths in solver units, or None for each
    path's default grid (``lam``, ``lambdas``; a constant target)."""
    factor = fit.scale.lam_factor
    lambdas = check_lambdas(getattr(est, "lambdas", None))
    if est.lam is not None:
        lam = float(est.lam)
        # the warm path through the given lambdas down to lam (a fitted
        # model's warm_lambdas_ solve it again), or lam alone, from zero
        chain = [] if lambdas is None else sorted({float(v) for v in lambdas if v > lam},
                                                 reverse=True)
        return np.array(chain + [lam]) / factor
    if task.loss == "squared" and est.fit_intercept:
        # a constant target: the intercept fits it and lambda_max is rounding
        # noise; one point with every weight at zero
        yw = fit.target[sample_weight > 0]
        if np.ptp(yw) <= 1e-12 * float(np.max(np.abs(yw))):
            big = (float(np.max(np.abs(fit.leaf_values))) + 1.0) * (
                float(np.max(np.abs(yw))) + 1.0)
            return np.array([big])
    return None if lambdas is None else lambdas / factor


def select(est, grid, rules, fit, data, task, progress, budget, source=None):
    """Step 5: the paths of every grid point and the selected (grid, path) point,
    on the rules' columns (or on ``source``'s: a stable fit's pool), within
    ``budget`` rules (``max_rules`` resolved)."""
    sw, n = data.sample_weight, data.n_samples
    select_lam = est.lam is None or len(grid) > 1
    by_budget = est.selection == "budget" and est.lam is None
    if by_budget and len(grid) > 1:
        # no held-out loss: nothing to compare penalties with
        raise ValueError(
            "selection='budget' takes the path point at the rule budget of one penalty; "
            f"give single values of the penalty parameters ({len(grid)} grid points), or "
            "use selection='cv'")
    splits = None
    if select_lam and not by_budget:
        splits = validation_splits(est, n, codes=task.codes, classes=task.classes,
                                   sample_weight=sw)
    if est.one_se and splits is not None and len(splits) < 2:
        raise ValueError(f"one_se=True needs at least 2 folds, cv gives {len(splits)}")
    scaled_grid, fitter = _with_linear_terms(fit.scale.scale_grid(grid),
                                             _rules_fitter(task, rules, source), fit, source)
    # a stable fit that keeps its pool's rules: the budget is the pool's size
    max_rules = None if getattr(source, "keep_rules", None) is not None else budget
    paths, best = select_on_paths(
        scaled_grid,
        source or FitDesign(rules.leaf_table, fit.leaf_values, fit.block_ptr, fit.extra),
        fit.target, sw, splits,
        lambdas=_fixed_lambdas(est, task, fit, sw), n_lambdas=est.n_lambdas, eps=est.eps,
        max_rules=max_rules, refine_path=bool(est.refine_path), one_se=bool(est.one_se),
        n_jobs=est.n_jobs, loss=task.validation_loss, lam=est.lam,
        fit_intercept=bool(est.fit_intercept), tol=float(est.tol), max_iter=est.max_iter,
        progress=progress, fitter=fitter, by_budget=by_budget)
    if source is not None:
        # a kept pool's centred columns: the intercepts of the columns as they are
        paths = [source.uncentre(p) for p in paths]
    return [fit.scale.unscale_path(p) for p in paths], best


def set_fitted(est, model, model_names, rules, fit, paths, best, grid, data, pool=None,
               source=None):
    """Step 6: the fitted attributes of ``est`` from the selected point (with
    ``pool``, a stable fit's ``(columns, frequency, scale)``: its weights are
    on the pool's columns, ``source``)."""
    g_best, k_best = best
    path = paths[g_best]
    est.paths_ = paths
    est.path_ = path
    est.best_params_ = dict(grid[g_best][0])
    n_cols = len(fit.leaf_values)
    coef = path.coefs[k_best]
    if pool is not None:
        # the pool's columns back in the ensemble's, the linear terms after them
        columns, frequency, scale = pool
        coef = np.zeros(n_cols + len(path.coefs[k_best]) - len(columns))
        coef[columns] = path.coefs[k_best][:len(columns)] * scale
        coef[n_cols:] = path.coefs[k_best][len(columns):]
        est.stable_columns_ = columns
        est._rule_stability = np.full(n_cols, np.nan)
        est._rule_stability[columns] = frequency
    coef, est.confirmatory_coef_ = confirm.split_confirmatory(coef, fit)
    rule_coef, est.linear_coef_ = split_coef(coef, n_cols, fit.linear, rules.ensemble.n_outputs)
    # a rule kept twice (equal leaves of two trees) is stated once
    est.coef_ = merge_equal_rules(rules.ensemble, np.array(rule_coef, dtype=np.float64))
    est.linear_terms_ = fit.linear
    intercept = np.array(path.intercepts[k_best], dtype=np.float64)
    # one intercept per output for a multi-output fitter
    est.intercept_ = float(intercept) if intercept.ndim == 0 else intercept
    est.lambda_ = float(path.lambdas[k_best])
    est.warm_lambdas_ = np.asarray(path.lambdas)[path.warm_start_chain(k_best)]
    est.n_rules_ = int(np.count_nonzero(est.coef_))
    est.n_terms_ = est.n_rules_ + int(np.count_nonzero(est.linear_coef_))
    confirm.set_confirmatory(est, fit)
    est.n_iter_ = int(path.n_iter[k_best])
    est.validation_error_ = float(path.validation_error[k_best])
    pen = copy.deepcopy(grid[g_best][1])
    if fit.extra is not None:
        n_blocks = fit.n_rule_blocks if pool is None else len(pool[0])
        pen = confirm.with_confirmatory_penalty(fit, with_linear_penalty(
            pen if source is None else source.rule_penalty(pen), grid[g_best][0], n_blocks,
            fit.linear_penalty))
    pen = constrain_penalty(pen, fit.signs, None if pool is None else pool[0],
                            confirm.n_fixed_columns(fit))
    pen.lam = est.lambda_
    est.penalty_ = pen
    est.rule_depth_ = rules.cut.depth
    est.rule_values_ = rules.rule_values
    est.estimator_ = model
    est.ensemble_ = rules.ensemble
    est._model_names = model_names
    est._native_categorical = data.native_categorical
    est._rule_rows = rules.cut.rows
    est._rule_depth_note = "\n".join(rules.notes)
    # what rules_ reports as each rule's support: its training rows
    est._train_support = column_support(rules.leaf_table, len(fit.leaf_values),
                                        data.sample_weight)
    est._linear_mean_abs = _linear_mean_abs(getattr(fit, "linear", None), data)
    warn_small_rules(rules.cut, est.coef_)


def _linear_mean_abs(terms, data):
    """Per offered linear term, the (weighted) training mean of
    ``|clip(x, lower, upper) - center|``: a term's mean absolute contribution
    is its slope times this (InterpretML's global importance). None without
    linear terms."""
    if terms is None or not len(terms):
        return None
    w = np.asarray(data.sample_weight, dtype=np.float64)
    if not np.sum(w) > 0:
        return None
    return np.average(np.abs(terms.centered(data.X)), axis=0, weights=w)


def _rules_fitter(task, rules, source=None):
    """The path fitter of the rules' blocks: the ensemble's trees, or
    ``source``'s columns (a stable pool)."""
    fitter = task.fitter(rules.ensemble)
    return fitter if source is None else source.fitter(fitter)


def _with_linear_terms(scaled_grid, fitter, fit, source=None):
    """The grid's penalties and the fitter for a design whose linear terms
    follow the rule blocks (the ensemble's, or ``source``'s: a stable pool's
    columns): the terms' own penalty (after the group-L0 price is scaled),
    and each block's output for a multi-output fitter; under ``monotone`` /
    ``linear_sign``, the columns' sign bounds on top (``_monotone``)."""
    scaled_grid, fitter = _with_linear_blocks(scaled_grid, fitter, fit, source)
    columns = None if source is None else source.rule_columns
    return [(params, constrain_penalty(pen, fit.signs, columns, confirm.n_fixed_columns(fit)))
            for params, pen in scaled_grid], fitter


def _with_linear_blocks(scaled_grid, fitter, fit, source=None):
    if fit.extra is None:
        return scaled_grid, fitter
    n_rule_blocks = fit.n_rule_blocks if source is None else source.n_rule_columns
    rule_penalty = (lambda pen: pen) if source is None else source.rule_penalty
    scaled_grid = [(params, confirm.with_confirmatory_penalty(fit, with_linear_penalty(
                        rule_penalty(pen), params, n_rule_blocks, fit.linear_penalty)))
                   for params, pen in scaled_grid]
    extend = getattr(fitter, "with_extra_blocks", None)
    fitter = fitter if extend is None else extend(fit.extra_class)
    # the confirmatory columns are not counted against max_rules
    return scaled_grid, confirm.confirmatory_fitter(fit, fitter)


def _record_path_stability(est, grid, fit, data, task, rules, source, paths, best,
                           n_subsamples):
    """A stable fit's ``path_.stability``: along the selected grid point's path
    (in the data's units), the agreement of fits on random halves (``_stable``)."""
    from firecy.estimators._stable import path_stability

    g, _ = best
    path = paths[g]
    lams = np.unique(path.lambdas)[::-1]
    [(_, penalty)], fitter = _with_linear_terms(fit.scale.scale_grid([grid[g]]),
                                                _rules_fitter(task, rules, source), fit,
                                                source)
    values = path_stability(est, source, penalty, lams / fit.scale.lam_factor, fit.target,
                            data.sample_weight, fitter, n_subsamples)
    path.stability = values[np.searchsorted(-lams, -np.asarray(path.lambdas))]
