"""The job both commands run: fit the ensemble, FIRE and L1 selection, and score them."""
import math
import time

import numpy as np

from firecy.cli._errors import CLIError
from firecy.cli._progress import fit_with_progress, status
from firecy._escape import display_value

__all__ = ["run_job", "describe", "describe_fit", "describe_selection", "summary_rows",
           "read_categories"]


def read_categories(model, X):
    """Let ``model`` read the category columns of ``X`` natively (XGBoost
    needs ``enable_categorical=True``; LightGBM reads a pandas category
    column as categorical by itself)."""
    from firecy.cli._text_columns import has_categories

    if hasattr(X, "dtypes") and has_categories(X) and type(model).__module__.startswith(
            "xgboost"):
        model.set_params(enable_categorical=True)


def _make_forest(kind, n_trees, max_depth, seed, n_jobs, classification=False):
    suffix = "Classifier" if classification else "Regressor"
    if kind == "rf":
        import sklearn.ensemble

        forest = getattr(sklearn.ensemble, "RandomForest" + suffix)
        return forest(n_estimators=n_trees, max_depth=max_depth, random_state=seed,
                      n_jobs=n_jobs)
    if kind == "xgboost":
        try:
            import xgboost
        except ImportError:
            raise CLIError(
                "--model xgboost needs xgboost: pip install 'firecy[xgboost]'") from None
        return getattr(xgboost, "XGB" + suffix)(
            n_estimators=n_trees, max_depth=max_depth, learning_rate=0.1,
            random_state=seed, n_jobs=n_jobs)
    try:
        import lightgbm
    except ImportError:
        raise CLIError("--model lightgbm needs lightgbm: pip install 'firecy[lightgbm]'") from None
    return getattr(lightgbm, "LGBM" + suffix)(n_estimators=n_trees, max_depth=max_depth,
                         num_leaves=2 ** max_depth, learning_rate=0.1, random_state=seed,
                         n_jobs=n_jobs, verbose=-1)


def _make_fire(model, args, penalty, fusion):
    from firecy.estimators import FIREClassifier, FIRERegressor

    params = dict(estimator=model, penalty=penalty, fusion=fusion, max_rules=args.max_rules,
                  n_lambdas=args.n_lambdas, selection=args.selection, cv=args.cv,
                  one_se=args.one_se,
                  refine_path=not args.no_refine_path, random_state=args.seed,
                  n_jobs=args.n_jobs, tol=getattr(args, "tol", 1e-6),
                  max_iter=getattr(args, "max_iter", None),
                  rule_depth=getattr(args, "rule_depth", "auto"))
    if getattr(args, "rule_values", None) is not None:
        params["rule_values"] = args.rule_values
    if getattr(args, "linear_terms", None) is not None:
        params["linear_terms"] = args.linear_terms
    if getattr(args, "confirmatory", None):
        params["confirmatory"] = list(args.confirmatory)
    if getattr(args, "stable", False):
        # a stable fit grows its own forest of depth-2 trees (the job's random
        # forest stays the comparison's); a boosted model is read as given
        params["stable"] = True
        if args.model == "rf":
            params["estimator"] = None
    if penalty == "mcp":
        params["gamma"] = args.gamma
    if _is_classification(args):
        return FIREClassifier(**params)
    return FIRERegressor(**params)


def _is_classification(args):
    return getattr(args, "task", "regression") == "classification"


def _class_scores(est, X, y):
    """Test accuracy, log-loss and AUC (one-vs-rest macro for K > 2)."""
    from sklearn.metrics import log_loss

    from firecy._metrics import roc_auc

    proba = est.predict_proba(X)
    classes = est.classes_
    acc = float(np.mean(classes[np.argmax(proba, axis=1)] == y))
    out = dict(test_accuracy=acc,
               test_log_loss=float(log_loss(y, np.clip(proba, 1e-15, 1.0), labels=classes)))
    # one-vs-rest macro over the classes the test rows hold (a rare class may
    # have none there): the selection's own definition; NaN for a single class
    codes = np.searchsorted(classes, y)
    out["test_auc"] = float(roc_auc(codes, proba, None))
    return out


