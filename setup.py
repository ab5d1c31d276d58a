"""Build script: compiles every Cython module under ``firecy/``.

Set ``FIRECY_DEBUG=1`` in the environment to compile with bounds checking,
wraparound and initialisation checks turned back on, and with debug
information (for debugging memory errors); the default build turns them off
for speed, and compiles without debug information (Python's own CFLAGS carry
``-g``: it doubles the compile time and quadruples the size of the modules).

The build is parallel: Cython translates the modules on ``FIRECY_BUILD_JOBS``
processes and the C compiler runs as many jobs (default: every core), so
``pip install .`` needs no extra flag to use the machine.

The solver's per-column kernels run on several threads with OpenMP (results
do not depend on the thread count). ``FIRECY_OPENMP=0`` builds without it
(for a compiler without OpenMP support, e.g. Apple's clang); the default is
to use it where the compiler accepts ``-fopenmp``.
"""
import os
import sys
from pathlib import Path

import numpy as np
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
    for pyx in sorted(HERE.glob("firecy/**/*.pyx")):
        rel = pyx.relative_to(HERE)
        module = ".".join(rel.with_suffix("").parts)
        extensions.append(
            Extension(
                module,
                [str(rel)],
                include_dirs=[np.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_9_API_VERSION")],
                extra_compile_args=OPT_FLAGS + OPENMP_COMPILE,
                extra_link_args=OPENMP_LINK,
            )
        )
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
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
