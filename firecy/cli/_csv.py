"""Reading the user's CSV file for ``firecy extract``, with one-line errors."""
from pathlib import Path

import numpy as np

from firecy.cli._errors import CLIError
from firecy._escape import display_text

__all__ = ["read_csv", "detect_task"]


def detect_task(y):
    """``"classification"`` for a non-numeric or two-valued target, else ``"regression"``."""
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return "classification"
    return "classification" if y.dropna().nunique() == 2 else "regression"


def read_csv(path, target, drop, task="regression"):
    """``(X, y, task)`` from a CSV file: numeric features (a DataFrame), the
    target (numeric for regression, labels for classification) and the task
    (``task="auto"``: see :func:`detect_task`)."""
    p = Path(path)
    if not p.exists():
        raise CLIError(f"no such file: {path}")
    if p.is_dir():
        raise CLIError(f"{path} is a directory, not a CSV file")
    try:
        import pandas as pd
    except ImportError:
        raise CLIError("firecy extract needs pandas to read CSV files: "
                       "pip install 'firecy[pandas]'") from None
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"cannot read {path} as CSV: {msg}") from None
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(df) == 0:
        raise CLIError(f"{path} has a header row but no data rows")
    if target not in df.columns:
        # column names are data: escaped, so that the error stays one line
        cols = (", ".join(display_text(c) for c in df.columns[:20])
                + (", ..." if df.shape[1] > 20 else ""))
        raise CLIError(f"target column {target!r} is not in {path} (columns: {cols})")
    unknown = [c for c in drop if c not in df.columns]
    if unknown:
        raise CLIError(f"--drop: no column {unknown[0]!r} in {path}")
    if target in drop:
        raise CLIError("--drop: cannot drop the target column")
    y = df[target]
    if task == "auto":
        task = detect_task(y)
    if task == "classification":
        y = _check_labels(y, target)
    elif not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        if pd.api.types.is_bool_dtype(y):
            y = y.astype(float)
        else:
            bad = y[pd.to_numeric(y, errors="coerce").isna() & y.notna()]
            example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
            raise CLIError(f"target column {target!r} is not numeric{example}; "
                           f"for class labels use --task classification")
    n_missing = int(y.isna().sum())
    if n_missing:
        rows = ", ".join(str(i + 2) for i in np.flatnonzero(y.isna().to_numpy())[:5])
        raise CLIError(f"target column {target!r} has {n_missing} missing value(s) "
                       f"(CSV line(s) {rows}{', ...' if n_missing > 5 else ''}); "
                       f"remove or fill those rows")
    if task == "regression" and not np.all(np.isfinite(y.to_numpy(dtype=float))):
        raise CLIError(f"target column {target!r} contains infinite values")
    X = df.drop(columns=[target, *drop])
    if X.shape[1] == 0:
        raise CLIError(f"{path} has no feature columns besides the target")
    for c in X.columns:
        col = X[c]
        if pd.api.types.is_bool_dtype(col):
            X[c] = col.astype(float)
        elif not pd.api.types.is_numeric_dtype(col):
            bad = col[pd.to_numeric(col, errors="coerce").isna() & col.notna()]
            example = f" (e.g. {bad.iloc[0]!r})" if len(bad) else ""
            raise CLIError(f"column {str(c)!r} is not numeric{example}; encode it as numbers "
                           f"or leave it out with --drop {display_text(c)}")
    X = X.astype(float)
    for c in X.columns:
        bad = np.flatnonzero(np.isinf(X[c].to_numpy()))
        if bad.size:
            lines = ", ".join(str(i + 2) for i in bad[:5])
            raise CLIError(f"column {str(c)!r} contains infinite values (CSV line(s) "
                           f"{lines}{', ...' if bad.size > 5 else ''}); replace them, "
                           f"e.g. by an empty cell (missing), or leave the column out "
                           f"with --drop {display_text(c)}")
    X.columns = [str(c) for c in X.columns]
    if len(X) < 10:
        raise CLIError(f"{path} has {len(X)} data row{'' if len(X) == 1 else 's'}; "
                       f"at least 10 are needed")
    return X, (y.astype(float) if task == "regression" else y), task


def _check_labels(y, target):
    """A classification target: at least two classes, each label a class."""
    import pandas as pd

    if pd.api.types.is_float_dtype(y):
        vals = y.dropna().to_numpy()
        if not np.all(np.isfinite(vals)) or np.any(vals != np.round(vals)):
            raise CLIError(f"target column {target!r} has non-integer numbers; class labels "
                           "must be integers or text (or use --task regression)")
    n_classes = y.dropna().nunique()
    if n_classes < 2:
        raise CLIError(f"target column {target!r} has {n_classes} class(es); "
                       "classification needs at least two")
    return y
