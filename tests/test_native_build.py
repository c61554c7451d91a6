"""The compiled build of the adapter's hot path (mypyc): really used when built, and a pure
fallback with the same behaviour (``CLAUDECODE_BRIDGE_PURE=1``, or a source edited since).

The suite itself runs on whatever the install holds: CI installs the compiled modules
(``pip install -e '.[test]'`` compiles them), so the rest of the suite tests those; the
translator's property tests run once more here on the pure modules. An install built without
them (no compiler, or ``CLAUDECODE_BRIDGE_PURE=1`` while installing) runs the suite with
``CLAUDECODE_BRIDGE_PURE=1`` set.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from normalize._native import PURE_ENV, decide, native_state

ROOT = Path(__file__).resolve().parent.parent
PURE_REQUESTED = os.environ.get(PURE_ENV) == "1"


def _listed_modules() -> list[str]:
    """The modules pyproject.toml has the build hook compile."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["include"]
    return sorted(path.removesuffix(".py").replace("/", ".") for path in include)


def _is_compiled(module: str) -> bool:
    origin = importlib.import_module(module).__file__ or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


@pytest.mark.skipif(PURE_REQUESTED, reason=f"{PURE_ENV}=1: the pure modules are wanted")
def test_the_compiled_modules_are_the_ones_imported() -> None:
    """Built compiled (what CI installs), every listed module is imported from its extension.

    Fails when the speed would silently vanish: the hook compiled nothing, a module is left
    out of the build, or a source was edited after the build (then ``pip install -e .``).
    """
    state = native_state()
    assert state.reason == "built", (
        f"the compiled modules are not used ({state.reason}; stale: {list(state.stale)}): "
        f"reinstall (pip install -e .), or set {PURE_ENV}=1 for a pure install"
    )
    assert _listed_modules() == list(state.modules)
    assert [] == [m for m in state.modules if not _is_compiled(m)]


@pytest.mark.skipif(not PURE_REQUESTED, reason=f"only with {PURE_ENV}=1")
def test_pure_requested_imports_the_sources() -> None:
    state = native_state()
    assert state.mode == "pure"
    assert [] == [m for m in _listed_modules() if _is_compiled(m)]


def test_decide_follows_the_record_and_the_sources(tmp_path: Path) -> None:
    """Compiled only with a record whose sources all still match; pure otherwise."""
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "mod.py"
    source.write_text("X = 1\n")
    record = {"pkg.mod": hashlib.sha256(source.read_bytes()).hexdigest()}

    nothing = decide(None, tmp_path, {})
    assert ("pure", "not-built", ()) == (nothing.mode, nothing.reason, nothing.modules)
    built = decide(record, tmp_path, {})
    assert ("compiled", "built", ("pkg.mod",)) == (built.mode, built.reason, built.modules)
    requested = decide(record, tmp_path, {PURE_ENV: "1"})
    assert ("pure", "requested", ("pkg.mod",)) == (
        requested.mode,
        requested.reason,
        requested.modules,
    )
    assert "built" == decide(record, tmp_path, {PURE_ENV: "0"}).reason

    source.write_text("X = 2\n")  # edited after the build: never the stale extension
    stale = decide(record, tmp_path, {})
    assert ("pure", "stale", ("pkg.mod",)) == (stale.mode, stale.reason, stale.stale)
    source.unlink()
    assert "stale" == decide(record, tmp_path, {}).reason


def test_each_state_is_described_with_what_to_do(tmp_path: Path) -> None:
    """``claudecode-bridge doctor`` prints it: which modules run, and how to compile them."""
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "mod.py"
    source.write_text("X = 1\n")
    record = {"pkg.mod": hashlib.sha256(source.read_bytes()).hexdigest()}
    assert "compiled (1 modules)" == decide(record, tmp_path, {}).describe()
    assert f"pure Python ({PURE_ENV}=1)" == decide(record, tmp_path, {PURE_ENV: "1"}).describe()
    nothing = decide(None, tmp_path, {}).describe()
    assert "compiled nothing" in nothing and "with a compiler" in nothing
    source.write_text("X = 2\n")
    stale = decide(record, tmp_path, {}).describe()
    assert "changed since the build: pkg.mod" in stale and "pip install -e ." in stale


def test_doctor_says_which_modules_run() -> None:
    """No CLI to be found (an empty PATH): the report still says how the adapter runs."""
    env = {**os.environ, "PATH": "", "PYTHONPATH": str(ROOT)}
    done = _python("-m", "adapter", "doctor", "--cli", str(ROOT / "no-such-claude"), env=env)
    assert 1 == done.returncode, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("adapter:"))
    expected = "pure Python" if PURE_REQUESTED else f"compiled ({len(_listed_modules())} modules)"
    assert expected in line


