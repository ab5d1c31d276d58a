"""How long ``FIREClassifier(model).fit`` takes, binary and multi-class, and
how the multinomial L1 path compares with scikit-learn's (issue 23).

Data (all offline): scikit-learn's breast cancer (2 classes), wine and iris
(3 classes), and ``make_classification`` with 5 classes and 20,000 rows
(20 features, 10 informative, seed 0).  Each is split 75/25, stratified,
with ``--seed``.  Models: ``RandomForestClassifier``,
``GradientBoostingClassifier``, ``XGBClassifier`` and ``LGBMClassifier``,
``--n-trees`` trees (100) of depth ``--max-depth`` (3), seeded, one thread.
The model is fitted once, outside the timing; ``FIREClassifier(model,
random_state=seed)`` at every other default is then timed on the training
rows (its wall time, best of ``--repeat``, and the process CPU time of that
fit: on a shared machine the wall time includes waiting for a core).

Table 1 (per data set x model x method): FIRE's wall time, its rules, test
accuracy and log-loss, and whether a ``ConvergenceWarning`` was raised.

Table 2 (per multi-class set x model): the K-class fit time divided by the
binary fit time on the same rows and the same kind and size of model, the
classes collapsed to "last class vs the rest" (iris: virginica vs the rest).
Issue 23's goal is at most 1.5 for K = 3.

Table 3, the peer (per multi-class set x model, unless ``--no-peer``): the
multinomial L1 path on the leaf design ``M`` of the fitted FIRE model (its
rules on the training rows, the ensemble's baseline as an offset).
scikit-learn's ``LogisticRegression(penalty="l1", solver="saga",
warm_start=True)`` fits one coefficient per (class, column); so that both
solve the same problem, firecy is given ``M`` once per class (block class
``k`` for copy ``k``) and ``penalty="l1"`` without fusion, on the same
lambdas (``--peer-lambdas`` points from the path's lambda_max down to
``--peer-eps`` times it), and scikit-learn's ``C = 1 / (n lam)``.  The
objective, ``(1/n) sum_i (logsumexp(eta_i) - eta_{i y_i}) + lam ||W||_1``,
is computed here for both from their coefficients; the baseline is constant
over rows for these models, so the intercepts absorb it and scikit-learn
needs no offset (checked).  Reported: both path times, their ratio, and the
largest relative objective excess of each over the other along the path.
Both are timed in process CPU time (one thread each; on a shared machine
the wall time includes waiting for a core).

``--method`` names the rows' method; ``current`` (the code as it is) is the
only one since the switch between the engine and the class cycles
(``_multinomial_engine.USE_ENGINE``) was retired (issue 48: a module global
that benchmarks assigned); the engine-against-cycles numbers in RESULTS.md
were measured with it (git history).  :func:`use_method` is where another
solver would be selected.

Usage::

    python benchmarks/classification/classification_speed.py                 # everything (~30 min)
    python benchmarks/classification/classification_speed.py --quick         # < 1 min of CPU
    python benchmarks/classification/classification_speed.py --data iris wine --models gb lgbm
"""
import argparse
import contextlib
import platform
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_iris, load_wine, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

from firecy import FIREClassifier

DATASETS = ("breast_cancer", "wine", "iris", "synthetic5")
MODELS = ("rf", "gb", "xgb", "lgbm")

@contextlib.contextmanager
def use_method(method):
    """Run the body with the multinomial solver ``method``: only
    ``"current"``, the code as it is (no module switch is assigned).

    Parameters
    ----------
    method : str
        ``"current"``.
    """
    if method != "current":
        raise SystemExit(f"--method {method}: only 'current' is left (the engine/cycles "
                         "switch was retired, issue 48)")
    yield


# -- data and models --------------------------------------------------------------
def load(name, n_synthetic=20000):
    """(X, y) of a data set of :data:`DATASETS`."""
    if name == "breast_cancer":
        return load_breast_cancer(return_X_y=True)
    if name == "wine":
        return load_wine(return_X_y=True)
    if name == "iris":
        return load_iris(return_X_y=True)
    if name == "synthetic5":
        return make_classification(n_samples=n_synthetic, n_features=20, n_informative=10,
                                   n_redundant=5, n_classes=5, n_clusters_per_class=2,
                                   random_state=0)
    raise ValueError(name)