def _mse(y, pred):
    return float(np.mean((np.asarray(y, dtype=float) - np.asarray(pred, dtype=float)) ** 2))


def _r2(y, pred):
    y = np.asarray(y, dtype=float)
    ss = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(np.sum((y - np.asarray(pred, dtype=float)) ** 2)) / ss if ss else math.nan


def describe(penalty, gamma, fusion):
    """The penalty in words, e.g. ``"MCP (gamma 1.1) + fusion 0.5"``."""
    if penalty == "l1":
        name = "L1 (lasso, RuleFit-style)"
        return name + (f" + fusion {fusion:g}" if fusion else "")
    return f"MCP (gamma {gamma:g})" + (f" + fusion {fusion:g}" if fusion else "")


def describe_fit(args, penalty, fusion):
    """The fit in words: the penalty (:func:`describe`), after "stable pool +"
    for a ``--stable`` fit (its rules come from SIRUS's pool of frequent rules)."""
    text = describe(penalty, args.gamma, fusion)
    return "stable pool + " + text if getattr(args, "stable", False) else text


def describe_selection(est):
    """How a fitted FIRE estimator chose its rule set, in one sentence."""
    path = est.path_
    if est.selection == "budget" and est.lam is None:
        return (f"the most rules within the budget of {est.max_rules_} "
                f"({est.n_rules_}), no validation")
    how = (f"{est.cv}-fold cross-validation" if est.selection == "cv" and isinstance(est.cv, int)
           else "cross-validation" if est.selection == "cv"
           else f"a {est.validation_fraction:.0%} validation split")
    # the candidates only: inserted points inside a run of one rule count
    # are not among them (firecy.solver._refine.candidate_points)
    n_inserted = int(np.sum(path.inserted & path.eligible))
    unit = "terms (rules and linear terms)" if getattr(est, "linear_terms_", None) else "rules"
    text = (f"chosen by {how} among {int(np.sum(path.eligible))} path points with at most "
            f"{est.max_rules_} {unit}")
    if n_inserted:
        text += f" ({n_inserted} of them inserted where the number of rules jumped)"
    if est.one_se:
        text += ", one-standard-error rule"
    return text


def run_job(X, y, args, *, label):
    """Fit the forest, FIRE and L1 selection; return everything needed to report.

    Regression and classification; a count or survival task goes to
    :func:`firecy.cli._glm_task.run_glm_job` instead (``run_extract`` chooses)."""
    from sklearn.model_selection import train_test_split

    quiet = args.no_progress
    if args.one_se and args.selection != "cv":
        raise CLIError("--one-se needs --selection cv (a standard error over the folds)")
    # plain arrays (or, with category columns, a frame of columns f0, f1, ...):
    # the libraries rename or reject some column names (spaces, brackets); the
    # rules are printed with the real names
    from firecy.cli._text_columns import csv_line_numbers, model_frame

    classification = _is_classification(args)
    lines = csv_line_numbers(X)
    X = model_frame(X)
    y = np.asarray(y) if classification else np.asarray(y, dtype=np.float64)
    if classification:
        _check_class_rows(y, "in the data")
    if classification and getattr(args, "model", "rf") == "xgboost":
        y = _xgboost_codes(y, quiet)
    if args.test_size > 0:
        stratify = None
        if classification and np.unique(y, return_counts=True)[1].min() >= 2:
            stratify = y
        X_tr, X_te, y_tr, y_te, lines_tr, lines_te = train_test_split(
            X, y, lines, test_size=args.test_size, random_state=args.seed, stratify=stratify)
    else:
        X_tr, X_te, y_tr, y_te, lines_tr, lines_te = X, None, y, None, lines, None
    if classification and X_te is not None:
        _check_class_rows(y_tr, f"among the training rows (--test-size {args.test_size:g} "
                          "holds the others out; --test-size 0 keeps them all)")
    forest = _make_forest(getattr(args, "model", "rf"), args.n_trees, args.max_depth,
                          args.seed, args.n_jobs, classification)
    read_categories(forest, X)
    t0 = time.perf_counter()
    status(f"fitting {label}: {args.n_trees} trees of depth {args.max_depth} "
           f"on {len(y_tr)} rows ...", quiet)
    forest.fit(X_tr, y_tr)
    fusion = args.fusion
    fire = _make_fire(forest, args, args.penalty, fusion)
    fit_with_progress(fire, X_tr, y_tr,
                      f"FIRE path, {describe_fit(args, args.penalty, fusion)}", not quiet)
    l1 = None
    if args.penalty != "l1" or fusion:
        l1 = _make_fire(forest, args, "l1", 0.0)
        fit_with_progress(l1, X_tr, y_tr, "L1 path (comparison)", not quiet)
    elapsed = time.perf_counter() - t0
    res = dict(X_tr=X_tr, X_te=X_te, y_tr=y_tr, y_te=y_te, forest=forest, fire=fire, l1=l1,
               fusion=fusion, elapsed=elapsed, lines_tr=lines_tr, lines_te=lines_te)
    def scores(est):
        if classification:
            return _class_scores(est, X_te, y_te)
        pred = est.predict(X_te)
        return dict(test_mse=_mse(y_te, pred), test_r2=_r2(y_te, pred))

    rows = summary_rows(fire, l1, forest, args, fusion, label,
                        None if X_te is None else scores)
    res["summary"] = rows
    res["classification"] = classification
    return res


