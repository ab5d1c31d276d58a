"""What a K-class ``FIREClassifier`` fit is made of, next to the binary fit on
the same rows (issue 23: the K/binary ratio).

The data, split and models are ``classification_speed.py``'s (100 depth-3 trees,
seed 0); the binary fit is "last class vs the rest". Both fits run with
``n_jobs=1`` (the default runs the CV folds in threads, and a part's process
CPU would then include the other thread's). Wrapped, for the duration of the
fit: ``Problem.solve`` (solves, their CPU, block updates, and the engine's work
counters ``n_full_gradients``, ``n_state_rebuilds``, ``n_column_moves``,
``n_ws_epochs``, ``n_ws_block_updates``), the Newton step and its parts (calls,
CPU, statuses, line searches and their state rebuilds), and the classifier's
path fitters (paths, points, every path's lambdas and objectives, which
``--pickle`` keeps for before/after comparisons of two builds). The wrappers
add Python overhead of their own: compare CPU between builds run with this
script, not with the plain fit times of ``classification_speed.py``.

Usage::

    python benchmarks/classification/classification_anatomy.py iris rf
    python benchmarks/classification/classification_anatomy.py wine lgbm --only k --pickle wine_lgbm.pkl
"""
import argparse
import os
import pickle
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import classification_speed as cs
from sklearn.exceptions import ConvergenceWarning
import firecy
from firecy import FIREClassifier
import firecy.solver._problem as P
import firecy.solver._engine as E
import firecy.estimators._logistic_paths as LP

ap = argparse.ArgumentParser()
ap.add_argument("data"); ap.add_argument("model")
ap.add_argument("--pickle", default=None)
ap.add_argument("--only", default=None, choices=[None, "k", "binary"])
ap.add_argument("--n-synthetic", type=int, default=20000)
args = ap.parse_args()
print("# firecy", firecy.__file__, flush=True)

REC = None
COUNTERS = ("n_full_gradients", "n_state_rebuilds", "n_column_moves", "n_ws_epochs",
            "n_ws_block_updates")
HAS_COUNTERS = hasattr(E.GreedyBlockCD, "n_full_gradients")

orig_solve = P.Problem.solve
def solve(self, *a, **k):
    eng = self.engine
    before = [getattr(eng, c) for c in COUNTERS] if HAS_COUNTERS else None
    t0 = time.process_time()
    res = orig_solve(self, *a, **k)
    dt = time.process_time() - t0
    r = REC
    r["solves"] += 1; r["solve_cpu"] += dt; r["updates"] += res.n_iter
    r["unconverged"] += (not res.converged)
    if HAS_COUNTERS:
        for c, b in zip(COUNTERS, before):
            r[c] += getattr(eng, c) - b
    if r["problem"] is None or self.design.n_samples > r["problem"].design.n_samples:
        r["problem"] = self
    return res
P.Problem.solve = solve

orig_newton = E.newton_step
def newton(engine):
    t0 = time.process_time()
    rb = engine.n_state_rebuilds if HAS_COUNTERS else 0
    out = orig_newton(engine)
    REC["newton_calls"] += 1; REC["newton_cpu"] += time.process_time() - t0
    if HAS_COUNTERS:
        REC["newton_rebuilds"] += engine.n_state_rebuilds - rb
    return out
E.newton_step = newton
import firecy.solver._newton as NW
orig_once = NW._newton_once
def once(engine):
    st = orig_once(engine)
    REC["once_" + st] = REC.get("once_" + st, 0) + 1
    return st
NW._newton_once = once
orig_line = NW._line_minimum
def line(*a):
    REC["line_searches"] = REC.get("line_searches", 0) + 1
    rb = a[0].n_state_rebuilds
    t0 = time.process_time()
    t = orig_line(*a)
    REC["line_cpu"] = REC.get("line_cpu", 0.0) + time.process_time() - t0
    REC["line_evals"] = REC.get("line_evals", 0) + a[0].n_state_rebuilds - rb
    if t == 0.0:
        REC["line_none"] = REC.get("line_none", 0) + 1
        REC["line_none_evals"] = REC.get("line_none_evals", 0) + a[0].n_state_rebuilds - rb
    return t
NW._line_minimum = line
def timed(name):
    orig = getattr(NW, name)
    def f(*a, **k):
        t0 = time.process_time()
        out = orig(*a, **k)
        key = "t_" + name
        REC[key] = REC.get(key, 0.0) + time.process_time() - t0
        return out
    setattr(NW, name, f)
for _n in ("_support_model", "_try_step", "_cholesky", "_grouped_rows_model", "_columns"):
    timed(_n)