def make_model(kind, n_trees, depth, seed):
    """An unfitted ensemble classifier, one thread, seeded."""
    if kind == "rf":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=n_trees, max_depth=depth,
                                      random_state=seed, n_jobs=1)
    if kind == "gb":
        from sklearn.ensemble import GradientBoostingClassifier

        return GradientBoostingClassifier(n_estimators=n_trees, max_depth=depth,
                                          random_state=seed)
    if kind == "xgb":
        from xgboost import XGBClassifier

        return XGBClassifier(n_estimators=n_trees, max_depth=depth, random_state=seed,
                             n_jobs=1)
    if kind == "lgbm":
        from lightgbm import LGBMClassifier

        return LGBMClassifier(n_estimators=n_trees, max_depth=depth, num_leaves=2 ** depth,
                              random_state=seed, n_jobs=1, verbose=-1)
    raise ValueError(kind)


def split(X, y, seed):
    return train_test_split(X, y, test_size=0.25, random_state=seed, stratify=y)


# -- one timed fit --------------------------------------------------------------------
def timed_fire(model, X, y, seed, repeat, method, **params):
    """Fit ``FIREClassifier(model)`` ``repeat`` times; the fit, the best wall
    time, the process CPU time of that fit (on a shared machine the wall
    time includes waiting for a core) and the number of ConvergenceWarnings
    of the last fit."""
    best, cpu, fire, n_conv = np.inf, np.inf, None, 0
    for _ in range(repeat):
        fire = FIREClassifier(model, random_state=seed, **params)
        with warnings.catch_warnings(record=True) as caught, use_method(method):
            warnings.simplefilter("always")
            t0, c0 = time.perf_counter(), time.process_time()
            fire.fit(X, y)
            wall, c1 = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, cpu = wall, c1
        n_conv = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return fire, best, cpu, n_conv


def run_fit(data, kind, method, args):
    X, y = load(data, args.n_synthetic)
    X_tr, X_te, y_tr, y_te = split(X, y, args.seed)
    model = make_model(kind, args.n_trees, args.max_depth, args.seed).fit(X_tr, y_tr)
    fire, secs, cpu, n_conv = timed_fire(model, X_tr, y_tr, args.seed, args.repeat, method)
    proba = fire.predict_proba(X_te)
    row = dict(data=data, model=kind, method=method, rows=len(y_tr),
               classes=int(np.unique(y).size), seconds=secs, cpu=cpu, rules=int(fire.n_rules_),
               accuracy=accuracy_score(y_te, fire.classes_[np.argmax(proba, axis=1)]),
               log_loss=log_loss(y_te, proba, labels=fire.classes_),
               convergence_warnings=n_conv)
    binary = None
    if row["classes"] > 2 and not args.no_binary:
        # the same rows and the same kind of model, two classes
        y2_tr = (y_tr == y.max()).astype(int)
        model2 = make_model(kind, args.n_trees, args.max_depth, args.seed).fit(X_tr, y2_tr)
        _, secs2, cpu2, n_conv2 = timed_fire(model2, X_tr, y2_tr, args.seed, args.repeat,
                                             method)
        binary = dict(data=data, model=kind, method=method, seconds_k=secs,
                      seconds_2=secs2, ratio=secs / secs2, cpu_k=cpu, cpu_2=cpu2,
                      cpu_ratio=cpu / cpu2, convergence_warnings_2=n_conv2)
    return row, binary, (fire, X_tr, y_tr)


# -- the peer ------------------------------------------------------------------------------
def multinomial_objective(eta, codes, W, lam):
    """(1/n) sum_i (logsumexp(eta_i) - eta_{i, y_i}) + lam * sum |W|."""
    top = eta.max(axis=1, keepdims=True)
    lse = top[:, 0] + np.log(np.exp(eta - top).sum(axis=1))
    return float(np.mean(lse - eta[np.arange(eta.shape[0]), codes]) + lam * np.abs(W).sum())


