"""`make docs-build` (which `make test` runs) fails on every warning strict mode aborts on:
it ran with ``--quiet``, which hid the warnings from ``--strict``, so two broken anchors
passed it while ``mkdocs build --strict`` aborted (issue 40, point 4). The check builds a
copy of the site's sources with one anchor broken, through the Makefile's own target."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ["mkdocs.yml", "Makefile", "openapi.json", "docs", "tools", "bench/results", "local",
           "layers/shared/python", "packages/dynashard"]  # fmt: skip


def test_a_broken_anchor_fails_make_docs_build(tmp_path: Path) -> None:
    for source in SOURCES:
        target = tmp_path / source
        target.parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, target)
        else:
            shutil.copy(ROOT / source, target)
    page = tmp_path / "docs" / "timeline.md"
    page.write_text(page.read_text() + "\nSee [nowhere](benchmarks.md#no-such-heading).\n")
    venv = Path(sys.executable).parent.parent
    built = subprocess.run(
        ["make", "-C", str(tmp_path), "docs-build", f"VENV={venv}", "STAMP="],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    output = built.stdout + built.stderr
    assert built.returncode != 0, output[-2000:]
    assert "no-such-heading" in output, output[-2000:]
