"""``firecy extract --task poisson`` and ``--task survival``: the columns they
read (counts and an exposure; times and event indicators), their one-line
errors, and the job's models, estimators and test scores."""
import numpy as np

from firecy.cli._csv import read_csv
from firecy.cli._errors import CLIError

__all__ = ["GLM_TASKS", "check_task_options", "read_glm_data", "make_glm_model", "glm_estimator", "glm_fit",
           "glm_scores", "GLM_COLUMNS"]

GLM_TASKS = ("poisson", "survival")

# the test scores of each task in the comparison table: (key, header, format)
GLM_COLUMNS = {
    "poisson": [("test_deviance", "test deviance", ">13.4g"), ("test_d2", "test D2", ">8.3f")],
    "survival": [("test_c_index", "test C-index", ">12.4f")],
}


def check_task_options(args):
    """The message of a usage error in the task's options (None: they fit):
    ``--target`` for every task but survival, ``--time`` and ``--event`` for
    survival only, ``--exposure`` for poisson only, ``--ties`` for survival only."""
    task = getattr(args, "task", "auto")
    if task == "survival":
        if args.target is not None:
            return "--task survival takes --time COLUMN and --event COLUMN, not --target"
        if args.time is None or args.event is None:
            return "--task survival needs --time COLUMN and --event COLUMN"
    else:
        if args.target is None:
            return ("the following arguments are required: --target"
                    + (" (the counts)" if task == "poisson" else ""))
        if args.time is not None or args.event is not None:
            return "--time and --event are for --task survival"
    if args.exposure is not None and task != "poisson":
        return "--exposure is for --task poisson"
    if getattr(args, "ties", None) is not None and task != "survival":
        return "--ties is for --task survival"
    return None


def _numeric_column(X, column, option):
    """The column's values as floats, taken out of the features (one-line errors)."""
    if column not in X.columns:
        raise CLIError(f"{option}: no numeric feature column {column!r} in the data "
                       "(after --drop and the target)")
    import pandas as pd

    if isinstance(X[column].dtype, pd.CategoricalDtype):
        raise CLIError(f"{option} column {column!r} is text; it must hold numbers")
    values = X[column].to_numpy(dtype=float)
    missing = np.flatnonzero(np.isnan(values))
    if missing.size:
        raise CLIError(f"{option} column {column!r} has {missing.size} missing value(s) "
                       f"(CSV line {X.index[missing[0]]}); remove or fill those rows")
    return X.drop(columns=[column]), values


def read_glm_data(args):
    """``(X, y)`` for a count or survival task: ``y`` is ``[count, exposure]``
    (n, 2) for poisson, the structured ``(event, time)`` array for survival;
    text columns as :func:`firecy.cli._extract.read_data` reads them."""
    from firecy.cli._text_columns import NATIVE_CATEGORY_MODELS, one_hot

    X, y = _read_glm_columns(args)
    return (X if args.model in NATIVE_CATEGORY_MODELS else one_hot(X)), y


def _read_glm_columns(args):
    if args.task == "poisson":
        X, y, _ = read_csv(args.data, args.target, args.drop, "regression",
                           native_categories=True)
        y = y.to_numpy(dtype=float)
        if np.any(y < 0):
            raise CLIError(f"target column {args.target!r} has negative values; "
                           "--task poisson needs counts (0, 1, 2, ...)")
        if not np.any(y > 0):
            raise CLIError(f"target column {args.target!r} is zero everywhere: "
                           "a Poisson model has no finite rate")
        exposure = np.ones_like(y)
        if args.exposure is not None:
            X, exposure = _numeric_column(X, args.exposure, "--exposure")
            if np.any(exposure <= 0) or not np.all(np.isfinite(exposure)):
                line = X.index[int(np.flatnonzero(~(exposure > 0))[0]) if np.any(
                    ~(exposure > 0)) else int(np.flatnonzero(~np.isfinite(exposure))[0])]
                raise CLIError(f"--exposure column {args.exposure!r} must be positive and "
                               f"finite (CSV line {line}); a row with zero exposure carries "
                               "no information: remove it")
        return X, np.column_stack([y, exposure])
    X, time, _ = read_csv(args.data, args.time, args.drop, "regression",
                          native_categories=True)
    time = time.to_numpy(dtype=float)
    if np.any(time <= 0):
        line = int(X.index[np.flatnonzero(time <= 0)[0]])
        raise CLIError(f"--time column {args.time!r} must be positive (CSV line {line})")
    X, event = _numeric_column(X, args.event, "--event")
    if not np.all((event == 0) | (event == 1)):
        raise CLIError(f"--event column {args.event!r} must hold 0/1 or true/false")
    if not np.any(event == 1):
        raise CLIError(f"--event column {args.event!r} has no event (every time is "
                       "censored): the Cox partial likelihood is constant")
    y = np.array(list(zip(event == 1, time)), dtype=[("event", bool), ("time", float)])
    return X, y


