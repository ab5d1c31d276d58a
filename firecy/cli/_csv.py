"""Reading the user's CSV file for ``firecy extract``, with one-line errors.

The rows of the returned features are indexed by their CSV line numbers
(the header is line 1, the first data row line 2), the numbers every message
and ``firecy explain`` use; text columns are read as categories
(:mod:`firecy.cli._text_columns`)."""
from pathlib import Path

import numpy as np

from firecy.cli._errors import CLIError
from firecy.cli._text_columns import one_hot, read_text_column
from firecy._escape import display_text

__all__ = ["read_csv", "detect_task", "csv_lines"]


def csv_lines(path, n_rows):
    """The line of the file where each of the ``n_rows`` data records starts
    (the header is line 1), as pandas reads them: blank lines skipped, a
    quoted cell may span lines. Without a match (a file the csv module reads
    otherwise): the record's position + 2."""
    import csv

    starts, end = [], 0
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            for record in reader:
                start, end = end + 1, reader.line_num
                if any(cell.strip() for cell in record):
                    starts.append(start)
    except (OSError, UnicodeDecodeError, csv.Error):
        starts = []
    if len(starts) == n_rows + 1:
        return np.asarray(starts[1:], dtype=np.int64)
    return np.arange(n_rows, dtype=np.int64) + 2


def detect_task(y):
    """``"classification"`` for a non-numeric or two-valued target, else ``"regression"``."""
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return "classification"
    return "classification" if y.dropna().nunique() == 2 else "regression"


def read_csv(path, target, drop, task="regression", native_categories=False):
    """``(X, y, task)`` from a CSV file: the features (a DataFrame indexed by
    CSV line numbers), the target (numeric for regression, labels for
    classification) and the task (``task="auto"``: see :func:`detect_task`).

    A text column of at most :data:`~firecy.cli._text_columns.MAX_LABELS`
    labels is a category column (``native_categories``: as it is, for a
    model that reads categories; otherwise its indicator columns
    ``name=label``, :func:`~firecy.cli._text_columns.one_hot`)."""
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
    df.index = csv_lines(p, len(df))
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
        rows = ", ".join(str(i) for i in y.index[y.isna().to_numpy()][:5])
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
            X[c] = read_text_column(col, str(c))
    X.columns = [str(c) for c in X.columns]
    X = X if native_categories else one_hot(X)
    X = X.astype({c: float for c in X.columns if not isinstance(X[c].dtype, pd.CategoricalDtype)})
    for c in X.columns:
        if isinstance(X[c].dtype, pd.CategoricalDtype):
            continue
        bad = np.flatnonzero(np.isinf(X[c].to_numpy()))
        if bad.size:
            lines = ", ".join(str(i) for i in X.index[bad[:5]])
            raise CLIError(f"column {str(c)!r} contains infinite values (CSV line(s) "
                           f"{lines}{', ...' if bad.size > 5 else ''}); replace them, "
                           f"e.g. by an empty cell (missing), or leave the column out "
                           f"with --drop {display_text(c)}")
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
