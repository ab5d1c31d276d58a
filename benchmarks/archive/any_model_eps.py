"""Does a smaller ``eps`` help where FIRE's path stopped short? (session 33)

From the saved rows of ``any_model.py --csv`` (``benchmarks/archive/any_model_runs.csv``):
the default-model runs whose path ended below ``max_rules`` (at ``eps``, not at
the budget) with the selected point at the path's final rule count.  Each is
refitted on the same split, model and folds with ``eps`` 1e-3 (the default:
reproduces the saved row), 1e-4 and 1e-5; printed per run: the error ratio to
the saved reference fit's test error, the selected rules and the path's final
rule count.

    python benchmarks/archive/any_model_eps.py benchmarks/archive/any_model_runs.csv
"""
import argparse
import os
import sys
import warnings

import pandas as pd

# archived beside its raw rows; the maintained benchmark it reads is in ../any_model
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "any_model"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import any_model as am  # noqa: E402

EPS = (1e-3, 1e-4, 1e-5)


def main(argv=None):
    from sklearn.metrics import log_loss, mean_squared_error
    from sklearn.model_selection import train_test_split

    from firecy import FIREClassifier, FIRERegressor

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="*", help="any_model.py --csv files (default: "
                    "benchmarks/archive/any_model_runs.csv)")
    files = ap.parse_args(argv).csv or [os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "any_model_runs.csv")]
    df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values=[""]) for f in files],
                   ignore_index=True)
    df["rule_depth"] = df.rule_depth.astype(str)
    df = am.with_ratios(df)
    short = df[(~df.model.isin([am.REFERENCE, am.NOISE_FLOOR]))
               & (df.path_end_rules < 14) & (df.rules == df.path_end_rules)]
    print("| dataset | seed | model | model/ref | "
          + " | ".join(f"eps={e:g}: ratio (rules, path end)" for e in EPS) + " |")
    print("|---|---|---|---:|" + "---|" * len(EPS))
    for _, r in short.iterrows():
        task = am.DATASETS[r.dataset]
        X, y = am.load(r.dataset)
        seed = int(r.seed)
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, test_size=0.25, random_state=seed,
            stratify=y if task == "classification" else None)
        ref_err = float(df[(df.dataset == r.dataset) & (df.seed == seed)
                           & (df.model == am.REFERENCE)].test_error.iloc[0])
        model = am.models(task, seed, 1)[r.model].fit(Xtr, ytr)
        Fire = FIRERegressor if task == "regression" else FIREClassifier
        cells = []
        for eps in EPS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fire = Fire(model, random_state=seed, n_jobs=1, eps=eps).fit(Xtr, ytr)
            err = (mean_squared_error(yte, fire.predict(Xte)) if task == "regression"
                   else log_loss(yte, fire.predict_proba(Xte), labels=fire.classes_))
            cells.append(f"{err / ref_err:.3f} ({fire.n_rules_}, "
                         f"{am.path_facts(fire)['path_end_rules']})")
        print(f"| {r.dataset} | {seed} | {r.model} | {r.model_ref:.3f} | "
              + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
