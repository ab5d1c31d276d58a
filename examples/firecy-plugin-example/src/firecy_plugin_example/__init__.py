"""firecy-plugin-example: a compiled penalty for firecy, found by name.

``ExampleL1`` is the lasso penalty written outside firecy, on firecy's public
Cython header only (``firecy/penalties/base.pxd``). The package registers it
in the ``firecy.penalties`` entry-point group (pyproject.toml), so that
``firecy.FIRERegressor(penalty="example_l1")`` finds it without importing
this package first.
"""
from firecy_plugin_example._l1 import ExampleL1

__all__ = ["ExampleL1"]
__version__ = "0.1.0"
