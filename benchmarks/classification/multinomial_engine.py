"""The multinomial solve in the engine against the class cycles it replaces,
the binary solve on the same rows and trees, and scikit-learn's saga.

Three tables, every time in CPU seconds of this process (``time.process_time``:
the shared machine's load moves wall times by 2-5x between runs):

1. ``FIREClassifier(model, random_state=0).fit`` (the CV folds seeded) with
   the engine: CPU time, held-out accuracy and log-loss, ConvergenceWarnings
   (the class cycles' column was measured with the retired switch
   ``_multinomial_engine.USE_ENGINE``, issue 48; git history).
2. The path alone (default penalty, 50 points): K = 3 in the engine vs the
   binary path (one class against the rest) on the same rows and the same
   forest's trees.
3. The multinomial L1 path on a leaf-indicator design (every class's
   coefficients on the same leaves: scikit-learn's model) against
   ``LogisticRegression(l1_ratio=1, solver="saga")`` warm-started along the
   same lambdas; objectives compared point by point.

Run: ``python benchmarks/classification/multinomial_engine.py [fits|binary|saga] [iris wine synth5]``.
"""
import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_iris, load_wine, make_classification
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import train_test_split

import firecy.estimators._multinomial_engine as engine_path
from firecy import FIREClassifier


def datasets(names):
    out = {}
    if "iris" in names:
        out["iris"] = load_iris(return_X_y=True)
    if "wine" in names:
        out["wine"] = load_wine(return_X_y=True)
    if "synth5" in names:
        out["synth5"] = make_classification(20_000, 20, n_informative=10, n_classes=5,
                                            random_state=0)
    return out


def models(names):
    out = {"RF": lambda: RandomForestClassifier(100, max_depth=3, random_state=0),
           "GB": lambda: GradientBoostingClassifier(n_estimators=100, max_depth=3,
                                                    random_state=0)}
    try:
        from xgboost import XGBClassifier
        out["XGB"] = lambda: XGBClassifier(n_estimators=100, max_depth=3, random_state=0,
                                           n_jobs=1)
    except ImportError:
        pass
    try:
        from lightgbm import LGBMClassifier
        out["LGBM"] = lambda: LGBMClassifier(n_estimators=100, max_depth=3, random_state=0,
                                             n_jobs=1, verbose=-1)
    except ImportError:
        pass
    return {k: v for k, v in out.items() if not names or k in names}


def fits(data, libs):
    print("| data | model | engine s | accuracy | log-loss | ConvergenceWarnings |")
    print("|---|---|---|---|---|---|")
    for dname, (X, y) in data.items():
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0,
                                              stratify=y)
        for lib, make in libs.items():
            model = make().fit(Xtr, ytr)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t = time.process_time()
                est = FIREClassifier(model, random_state=0).fit(Xtr, ytr)
                dt = time.process_time() - t
            n_conv = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
            acc = accuracy_score(yte, est.predict(Xte))
            loss = log_loss(yte, est.predict_proba(Xte), labels=est.classes_)
            print(f"| {dname} | {lib} | {dt:.2f} | {acc:.4f} | {loss:.4f} | {n_conv} |",
                  flush=True)


def forest_design(X, y, n_trees=100, max_depth=3, indicator=False):
    """A random forest's leaves: per class (blocks tree-major) and for class 0
    alone, from scikit-learn's tree arrays."""
    from firecy.solver import BlockDesign

    rf = RandomForestClassifier(n_trees, max_depth=max_depth, random_state=0).fit(X, y)
    node = rf.apply(X)
    K = len(rf.classes_)
    cols, vals = [], []
    for t, est in enumerate(rf.estimators_):
        leaves = np.flatnonzero(est.tree_.children_left == -1)
        cols.append((node[:, t][:, None] == leaves[None, :]).astype(np.float64))
        v = est.tree_.value[leaves, 0, :]
        vals.append(v / v.sum(axis=1, keepdims=True))
    blocks, block_class, ptr = [], [], [0]
    for leaves, v in zip(cols, vals):
        for k in range(K):
            blocks.append(leaves if indicator else leaves * v[:, k])
            block_class.append(k)
            ptr.append(ptr[-1] + leaves.shape[1])
    multi = BlockDesign.from_matrix(np.hstack(blocks), ptr)
    bptr = np.r_[0, np.cumsum([c.shape[1] for c in cols])]
    binary = BlockDesign.from_matrix(np.hstack([c * v[:, 0] for c, v in zip(cols, vals)]), bptr)
    return multi, np.array(block_class), binary, np.hstack(cols)


