"""The DynamoDB Local launcher: it starts, answers, and never leaves a JVM behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from local.engines.clients import local_client
from local.engines.dynamodb_local import dynamodb_local, running_jvms, unavailable_reason
from local.engines.embedded_dynamodb import DYNAMODB_LOCAL, local_engine

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        unavailable_reason() is not None, reason=f"DynamoDB Local: {unavailable_reason()}"
    ),
]
ROOT = Path(__file__).resolve().parents[2]


def wait_until_gone(pid: int, seconds: float = 10) -> bool:
    """Whether process `pid` ended within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pid not in running_jvms():
            return True
        time.sleep(0.1)
    return False


def started_here(before: set[int]) -> int:
    """The one JVM child of this process that was not there `before`."""
    (jvm,) = set(running_jvms(parent=os.getpid())) - before
    return jvm


def test_the_context_serves_then_stops_its_jvm() -> None:
    before = set(running_jvms(parent=os.getpid()))
    with dynamodb_local() as endpoint:
        jvm = started_here(before)
        assert local_client(endpoint).list_tables()["TableNames"] == []
    assert jvm not in running_jvms()


def test_an_exception_in_the_body_stops_the_jvm() -> None:
    before = set(running_jvms(parent=os.getpid()))
    started: list[int] = []

    def fail_inside() -> None:
        with dynamodb_local():
            started.append(started_here(before))
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail_inside()
    assert started
    assert started[0] not in running_jvms()


def test_a_data_directory_keeps_tables_across_restarts(tmp_path: Path) -> None:
    with local_engine(DYNAMODB_LOCAL, data_dir=tmp_path) as engine:
        assert str(tmp_path) in engine.description
        local_client(engine.endpoint).create_table(
            TableName="kept",
            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
    with local_engine(DYNAMODB_LOCAL, data_dir=tmp_path) as engine:
        assert local_client(engine.endpoint).list_tables()["TableNames"] == ["kept"]


OWNER = textwrap.dedent(
    """
    import os, signal, time
    from local.engines.dynamodb_local import dynamodb_local, running_jvms
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, whatever it inherited
    with dynamodb_local():
        print(running_jvms(parent=os.getpid())[0], flush=True)
        time.sleep(600)
    """
)


@pytest.mark.parametrize(
    ("signum", "why"),
    [
        (signal.SIGKILL, "kill -9 of the owner: the kernel ends the JVM (parent-death signal)"),
        (signal.SIGINT, "Ctrl-C of the owner: the context stops the JVM"),
        (signal.SIGTERM, "SIGTERM, no handler: the owner dies, the kernel ends the JVM"),
    ],
)
def test_no_jvm_outlives_its_owner(signum: signal.Signals, why: str) -> None:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'layers/shared/python'}{os.pathsep}{ROOT}"}
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        jvm = int(owner.stdout.readline())
        assert jvm in running_jvms()
        owner.send_signal(signum)
        owner.wait(timeout=30)
        assert wait_until_gone(jvm), why
    finally:
        owner.kill()
        owner.wait()
