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
# new version (copy _abiN.pxd to _abiN+1.pxd, bump the constants in
# firecy/_abi.py and the enum, rename the C names of the layout measures,
# rename _abiN.pyx, point base.pxd at it) and add its fingerprint here; never
# edit a released one (ABI 1's headers stay, unbuilt, as the record).
FINGERPRINTS = {
    ("penalties", 1): "be5ee9acdf220e5d4db4e1aed046a739201c4dbc885f46b96103af55014c8911",
    ("datafits", 1): "cc7e45f1f700dd2da2b8f805c16aa7dd03dc8b48fb6a55157ad779fe52255d17",
    ("penalties", 2): "a3c3a501661e22e10eeccca87b1ea10b25196fa924a07a201bbcf2b8536ebae9",
    ("datafits", 2): "c817c2fdf31419754fac5d8087d38e291ec0dd0bf02aa2a4b3902a6036140fb9",
}


def declarations(path):
    """The declarations of a .pxd, comments dropped and all whitespace
    normalised (re-wrapping a line is not a change). Verbatim C (a
    triple-quoted string: the layout measures) is kept whole, ``#define``
    lines included."""
    code, verbatim = [], False
    for line in Path(path).read_text().splitlines():
        if verbatim or '"""' in line:
            code.append(line)
            verbatim ^= line.count('"""') % 2 == 1
        else:
            code.append(line.split("#", 1)[0])
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
    # the layout measures name the C structs after the module (5_abiN)
    text = text.replace(f"5_abi{current}_", f"5_abi{current + 1}_")
    methods_end = text.index("\n\n\n# The layout probe's measures")
    return current + 1, text[:methods_end] + extra + text[methods_end:]


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


# -- plug-ins built against an edited header that kept the ABI name ------------
#
# The name guard cannot see these: each plug-in imports firecy.*._abiN as this
# firecy's does, but its header's layout differs. The layout probes (base.pxd,
# firecy/_abi.py) must refuse each one, every time, before any of its code
# runs. Loaded, these plug-ins crash the process: their method tables do not
# match firecy's (the reason the probes exist); so they are only ever
# imported in a subprocess.

REPO = Path(__file__).resolve().parent.parent


def _ridge_source():
    """examples/plugin_penalty's Ridge without local_groups (so that it also
    compiles against a header without that method)."""
    text = (REPO / "examples" / "plugin_penalty" / "ridge_penalty.pyx").read_text()
    start = text.index("    cdef Py_ssize_t local_groups")
    return text[:start] + text[text.index("    def __reduce__"):]


def _huber_source():
    return (REPO / "tests" / "plugin_datafit" / "huber_datafit.pyx").read_text()


def _edit_block(text):          # a field added to Block
    anchor = "    const double* curv"
    assert anchor in text
    return text.replace(anchor, "    Py_ssize_t added_field\n" + anchor, 1)


def _drop_local_groups(text):   # local_groups removed from Penalty
    start = text.index("    cdef Py_ssize_t local_groups(")
    end = text.index("except -1 nogil", start) + len("except -1 nogil")
    return text[:start] + text[end:]


def _insert_method(text):       # a method inserted into Datafit before value
    anchor = "    cdef double value(self, DatafitState* st) except? -1 nogil"
    assert anchor in text
    return text.replace(anchor, "    cdef int inserted(self, DatafitState* st) except -1 nogil\n"
                        + anchor, 1)


def _bump(enum):                # only the version constant changed
    def edit(text):
        version = _abi.PENALTY_ABI_VERSION if enum.startswith("PENALTY") else \
            _abi.DATAFIT_ABI_VERSION
        assert f"{enum} = {version}" in text
        return text.replace(f"{enum} = {version}", f"{enum} = {version + 7}", 1)
    return edit


def _edit_penalty_object(text):  # a field added to the Penalty object
    anchor = "    cdef readonly unsigned int flags"
    assert anchor in text
    return text.replace(anchor, anchor + "\n    cdef public double added_field", 1)


