"""Compile the plug-in's Cython module against the installed firecy's headers."""
import firecy
from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [Extension("firecy_plugin_example._l1", ["src/firecy_plugin_example/_l1.pyx"],
                   extra_compile_args=["-O3"])],
        include_path=[firecy.get_include()],   # finds firecy/penalties/base.pxd
        compiler_directives={"language_level": 3, "boundscheck": False,
                             "wraparound": False, "cdivision": True},
    ),
)
