"""Build the test plug-in datafit against the firecy on PYTHONPATH."""
import os

import firecy
from Cython.Build import cythonize
from setuptools import Extension, setup

include = os.path.dirname(os.path.dirname(firecy.__file__))
setup(
    name="firecy-huber-test-plugin",
    ext_modules=cythonize([Extension("huber_datafit", ["huber_datafit.pyx"])],
                          include_path=[include], language_level=3),
)
