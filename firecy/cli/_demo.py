"""``firecy demo``: FIRE on scikit-learn's bundled diabetes data.

The rules shown are fitted on every row; the test errors come from repeated
cross-validation (``_demo_cv``), never from one split: on 442 rows one split's
test R^2 moves by more than the differences between the models.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

from firecy.cli._demo_cv import N_FOLDS, cross_validate
from firecy.cli._errors import CLIError
from firecy.cli._job import describe, describe_selection, run_job
from firecy.cli._output import prepare_dir, print_rules, save_pictures

__all__ = ["run_demo", "comparison_text", "verdict_text", "curve_text"]

# the demo's default --test-size, which it does not use
_DEFAULT_TEST_SIZE = 0.25


def _process_age():
    """Seconds since this process started (Linux's /proc), or None."""
    try:
        with open("/proc/self/stat") as fh:
            start_ticks = float(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            uptime = float(fh.read().split()[0])
        age = uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return age if 0 <= age < 1e7 else None


def _is_the_command():
    """Whether this process is the ``firecy`` command (``firecy ...`` or
    ``python -m firecy ...``), not an interpreter that calls ``main``."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name == "firecy.__main__":
        return True
    return os.path.basename(sys.argv[0] or "").split(".")[0] == "firecy"


def _clock():
    """A function returning the seconds the command has run: since the
    process started (its imports included) when this process is the
    command and its start is known, else since this call."""
    t0 = time.perf_counter()
    age = _process_age() if _is_the_command() else None
    start = t0 - (age or 0.0)
    return lambda: time.perf_counter() - start


def run_demo(args):
    """``firecy demo``."""
    from sklearn.datasets import load_diabetes

    elapsed = _clock()
    # the demo fits a random forest (the job reads the model from --model)
    args = argparse.Namespace(**{"model": "rf", **vars(args)})
    if args.test_size != _DEFAULT_TEST_SIZE:
        raise CLIError("the demo measures test error by cross-validation, not on one "
                       "held-out part: --test-size is for firecy extract (the demo's "
                       "--repeats sets how often the folds are reshuffled)")
    prepare_dir(args.output_dir)
    # numpy arrays, not a DataFrame: the demo must run without pandas
    data = load_diabetes(scaled=False)
    X, y = np.asarray(data.data, dtype=float), np.asarray(data.target, dtype=float)
    names = [str(n) for n in data.feature_names]
    print("firecy demo: scikit-learn's diabetes data (442 patients, 10 features: age, sex, "
          "bmi, bp = blood pressure, s1-s6 = blood serum measurements; target: disease "
          "progression one year later)")
    # the rules a user would keep: fitted on every row
    every_row = argparse.Namespace(**{**vars(args), "test_size": 0.0})
    res = run_job(X, y, every_row, label="random forest")
    print()
    print(f"FIRE's rule set, fitted on all {len(y)} rows: {describe_selection(res['fire'])}.")
    print_rules(res, args, names, table=False)
    budget = int(res["fire"].max_rules_)
    cv = cross_validate(X, y, args, budget, args.repeats)
    fire_name = "FIRE " + describe(args.penalty, args.gamma, args.fusion)
    print()
    print(comparison_text(cv, fire_name, budget))
    print()
    print(verdict_text(cv, budget))
    if cv["curve"] is not None:
        print()
        print(curve_text(cv))
    print()
    for p in save_pictures(res, args.output_dir, budget, names):
        print(f"saved {p}")
    if cv["curve"] is not None:
        from firecy.cli._demo_plot import save_budget_picture

        p = save_budget_picture(cv, args.output_dir, fire_name)
        if p is not None:
            print(f"saved {p}")
    print(f"done in {elapsed():.1f} s")
    return 0


def _pm(values, fmt):
    values = np.asarray(values, dtype=np.float64)
    sd = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
    return f"{format(float(np.mean(values)), fmt)} ± {format(sd, fmt)}"


def _fits_phrase(cv):
    n = len(cv["n_test"])
    lo, hi = int(cv["n_test"].min()), int(cv["n_test"].max())
    rows = f"{lo}" if lo == hi else f"{lo} or {hi}"
    repeated = f" repeated {cv['n_repeats']} times" if cv["n_repeats"] > 1 else ""
    return (f"{N_FOLDS}-fold cross-validation{repeated} ({n} fits: each model is refitted "
            f"on the other rows and scored on {rows} held-out rows)")


def comparison_text(cv, fire_name, budget):
    """The comparison table: mean terms and antecedents, test MSE and R^2
    (mean ± standard deviation over the fits) of FIRE, L1 and the forest."""
    s = cv["scores"]
    rows = [(key, name) for key, name in (("fire", fire_name),
                                          ("l1", "L1 selection, same budget"),
                                          ("forest", "full random forest")) if key in s]
    width = max(36, *(len(name) for _, name in rows))
    lines = [f"Test error by {_fits_phrase(cv)}:",
             f"{'model':<{width}} {'terms':>6} {'antecedents':>11} {'test MSE':>13} "
             f"{'test R2':>13}"]
    for key, name in rows:
        a = s[key]
        # the forest's terms are its leaves: a whole number is enough
        terms = "-" if np.all(np.isnan(a[:, 2])) else format(
            np.mean(a[:, 2]), ".0f" if key == "forest" else ".1f")
        ante = "-" if np.all(np.isnan(a[:, 3])) else f"{np.mean(a[:, 3]):.1f}"
        lines.append(f"{name:<{width}} {terms:>6} {ante:>11} {_pm(a[:, 0], '.0f'):>13} "
                     f"{_pm(a[:, 1], '.3f'):>13}")
    lines.append(f"(mean ± standard deviation over the {len(cv['n_test'])} fits; terms and "
                 f"antecedents: means; budget: at most {budget} terms, each a rule or a "
                 "linear term)")
    return "\n".join(lines)


def _same_error_budget(cv, budget):
    """The smallest budget at which FIRE's mean test MSE is at most L1's at
    the full budget (None: at no budget)."""
    fire = cv["curve"]["fire"][:, :, 0].mean(axis=0)
    target = cv["curve"]["l1"][:, -1, 0].mean()
    at = np.flatnonzero(fire <= target)
    return None if not at.size else int(cv["budgets"][at[0]])


def verdict_text(cv, budget):
    """FIRE against L1 at the budget, in words: ahead, behind or within
    noise (a mean difference of test R^2 beyond two standard errors of the
    per-fit differences), and where FIRE is ahead (terms, antecedents, the
    budget at which it reaches L1's error)."""
    s = cv["scores"]
    if "l1" not in s:
        return "(FIRE is L1 selection here: no comparison with L1)"
    diff = s["fire"][:, 1] - s["l1"][:, 1]
    n = diff.size
    se = float(np.std(diff, ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    mean = float(diff.mean())
    wins = int(np.sum(diff > 0))
    fire_r2, l1_r2 = float(s["fire"][:, 1].mean()), float(s["l1"][:, 1].mean())
    numbers = (f"test R2 {fire_r2:.3f} against {l1_r2:.3f}, a difference of {mean:+.3f} "
               f"(standard error {se:.3f}; FIRE better on {wins} of {n} fits)")
    if mean > 2 * se:
        head = f"FIRE is ahead of L1 at the budget of {budget} terms: {numbers}."
    elif mean < -2 * se:
        head = f"FIRE is behind L1 at the budget of {budget} terms: {numbers}."
    else:
        head = (f"FIRE is not ahead of L1 at the budget of {budget} terms: {numbers}, "
                "within two standard errors, i.e. within noise.")
    terms = (float(s["fire"][:, 2].mean()), float(s["l1"][:, 2].mean()))
    ante = (float(s["fire"][:, 3].mean()), float(s["l1"][:, 3].mean()))
    where = (f"FIRE's rule sets use {terms[0]:.1f} terms against L1's {terms[1]:.1f}, "
             f"and {ante[0]:.1f} antecedents (split conditions to read) against "
             f"{ante[1]:.1f}")
    if cv["curve"] is not None:
        at = _same_error_budget(cv, budget)
        l1_mse = float(cv["curve"]["l1"][:, -1, 0].mean())
        if at is None:
            where += (f"; at no budget up to {budget} terms is FIRE's mean test MSE at or "
                      f"below L1's at {budget} ({l1_mse:.0f})")
        else:
            where += (f"; FIRE reaches L1's mean test MSE at {budget} terms ({l1_mse:.0f}) "
                      f"with a budget of {at} term{'s' if at > 1 else ''}")
    return head + "\n" + where + "."


def curve_text(cv):
    """The budget curve as a table (every other budget or so; the picture
    has every one): mean test MSE, terms and antecedents of each method's
    own selection within the budget."""
    budgets = cv["budgets"]
    step = max(1, math.ceil(len(budgets) / 7))
    shown = list(range(len(budgets) - 1, -1, -step))[::-1]
    keys = [k for k in ("fire", "l1") if k in cv["curve"]]
    head = f"{'budget':>6}" + "".join(
        f" {label + ' MSE':>9} {'terms':>5} {'antec.':>6}"
        for label in ("FIRE", "L1")[:len(keys)])
    lines = ["The budget curve (each method's own choice within a budget of at most N "
             "terms; means over the fits):", head]
    for i in shown:
        line = f"{int(budgets[i]):>6}"
        for k in keys:
            c = cv["curve"][k][:, i, :].mean(axis=0)
            line += f" {c[0]:>9.0f} {c[1]:>5.1f} {c[2]:>6.1f}"
        lines.append(line)
    forest = float(cv["scores"]["forest"][:, 0].mean())
    lines.append(f"(full random forest: test MSE {forest:.0f})")
    return "\n".join(lines)
