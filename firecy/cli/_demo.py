"""``firecy demo``: FIRE on scikit-learn's bundled diabetes data."""
import numpy as np

from firecy.cli._job import describe_selection, run_job
from firecy.cli._output import prepare_dir, print_rules, save_pictures

__all__ = ["run_demo"]


def run_demo(args):
    """``firecy demo``."""
    from sklearn.datasets import load_diabetes

    prepare_dir(args.output_dir)
    # numpy arrays, not a DataFrame: the demo must run without pandas
    data = load_diabetes(scaled=False)
    X, y = np.asarray(data.data, dtype=float), np.asarray(data.target, dtype=float)
    names = [str(n) for n in data.feature_names]
    print("firecy demo: scikit-learn's diabetes data (442 patients, 10 features: age, sex, "
          "bmi, bp = blood pressure, s1-s6 = blood serum measurements; target: disease "
          "progression one year later)")
    res = run_job(X, y, args, label="random forest")
    print()
    print(f"FIRE's rule set: {describe_selection(res['fire'])}.")
    print_rules(res, args, names)
    print()
    for p in save_pictures(res, args.output_dir, res["fire"].max_rules_, names):
        print(f"saved {p}")
    print(f"done in {res['elapsed']:.1f} s")
    return 0