def binary_vs_multi(data):
    from firecy.estimators._logistic_paths import pack_target
    from firecy.penalties import MCPFusion
    from firecy.solver import fire_path

    print("| data | rows | binary path s | K=3 path s | ratio |")
    print("|---|---|---|---|---|")
    for dname, (X, y) in data.items():
        if len(np.unique(y)) != 3:
            continue
        multi, block_class, binary, _ = forest_design(X, y)
        pen = MCPFusion(gamma=1.1, fusion=0.5)
        t = time.process_time()
        fire_path(binary, (y == 0).astype(float), pen, datafit="logistic", n_lambdas=50)
        tb = time.process_time() - t
        t = time.process_time()
        engine_path.multinomial_path(multi, pack_target(y, np.zeros((len(y), 3))), pen,
                                     block_class=block_class, n_classes=3, n_lambdas=50)
        tm = time.process_time() - t
        print(f"| {dname} | {len(y)} | {tb:.2f} | {tm:.2f} | {tm / tb:.2f} |", flush=True)


def multinomial_objective(eta, y, lam, coef):
    top = eta.max(axis=1)
    lse = top + np.log(np.exp(eta - top[:, None]).sum(axis=1))
    return float(np.mean(lse - eta[np.arange(len(y)), y]) + lam * np.abs(coef).sum())


def versus_saga(data, n_points=10):
    from sklearn.linear_model import LogisticRegression

    from firecy.estimators._logistic_paths import pack_target
    from firecy.penalties import L1

    print("| data | K | firecy path s | saga path s | speed-up | worst rel. objective "
          "gap (firecy - saga) / saga | points where saga is lower |")
    print("|---|---|---|---|---|---|---|")
    for dname, (X, y) in data.items():
        K = len(np.unique(y))
        multi, block_class, _, leaves = forest_design(X, y, indicator=True)
        target = pack_target(y, np.zeros((len(y), K)))
        t = time.process_time()
        path = engine_path.multinomial_path(multi, target, L1(), block_class=block_class,
                                            n_classes=K, n_lambdas=n_points, eps=1e-2,
                                            tol=1e-8)
        t_ours = time.process_time() - t
        M = multi.tocsc()
        col_class = np.repeat(block_class, np.diff(multi.block_ptr))
        ours = []
        for i, lam in enumerate(path.lambdas):
            eta = np.zeros((len(y), K)) + path.intercepts[i]
            for k in range(K):
                eta[:, k] += M[:, col_class == k] @ path.coefs[i, col_class == k]
            ours.append(multinomial_objective(eta, y, lam, path.coefs[i]))
        est = LogisticRegression(l1_ratio=1.0, solver="saga", tol=1e-8, max_iter=10_000,
                                 warm_start=True)
        theirs = []
        t = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for lam in path.lambdas:
                est.set_params(C=1.0 / (len(y) * lam))
                est.fit(leaves, y)
                eta = leaves @ est.coef_.T + est.intercept_
                theirs.append(multinomial_objective(eta, y, lam, est.coef_))
        t_saga = time.process_time() - t
        gaps = (np.array(ours) - np.array(theirs)) / np.array(theirs)
        print(f"| {dname} | {K} | {t_ours:.2f} | {t_saga:.2f} | {t_saga / t_ours:.1f} "
              f"| {gaps.max():.2e} | {int(np.sum(gaps > 1e-9))} of {len(gaps)} |", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", default="fits", choices=("fits", "binary", "saga"),
                    help="the table: 1 (fits), 2 (binary) or 3 (saga); default fits")
    ap.add_argument("names", nargs="*",
                    help="data sets (iris, wine, synth5; default all three) and, for fits, "
                         "models (RF, GB, XGB, LGBM; default all)")
    a = ap.parse_args()
    what = a.what
    names = a.names or ["iris", "wine", "synth5"]
    data = datasets([n for n in names if n in ("iris", "wine", "synth5")])
    libs = models([n for n in names if n in ("RF", "GB", "XGB", "LGBM")])
    {"fits": lambda: fits(data, libs), "binary": lambda: binary_vs_multi(data),
     "saga": lambda: versus_saga(data)}[what]()
