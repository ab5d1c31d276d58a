"""Text columns of the user's CSV file: read as categories, then given to the
model in the form it reads (native categories for XGBoost and LightGBM,
indicator columns ``name=label`` for the random forest and the risk card).

A text column of at most :data:`MAX_LABELS` distinct labels is a pandas
``category`` column (its labels sorted; an empty cell stays missing). A
column whose values are mostly numbers is a numeric column with bad cells
(an error names one); a text column of more labels is an error naming the
column and the limit (an identifier or free text, not a category).
"""
import numpy as np

from firecy.cli._errors import CLIError
from firecy._escape import display_text

__all__ = ["MAX_LABELS", "NATIVE_CATEGORY_MODELS", "read_text_column", "one_hot",
           "model_frame", "has_categories", "csv_line_numbers"]

#: the most distinct labels of a text column read as a category: above it a
#: column is more likely an identifier or free text than a factor, and its
#: indicators would outnumber a rule budget many times
MAX_LABELS = 32
#: the ``--model`` choices that read a category column natively (the random
#: forest gets indicator columns)
NATIVE_CATEGORY_MODELS = ("xgboost", "lightgbm")


def read_text_column(col, name):
    """The text column ``col`` as a pandas category (labels as str, sorted;
    missing cells stay missing), or a one-line error."""
    import pandas as pd

    present = col[col.notna()]
    numbers = pd.to_numeric(present, errors="coerce")
    if len(present) and numbers.notna().sum() > len(present) / 2:
        # mostly numbers: a numeric column with a few bad cells
        bad = present[numbers.isna()]
        raise CLIError(f"column {name!r} is not numeric (e.g. {bad.iloc[0]!r}); fix those "
                       f"cells (an empty cell is a missing value) or leave the column out "
                       f"with --drop {display_text(name)}")
    labels = sorted(set(present.astype(str)))
    if len(labels) > MAX_LABELS:
        raise CLIError(f"column {name!r} is text with {len(labels)} distinct labels; a text "
                       f"column is read as a category of at most {MAX_LABELS} labels: "
                       f"encode it as numbers or leave it out with --drop "
                       f"{display_text(name)}")
    return pd.Categorical(col.where(col.isna(), col.astype(str)), categories=labels)


def has_categories(X):
    """Whether the DataFrame ``X`` has a category column."""
    import pandas as pd

    return any(isinstance(d, pd.CategoricalDtype) for d in X.dtypes)


def one_hot(X):
    """``X`` with each category column replaced, in place, by indicator
    columns named ``name=label`` (1.0 where the row holds the label, 0.0
    elsewhere, missing where the cell is): one per label, or for a two-label
    column one, of its second label in sorted order (``smoker=yes``; the
    other is its complement)."""
    import pandas as pd

    if not has_categories(X):
        return X
    parts = {}
    for c in X.columns:
        col = X[c]
        if not isinstance(col.dtype, pd.CategoricalDtype):
            parts[c] = col
            continue
        labels = list(col.cat.categories)
        missing = col.isna().to_numpy()
        for label in labels[1:] if len(labels) == 2 else labels:
            values = (col == label).to_numpy(dtype=np.float64)
            values[missing] = np.nan
            name = f"{c}={label}"
            if name in parts or name in X.columns:
                raise CLIError(f"the indicator column {name!r} of the text column {c!r} "
                               f"has the name of another column; rename one")
            parts[name] = values
    return pd.DataFrame(parts, index=X.index)


def model_frame(X):
    """``X`` as the job's models read it: float64 values; a DataFrame with
    category columns stays one, its columns named ``f0, f1, ...`` (XGBoost
    and LightGBM reject some characters in names; the rules and the exports
    are written with the file's names)."""
    if hasattr(X, "dtypes") and has_categories(X):
        out = X.copy()
        out.columns = [f"f{i}" for i in range(X.shape[1])]
        return out
    return np.asarray(X, dtype=np.float64)


def csv_line_numbers(X):
    """The CSV line of each row of ``X`` (its index, as :func:`firecy.cli._csv.read_csv`
    sets it; an array: position + 2)."""
    if hasattr(X, "index"):
        return np.asarray(X.index, dtype=np.int64)
    return np.arange(len(X), dtype=np.int64) + 2
