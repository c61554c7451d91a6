"""The layout's rules, read from the code's own imports (docs/architecture.md draws them).

Every import counts, including one placed inside a function to dodge a cycle; only imports
under ``if TYPE_CHECKING:`` are left out (they never run). The rules:

* no import cycle among the project's modules;
* imports only point down: commands -> front ends -> server -> adapter core -> ``normalize``
  -> ``claudecode``; the front ends (the AG-UI, WebSocket, web UI and terminal routes of the
  server, and the ACP agent) do not import one another;
* outside ``claudecode``, its private modules are reached only through
  ``claudecode.internal``;
* no module over 600 lines; the wheel holds the three packages and nothing else.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("claudecode", "normalize", "adapter")

#: The front ends: each a room of its own above the server.
FRONT_ENDS = (
    "adapter.server.agui",
    "adapter.server.ws",
    "adapter.server.webui",
    "adapter.server.terminal_routes",
    "adapter.acp",
)

#: Lines a module may have.
MAX_LINES = 600


def layer(module: str) -> int:
    """Higher layers may import lower ones, never the reverse."""
    if module.startswith(("adapter.commands", "adapter.__main__")):
        return 5
    if module.startswith(FRONT_ENDS):
        return 4
    if module.startswith("adapter.server"):
        return 3
    if module.startswith("adapter"):
        return 2
    if module.startswith("normalize"):
        return 1
    return 0


def front_end(module: str) -> str | None:
    return next((f for f in FRONT_ENDS if module == f or module.startswith(f + ".")), None)


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def imports(known: dict[str, Path]) -> Iterator[Import]:
    for module, path in known.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in PACKAGES:
                        yield Import(module, _nearest(alias.name, known), node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".") if is_package else module.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    name = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    name = node.module or ""
                if name.split(".")[0] not in PACKAGES:
                    continue
                for alias in node.names:
                    full = f"{name}.{alias.name}"
                    target = full if full in known else _nearest(name, known)
                    yield Import(module, target, node.lineno)


def _nearest(name: str, known: dict[str, Path]) -> str:
    while name not in known and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], list[Import]]:
    known = modules()
    return known, [i for i in imports(known) if i.target != i.source]


def test_no_import_cycle(graph: tuple[dict[str, Path], list[Import]]) -> None:
    _, edges = graph
    out: dict[str, set[str]] = {}
    for edge in edges:
        out.setdefault(edge.source, set()).add(edge.target)
    # Tarjan's strongly connected components, iteratively (the graph is a few hundred nodes).
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = 0
    for root in sorted(out):
        if root in index:
            continue
        work = [(root, iter(sorted(out.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(out.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    assert [] == cycles


def test_imports_only_point_down(graph: tuple[dict[str, Path], list[Import]]) -> None:
    _, edges = graph
    upward = [
        f"{e.source}:{e.line} -> {e.target}" for e in edges if layer(e.target) > layer(e.source)
    ]
    assert [] == upward


def test_front_ends_do_not_import_one_another(
    graph: tuple[dict[str, Path], list[Import]],
) -> None:
    _, edges = graph
    sideways = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in edges
        if front_end(e.source) is not None
        and front_end(e.target) not in (None, front_end(e.source))
    ]
    assert [] == sideways


def test_claudecode_private_modules_are_reached_through_claudecode_internal(
    graph: tuple[dict[str, Path], list[Import]],
) -> None:
    _, edges = graph
    private = [
        f"{e.source}:{e.line} -> {e.target}"
        for e in edges
        if not e.source.startswith("claudecode")
        and e.target.startswith("claudecode.")
        and any(part.startswith("_") for part in e.target.split(".")[1:])
    ]
    assert [] == private


def test_modules_stay_under_the_line_limit(graph: tuple[dict[str, Path], list[Import]]) -> None:
    known, _ = graph
    long = {
        name: n
        for name, path in known.items()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert {} == long


def test_the_wheel_holds_only_the_three_packages() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert ["claudecode", "normalize", "adapter"] == config["tool"]["hatch"]["build"]["targets"][
        "wheel"
    ]["packages"]
