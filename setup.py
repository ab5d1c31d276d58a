"""Build script: compiles every Cython module under ``firecy/``.

Set ``FIRECY_DEBUG=1`` in the environment to compile with bounds checking,
wraparound and initialisation checks turned back on, and with debug
information (for debugging memory errors); the default build turns them off
for speed, and compiles without debug information (Python's own CFLAGS carry
``-g``: it doubles the compile time and quadruples the size of the modules).

The build is parallel: Cython translates the modules on ``FIRECY_BUILD_JOBS``
processes and the C compiler runs as many jobs (default: every core), so
``pip install .`` needs no extra flag to use the machine.

The Cython utility code every module with typed memoryviews would otherwise
carry (about 20,000 lines of C each: the memoryview type, its slicing and
copying) is generated once into ``firecy._cyutility`` and shared (Cython's
``shared_utility_qualified_name``, Cython 3.1 or newer): it halves the C the
compiler reads. No module includes NumPy's C headers (typed memoryviews
suffice), and SciPy's BLAS is bound when ``firecy.solver._cholesky`` loads,
so the build needs neither NumPy nor SciPy, only Cython and setuptools.

The solver's per-column kernels run on several threads with OpenMP (results
do not depend on the thread count). ``FIRECY_OPENMP=0`` builds without it
(for a compiler without OpenMP support, e.g. Apple's clang); the default is
to use it where the compiler accepts ``-fopenmp``.
"""
import os
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
DEBUG = os.environ.get("FIRECY_DEBUG", "0") not in ("", "0", "false", "False")
JOBS = int(os.environ.get("FIRECY_BUILD_JOBS", "0")) or os.cpu_count() or 1
# Python's CFLAGS end up before these: a later -g0 / -O3 wins (gcc, clang)
if sys.platform == "win32":
    OPT_FLAGS = [] if DEBUG else ["/O2"]
else:
    OPT_FLAGS = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]

# Modules whose compiled code is off the hot path: wrappers that call back into
# Python (a Python call dominates their cost), the ABI base classes whose methods
# subclasses override, Cython's shared utility code (memoryview objects and
# slicing, called once per function call, not per element), the test-only and argument-checking modules. -O1 halves
# their compile time at no measured cost (benchmarks/one_solve.py A/B, issue 24).
COLD_MODULES = {
    "firecy._callback_arrays",
    "firecy._cyutility",
    "firecy.datafits._abi2",
    "firecy.datafits._python",
    "firecy.penalties._abi2",
    "firecy.penalties._python",
    "firecy.penalties.tv._api",
    "firecy.penalties.tv._testing",
    "firecy.solver._anderson",
}


def opt_flags(module):
    """The optimisation flags for ``module``: -O1 for a cold module in a release
    build, the release (or debug) flags otherwise."""
    if DEBUG or sys.platform == "win32" or module not in COLD_MODULES:
        return OPT_FLAGS
    return ["-O1", "-g0"]


def openmp_flags():
    """(compile, link) flags for OpenMP, or empty lists if it is off or the
    compiler does not take -fopenmp."""
    setting = os.environ.get("FIRECY_OPENMP", "auto")
    if setting in ("0", "false", "False"):
        return [], []
    import subprocess
    import sysconfig
    import tempfile

    # the compiler the build will use (CC overrides Python's, as in distutils)
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "omp.c"
        src.write_text("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            ok = subprocess.run(cc + ["-fopenmp", str(src), "-o", str(Path(tmp) / "omp")],
                                capture_output=True).returncode == 0
        except OSError:
            ok = False
    if not ok:
        if setting not in ("auto", ""):
            raise RuntimeError("FIRECY_OPENMP is set but the compiler does not accept -fopenmp")
        return [], []
    return ["-fopenmp"], ["-fopenmp"]


OPENMP_COMPILE, OPENMP_LINK = openmp_flags()

# the module that holds the Cython utility code shared by all the others
SHARED_UTILITY = "firecy._cyutility"

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}


def find_extensions():
    extensions = []
    # largest first: the parallel compile then ends with small modules on
    # every core, not with the solver engine alone on one
    for pyx in sorted(HERE.glob("firecy/**/*.pyx"), key=lambda f: -f.stat().st_size):
        rel = pyx.relative_to(HERE)
        module = ".".join(rel.with_suffix("").parts)
        extensions.append(
            Extension(
                module,
                [str(rel)],
                extra_compile_args=opt_flags(module) + OPENMP_COMPILE,
                extra_link_args=OPENMP_LINK,
            )
        )
    # generated by cythonize (its source is Cython's, not ours; about as large
    # as the engine's C, so it goes second)
    extensions.insert(1, Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", "/") + ".c"],
                                   extra_compile_args=opt_flags(SHARED_UTILITY)))
    return extensions


class ParallelBuildExt(build_ext):
    """build_ext that compiles the modules on JOBS processes unless told
    otherwise (``--parallel``): pip gives no way to pass the flag."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS


setup(
    ext_modules=cythonize(
        find_extensions(),
        compiler_directives=directives,
        nthreads=JOBS if JOBS > 1 else None,
        shared_utility_qualified_name=SHARED_UTILITY,
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