def make_glm_model(kind, task, n_trees, max_depth, seed, n_jobs):
    """An unfitted ensemble with the task's loss where the library has it
    (XGBoost ``count:poisson`` / ``survival:cox``, LightGBM ``poisson``);
    otherwise a regressor, which the FIRE estimator fits on the rate or the
    martingale residuals."""
    from firecy.cli._job import _make_forest

    model = _make_forest(kind, n_trees, max_depth, seed, n_jobs)
    if kind == "xgboost":
        model.set_params(objective="count:poisson" if task == "poisson" else "survival:cox")
    elif kind == "lightgbm" and task == "poisson":
        model.set_params(objective="poisson")
    return model


def glm_estimator(task):
    """The FIRE estimator class of the task."""
    from firecy.estimators import FIREPoissonRegressor, FIRESurvivalRegressor

    return FIREPoissonRegressor if task == "poisson" else FIRESurvivalRegressor


def glm_fit(est, X, y, task, progress):
    """``est.fit`` with the task's target (and exposure)."""
    if task == "poisson":
        return est.fit(X, y[:, 0], exposure=y[:, 1], progress=progress)
    return est.fit(X, y, progress=progress)


def glm_scores(est, X, y, task, model=None):
    """Test scores of a FIRE estimator, or of its fitted ``model`` itself."""
    from firecy.datafits import poisson_deviance
    from firecy._metrics import concordance_index

    if task == "poisson":
        counts, exposure = y[:, 0], y[:, 1]
        if model is None:
            mu = est.predict(X, exposure=exposure)
        else:
            # a model of the rate (fitted on y / exposure, weights exposure)
            mu = np.asarray(model.predict(X), dtype=float) * exposure
        null = exposure * counts.sum() / exposure.sum()
        dev, dev0 = poisson_deviance(counts, mu), poisson_deviance(counts, null)
        return dict(test_deviance=dev, test_d2=1.0 - dev / dev0 if dev0 > 0 else np.nan)
    risk = est.predict(X) if model is None else np.asarray(model.predict(X), dtype=float)
    return dict(test_c_index=float(concordance_index(y["event"], y["time"], risk)))


def run_glm_job(X, y, args, *, label):
    """:func:`firecy.cli._job.run_job` for a count or survival task: the model
    (fitted by the FIRE estimator on what its loss needs), FIRE and L1
    selection on its rules, and their test scores."""
    import time as _time

    from sklearn.model_selection import train_test_split

    from firecy.cli._job import describe_fit, read_categories, summary_rows
    from firecy.cli._progress import Progress, status
    from firecy.cli._text_columns import csv_line_numbers, model_frame

    quiet = args.no_progress
    if args.one_se and args.selection != "cv":
        raise CLIError("--one-se needs --selection cv (a standard error over the folds)")
    lines = csv_line_numbers(X)
    X = model_frame(X)
    if args.test_size > 0:
        X_tr, X_te, y_tr, y_te, lines_tr, lines_te = train_test_split(
            X, y, lines, test_size=args.test_size, random_state=args.seed)
    else:
        X_tr, X_te, y_tr, y_te, lines_tr, lines_te = X, None, y, None, lines, None
    if args.task == "survival" and not np.any(y_tr["event"]):
        raise CLIError("no event among the training rows; lower --test-size")
    model = make_glm_model(getattr(args, "model", "rf"), args.task, args.n_trees,
                           args.max_depth, args.seed, args.n_jobs)
    read_categories(model, X)
    t0 = _time.perf_counter()
    status(f"fitting {label} ({args.task}): {args.n_trees} trees of depth "
           f"{args.max_depth} on {len(y_tr)} rows, then FIRE ...", quiet)
    from firecy.cli._errors import one_line
    from firecy.cli._job import _make_fire

    def fit(estimator, penalty, fusion, desc):
        # the regressor's parameters, on the task's estimator class
        params = _make_fire(estimator, args, penalty, fusion).get_params(deep=False)
        est = glm_estimator(args.task)(**params)
        if args.task == "survival" and getattr(args, "ties", None) is not None:
            est.set_params(ties=args.ties)
        bar = Progress(desc, not quiet)
        try:
            glm_fit(est, X_tr, y_tr, args.task, bar)
        except ValueError as exc:
            raise CLIError(one_line(exc)) from None
        finally:
            bar.close()
        return est

    fusion = args.fusion
    fire = fit(model, args.penalty, fusion,
               f"FIRE path, {describe_fit(args, args.penalty, fusion)}")
    fitted = fire.estimator_
    l1 = None
    if args.penalty != "l1" or fusion:
        l1 = fit(fitted, "l1", 0.0, "L1 path (comparison)")
    res = dict(X_tr=X_tr, X_te=X_te, y_tr=y_tr, y_te=y_te, forest=fitted, fire=fire, l1=l1,
               fusion=fusion, elapsed=_time.perf_counter() - t0, task=args.task,
               lines_tr=lines_tr, lines_te=lines_te)
    def scores(est):
        if est is fitted:
            return glm_scores(None, X_te, y_te, args.task, model=fitted)
        return glm_scores(est, X_te, y_te, args.task)

    rows = summary_rows(fire, l1, fitted, args, fusion, label,
                        None if X_te is None else scores)
    res["summary"] = rows
    res["classification"] = False
    return res