def peer(fire, X_tr, y_tr, method, args):
    """firecy's and scikit-learn's multinomial L1 paths on the same problem."""
    from sklearn.linear_model import LogisticRegression

    from firecy.estimators._logistic_paths import multinomial_path, pack_target
    from firecy.penalties import make_penalty
    from firecy.solver import BlockDesign

    ens = fire.ensemble_
    codes = np.searchsorted(fire.classes_, y_tr)
    n, K = len(codes), fire.classes_.size
    Xm = fire._to_model_input(np.asarray(X_tr, dtype=np.float64))
    table = np.asarray(ens.leaf_table(Xm), dtype=np.int64)
    values = np.asarray(ens.leaf_values, dtype=np.float64)
    ptr = np.asarray(ens.block_ptr, dtype=np.int64)
    p = values.size
    baseline = np.asarray(ens.baseline(Xm), dtype=np.float64).reshape(n, -1)
    if not np.allclose(baseline, baseline[:1], rtol=0, atol=1e-12):
        return None   # an offset that varies over rows: scikit-learn has no offset
    # M once per class: copy k (columns k*p ..) speaks for class k
    rep_table = np.hstack([table + k * p for k in range(K)])
    rep_values = np.tile(values, K)
    rep_ptr = np.concatenate([ptr[:-1] + k * p for k in range(K)] + [[K * p]])
    rep_class = np.repeat(np.arange(K), ptr.size - 1)
    design = BlockDesign.from_leaf_table(rep_table, rep_values, rep_ptr)
    target = pack_target(codes, np.zeros((n, K)))
    pen = make_penalty("l1", lam=1.0)
    with use_method(method), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.process_time()
        path = multinomial_path(design, target, pen, block_class=rep_class, n_classes=K,
                                n_lambdas=args.peer_lambdas, eps=args.peer_eps,
                                tol=args.peer_tol)
        t_fire = time.process_time() - t0
    M = sp.csr_matrix((values[table.ravel()], table.ravel(),
                       np.arange(0, n * table.shape[1] + 1, table.shape[1])), shape=(n, p))
    lr = LogisticRegression(penalty="l1", solver="saga", warm_start=True, tol=args.peer_tol,
                            max_iter=args.peer_max_iter)
    sk_obj, fc_obj, sk_conv = [], [], 0
    t_sk = 0.0
    for i, lam in enumerate(path.lambdas):
        W = path.coefs[i].reshape(K, p)
        fc_obj.append(multinomial_objective(M @ W.T + path.intercepts[i], codes, W, lam))
        lr.set_params(C=1.0 / (n * lam))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.process_time()
            lr.fit(M, codes)
            t_sk += time.process_time() - t0
        sk_conv += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        coef = lr.coef_ if K > 2 else np.vstack([np.zeros(p), lr.coef_[0]])
        icpt = lr.intercept_ if K > 2 else np.array([0.0, lr.intercept_[0]])
        sk_obj.append(multinomial_objective(M @ coef.T + icpt, codes, coef, lam))
        if args.peer_max_seconds is not None and t_sk > args.peer_max_seconds:
            # saga's CPU budget spent: the points solved so far are compared
            # (the ratio is then a lower bound: firecy's time covers every point)
            break
    sk_obj, fc_obj = np.array(sk_obj), np.array(fc_obj)
    return dict(n=n, columns=K * p, points=len(path.lambdas), points_sklearn=len(sk_obj),
                seconds_firecy=t_fire,
                seconds_sklearn=t_sk, speedup=t_sk / t_fire,
                firecy_excess=float(np.max((fc_obj - sk_obj) / np.abs(sk_obj))),
                sklearn_excess=float(np.max((sk_obj - fc_obj) / np.abs(fc_obj))),
                sklearn_convergence_warnings=sk_conv)


# -- output --------------------------------------------------------------------------------
def _table(rows, columns):
    head = "| " + " | ".join(c for c, _ in columns) + " |"
    rule = "|" + "|".join("---" for _ in columns) + "|"
    body = ["| " + " | ".join(fmt(r) for _, fmt in columns) + " |" for r in rows]
    return "\n".join([head, rule, *body])


