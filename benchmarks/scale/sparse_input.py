"""Sparse X through the estimators (issue 37): does accepting it pay?

The same wide, sparse regression problem, fitted by ``FIRERegressor`` on a
100-tree depth-3 forest as a SciPy CSR matrix and as the dense array it
stands for, each in its own process: the fit's CPU time and the peak of the
memory NumPy and Python allocate during it (tracemalloc: the data's own size
apart), and the fits' R² (scikit-learn's trees split sparse and dense input
alike, so the rules agree)::

    python benchmarks/scale/sparse_input.py --n 20000 --p 5000 --density 0.005
"""
import argparse
import subprocess
import sys

CHILD = r"""
import sys, time, tracemalloc
import numpy as np, scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor
from firecy import FIRERegressor
n, p, density, layout = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(0)
nnz = int(n * p * density)
rows, cols = rng.integers(0, n, nnz), rng.integers(0, p, nnz)
X = sp.csr_matrix((rng.exponential(size=nnz), (rows, cols)), shape=(n, p))
y = np.asarray(X[:, :20].sum(axis=1)).ravel() + 0.1 * rng.normal(size=n)
if layout == "dense":
    X = X.toarray()
data_mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sp.issparse(X)
           else X.nbytes) / 2**20
tracemalloc.start()
t = time.process_time()
fire = FIRERegressor(RandomForestRegressor(100, max_depth=3, random_state=0, n_jobs=1),
                     random_state=0, n_jobs=1, cv=3, n_lambdas=20).fit(X, y)
cpu = time.process_time() - t
peak = tracemalloc.get_traced_memory()[1] / 2**20
tracemalloc.stop()
print(f"{layout:6s}: X {data_mb:8.1f} MiB, fit CPU {cpu:7.2f} s, fit peak {peak:8.1f} MiB, "
      f"rules {fire.n_rules_}, R2 {fire.score(X, y):.4f}")
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="rows (default 20000)")
    ap.add_argument("--p", type=int, default=5000, help="features (default 5000)")
    ap.add_argument("--density", type=float, default=0.005,
                    help="fraction of nonzero entries (default 0.005)")
    a = ap.parse_args()
    for layout in ("sparse", "dense"):
        out = subprocess.run([sys.executable, "-c", CHILD, str(a.n), str(a.p), str(a.density),
                              layout], capture_output=True, text=True)
        print(out.stdout.strip() or out.stderr.strip()[-500:], flush=True)


if __name__ == "__main__":
    main()
