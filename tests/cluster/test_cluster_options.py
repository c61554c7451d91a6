"""The cluster's command-line options: store limits and the publish linger reach the
ClusterConfig; sizes parse like 512M / 2G, anything else is a usage error."""

from __future__ import annotations

import argparse
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.cluster import ClusterConfig
from adapter.cluster.cli_worker import add_worker_arguments, byte_size, cluster_config_from_args


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_worker_arguments(parser)
    return parser.parse_args(["--nats", "nats://127.0.0.1:4222", *argv])


def test_defaults_are_the_config_defaults() -> None:
    config = cluster_config_from_args(parse())
    assert config == ClusterConfig()
    assert config.event_max_bytes + config.transcript_max_bytes <= 2 << 30  # small, reserved


def test_limits_and_linger_reach_the_config() -> None:
    config = cluster_config_from_args(
        parse(
            "--nats-prefix",
            "team1",
            "--nats-event-max-bytes",
            "64M",
            "--nats-transcript-max-bytes",
            "2G",
            "--publish-linger",
            "0",
        )
    )
    assert (config.prefix, config.event_max_bytes, config.transcript_max_bytes) == (
        "team1",
        64 << 20,
        2 << 30,
    )
    assert config.publish_linger == 0


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("1048576", 1 << 20),
        ("512M", 512 << 20),
        ("2g", 2 << 30),
        ("1.5GiB", 3 << 29),
        ("8KB", 8192),
    ],
)
def test_sizes(text: str, size: int) -> None:
    assert byte_size(text) == size


@pytest.mark.parametrize("text", ["", "0", "-1M", "M", "lots", "inf", "nan", "1X"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        byte_size(text)


@given(st.text(max_size=12))
def test_any_text_is_a_size_or_a_usage_error(text: str) -> None:
    with contextlib.suppress(argparse.ArgumentTypeError):
        assert byte_size(text) > 0


def test_a_bad_size_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("--nats-event-max-bytes", "huge")
    assert "a size like 512M" in capsys.readouterr().err
