"""The ABI guard of firecy's public Cython headers (firecy/_abi.py).

A compiled plug-in imports its base type from the module named in the header
it was built against (``firecy.penalties._abiN``, ``firecy.datafits._abiN``).
Here plug-ins are built against modified copies of firecy's headers, as a
plug-in built against another firecy would be, and must fail to import with
a clear ImportError, every time, in a process that stays healthy. And the
headers' declarations are pinned to their version: changing them without a
new ABI version fails here.
"""
import hashlib
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import firecy
from firecy import _abi
from firecy.datafits import Datafit
from firecy.penalties import L1, Penalty, as_penalty, register_penalty
from firecy.solver import solve

HEADERS = Path(firecy.get_include()) / "firecy"

# sha256 of each contract's declarations (comments and blank lines dropped,
# whitespace normalised). Changing a declaration changes the ABI: give it a
# new version (copy _abi1.pxd to _abi2.pxd, bump the constants in
# firecy/_abi.py and the enum, point base.pxd at it) and add its fingerprint
# here; never edit a released one.
FINGERPRINTS = {
    ("penalties", 1): "be5ee9acdf220e5d4db4e1aed046a739201c4dbc885f46b96103af55014c8911",
    ("datafits", 1): "cc7e45f1f700dd2da2b8f805c16aa7dd03dc8b48fb6a55157ad779fe52255d17",
}


def declarations(path):
    """The declarations of a .pxd, comments dropped and all whitespace
    normalised (re-wrapping a line is not a change)."""
    code = [line.split("#", 1)[0] for line in Path(path).read_text().splitlines()]
    return " ".join(" ".join(code).split())


@pytest.mark.parametrize("kind,version", sorted(FINGERPRINTS))
def test_header_declarations_are_pinned_to_their_version(kind, version):
    pxd = HEADERS / kind / f"_abi{version}.pxd"
    digest = hashlib.sha256(declarations(pxd).encode()).hexdigest()
    assert digest == FINGERPRINTS[kind, version], (
        f"{pxd} changed: that is a new ABI version, not an edit (see FINGERPRINTS)")
    enum = "PENALTY_ABI_VERSION" if kind == "penalties" else "DATAFIT_ABI_VERSION"
    assert re.search(rf"{enum} = {version}\b", pxd.read_text())
    current = _abi.PENALTY_ABI_VERSION if kind == "penalties" else _abi.DATAFIT_ABI_VERSION
    if version == current:
        assert f"_abi{version} cimport" in (HEADERS / kind / "base.pxd").read_text()
        module = __import__(f"firecy.{kind}", fromlist=["ABI_VERSION"])
        assert module.ABI_VERSION == version


# -- plug-ins built against other headers ------------------------------------

# the penalty header before it was versioned (firecy 0.1.0 before issue 11):
# the base type lived in firecy.penalties._base
LEGACY_PENALTY_HEADER = """
cdef class Penalty:
    cdef public double lam
    cdef public bint is_convex
    cdef public bint is_separable
    cdef public bint score_is_decrease
    cdef double value(self, const double* w, const double* curv,
                      Py_ssize_t n) except? -1 nogil
"""
# the datafit header before it was versioned: firecy.datafits.base
LEGACY_DATAFIT_HEADER = """
cdef class Datafit:
    cdef readonly int n_rows_used
    cdef readonly bint exact_curvature
    cdef int loss(self, const double* y, const double* eta, double* out,
                  Py_ssize_t n) except -1 nogil
"""

PLUGINS = {
    # module: (what it cimports, its body)
    "pen_abi_next": ("from firecy.penalties.base cimport Block, Penalty", """
cdef class Lasso(Penalty):
    cdef double value(self, const Block* blk, const double* w) except? -1 nogil:
        return 0.0
"""),
    "pen_legacy": ("from firecy.penalties._base cimport Penalty", """
cdef class Lasso(Penalty):
    cdef double value(self, const double* w, const double* curv, Py_ssize_t n) except? -1 nogil:
        return 0.0
"""),
    "fit_abi_next": ("from firecy.datafits._abi{next} cimport Datafit", """
cdef class Squared(Datafit):
    pass
"""),
    "fit_legacy": ("from firecy.datafits.base cimport Datafit", """
cdef class Squared(Datafit):
    pass
"""),
}


def _next_header(kind, extra):
    """firecy's current header of ``kind`` as the next ABI version would be
    (declared in _abi{N+1}, one more method)."""
    current = _abi.PENALTY_ABI_VERSION if kind == "penalties" else _abi.DATAFIT_ABI_VERSION
    text = (HEADERS / kind / f"_abi{current}.pxd").read_text()
    enum = "PENALTY_ABI_VERSION" if kind == "penalties" else "DATAFIT_ABI_VERSION"
    text = text.replace(f"{enum} = {current}", f"{enum} = {current + 1}")
    return current + 1, text + extra


