"""The house plan's import rules, checked over the package's source: floors import one way, no circles, and no
function-level import of openacl (the ones that exist only to dodge a circle, or to reach a floor above). An
import for annotations only (``if TYPE_CHECKING:``) counts too: a lower module names what it needs of a higher one
with a Protocol of its own.

The heavy third-party libraries (:data:`LAZY_LIBRARIES`) load through ``openacl.lazy`` only: a module names one
with ``name = lazy.module("library")`` at its top, never with an ``import`` statement (one under ``if
TYPE_CHECKING:`` names types for annotations and loads nothing). ``lazy.module("openacl.x")`` counts as an import
of ``openacl.x``, and ``__getattr__, __dir__ = lazy.submodules(__name__, NAMES)`` in package ``p`` as an import
of each ``p.name`` of the literal tuple ``NAMES``, so the floor and circle rules hold through both."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "openacl"

# Floors of the house plan (ARCHITECTURE.md), lowest first; a module may import only its own floor or below.
FLOORS: list[tuple[int, tuple[str, ...]]] = [
    (
        1,
        (
            "openacl.errors",
            "openacl.log",
            "openacl.plog",
            "openacl.dtypes",
            "openacl.jsonfile",
            "openacl.atomicfile",
            "openacl.trace",
            "openacl.onnxrt",
            "openacl.division_guard",
            "openacl.atfork",
            "openacl.lazy",
        ),
    ),
    (2, ("openacl.runtime",)),
    (3, ("openacl.dump", "openacl.ops", "openacl.op", "openacl.media")),
    (4, ("openacl.model", "openacl.graph_engine")),
    (5, ("openacl.process",)),
    (6, ("openacl.acl", "openacl.ge", "openacl.gepy", "openacl.tools")),
    (7, ("openacl.cli", "openacl.demo", "openacl.__main__", "openacl.pytest_plugin", "openacl")),
]

# Modules whose function-level imports are there for a reason other than a circle, each with that reason.
LAZY_ALLOWED: dict[str, str] = {
    "openacl": "install() imports the facade only when asked to: `import openacl` stays light",
    "openacl.cli": "each subcommand imports its machinery when it runs: `openacl --help` loads no onnxruntime",
    "openacl.pytest_plugin": "pytest loads it in every session where openacl is installed: the runtime is imported "
    "only for a test that asks for checking or the fixture",
}

# Libraries that cost a program start-up time it may never use (ml_dtypes alone about half a second): each loads
# through ``lazy.module`` where it is first needed. The CLI (LAZY_ALLOWED) imports them inside its subcommands.
LAZY_LIBRARIES = (
    "ml_dtypes",
    "onnx",
    "onnxruntime",
    "av",
    "PIL",
    "google.protobuf",
    "rich",
    "tensorboardX",
    "safetensors",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def floor_of(name: str) -> int:
    best = None
    for floor, prefixes in FLOORS:
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (floor, len(prefix))
    assert best is not None, f"{name} is on no floor of the house plan"
    return best[0]


def lazy_modules(tree: ast.AST, function: str = "module") -> list[ast.Call]:
    """Every ``lazy.module(...)`` call in ``tree`` (``lazy.submodules(...)`` with ``function="submodules"``); the
    facade names the module ``_lazy``, so that ``acl`` exports no name of its own."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == function
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in ("lazy", "_lazy")
    ]


def lazy_submodule_names(tree: ast.Module, call: ast.Call) -> tuple[str, ...] | None:
    """The names a ``lazy.submodules(__name__, NAMES)`` call defers: ``NAMES`` is a literal tuple of strings or a
    module-level name bound to one; None when the call is not of that form."""
    if len(call.args) != 2 or call.keywords or ast.unparse(call.args[0]) != "__name__":
        return None
    names = call.args[1]
    if isinstance(names, ast.Name):
        bound = [
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == [names.id]
        ]
        names = bound[0] if len(bound) == 1 else None
    try:
        value = ast.literal_eval(names) if names is not None else None
    except ValueError:
        return None
    if not isinstance(value, tuple) or not all(isinstance(name, str) for name in value):
        return None
    return value


