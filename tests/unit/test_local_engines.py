"""Choosing the local engine: Java detection, the moto fallback, and engines without TTL."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from local.engines import dynamodb_local
from local.engines.clients import enable_ttl
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, MOTO, backend_from_env, local_engine
from local.events.messaging import Messaging


def fake_java(directory: Path, banner: str, *, jdk: bool = True) -> Path:
    """An executable ``java`` that prints `banner` as ``java -version`` does (on stderr),
    with a ``javac`` beside it as a JDK has (a JRE has none)."""
    directory.mkdir(parents=True, exist_ok=True)
    java = directory / "java"
    java.write_text(f"#!/bin/sh\necho '{banner}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IEXEC)
    if jdk:
        (directory / "javac").write_text("#!/bin/sh\n")
    return java


@pytest.mark.parametrize(
    ("banner", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_292"', 8),
        ('openjdk version "11.0.2" 2019-01-15', 11),
        ("not a java at all", None),
    ],
)
def test_java_major_reads_every_version_style(tmp_path: Path, banner: str, major: int) -> None:
    assert dynamodb_local.java_major(str(fake_java(tmp_path, banner))) == major


def test_an_old_java_on_path_does_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = fake_java(tmp_path / "old", 'openjdk version "11.0.2"')
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(old.parent))
    assert dynamodb_local.find_java() is None
    assert dynamodb_local.unavailable_reason() == "no Java 17+ JDK on PATH (or JAVA_HOME)"
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jre"))
    fake_java(tmp_path / "jre" / "bin", 'openjdk version "17.0.1"', jdk=False)
    assert dynamodb_local.find_java() is None, "a JRE has no javac for the loopback launcher"
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    fake_java(tmp_path / "jdk" / "bin", 'openjdk version "17.0.1"')
    assert dynamodb_local.find_java() == str(tmp_path / "jdk" / "bin" / "java")


def test_a_missing_package_says_to_run_npm_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dynamodb_local, "PACKAGE_LIB", tmp_path)
    monkeypatch.setattr(dynamodb_local, "find_java", lambda: "/usr/bin/java")
    reason = dynamodb_local.unavailable_reason()
    assert reason is not None
    assert "npm ci" in reason


def test_without_java_make_dev_falls_back_to_moto_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(dynamodb_local, "find_java", lambda: None)
    with local_engine(DYNAMODB_LOCAL, fallback=True) as engine:
        assert engine.backend == MOTO
        assert engine.endpoint.startswith("http://127.0.0.1:")
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed == [
        "DynamoDB Local unavailable (no Java 17+ JDK on PATH (or JAVA_HOME)): falling back to moto"
    ]


def test_without_java_the_tests_refuse_rather_than_fall_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dynamodb_local, "find_java", lambda: None)
    with (
        pytest.raises(RuntimeError, match=r"Java 17.*DYNAMODB_BACKEND=moto"),
        local_engine(DYNAMODB_LOCAL),
    ):
        pass


def test_backend_names_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DYNAMODB_BACKEND", raising=False)
    assert backend_from_env() == DYNAMODB_LOCAL
    monkeypatch.setenv("DYNAMODB_BACKEND", "moto")
    assert backend_from_env() == MOTO
    monkeypatch.setenv("DYNAMODB_BACKEND", "dynamo")
    with pytest.raises(ValueError, match="dynamodb-local, moto"):
        backend_from_env()


def test_an_engine_without_ttl_keeps_the_table_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    with Stubber(client) as stubber:
        stubber.add_client_error("update_time_to_live", "UnknownOperationException")
        with caplog.at_level(logging.WARNING):
            enable_ttl(client, "t", "ExpiresAt")
        stubber.add_client_error("update_time_to_live", "ResourceNotFoundException")
        with pytest.raises(client.exceptions.ResourceNotFoundException):
            enable_ttl(client, "t", "ExpiresAt")
    assert "no TTL" in caplog.text


def test_make_dev_honours_webhook_allow_loopback_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37, point 7: ``WEBHOOK_ALLOW_LOOPBACK=0`` was overridden by ``make dev``."""
    messaging = Messaging("http://127.0.0.1:1", "q", "dlq", "bus", "timers")
    monkeypatch.setenv("WEBHOOK_ALLOW_LOOPBACK", "0")
    assert messaging.environment()["WEBHOOK_ALLOW_LOOPBACK"] == "0"
    monkeypatch.delenv("WEBHOOK_ALLOW_LOOPBACK")
    assert messaging.environment()["WEBHOOK_ALLOW_LOOPBACK"] == "1"