def summary_rows(fire, l1, model, args, fusion, label, scores):
    """The comparison table's rows: FIRE, L1 at the same budget (if fitted)
    and the full model, with their terms (``n_terms``: ``n_rules`` rules and
    ``n_linear_terms`` linear terms; a full model's terms are its leaves),
    antecedents and ``scores(est)`` (a dict of test scores; None: no test
    rows)."""
    rows = []
    stable = ", stable pool" if getattr(args, "stable", False) else ""
    for name, est in [("FIRE " + describe_fit(args, args.penalty, fusion), fire),
                      ("L1 selection, same budget" + stable, l1), (f"full {label}", model)]:
        if est is None:
            continue
        is_fire = est is fire or est is l1
        # the full model's rules are its leaves, whatever depth FIRE cut at
        leaves = fire.ensemble_.uncut or fire.ensemble_
        if is_fire:
            # the fitted model's account: terms, rules and lines counted apart
            entry = dict(name=name, **est.model_.counts())
            del entry["n_trees"]
        else:
            entry = dict(name=name, n_terms=int(leaves.n_rules), n_rules=int(leaves.n_rules),
                         n_linear_terms=0, n_antecedents=None)
        if scores is not None:
            entry.update(scores(est))
        rows.append(entry)
    return rows


def _check_class_rows(y, where):
    """A class with a single row is an error before anything is fitted (the
    estimator's own rule, said in the command's terms: FIRE chooses its rules
    on validation folds, which need two rows of every class)."""
    labels, counts = np.unique(y, return_counts=True)
    single = labels[counts == 1]
    if single.size:
        names = ", ".join(display_value(v) for v in single[:5].tolist())
        raise CLIError(
            f"class{'es' if single.size > 1 else ''} {names} of the target "
            f"ha{'ve' if single.size > 1 else 's'} a single row {where}: FIRE chooses its "
            "rules on validation folds, which need at least 2 rows of every class; "
            "drop or relabel such rows")


def _xgboost_codes(y, quiet):
    """XGBoost's classifier takes the labels 0..K-1 only: other labels become
    their index in sorted order (said on stderr)."""
    labels, codes = np.unique(y, return_inverse=True)
    if np.array_equal(labels, np.arange(labels.size)):
        return y
    status("XGBoost needs class labels 0..K-1; classes: "
           + ", ".join(f"{k} = {display_value(lab)}" for k, lab in enumerate(labels.tolist())),
           quiet)
    return codes
