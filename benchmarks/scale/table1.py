"""The FIRE paper's Table 1 grid: firecy's L1 path against scikit-learn's
``lasso_path`` on the same design, and firecy's MCP + fusion path, in one
process.

Cells: friedman1 data (noise 1, seed 0) generated here, a random forest of 250
trees of depth d fitted on n rows; the cells are (1300, 3), (4300, 5) and
(11000, 7) (the table's diagonal; ``--full`` runs all nine (n, d) pairs).

Objective (firecy's and scikit-learn's Lasso, the same function):

    F(w, b) = 1/(2n) ||y - b - M w||^2 + lam ||w||_1

* firecy: ``fire_path(design, y, L1(), lambdas=grid, tol=TOL)``;
* scikit-learn: ``lasso_path`` on the CSC design with the implicit centering
  that ``Lasso(fit_intercept=True).fit`` uses on sparse input (``X_offset`` =
  column means, y centred), so both fit an unpenalised intercept; the same
  grid, warm starts, ``tol`` as given (its duality-gap criterion);
* the grid: 20 values log-spaced from lambda_max down to 1e-2 lambda_max (as
  the asv Table1 benchmark).

Equal objective: per grid point, each solver's relative gap to the better of
the two, (F - F_best) / F_best; the table reports the largest over the path.
A solver with a larger gap stopped earlier (did less work).

The MCP + fusion path: ``MCPFusion(1.0, gamma=1.1, fusion_ratio=0.5)``, same
grid length and depth, tol 1e-6 (its time is the whole path).

    python benchmarks/scale/table1.py [--full] [--sklearn-tol 1e-4] [--cells 11000x7]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

from firecy.penalties import L1, MCPFusion
from firecy.solver import fire_path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _datasets import friedman_forest_design  # noqa: E402

DIAGONAL = [(1300, 3), (4300, 5), (11000, 7)]
FULL = [(n, d) for n in (1300, 4300, 11000) for d in (3, 5, 7)]


def objectives(M, y, lambdas, coefs, intercepts):
    """F at every grid point (coefs: (n_points, n_columns))."""
    out = np.empty(len(lambdas))
    for k, lam in enumerate(lambdas):
        r = y - intercepts[k] - M @ coefs[k]
        out[k] = 0.5 * np.mean(r * r) + lam * np.abs(coefs[k]).sum()
    return out


def sklearn_path(M, y, lambdas, tol, max_iter):
    """lasso_path with an unpenalised intercept, as Lasso.fit does on sparse X."""
    from sklearn.linear_model import lasso_path

    x_mean = np.asarray(M.mean(axis=0)).ravel()
    y_mean = y.mean()
    _, coefs, _ = lasso_path(M, y - y_mean, alphas=lambdas, tol=tol, max_iter=max_iter,
                             X_offset=x_mean, X_scale=np.ones_like(x_mean))
    coefs = coefs.T
    return coefs, y_mean - coefs @ x_mean


def run_cell(n, d, args):
    t0 = time.perf_counter()
    design, y = friedman_forest_design(n, 250, d)
    t_design = time.perf_counter() - t0
    M = design.tocsc()
    print(f"\n== {n} rows x depth {d}: {design.n_columns} rules, nnz {M.nnz}, "
          f"design {t_design:.1f} s", flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        fp = fire_path(design, y, L1(), n_lambdas=args.n_lambdas, eps=args.eps, tol=args.tol)
        t_firecy = time.perf_counter() - t0
    lambdas = fp.lambdas
    print(f"  firecy L1 path       {t_firecy:9.3f} s  rules at end {fp.n_rules[-1]}", flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sk_coefs, sk_icpt = sklearn_path(M, y, lambdas, args.sklearn_tol, args.sklearn_max_iter)
        t_sklearn = time.perf_counter() - t0
    print(f"  sklearn lasso_path   {t_sklearn:9.3f} s  rules at end "
          f"{np.count_nonzero(sk_coefs[-1])}", flush=True)

    f_firecy = objectives(M, y, lambdas, fp.coefs, fp.intercepts)
    f_sklearn = objectives(M, y, lambdas, sk_coefs, sk_icpt)
    best = np.minimum(f_firecy, f_sklearn)
    gap_firecy = float(np.max((f_firecy - best) / best))
    gap_sklearn = float(np.max((f_sklearn - best) / best))
    print(f"  max relative objective gap: firecy {gap_firecy:.1e}, sklearn {gap_sklearn:.1e}; "
          f"time ratio sklearn / firecy = {t_sklearn / t_firecy:.1f}", flush=True)

    t_mcp = np.nan
    mcp_rules = -1
    if not args.no_mcp:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            mp = fire_path(design, y, MCPFusion(1.0, 1.1, 0.5), n_lambdas=args.n_lambdas,
                           eps=args.eps, tol=1e-6)
            t_mcp = time.perf_counter() - t0
        mcp_rules = int(mp.n_rules[-1])
        print(f"  firecy MCP+fusion    {t_mcp:9.3f} s  rules at end {mcp_rules}  "
              f"all converged {bool(mp.converged.all())}", flush=True)
    return dict(cell=f"{n}x{d}", rules=design.n_columns, nnz=M.nnz, firecy=t_firecy,
                sklearn=t_sklearn, gap_firecy=gap_firecy, gap_sklearn=gap_sklearn,
                mcp=t_mcp, mcp_rules=mcp_rules)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="all nine cells")
    parser.add_argument("--cells", nargs="*", help="cells as NxD, e.g. 11000x7")
    parser.add_argument("--n-lambdas", type=int, default=20)
    parser.add_argument("--eps", type=float, default=1e-2)
    parser.add_argument("--tol", type=float, default=1e-6, help="firecy's tol")
    parser.add_argument("--sklearn-tol", type=float, default=1e-4)
    parser.add_argument("--sklearn-max-iter", type=int, default=100_000)
    parser.add_argument("--no-mcp", action="store_true")
    args = parser.parse_args()
    if args.cells:
        cells = [tuple(int(v) for v in c.split("x")) for c in args.cells]
    else:
        cells = FULL if args.full else DIAGONAL
    rows = [run_cell(n, d, args) for n, d in cells]
    print("\n| cell | rules | nnz | firecy L1 path | sklearn lasso_path | sklearn / firecy "
          "| max gap firecy | max gap sklearn | MCP+fusion path |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['cell']} | {r['rules']} | {r['nnz']} | {r['firecy']:.3f} s "
              f"| {r['sklearn']:.2f} s | {r['sklearn'] / r['firecy']:.1f} "
              f"| {r['gap_firecy']:.1e} | {r['gap_sklearn']:.1e} | {r['mcp']:.2f} s |")


if __name__ == "__main__":
    main()
