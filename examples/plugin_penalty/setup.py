"""Build the example plug-in penalty against the installed firecy.

    python setup.py build_ext --inplace
"""
import os

import firecy
from Cython.Build import cythonize
from setuptools import Extension, setup

# the directory that holds the installed ``firecy`` package (and its .pxd files)
include = os.path.dirname(os.path.dirname(firecy.__file__))
setup(
    name="firecy-ridge-example",
    ext_modules=cythonize(
        [Extension("ridge_penalty", ["ridge_penalty.pyx"])],
        include_path=[include],
        language_level=3,
    ),
)
