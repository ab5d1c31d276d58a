"""Issue 22, session 35: the pre-registered seeds 50-69 test of choosing a
boosted ensemble's rule pool by FIRE's inner cross-validation ("cvpick"; rule
and reading: ``benchmarks/any_model/RESULTS.md``, section "Session 35").

Reads two ``benchmarks/any_model/any_model.py`` runs over the same seeds, ``--models
rf3x500,xgb,lgbm,gb,hgb``, at the default and with ``--rule-depth 2,3,4``.
The variant's row of a boosted (data set, seed, model) is the one of the two
fits whose selected point has the lower ``cv_error`` (the estimator's
``validation_error_``: same folds, same loss; a tie keeps the default), and its
fit CPU is the sum of both fits' (it fits both).  The reference rows are the
default run's.  The comparison, the table and criteria (a)-(e) are
``any_model_d234_confirm``'s.

    python benchmarks/archive/any_model_cvpick.py \\
        --default benchmarks/archive/any_model_cvpick_default_runs.csv \\
        --d234 benchmarks/archive/any_model_cvpick_d234_runs.csv \\
        --noise-floor benchmarks/archive/any_model_runs.csv benchmarks/archive/any_model_runs_new4.csv
"""
import os
import sys

import numpy as np
import pandas as pd

# archived beside its raw rows; the maintained benchmark it reads is in ../any_model
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "any_model"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from any_model_d234_confirm import BOOSTED, compare, paired_runs_parser, report  # noqa: E402
from any_model_unit_compare import _read  # noqa: E402

KEY = ["dataset", "seed", "model"]


def cvpick(default, d234):
    """The variant's rows: per boosted fit, the pool with the lower CV loss."""
    # the fits both runs finished (a run in progress holds a prefix)
    both = set(zip(default.dataset, default.seed, default.model)) & set(
        zip(d234.dataset, d234.seed, d234.model))
    default, d234 = (x[[k in both for k in zip(x.dataset, x.seed, x.model)]]
                     for x in (default, d234))
    boosted = default.model.isin(BOOSTED)
    a = default[boosted].set_index(KEY).sort_index()
    b = d234[d234.model.isin(BOOSTED)].set_index(KEY).sort_index()
    b = b.loc[a.index]
    if not np.array_equal(a.model_error.to_numpy(), b.model_error.to_numpy()):
        raise ValueError("the two runs fitted different boosters (model_error differs)")
    pick_b = b.cv_error.to_numpy() < a.cv_error.to_numpy()
    out = a.copy()
    out[pick_b] = b[pick_b]
    out["fit_cpu_s"] = a.fit_cpu_s.to_numpy() + b.fit_cpu_s.to_numpy()
    out["picked"] = np.where(pick_b, "d234", "auto")
    variant = pd.concat([default[~boosted], out.reset_index()], ignore_index=True)
    return variant, out.reset_index()


def main(argv=None):
    args = paired_runs_parser(__doc__.splitlines()[0], variant="--d234").parse_args(argv)
    default = _read(args.default)
    variant, picked = cvpick(default, _read(args.d234))
    keys = set(zip(variant.dataset, variant.seed, variant.model))
    default = default[[k in keys for k in zip(default.dataset, default.seed, default.model)]]
    share = picked.groupby(["dataset", "model"], sort=False).picked.apply(
        lambda s: f"{(s == 'd234').sum()}/{len(s)}")
    print("How often the CV picked (2, 3, 4), per cell: "
          + ", ".join(f"{ds}/{m} {v}" for (ds, m), v in share.items()) + "\n")
    print(report(*compare(default, variant, _read(args.noise_floor))))


if __name__ == "__main__":
    main()
