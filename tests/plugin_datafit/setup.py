"""Build the test plug-in datafit against the firecy on PYTHONPATH."""
import firecy
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    name="firecy-huber-test-plugin",
    ext_modules=cythonize([Extension("huber_datafit", ["huber_datafit.pyx"])],
                          include_path=[firecy.get_include()], language_level=3),
)