def _python(
    *args: str, env: dict[str, str], cwd: Path = ROOT, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """This interpreter with ``args``, its output captured."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _run_pure(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return _python(
        *args, env={**os.environ, PURE_ENV: "1", "PYTHONPATH": str(ROOT)}, timeout=timeout
    )


def test_pure_switch_imports_every_listed_module_from_source() -> None:
    """``CLAUDECODE_BRIDGE_PURE=1``: the .py sources, whatever the install holds."""
    modules = _listed_modules()
    script = (
        "import importlib, adapter, normalize\n"
        "from normalize._native import native_state\n"
        f"for m in {modules!r}:\n"
        "    print(m, importlib.import_module(m).__file__)\n"
        "print('state', native_state().mode)\n"
    )
    done = _run_pure("-c", script, timeout=120)
    assert 0 == done.returncode, done.stderr
    lines = done.stdout.splitlines()
    assert "state pure" == lines[-1]
    files = dict(line.split(" ", 1) for line in lines[:-1])
    assert sorted(files) == modules
    assert [] == [m for m, f in files.items() if not f.endswith(".py")]


@pytest.mark.slow
@pytest.mark.skipif(
    native_state().mode == "pure", reason="the whole suite runs on the pure modules already"
)
def test_translator_property_tests_pass_on_the_pure_modules() -> None:
    """One run of the translator's property tests on the pure modules (the suite runs compiled)."""
    done = _run_pure(
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "tests/adapter/test_translate_properties.py",
        "tests/adapter/test_translate_batches.py",
        "tests/adapter/test_translate_lite.py",
        timeout=1800,
    )
    assert 0 == done.returncode, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout


@pytest.mark.slow
def test_a_build_whose_compiling_fails_gives_a_pure_wheel(tmp_path: Path) -> None:
    """A compiler that fails (or mypyc refusing a dependency's newer type hints) must not make
    the package uninstallable: the hook builds the pure wheel with a warning, and leaves the
    tree as it was (hatch-mypyc hides pyproject.toml while it compiles)."""
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT,
        tree,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "node_modules", "tests", "examples", "docs", "__pycache__", "*.so"
        ),
    )
    (tree / "normalize" / "_native_build.json").unlink(missing_ok=True)
    env = {**os.environ, "CC": "false"}  # found, and fails every compile
    env.pop("CLAUDECODE_BRIDGE_PURE", None)
    done = _python(
        "-m", "pip", "wheel", "-v", "--no-deps", ".", "-w", str(tmp_path / "out"),
        env=env, cwd=tree, timeout=900,
    )  # fmt: skip
    assert 0 == done.returncode, done.stdout[-3000:] + done.stderr[-3000:]
    assert "building a pure-Python wheel: compiling failed" in done.stdout + done.stderr
    [wheel] = (tmp_path / "out").iterdir()
    assert wheel.name.endswith("-py3-none-any.whl")
    assert (tree / "pyproject.toml").is_file()
    assert not list(tree.rglob("*.so"))


@pytest.mark.skipif(PURE_REQUESTED, reason=f"{PURE_ENV}=1: nothing compiled")
def test_the_compiled_build_leaves_nothing_at_the_repository_root() -> None:
    """mypyc's shared runtime library is the group's, inside ``normalize/``."""
    assert [] == sorted(p.name for p in ROOT.glob("*.so"))
    assert list((ROOT / "normalize").glob("_compiled__mypyc.*.so"))


def _sources(dest: Path) -> None:
    """A copy of the checkout's tracked files (what a clone holds)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _wheel(tree: Path, out: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(tree)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: SIGINT reaches the build too
    )


@pytest.mark.slow
def test_a_pure_wheel_holds_the_three_packages_only(tmp_path: Path) -> None:
    import zipfile

    tree, out = tmp_path / "tree", tmp_path / "out"
    _sources(tree)
    build = _wheel(tree, out, {**os.environ, PURE_ENV: "1"})
    assert 0 == build.wait(timeout=600)
    (wheel,) = out.glob("*.whl")
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {"adapter", "claudecode", "normalize"} == {t for t in tops if ".dist-info" not in t}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler: nothing to interrupt")
def test_an_install_interrupted_while_compiling_leaves_the_checkout_whole(tmp_path: Path) -> None:
    """SIGINT in the middle of the mypyc step: pyproject.toml is where it was, nothing else
    is left behind at the root (hatch-mypyc used to rename pyproject.toml for the compile)."""
    import signal
    import time

    tree = tmp_path / "tree"
    _sources(tree)
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV}
    build = _wheel(tree, tmp_path / "out", env)
    compiling = False
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and build.poll() is None:
        # The compile step runs setuptools' build_ext on a setup.py in a temporary directory.
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        if "build_ext --inplace" in ps:
            compiling = True
            break
        time.sleep(0.05)
    assert compiling, "the build never reached its compile step"
    os.killpg(build.pid, signal.SIGINT)
    build.wait(timeout=120)
    assert (tree / "pyproject.toml").is_file()
    assert not (tree / "pyproject.toml.bak").exists()
    assert [] == sorted(p.name for p in tree.glob("*.so"))
