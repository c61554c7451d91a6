"""The cluster's command-line options: store limits, timeouts, heartbeats and the publish
linger reach the ClusterConfig; sizes parse like 512M / 2G and seconds like 2.5, anything else
is a usage error, and so is a heartbeat TTL that is not longer than the interval."""

from __future__ import annotations

import argparse
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapter.cluster import ClusterConfig
from adapter.commands.worker import (
    add_worker_arguments,
    byte_size,
    cluster_config_from_args,
    seconds,
)


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


def test_timeouts_and_heartbeats_reach_the_config() -> None:
    config = cluster_config_from_args(
        parse(
            "--nats-replicas",
            "3",
            "--nats-request-timeout",
            "2.5",
            "--nats-create-timeout",
            "30",
            "--nats-heartbeat",
            "0.5",
            "--nats-heartbeat-ttl",
            "2",
        )
    )
    assert (3, 2.5, 30.0, 0.5, 2.0) == (
        config.replicas,
        config.request_timeout,
        config.create_timeout,
        config.heartbeat_interval,
        config.heartbeat_ttl,
    )


def test_a_ttl_not_longer_than_the_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="heartbeat_ttl must be longer"):
        cluster_config_from_args(parse("--nats-heartbeat", "3", "--nats-heartbeat-ttl", "3"))


def test_replicas_are_one_three_or_five(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse("--nats-replicas", "2")
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["", "0", "-1", "abc", "inf", "nan", "1s"])
def test_bad_seconds(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        seconds(text)


@given(st.text(max_size=12))
def test_any_text_is_seconds_or_a_usage_error(text: str) -> None:
    with contextlib.suppress(argparse.ArgumentTypeError):
        assert 0 < seconds(text) < float("inf")


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