def build_foreign_plugins(root):
    """Build the PLUGINS against modified copies of firecy's headers in
    ``root``; return the directory holding the compiled modules."""
    inc = root / "include" / "firecy"
    for pkg in (inc, inc / "penalties", inc / "datafits"):
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.pxd").write_text("")
    nxt, text = _next_header("penalties", "\n    cdef int future_method(self, const Block* blk) "
                                          "except -1 nogil\n")
    (inc / "penalties" / f"_abi{nxt}.pxd").write_text(text)
    (inc / "penalties" / "base.pxd").write_text(
        (HEADERS / "penalties" / "base.pxd").read_text().replace(
            f"_abi{nxt - 1} cimport", f"_abi{nxt} cimport"))
    (inc / "penalties" / "_base.pxd").write_text(LEGACY_PENALTY_HEADER)
    nxt_fit, text = _next_header("datafits", "\n    cdef int future_method(self) except -1 nogil\n")
    (inc / "datafits" / f"_abi{nxt_fit}.pxd").write_text(text)
    (inc / "datafits" / "base.pxd").write_text(LEGACY_DATAFIT_HEADER)
    src = root / "src"
    src.mkdir()
    for name, (head, body) in PLUGINS.items():
        (src / f"{name}.pyx").write_text(head.format(next=nxt_fit) + "\n" + body)
    (src / "setup.py").write_text(textwrap.dedent(f"""
        from Cython.Build import cythonize
        from setuptools import Extension, setup
        setup(ext_modules=cythonize(
            [Extension(n, [n + ".pyx"]) for n in {sorted(PLUGINS)!r}],
            include_path=[{str(root / "include")!r}], language_level=3, quiet=True))
        """))
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=src,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return src


@pytest.fixture(scope="module")
def foreign_plugins(tmp_path_factory):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("needs a C compiler")
    return build_foreign_plugins(tmp_path_factory.mktemp("abi"))


EXPECTED = {
    "pen_abi_next": rf"pen_abi_next .* was compiled against firecy's penalty ABI "
                    rf"{_abi.PENALTY_ABI_VERSION + 1}; this firecy {firecy.__version__} has "
                    rf"penalty ABI {_abi.PENALTY_ABI_VERSION}\. Rebuild pen_abi_next against "
                    rf"firecy {firecy.__version__}",
    "pen_legacy": r"pen_legacy .* was compiled against firecy's unversioned penalty header"
                  r".*Rebuild pen_legacy against firecy",
    "fit_abi_next": rf"fit_abi_next .* was compiled against firecy's datafit ABI "
                    rf"{_abi.DATAFIT_ABI_VERSION + 1}; .*Rebuild fit_abi_next",
    "fit_legacy": r"fit_legacy .* was compiled against firecy's unversioned datafit header"
                  r".*Rebuild fit_legacy",
}


@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_foreign_plugin_import_is_a_clear_error(foreign_plugins, name):
    sys.path.insert(0, str(foreign_plugins))
    try:
        for _ in range(3):   # the same clean error every time, nothing half-imported
            with pytest.raises(ImportError, match=EXPECTED[name]):
                __import__(name)
            assert name not in sys.modules
    finally:
        sys.path.remove(str(foreign_plugins))


LOOP = """
import re, sys
import numpy as np
sys.path.insert(0, {src!r})
import firecy
from firecy.penalties import L1
from firecy.solver import solve
expected = {expected!r}
for i in range(20):
    for name, pattern in expected.items():
        try:
            __import__(name)
        except ImportError as exc:
            assert re.search(pattern, str(exc)), (name, str(exc))
        else:
            raise AssertionError(name + " imported")
    # the process is healthy: a solve after every round of failed imports
    rng = np.random.default_rng(i)
    M = rng.standard_normal((40, 6))
    res = solve(M, M @ np.arange(6.0), L1(0.01), block_ptr=[0, 3, 6], tol=1e-10)
    assert res.converged and np.all(np.isfinite(res.coef))
print("healthy")
"""


def test_foreign_plugins_in_a_loop_leave_the_process_healthy(foreign_plugins):
    """Twenty rounds of failed imports of every foreign plug-in, each round
    followed by a solve, in a fresh process: it must exit normally."""
    code = LOOP.format(src=str(foreign_plugins), expected=EXPECTED)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=foreign_plugins)
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    assert out.stdout.strip().endswith("healthy")


# -- names the guard answers for, and only those -------------------------------

def test_header_names_are_not_python_modules():
    for name in ("firecy.penalties.base", "firecy.datafits.base"):
        with pytest.raises(ImportError, match="is not a Python module: .*cimport"):
            __import__(name)


def test_guard_leaves_other_missing_modules_alone():
    with pytest.raises(ModuleNotFoundError, match="No module named 'firecy.penalties._nothing'"):
        __import__("firecy.penalties._nothing")
    assert _abi.abi_error_message("firecy.penalties._abi1") is None   # this firecy's own
    assert _abi.abi_error_message("firecy.solver._abi2") is None


def test_get_include_finds_the_headers():
    for kind in ("penalties", "datafits"):
        assert (Path(firecy.get_include()) / "firecy" / kind / "base.pxd").is_file()


# -- compiled subclasses --------------------------------------------------------

def test_python_subclass_of_the_compiled_base_is_refused():
    class NotCompiled(Penalty):
        def value(self, w, curvature):
            return 0.0

    with pytest.raises(TypeError, match="subclasses firecy's compiled Penalty in Python"):
        as_penalty(NotCompiled(0.1))
    with pytest.raises(TypeError, match="subclasses firecy's compiled Penalty in Python"):
        register_penalty("not_compiled", NotCompiled)
    rng = np.random.default_rng(0)
    M = rng.standard_normal((20, 4))
    with pytest.raises(TypeError, match="subclasses firecy's compiled Penalty"):
        solve(M, M[:, 0], NotCompiled(0.1), block_ptr=[0, 4])

    class NotCompiledFit(Datafit):
        pass

    with pytest.raises(TypeError, match="subclasses firecy's compiled Datafit in Python"):
        solve(M, M[:, 0], L1(0.1), block_ptr=[0, 4], datafit=NotCompiledFit())
