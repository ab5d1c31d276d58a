"""What the paired FIRE-L1 comparison of ``counts_survival_paired.py`` can
resolve: per data set the sd of the paired fold difference, its standard
error, the smallest true difference the folds could detect at two standard
errors, and whether the count "FIRE ahead on k of m sets" differs from what
a zero true difference (a fair coin per set) gives.

    python benchmarks/counts_survival/counts_survival_power.py --load base0.pkl,base1.pkl
    python benchmarks/counts_survival/counts_survival_power.py --load f0.pkl,f1.pkl --method FIRE --against L1

Per set (``d``: the paired difference per outer fold, + = ``method`` better;
survival: test Harrell C, and test Cox partial likelihood with the sign
flipped; counts: test mean Poisson deviance, sign flipped):

* ``sd``: ``std(d, ddof=1)`` over the folds (seeds pooled);
* ``se``: ``sd / sqrt(J)``, the naive standard error the tables report; the
  folds of one K-fold split share training rows, so it is optimistic:
  ``se NB`` is Nadeau and Bengio's corrected ``sd * sqrt(1/J + 1/(K-1))``
  (test / training size 1 / (K - 1));
* ``MDE(J)``: the smallest true difference that a mean over ``J`` folds puts
  at two naive standard errors half the time (``2 sd / sqrt(J)``), and 80 %
  of the time (``(2 + 0.84) sd / sqrt(J)``);
* ``p sign-flip``: the exact two-sided sign-flip (paired permutation) test of
  a zero mean over the ``J`` folds.

Across sets: the number ``k`` of sets with a positive mean against
``Binomial(m, 1/2)`` (independent sets, a true difference of zero on each,
symmetric noise); the combined z (Stouffer, naive se); and the common true
effect, in naive standard errors of each set's mean, that makes "ahead on
at least half the sets" happen with probability 0.5 and 0.8.
"""
import argparse
import itertools
import math
import pickle

import numpy as np
import pandas as pd
from scipy import optimize, stats


def paired(df, method, against, value):
    wide = df.pivot_table(index=["data", "kind", "seed", "fold"], columns="method",
                          values=value)
    out = {}
    for data in dict.fromkeys(df.data):
        kind = df.loc[df.data == data, "kind"].iloc[0]
        if value == "dev" and kind != "survival":
            continue
        g = wide.xs(data, level="data")
        # + = method better: higher C; lower deviance / partial likelihood
        sign = 1.0 if (value == "score" and kind == "survival") else -1.0
        out[data] = (kind, sign * (g[method] - g[against]).to_numpy())
    return out


def sign_flip_p(d):
    """Exact two-sided p of the paired sign-flip test of a zero mean."""
    d = np.asarray(d, float)
    obs = abs(d.sum())
    flips = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
    return float(np.mean(np.abs(flips @ d) >= obs - 1e-15))


def count_power(z_shift, m, k_need):
    """P(at least ``k_need`` of ``m`` sets ahead) when each set's mean is
    ``z_shift`` naive se above zero (normal noise)."""
    p = stats.norm.cdf(z_shift)
    return float(stats.binom.sf(k_need - 1, m, p))


def report(df, method, against, value, label, folds_k):
    sets = paired(df, method, against, value)
    print(f"\n### {label}: {method} - {against} (+: {method} better)\n")
    print("| data | folds J | mean | sd | se | mean / se | se NB | mean / se NB "
          "| MDE(10) at 2 se | MDE(10) 80 % power | p sign-flip | seeds' signs agree |")
    print("|" + " --- |" * 12)
    zs, pos = [], 0
    for data, (kind, d) in sets.items():
        J = d.size
        sd = d.std(ddof=1)
        se = sd / math.sqrt(J)
        se_nb = sd * math.sqrt(1.0 / J + 1.0 / (folds_k - 1))
        seeds = df[(df.data == data)].seed.unique()
        agree = ""
        if len(seeds) == 2:
            # the per-seed means in fold order (the pivot sorts seed, fold)
            half = d.size // 2
            agree = "yes" if np.sign(d[:half].mean()) == np.sign(d[half:].mean()) else "no"
        zs.append(d.mean() / se)
        pos += d.mean() > 0
        print(f"| {data} | {J} | {d.mean():+.4f} | {sd:.4f} | {se:.4f} | {d.mean() / se:+.1f} "
              f"| {se_nb:.4f} | {d.mean() / se_nb:+.1f} | {2 * sd / math.sqrt(10):.4f} "
              f"| {2.84 * sd / math.sqrt(10):.4f} | {sign_flip_p(d):.3f} | {agree} |")
    kinds = np.array([kind for kind, _ in sets.values()])
    means = np.array([d.mean() for _, d in sets.values()])
    if len(set(kinds)) > 1:
        for kd in dict.fromkeys(kinds):
            n_k, pos_k = int((kinds == kd).sum()), int((means[kinds == kd] > 0).sum())
            z_k = np.array(zs)[kinds == kd]
            print(f"\n{kd}: ahead on {pos_k} of {n_k}; P(k <= {pos_k}) = "
                  f"{stats.binom.cdf(pos_k, n_k, 0.5):.3f}, P(k >= {pos_k}) = "
                  f"{stats.binom.sf(pos_k - 1, n_k, 0.5):.3f} under Binomial({n_k}, 1/2); "
                  f"Stouffer z {z_k.sum() / math.sqrt(n_k):+.2f}")
    m = len(zs)
    zs = np.array(zs)
    lo = stats.binom.cdf(pos, m, 0.5)
    hi = stats.binom.sf(pos - 1, m, 0.5)
    k_need = m // 2 + 1
    c50 = optimize.brentq(lambda c: count_power(c, m, k_need) - 0.5, -5, 5)
    c80 = optimize.brentq(lambda c: count_power(c, m, k_need) - 0.8, -5, 5)
    print(f"\n{label}: {method} ahead on {pos} of {m} sets; under a zero true difference "
          f"(Binomial({m}, 1/2)) P(k <= {pos}) = {lo:.3f}, P(k >= {pos}) = {hi:.3f}, "
          f"two-sided {min(1.0, 2 * min(lo, hi)):.3f}; Stouffer z = "
          f"{zs.sum() / math.sqrt(m):+.2f} (naive se); ahead on >= {k_need} of {m} with "
          f"probability 0.5 / 0.8 needs a true effect of {c50:+.2f} / {c80:+.2f} naive se "
          "on every set.")
    return sets


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", required=True, help="comma-separated pickles")
    ap.add_argument("--method", default="FIRE")
    ap.add_argument("--against", default="L1")
    ap.add_argument("--label", default="")
    ap.add_argument("--k", type=int, default=5, help="outer folds per seed (K)")
    args = ap.parse_args()
    rows = []
    for fn in args.load.split(","):
        with open(fn, "rb") as fh:
            rows += pickle.load(fh)
    df = pd.DataFrame(rows).drop_duplicates(["data", "seed", "fold", "method"])
    df = df.sort_values(["seed", "fold"], kind="stable")
    lab = args.label or args.load
    report(df, args.method, args.against, "score", f"{lab}, test C / deviance", args.k)
    report(df, args.method, args.against, "dev", f"{lab}, survival test partial likelihood",
           args.k)


if __name__ == "__main__":
    main()
