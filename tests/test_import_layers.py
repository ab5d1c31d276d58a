"""firecy's modules import one way: no two of its packages import each other,
and no module imports itself back through others (every import counted,
those inside functions too), so that each layer can be read, tested and
changed without the ones above it."""
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
