"""The test suite's own layout, read from its files and imports.

* every folder of the suite that holds Python files is a package (so helpers are imported as
  ``tests.<folder>.<module>``, never by a bare name that only resolves on pytest's sys.path);
* no module of the suite imports a test module (``test_*.py``): what tests share lives in
  ``tests/support`` (several folders) or a folder's non-test module (one folder).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Folders that hold no tests of ours: installed npm packages, data, and the official SDK's
#: examples and e2e tests, vendored unchanged and run in an interpreter of their own.
SKIPPED = frozenset({"node_modules", "fixtures", "artifacts", "__pycache__", "sdk_upstream"})


def python_folders(root: Path) -> Iterator[Path]:
    """Every folder under ``root`` (itself included) with a ``.py`` file, skipping SKIPPED."""
    for folder in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        if SKIPPED.intersection(folder.relative_to(root.parent).parts):
            continue
        if any(folder.glob("*.py")):
            yield folder


def folders_without_init(root: Path) -> list[str]:
    return [
        str(folder.relative_to(root.parent))
        for folder in python_folders(root)
        if not (folder / "__init__.py").exists()
    ]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for each module ``path`` imports, relative imports resolved; for
    ``from package import name`` both ``package`` and ``package.name`` (name may be a module)."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package.pop()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}" if module else alias.name


def imports_of_test_modules(root: Path) -> list[str]:
    """``file:line imports module`` for every import of a test module in the suite."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if SKIPPED.intersection(path.relative_to(root.parent).parts):
            continue
        for line, module in imported_modules(path, root):
            if module.rsplit(".", 1)[-1].startswith("test_"):
                found.append(f"{path.relative_to(root.parent)}:{line} imports {module}")
    return found


def test_every_test_folder_is_a_package() -> None:
    assert [] == folders_without_init(TESTS)


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    assert [] == imports_of_test_modules(TESTS)


def test_the_shared_support_package_is_there() -> None:
    """Developers adding tests are pointed at it: it must stay where they look."""
    for module in ("__init__", "waits", "timeouts", "configs"):
        assert (TESTS / "support" / f"{module}.py").is_file(), module


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    """A made-up suite: ``tests/a`` a package with a test and a helper, ``tests/b`` not."""
    root = tmp_path / "tests"
    for folder in (root / "a", root / "b", root / "a" / "node_modules" / "x"):
        folder.mkdir(parents=True)
    for init in (root / "__init__.py", root / "a" / "__init__.py"):
        init.write_text("")
    (root / "a" / "helpers.py").write_text("X = 1\n")
    (root / "a" / "node_modules" / "x" / "gyp.py").write_text("from test_y import z\n")
    (root / "b" / "test_b.py").write_text("def test_b() -> None:\n    pass\n")
    return root


def test_the_checks_see_a_folder_without_init(suite: Path) -> None:
    assert ["tests/b"] == folders_without_init(suite)


@pytest.mark.parametrize(
    "source",
    [
        "from .test_other import helper\n",
        "from . import test_other\n",
        "from tests.a.test_other import helper\n",
        "import tests.a.test_other\n",
        "from test_other import helper\n",
        "def f() -> None:\n    from .test_other import helper\n",
    ],
)
def test_the_checks_see_every_form_of_a_test_module_import(suite: Path, source: str) -> None:
    (suite / "a" / "test_a.py").write_text(source)
    (found,) = imports_of_test_modules(suite)
    assert found.startswith("tests/a/test_a.py:")
    assert found.endswith("test_other")


def test_the_checks_let_helpers_and_support_imports_pass(suite: Path) -> None:
    (suite / "a" / "test_a.py").write_text(
        "from . import helpers\nfrom .helpers import X\nfrom tests.support.waits import until\n"
        "import pytest\nfrom hypothesis import strategies as st\n"
    )
    assert [] == imports_of_test_modules(suite)
