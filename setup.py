"""Build script: compiles every Cython module under ``firecy/``.

Set ``FIRECY_DEBUG=1`` in the environment to compile with bounds checking,
wraparound and initialisation checks turned back on (for debugging memory
errors); the default build turns them off for speed.
"""
import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
DEBUG = os.environ.get("FIRECY_DEBUG", "0") not in ("", "0", "false", "False")

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
                extra_compile_args=["-O3"] if not DEBUG else ["-O0", "-g"],
            )
        )
    return extensions


setup(
    ext_modules=cythonize(
        find_extensions(),
        compiler_directives=directives,
        nthreads=int(os.environ.get("FIRECY_BUILD_JOBS", "0")) or None,
    ),
)
