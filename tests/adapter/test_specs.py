"""A spec means the same on every backend: one mapping from SessionSpec to SessionConfig."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter import LocalBackend, PermissionPolicy, SessionConfig, SessionSpec
from adapter.cluster import _sessions as cluster_sessions
from adapter.specs import config_for
from claudecode import UsageError

_SPECS = st.builds(
    SessionSpec,
    cwd=st.none() | st.just("/tmp"),
    model=st.none() | st.sampled_from(["opus", "sonnet"]),
    policy=st.none() | st.sampled_from(["autonomous", "supervised", "plan"]),
    permission_mode=st.none() | st.just("plan"),
    effort=st.none() | st.sampled_from(["low", "high"]),
    add_dirs=st.lists(st.sampled_from(["/a", "/b"]), max_size=2),
    resume=st.none() | st.just("0b0e7c41-5b8e-4f55-a0a7-2d0c2f1f8f7e"),
    fork=st.booleans(),
    system_prompt=st.none() | st.just("You review."),
    append_system_prompt=st.none() | st.just("Be brief."),
    allowed_tools=st.lists(st.sampled_from(["Read", "Bash(git diff:*)"]), max_size=2),
    disallowed_tools=st.lists(st.sampled_from(["Write", "Read"]), max_size=2),
)


@given(_SPECS)
def test_the_local_backend_and_the_cluster_workers_apply_a_spec_alike(spec: SessionSpec) -> None:
    defaults = SessionConfig(policy=PermissionPolicy("supervised", read_only_tools=("Read",)))
    assert LocalBackend(defaults).config_for(spec) == config_for(defaults, spec)
    assert cluster_sessions.config_for is config_for


def test_effort_and_extra_directories_together_are_both_kept() -> None:
    config = config_for(
        SessionConfig(client_options={"max_turns": 3}),
        SessionSpec(effort="high", add_dirs=["/a"]),
    )
    assert {"max_turns": 3, "effort": "high", "add_dirs": ("/a",)} == config.client_options


def test_a_named_policy_keeps_the_defaults_read_only_tools() -> None:
    defaults = SessionConfig(policy=PermissionPolicy("supervised", read_only_tools=("Read",)))
    policy = config_for(defaults, SessionSpec(policy="plan")).policy
    assert ("plan", ("Read",)) == (policy.name, policy.read_only_tools)


def test_an_unknown_policy_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown policy 'custom'"):
        config_for(SessionConfig(), SessionSpec(policy="custom"))


def test_prompts_replace_and_rules_add_to_the_defaults() -> None:
    """A spec's system prompts take the defaults' place; its permission rules come after the
    defaults' own, each once."""
    defaults = SessionConfig(
        system_prompt="server prompt", allowed_tools=("Read",), disallowed_tools=("Write",)
    )
    spec = SessionSpec(
        system_prompt="agent prompt",
        append_system_prompt="and more",
        allowed_tools=["Grep", "Read"],
        disallowed_tools=["Bash"],
    )
    config = config_for(defaults, spec)
    assert ("agent prompt", "and more") == (config.system_prompt, config.append_system_prompt)
    assert ("Read", "Grep") == config.allowed_tools
    assert ("Write", "Bash") == config.disallowed_tools
    assert config_for(defaults, SessionSpec()) == defaults