_PEN_V = f"_abi{_abi.PENALTY_ABI_VERSION}.pxd"
_FIT_V = f"_abi{_abi.DATAFIT_ABI_VERSION}.pxd"
# plug-in: (its source, the header it is built against, the refusal expected)
STALE = {
    "stale_block_field": (_ridge_source, ("penalties", _PEN_V, _edit_block),
                          r"the size of Block: 40 in its header, 32 here"),
    "stale_no_local_groups": (_ridge_source, ("penalties", _PEN_V, _drop_local_groups),
                              r"the number of Penalty methods: 5 in its header, 6 here"),
    "stale_fit_inserted": (_huber_source, ("datafits", _FIT_V, _insert_method),
                           r"the number of Datafit methods: 12 in its header, 11 here"),
    "stale_pen_version": (_ridge_source, ("penalties", _PEN_V, _bump("PENALTY_ABI_VERSION")),
                          rf"the penalty ABI version constant: {_abi.PENALTY_ABI_VERSION + 7} "
                          rf"in its header, {_abi.PENALTY_ABI_VERSION} here"),
    "stale_fit_version": (_huber_source, ("datafits", _FIT_V, _bump("DATAFIT_ABI_VERSION")),
                          rf"the datafit ABI version constant: {_abi.DATAFIT_ABI_VERSION + 7} "
                          rf"in its header, {_abi.DATAFIT_ABI_VERSION} here"),
}


def _reachable(module):
    """Whether ``module`` imports here (not refused by firecy's ABIFinder)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


# a plug-in built against firecy's previous penalty header (ABI 1, whose
# declarations stay in the tree): the name guard refuses it. Unless another
# firecy's ABI 1 module is reachable (an editable install of another
# checkout answers for firecy.* names this tree lacks): then it would load
# that one, which is no test of this firecy.
OLD_ABI = {"abi1_ridge": (_ridge_source, ("penalties", "base.pxd", lambda text: text.replace(
    text[text.index("from firecy.penalties._abi"):], "from firecy.penalties._abi1 cimport "
    "Block, Penalty, PENALTY_SEPARABLE\n")))} if (
        _abi.PENALTY_ABI_VERSION == 2 and not _reachable("firecy.penalties._abi1")) else {}
# the controls: the same sources against unedited copies of the headers load
FRESH = {"fresh_ridge": _ridge_source, "fresh_huber": _huber_source}
# a field added to the Penalty object itself: Cython's own check of the
# imported Penalty type refuses it, before the probes (its message)
COMPILED_LARGER = {"stale_penalty_object": (_ridge_source,
                                            ("penalties", _PEN_V, _edit_penalty_object))}


def _stale_message(name, kind_word, what):
    return (rf"module {name} \(.*{name}.*\) was compiled against a firecy {kind_word} header "
            rf"whose layout differs from this firecy {re.escape(firecy.__version__)}'s "
            rf"\({what}\); rebuild {name} against firecy {re.escape(firecy.__version__)} "
            rf"\(pip install --no-build-isolation --force-reinstall --no-deps <its source>\)")


EXPECTED_STALE = {
    name: _stale_message(name, "penalty" if edit[0] == "penalties" else "datafit", what)
    for name, (_, edit, what) in STALE.items()}
EXPECTED_STALE.update({name: (
    rf"module {name} \(.*\) was compiled against firecy's penalty ABI 1; this firecy "
    rf"{re.escape(firecy.__version__)} has penalty ABI 2\. Rebuild {name} against firecy")
    for name in OLD_ABI})
EXPECTED_STALE["stale_penalty_object"] = (
    rf"firecy\.penalties\._abi{_abi.PENALTY_ABI_VERSION}\.Penalty size changed, may indicate "
    rf"binary incompatibility")


def build_stale_plugins(root):
    """Build every STALE, FRESH and COMPILED_LARGER plug-in, each against its
    own copy of firecy's current headers (edited for the stale ones)."""
    plugins = {name: (src, edit) for name, (src, edit, _) in STALE.items()}
    plugins.update({name: (src, None) for name, src in FRESH.items()})
    plugins.update(COMPILED_LARGER)
    plugins.update(OLD_ABI)
    out_dir = root / "src"
    out_dir.mkdir()
    builds = []
    for name, (source, edit) in plugins.items():
        inc = root / name / "firecy"
        for kind in ("penalties", "datafits"):
            (inc / kind).mkdir(parents=True)
            (inc / kind / "__init__.pxd").write_text("")
            for header in (HEADERS / kind).glob("*.pxd"):
                (inc / kind / header.name).write_text(header.read_text())
        (inc / "__init__.pxd").write_text("")
        if edit is not None:
            kind, header, change = edit
            path = inc / kind / header
            path.write_text(change(path.read_text()))
        (out_dir / f"{name}.pyx").write_text(source())
        builds.append((name, str(root / name)))
    (out_dir / "setup.py").write_text(textwrap.dedent(f"""
        from Cython.Build import cythonize
        from setuptools import Extension, setup
        modules = []
        for name, include in {builds!r}:
            modules += cythonize([Extension(name, [name + ".pyx"])], include_path=[include],
                                 language_level=3, quiet=True, force=True)
        setup(ext_modules=modules)
        """))
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
                         cwd=out_dir, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    return out_dir


