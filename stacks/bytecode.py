"""Bytecode for the runtime's CPython, compiled at build time (decision 004).

Lambda mounts the layer under ``/opt`` and the function under ``/var/task``, both read-only,
so a module shipped without a valid ``.pyc`` is compiled again at every cold start (about
800 modules: a second of CPU). CDK zips assets with a fixed 1980 timestamp, which would
invalidate timestamp-based ``.pyc`` files, so they are compiled as *unchecked hash-based*
pycs (PEP 552): valid whatever the file times, never re-validated against the source,
which nobody can change in a deployed, read-only asset.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

RUNTIME_PYTHON = (3, 13)
TAG = "cpython-{}{}".format(*RUNTIME_PYTHON)
UNCHECKED_HASH_FLAGS = 0b01
"""PEP 552's flags word: hash-based (bit 0) without source checking (bit 1 clear)."""


class BytecodeError(RuntimeError):
    """The runtime's bytecode could not be produced: the build must stop, not ship none."""


def runtime_python() -> str:
    """A working CPython of the runtime's version: ``$LAMBDA_PYTHON``, then ``python3.13``
    on PATH, then pyenv's; raises BytecodeError when there is none."""
    name = "python{}.{}".format(*RUNTIME_PYTHON)
    candidates = [os.environ.get("LAMBDA_PYTHON"), shutil.which(name)]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/3.13*/bin/{name}"))
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 13))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.stdout.strip() == "True":
            return candidate
    raise BytecodeError(
        f"no CPython {name[6:]} found to compile the Lambda assets' bytecode: install one "
        f"(`pyenv install 3.13`, or Debian's {name}) or point LAMBDA_PYTHON at it"
    )


def compile_tree(root: Path, deployed_at: str) -> int:
    """Compile every ``.py`` under `root` with the runtime's CPython into unchecked
    hash-based pycs whose file names read as `deployed_at` (``/opt/python``, ``/var/task``);
    returns how many modules it compiled and raises BytecodeError if any is left without."""
    done = subprocess.run(
        [
            runtime_python(),
            "-m",
            "compileall",
            "-q",
            "-f",
            "-j",
            "0",
            "--invalidation-mode",
            "unchecked-hash",
            "-s",
            str(root),
            "-p",
            deployed_at,
            str(root),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    missing = uncompiled(root)
    if done.returncode != 0 or missing:
        raise BytecodeError(
            f"compileall failed in {root} ({len(missing)} modules without {TAG} bytecode, "
            f"e.g. {missing[:3]}): {done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return sum(1 for _ in root.rglob("*.py"))


def uncompiled(root: Path) -> list[Path]:
    """The ``.py`` files under `root` without an unchecked hash-based pyc for the runtime."""
    return [source for source in root.rglob("*.py") if not _has_runtime_pyc(source)]


def _has_runtime_pyc(source: Path) -> bool:
    pyc = source.parent / "__pycache__" / f"{source.stem}.{TAG}.pyc"
    if not pyc.is_file():
        return False
    with pyc.open("rb") as header:
        header.read(4)  # the magic number: the same for every 3.13.x
        flags = int.from_bytes(header.read(4), "little")
    return flags == UNCHECKED_HASH_FLAGS