def wrap_path(cls):
    orig = cls.path
    def path(self, design, y, penalty, **kw):
        t0 = time.process_time()
        out = orig(self, design, y, penalty, **kw)
        REC["paths"] += 1; REC["points"].append(len(out.lambdas))
        REC["path_cpu"] += time.process_time() - t0
        REC["objectives"].append((np.asarray(out.lambdas).copy(), np.asarray(out.objectives).copy()))
        return out
    cls.path = path
wrap_path(LP.MultinomialPaths); wrap_path(LP.BinaryLogisticPaths)

def new_rec():
    return dict(solves=0, solve_cpu=0.0, updates=0, unconverged=0, newton_calls=0,
                newton_cpu=0.0, newton_rebuilds=0, paths=0, points=[], path_cpu=0.0, problem=None,
                objectives=[], **{c: 0 for c in COUNTERS})

def pass_cost(problem, reps=30):
    eng = problem.engine
    eng.gradient_at_zero()
    t0 = time.process_time()
    for _ in range(reps):
        eng.gradient_at_zero()
    return (time.process_time() - t0) / reps

def one(kind_label, model, X, y):
    global REC
    REC = new_rec()
    fire = FIREClassifier(model, random_state=0, n_jobs=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.process_time()
        fire.fit(X, y)
        cpu = time.process_time() - t0
    r = REC
    nconv = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    prob = r["problem"]
    d = prob.design
    pc = pass_cost(prob)
    out = dict(label=kind_label, cpu=cpu, conv=nconv, rules=int(fire.n_rules_),
               rows=d.n_samples, cols=d.n_columns, blocks=d.n_blocks, nnz=int(d.col_ptr[-1]),
               pass_ms=1e3 * pc, **{k: v for k, v in r.items() if k != "problem"})
    return out

X, y = cs.load(args.data, args.n_synthetic)
Xtr, Xte, ytr, yte = cs.split(X, y, 0)
res = []
if args.only in (None, "k"):
    mk = cs.make_model(args.model, 100, 3, 0).fit(Xtr, ytr)
    res.append(one("K=%d" % np.unique(y).size, mk, Xtr, ytr))
if args.only in (None, "binary"):
    y2 = (ytr == y.max()).astype(int)
    m2 = cs.make_model(args.model, 100, 3, 0).fit(Xtr, y2)
    res.append(one("binary", m2, Xtr, y2))
for o in res:
    pts = o["points"]
    print(f"{args.data} {args.model} {o['label']}: fit CPU {o['cpu']:.2f} s, conv {o['conv']}, rules {o['rules']}; "
          f"design (full path) {o['rows']} rows x {o['cols']} cols, {o['blocks']} blocks, nnz {o['nnz']}; "
          f"one pass (gradient_at_zero) {o['pass_ms']:.3f} ms")
    print(f"   paths {o['paths']} (points {pts}, total {sum(pts)}), path CPU {o['path_cpu']:.2f}; "
          f"solves {o['solves']} CPU {o['solve_cpu']:.2f} (unconverged {o['unconverged']}), "
          f"block updates {o['updates']}; newton {o['newton_calls']} calls {o['newton_cpu']:.2f} s")
    if HAS_COUNTERS:
        print("   " + ", ".join(f"{c} {o[c]}" for c in COUNTERS)
              + f"; full passes x nnz = {o['n_full_gradients'] * o['nnz']:.3g}")
    print(f"   per point: full gradients {o['n_full_gradients']/sum(pts):.1f}, state rebuilds {o['n_state_rebuilds']/sum(pts):.1f}, "
          f"column moves {o['n_column_moves']/sum(pts):.1f}, ws epochs {o['n_ws_epochs']/sum(pts):.1f}; "
          f"solve CPU / (full gradients x pass) = {o['solve_cpu'] / max(1e-9, o['n_full_gradients'] * o['pass_ms'] / 1e3):.2f}", flush=True)
if len(res) == 2:
    a, b = res
    print(f"RATIO {args.data} {args.model}: fit {a['cpu']/b['cpu']:.2f}, points {sum(a['points'])/sum(b['points']):.2f}, "
          f"full gradients {a['n_full_gradients']/max(1,b['n_full_gradients']):.2f}, pass cost {a['pass_ms']/b['pass_ms']:.2f}, "
          f"cols {a['cols']/b['cols']:.2f}, nnz {a['nnz']/b['nnz']:.2f}, column moves {a['n_column_moves']/max(1,b['n_column_moves']):.2f}, "
          f"newton CPU {a['newton_cpu']:.2f} vs {b['newton_cpu']:.2f}")
for o in res:
    print("   newton detail", o["label"], {k: v for k, v in o.items() if k.startswith("once_") or k.startswith("line_") or k.startswith("t_") or k in ("line_searches", "newton_rebuilds", "newton_calls")})
if args.pickle:
    with open(args.pickle, "wb") as f:
        pickle.dump([{k: v for k, v in o.items()} for o in res], f)