@pytest.fixture(scope="module")
def stale_plugins(tmp_path_factory):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("needs a C compiler")
    return build_stale_plugins(tmp_path_factory.mktemp("stale"))


STALE_LOOP = """
import re, sys, warnings
import numpy as np
sys.path.insert(0, {src!r})
import firecy, firecy._abi
from firecy.penalties import L1
from firecy.solver import solve
expected = {expected!r}
rng = np.random.default_rng(0)
M = rng.standard_normal((40, 6))
y = M @ np.arange(6.0)
for i in range(5):
    for name, pattern in expected.items():
        try:
            __import__(name)
        except ImportError as exc:
            assert re.search(pattern, str(exc)), (name, str(exc))
            # the layout guard names the plug-in, the name guard the module it sought
            assert exc.name == (name if name.startswith("stale") else
                                "firecy.penalties._abi1"), (name, exc.name)
        except ValueError as exc:   # Cython's own size check (COMPILED_LARGER)
            assert name == "stale_penalty_object" and re.search(pattern, str(exc)), (name, exc)
        else:
            raise AssertionError(name + " imported")
        assert name not in sys.modules
        # the recorder left the warnings filters as they were
        assert not any(f[1] is firecy._abi._recorder for f in warnings.filters)
        assert firecy._abi._recorder._users == 0
    res = solve(M, y, L1(0.01), block_ptr=[0, 3, 6], tol=1e-10)
    assert res.converged and np.all(np.isfinite(res.coef))
# the same sources built against unedited headers load and solve
from fresh_ridge import Ridge
from fresh_huber import Huber
res = solve(M, y, Ridge(0.1), block_ptr=[0, 3, 6], tol=1e-10)
assert res.converged and np.all(np.isfinite(res.coef))
res = solve(M, y, L1(0.01), block_ptr=[0, 3, 6], tol=1e-10, datafit=Huber(1.0))
assert res.converged and np.all(np.isfinite(res.coef))
print("healthy")
"""


def _run(code, cwd):
    return subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True, cwd=cwd)


def test_stale_header_plugins_are_refused_in_a_loop(stale_plugins):
    """Every edited-header plug-in is refused five times in one process (the
    message names it, says what differs and what to rebuild against which
    firecy), the process solves after each round, and the same plug-ins
    built against the real headers load and solve. ``-W error``: a plug-in
    that matches raises no warning, and the user's warning filters do not
    change the refusal."""
    out = _run(STALE_LOOP.format(src=str(stale_plugins), expected=EXPECTED_STALE),
               stale_plugins)
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    assert out.stdout.strip().endswith("healthy")


