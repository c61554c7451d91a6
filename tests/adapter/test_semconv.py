"""adapter._semconv: our copies of the GenAI names agree with the installed semconv package.

The package keeps the GenAI constants under a private path (``_incubating``) and marks them as
moved to another repository; when they disappear these tests skip instead of failing.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import adapter
from adapter import _semconv

GEN_AI_NAMES = sorted(
    name
    for name in vars(_semconv)
    if name.startswith("GEN_AI_")
    and name.isupper()
    and getattr(_semconv, name).startswith("gen_ai.")
)


def _load(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not installed or moved")


@pytest.fixture(name="gen_ai", scope="module")
def _gen_ai() -> ModuleType:
    return _load("opentelemetry.semconv._incubating.attributes.gen_ai_attributes")


def _member(module: ModuleType, enum_name: str, member: str) -> Any:
    values = getattr(module, enum_name, None)
    if values is None or not hasattr(values, member):
        pytest.skip(f"{enum_name}.{member} is no longer in the semconv package")
    return getattr(values, member).value


class TestAgainstThePackage:
    @pytest.mark.parametrize("name", GEN_AI_NAMES)
    def test_attribute_names_match(self, gen_ai: ModuleType, name: str) -> None:
        """Each gen_ai.* attribute constant is spelled as the package spells it."""
        if not hasattr(gen_ai, name):
            pytest.skip(f"{name} is no longer in the semconv package")
        assert getattr(gen_ai, name) == getattr(_semconv, name)

    @pytest.mark.parametrize(
        ("ours", "enum_name", "member"),
        [
            ("GEN_AI_OPERATION_INVOKE_AGENT", "GenAiOperationNameValues", "INVOKE_AGENT"),
            ("GEN_AI_OPERATION_EXECUTE_TOOL", "GenAiOperationNameValues", "EXECUTE_TOOL"),
            ("GEN_AI_PROVIDER_ANTHROPIC", "GenAiProviderNameValues", "ANTHROPIC"),
        ],
    )
    def test_values_match(self, gen_ai: ModuleType, ours: str, enum_name: str, member: str) -> None:
        """Operation and provider values are the package's enum values."""
        assert _member(gen_ai, enum_name, member) == getattr(_semconv, ours)

    def test_error_type_matches(self) -> None:
        """error.type and its _OTHER fallback are the stable error attributes'."""
        errors = _load("opentelemetry.semconv.attributes.error_attributes")
        assert errors.ERROR_TYPE == _semconv.ERROR_TYPE
        assert _member(errors, "ErrorTypeValues", "OTHER") == _semconv.ERROR_TYPE_OTHER


class TestOurConstants:
    def test_tool_types_are_the_spec_values(self) -> None:
        """The package has no enum for gen_ai.tool.type; the spec's values are these."""
        assert ("function", "extension") == (
            _semconv.GEN_AI_TOOL_TYPE_FUNCTION,
            _semconv.GEN_AI_TOOL_TYPE_EXTENSION,
        )

    def test_names_are_unique(self) -> None:
        """No two attribute constants share a string."""
        names = [
            value
            for key, value in vars(_semconv).items()
            if key.isupper() and isinstance(value, str) and "." in value
        ]
        assert sorted(set(names)) == sorted(names)

    @pytest.mark.parametrize(
        "path",
        # The tracer and the modules it is made of.
        sorted(Path(inspect.getfile(adapter)).parent.glob("*telemetry*.py")),
        ids=lambda path: path.name,
    )
    def test_telemetry_spells_no_attribute_name_itself(self, path: Path) -> None:
        """Every gen_ai.* and error.type string the tracer uses comes from _semconv."""
        tree = ast.parse(path.read_text())
        literals = [
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and (node.value.startswith("gen_ai.") or node.value == "error.type")
        ]
        assert [] == literals
