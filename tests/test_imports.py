"""The house plan's import rules, checked over the package's source: floors import one way, no circles, and no
function-level import of openacl (the ones that exist only to dodge a circle, or to reach a floor above). An
import for annotations only (``if TYPE_CHECKING:``) counts too: a lower module names what it needs of a higher one
with a Protocol of its own."""

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
            "openacl.dtypes",
            "openacl.jsonfile",
            "openacl.atomicfile",
            "openacl.trace",
            "openacl.onnxrt",
            "openacl.atfork",
        ),
    ),
    (2, ("openacl.runtime",)),
    (3, ("openacl.dump", "openacl.op", "openacl.media")),
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


def imports_of(path: Path) -> tuple[set[str], list[tuple[str, int]]]:
    """(openacl modules imported at module level, [(openacl module, line)] imported inside functions)."""
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