def test_stale_header_plugins_are_refused_without_the_report(stale_plugins):
    """With the warning recorder out of action (as if the warnings filters
    were bypassed), the exact probe still refuses each stale plug-in, with
    Cython's size error."""
    code = STALE_LOOP.format(src=str(stale_plugins), expected={
        name: (r"firecy\._abi\._(Penalty|Datafit)Layout size changed, may indicate binary "
               r"incompatibility") for name in STALE})
    code = code.replace("except ValueError as exc:   # Cython's own size check (COMPILED_LARGER)\n"
                        "            assert name == \"stale_penalty_object\" and ",
                        "except ValueError as exc:\n            assert ")
    code = code.replace("import firecy, firecy._abi\n", "import firecy, firecy._abi\n"
                        "firecy._abi._recorder.start = lambda kind: None\n"
                        "warnings.simplefilter('ignore', RuntimeWarning)\n", 1)
    assert "_recorder.start = lambda" in code
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=stale_plugins)
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    assert out.stdout.strip().endswith("healthy")


def test_layout_probes_match_this_firecy():
    """firecy's own modules cimport the public headers: their probes passed
    (they imported), with nothing left in the warnings filters; and the
    measures are the C layout (sizes of the structs as ctypes sees them)."""
    import ctypes

    from firecy.datafits import _abi2 as fit_abi
    from firecy.penalties import _abi2 as pen_abi

    assert not any(f is _abi._recorder.entry for f in __import__("warnings").filters)
    assert pen_abi.LAYOUT_MEASURES["Block"] == 4 * ctypes.sizeof(ctypes.c_void_p)
    assert pen_abi.LAYOUT_MEASURES["methods"] == 6
    assert pen_abi.LAYOUT_MEASURES["version"] == _abi.PENALTY_ABI_VERSION
    assert fit_abi.LAYOUT_MEASURES["methods"] == 11
    assert fit_abi.LAYOUT_MEASURES["version"] == _abi.DATAFIT_ABI_VERSION
    assert fit_abi.LAYOUT_MEASURES["Column"] == 4 * ctypes.sizeof(ctypes.c_void_p)
    for kind, contract in (("penalties", pen_abi), ("datafits", fit_abi)):
        assert 0 < contract.LAYOUT < _abi._PROBE_RANGE
        assert 0 <= contract.LAYOUT_HASH < _abi._PROBE_RANGE
        # the message decodes firecy's own measure as "nothing differs"
        assert "(layout)" in _abi.layout_error_message(kind, contract.LAYOUT)
    with pytest.raises(TypeError):   # a probe is a number, never an object
        _abi._probe_type("_PenaltyLayoutDown")()
    with pytest.raises(AttributeError):
        _abi.no_such_name


# -- names the guard answers for, and only those -------------------------------

def test_header_names_are_not_python_modules():
    for name in ("firecy.penalties.base", "firecy.datafits.base"):
        with pytest.raises(ImportError, match="is not a Python module: .*cimport"):
            __import__(name)


def test_guard_leaves_other_missing_modules_alone():
    with pytest.raises(ModuleNotFoundError, match="No module named 'firecy.penalties._nothing'"):
        __import__("firecy.penalties._nothing")
    # this firecy's own
    assert _abi.abi_error_message(f"firecy.penalties._abi{_abi.PENALTY_ABI_VERSION}") is None
    assert _abi.abi_error_message(f"firecy.datafits._abi{_abi.DATAFIT_ABI_VERSION}") is None
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
        def loss(self, y, eta):
            return 0.5 * (y - eta) ** 2

    with pytest.raises(TypeError, match="subclasses firecy's compiled Datafit in Python"):
        solve(M, M[:, 0], L1(0.1), block_ptr=[0, 4], datafit=NotCompiledFit())


def test_python_subclass_with_python_hooks_only_is_accepted():
    """A Python subclass of a compiled penalty that adds only Python-level
    hooks (check_blocks, bind_ensemble, repr) solves like its base."""
    class CheckedL1(L1):
        def check_blocks(self, block_ptr):
            self.seen = int(block_ptr[-1])

        def bind_ensemble(self, ensemble):
            return self

    rng = np.random.default_rng(0)
    M = rng.standard_normal((30, 6))
    y = M @ np.arange(6.0)
    pen = CheckedL1(0.05)
    res = solve(M, y, pen, block_ptr=[0, 3, 6], tol=1e-12)
    ref = solve(M, y, L1(0.05), block_ptr=[0, 3, 6], tol=1e-12)
    np.testing.assert_array_equal(res.coef, ref.coef)
    assert as_penalty(pen) is pen