def report(fits, ratios, peers):
    out = ["### FIREClassifier(model).fit at its defaults", "", _table(fits, [
        ("data", lambda r: r["data"]), ("rows, classes", lambda r: f"{r['rows']}, {r['classes']}"),
        ("model", lambda r: r["model"]), ("method", lambda r: r["method"]),
        ("fit s (wall)", lambda r: f"{r['seconds']:.2f}"),
        ("fit s (CPU)", lambda r: f"{r['cpu']:.2f}"), ("rules", lambda r: str(r["rules"])),
        ("test accuracy", lambda r: f"{r['accuracy']:.3f}"),
        ("test log-loss", lambda r: f"{r['log_loss']:.3f}"),
        ("ConvergenceWarning", lambda r: f"yes ({r['convergence_warnings']})"
         if r["convergence_warnings"] else "no")])]
    if ratios:
        out += ["", "### K-class fit time / binary fit time (same rows, same model kind)", "",
                _table(ratios, [
                    ("data", lambda r: r["data"]), ("model", lambda r: r["model"]),
                    ("method", lambda r: r["method"]),
                    ("K-class s (wall, CPU)",
                     lambda r: f"{r['seconds_k']:.2f}, {r['cpu_k']:.2f}"),
                    ("binary s (wall, CPU)",
                     lambda r: f"{r['seconds_2']:.2f}, {r['cpu_2']:.2f}"),
                    ("ratio (wall)", lambda r: f"{r['ratio']:.1f}"),
                    ("ratio (CPU)", lambda r: f"{r['cpu_ratio']:.1f}")])]
    if peers:
        out += ["", "### Multinomial L1 path: firecy vs scikit-learn saga (same design, "
                "same lambdas)", "", _table(peers, [
                    ("data", lambda r: r["data"]), ("model", lambda r: r["model"]),
                    ("method", lambda r: r["method"]),
                    ("rows x columns", lambda r: f"{r['n']} x {r['columns']}"),
                    ("points (firecy, sklearn)",
                     lambda r: f"{r['points']}, {r['points_sklearn']}"),
                    ("firecy s (CPU)", lambda r: f"{r['seconds_firecy']:.2f}"),
                    ("sklearn s (CPU)", lambda r: f"{r['seconds_sklearn']:.2f}"),
                    ("sklearn / firecy", lambda r: f"{r['speedup']:.1f}"),
                    ("max rel. excess firecy", lambda r: f"{r['firecy_excess']:.1e}"),
                    ("max rel. excess sklearn", lambda r: f"{r['sklearn_excess']:.1e}"),
                    ("sklearn ConvergenceWarning",
                     lambda r: str(r["sklearn_convergence_warnings"]))])]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", choices=DATASETS, default=list(DATASETS))
    ap.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    ap.add_argument("--method", default="current",
                    help="comma-separated solver methods, each run in turn (default: current)")
    ap.add_argument("--n-trees", type=int, default=100)
    ap.add_argument("--max-depth", type=int, default=3)
    ap.add_argument("--n-synthetic", type=int, default=20000,
                    help="rows of the 5-class synthetic set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="timed fits, best kept")
    ap.add_argument("--no-binary", action="store_true", help="skip the binary ratio table")
    ap.add_argument("--no-peer", action="store_true", help="skip the scikit-learn peer")
    ap.add_argument("--peer-data", nargs="+", choices=DATASETS, default=None,
                    help="data sets of the peer table (default: the multi-class ones run)")
    ap.add_argument("--peer-lambdas", type=int, default=10)
    ap.add_argument("--peer-eps", type=float, default=0.05)
    ap.add_argument("--peer-tol", type=float, default=1e-8)
    ap.add_argument("--peer-max-iter", type=int, default=10000)
    ap.add_argument("--peer-max-seconds", type=float, default=None,
                    help="stop scikit-learn's path after this much CPU time (the points "
                         "solved so far are compared; the ratio is then a lower bound)")
    ap.add_argument("--quick", action="store_true",
                    help="RF of 20 trees on breast cancer, iris and a 2,000-row "
                         "synthetic set, one peer of 5 points: under a minute of CPU")
    args = ap.parse_args(argv)
    if args.quick:
        args.n_trees = 20
        args.n_synthetic = 2000
        args.peer_lambdas = 5
        args.peer_tol = 1e-6
    methods = [m.strip() for m in args.method.split(",") if m.strip()]
    cases = [(d, m) for d in args.data for m in args.models]
    if args.quick:
        cases = [("breast_cancer", "rf"), ("iris", "rf"), ("synthetic5", "rf")]
    # which multi-class fits get the peer: (data, model) pairs, None for all
    peer_cases = {(d, m) for d in (args.peer_data or DATASETS) for m in MODELS}
    if args.quick and args.peer_data is None:
        peer_cases = {("iris", "rf")}
    print(f"# {platform.node()} python {sys.version.split()[0]}; {args.n_trees} trees of "
          f"depth {args.max_depth}; methods {methods}", flush=True)
    fits, ratios, peers = [], [], []
    for data, kind in cases:
        for method in methods:
            try:
                row, binary, fitted = run_fit(data, kind, method, args)
            except ImportError as exc:
                print(f"skip {data} {kind}: {exc}", flush=True)
                break
            fits.append(row)
            print(f"{data:14s} {kind:5s} {method:8s} {row['seconds']:7.2f} s "
                  f"(CPU {row['cpu']:6.2f} s)  "
                  f"rules {row['rules']:2d}  acc {row['accuracy']:.3f}  "
                  f"logloss {row['log_loss']:.3f}  conv {row['convergence_warnings']}"
                  + (f"  K/2 {binary['cpu_ratio']:.1f} (CPU)" if binary else ""), flush=True)
            if binary:
                ratios.append(binary)
            if not args.no_peer and row["classes"] > 2 and (data, kind) in peer_cases:
                res = peer(*fitted, method, args)
                if res is not None:
                    peers.append(dict(res, data=data, model=kind, method=method))
                    print(f"  peer: firecy {res['seconds_firecy']:.2f} s "
                          f"({res['points']} points), sklearn "
                          f"{res['seconds_sklearn']:.2f} s ({res['points_sklearn']} points), "
                          f"x{res['speedup']:.1f}; rel. "
                          f"excess firecy {res['firecy_excess']:.1e}, sklearn "
                          f"{res['sklearn_excess']:.1e}", flush=True)
    print()
    print(report(fits, ratios, peers))


if __name__ == "__main__":
    main()