def imports_of(path: Path) -> tuple[set[str], list[tuple[str, int]]]:
    """(openacl modules imported at module level, [(openacl module, line)] imported inside functions); a
    ``lazy.module("openacl.x")`` is an import of ``openacl.x`` at module level."""
    tree = ast.parse(path.read_text(), str(path))
    top: set[str] = set()
    nested: list[tuple[str, int]] = []
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            names = [f"{base}.{alias.name}" for alias in node.names]
            return [base, *names]
        return []

    def visit(node: ast.AST, in_function: bool, in_type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names = [n for n in targets(child) if n == "openacl" or n.startswith("openacl.")]
            for name in names:
                (nested.append((name, child.lineno)) if in_function else top.add(name))
            nested_scope = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(child, nested_scope, in_type_checking)

    visit(tree, False, False)
    for call in lazy_modules(tree):
        name = call.args[0].value if call.args and isinstance(call.args[0], ast.Constant) else ""
        if name == "openacl" or name.startswith("openacl."):
            top.add(name)
    for call in lazy_modules(tree, "submodules"):
        top.update(f"{module_name(path)}.{name}" for name in lazy_submodule_names(tree, call) or ())
    return top, nested


def known_modules() -> dict[str, Path]:
    return {module_name(p): p for p in SRC.rglob("*.py") if "proto" not in p.parts}


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted import name means (``a.b.c`` may be a function ``c`` of module ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def graph() -> dict[str, set[str]]:
    modules = known_modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        top, _ = imports_of(path)
        targets = {resolve(t, modules) for t in top}
        edges[name] = {t for t in targets if t is not None and t != name and not name.startswith(t + ".")}
    return edges


def test_no_function_level_import_of_openacl():
    modules = known_modules()
    found = []
    for name, path in modules.items():
        _, nested = imports_of(path)
        for target, line in nested:
            if name not in LAZY_ALLOWED:
                found.append(f"{name}:{line} imports {target} inside a function")
    assert not found, "\n".join(found)


def is_lazy_library(name: str) -> bool:
    return any(name == lib or name.startswith(lib + ".") for lib in LAZY_LIBRARIES)


def test_heavy_libraries_load_only_through_lazy():
    found = []
    for name, path in known_modules().items():
        tree = ast.parse(path.read_text(), str(path))
        guarded = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            for child in ast.walk(node)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            if id(node) in guarded or name in LAZY_ALLOWED:
                continue
            found += [f"{name}:{node.lineno} imports {lib}: use lazy.module" for lib in names if is_lazy_library(lib)]
        for call in lazy_modules(tree):
            if len(call.args) != 1 or not isinstance(call.args[0], ast.Constant) or call.keywords:
                found.append(f"{name}:{call.lineno} lazy.module takes one literal module name")
        for call in lazy_modules(tree, "submodules"):
            if path.name != "__init__.py" or lazy_submodule_names(tree, call) is None:
                found.append(f"{name}:{call.lineno} lazy.submodules(__name__, NAMES) in a package, NAMES literal")
    assert not found, "\n".join(found)


def test_lazy_module_of_openacl_is_an_import_edge():
    """The floor rules see through ``lazy.module``: a deferred import is still an import."""
    assert "openacl.dump.proto.dump_data_pb2" in imports_of(SRC / "dump" / "format.py")[0]


def test_lazy_submodules_are_import_edges():
    """``acl``'s submodules load on first read, and the floor rules still see each one as imported by ``acl``."""
    top, _ = imports_of(SRC / "acl" / "__init__.py")
    assert {"openacl.acl.rt", "openacl.acl.mdl", "openacl.acl.media", "openacl.op.tensor_desc"} <= top


def test_a_lazy_submodules_call_must_name_its_modules_literally():
    tree = ast.parse("NAMES = ('a', 'b')\nGOT = lazy.submodules(__name__, NAMES)\nBAD = lazy.submodules('x', f())")
    good, bad = lazy_modules(tree, "submodules")
    assert lazy_submodule_names(tree, good) == ("a", "b")
    assert lazy_submodule_names(tree, bad) is None


def test_no_import_circle():
    edges = graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target] if target in path else [node, target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_no_module_imports_a_floor_above_its_own():
    upward = []
    for name, targets in graph().items():
        for target in targets:
            if floor_of(target) > floor_of(name):
                upward.append(f"{name} (floor {floor_of(name)}) imports {target} (floor {floor_of(target)})")
    assert not upward, "\n".join(sorted(upward))


def test_the_scheduler_imports_one_way():
    order = ["lock", "task", "waitgraph", "waiting", "event", "stream", "engine"]
    edges = graph()
    for i, name in enumerate(order):
        for target in edges[f"openacl.runtime.sched.{name}"]:
            if target.startswith("openacl.runtime.sched."):
                short = target.rpartition(".")[2]
                assert short == "tracing" or order.index(short) < i, f"sched.{name} imports sched.{short}"
