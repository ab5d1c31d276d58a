"""Build the example plug-in penalty against the installed firecy.

    python setup.py build_ext --inplace
"""
import firecy
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="firecy-ridge-example",
    ext_modules=cythonize(
        [Extension("ridge_penalty", ["ridge_penalty.pyx"])],
        # firecy.get_include(): the directory holding the firecy package and its .pxd files
        include_path=[firecy.get_include()],
        language_level=3,
    ),
)
