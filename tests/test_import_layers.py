"""firecy's modules import one way: no two of its packages import each other,
no module imports itself back through others, and no package reaches into
another's private modules (every import counted, those inside functions too),
so that each layer can be read, tested and changed without the ones above it
and behind another's public face."""
import ast
from pathlib import Path

import firecy

SOURCE = Path(firecy.__file__).resolve().parent


def _imports():
    """{module: set of firecy modules it imports}, from the source's syntax."""
    graph = {}
    for path in SOURCE.rglob("*.py"):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        targets = graph.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
                # "from firecy.pkg import module" names the module
                names += [f"{node.module}.{a.name}" for a in node.names
                          if (SOURCE.parent / f"{node.module}.{a.name}".replace(".", "/")
                              ).with_suffix(".py").exists()]
                targets.update(n for n in names if n.split(".")[0] == "firecy")
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == "firecy")
    return graph


def _package(module):
    return ".".join(module.split(".")[:2])


def test_packages_import_one_way():
    graph = _imports()
    arrows = {(_package(a), _package(b)) for a, bs in graph.items() for b in bs
              if _package(a) != _package(b) and "." in a and "." in b}
    both_ways = sorted((a, b) for a, b in arrows if (b, a) in arrows and a < b)
    assert not both_ways, both_ways


def test_no_module_imports_itself_back():
    graph = _imports()
    # the package's own __init__ files import their children: the arrows that
    # matter run between modules that hold code
    graph = {a: {b for b in bs if b != _package(a) and b != a.rsplit(".", 1)[0]}
             for a, bs in graph.items()}
    cycles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, cycles


def _private_imports():
    """(module, imported private module) pairs that cross a package's border:
    ``firecy.a.x`` importing ``firecy.b._y`` (every import counted, those inside
    functions too)."""
    found = []
    for path in SOURCE.rglob("*.py"):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                bits = target.split(".")
                if bits[0] != "firecy" or len(bits) < 3 or _package(target) == _package(module):
                    continue
                # firecy's own private modules and packages (firecy._escape,
                # firecy._dask) are the root's shared internals: any package
                # may use them; a package's private module is its own
                if not bits[1].startswith("_") and bits[2].startswith("_"):
                    found.append((module, target))
    return sorted(set(found))


def test_no_package_imports_another_packages_private_module():
    crossing = _private_imports()
    assert not crossing, "import the package instead: " + ", ".join(
        f"{a} -> {b}" for a, b in crossing)


def test_the_private_import_check_sees_a_crossing(tmp_path):
    # the check itself: a module of one package that reaches into another's
    # private module is found
    fake = tmp_path / "firecy"
    (fake / "alpha").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "alpha" / "__init__.py").write_text("")
    (fake / "alpha" / "mod.py").write_text("from firecy.beta._hidden import thing\n"
                                           "from firecy._escape import display_text\n")
    global SOURCE
    saved, SOURCE = SOURCE, fake
    try:
        assert _private_imports() == [("firecy.alpha.mod", "firecy.beta._hidden")]
    finally:
        SOURCE = saved
