"""The layout page names every folder of code and every module in it, and nothing that is
gone: a newcomer reads `docs/layout.md` to find where a thing lives."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = [
    "stacks",
    "layers/shared/python",
    "packages/dynashard/src",
    "lambdas",
    "local",
    "bench",
    "tools",
    "tests/helpers",
]
"""Where modules live (the test folders' own modules are named by their tests)."""


def blocks() -> dict[str, str]:
    """Each folder line of the page's tree and the lines indented under it."""
    text = (ROOT / "docs" / "layout.md").read_text()
    tree = text.split("```", 2)[1]
    found: dict[str, str] = {}
    folder = None
    for line in tree.splitlines():
        head = line.split(" ", 1)[0]
        if head.endswith("/") and not line.startswith(" "):
            folder = head.rstrip("/")
            found[folder] = line[len(head) :]
        elif folder is not None:
            found[folder] += " " + line
    return found


def folders_of_code() -> dict[str, set[str]]:
    """Every folder holding modules, and their names (``__init__`` aside)."""
    found: dict[str, set[str]] = {}
    for top in CODE:
        for module in (ROOT / top).rglob("*.py"):
            if module.name != "__init__.py" and "__pycache__" not in module.parts:
                folder = str(module.parent.relative_to(ROOT))
                found.setdefault(folder, set()).add(module.stem)
    return found


def test_every_module_is_named_under_its_folder() -> None:
    named = blocks()
    missing = {
        folder: sorted(
            name for name in modules if not re.search(rf"\b{name}\b", named.get(folder, ""))
        )
        for folder, modules in folders_of_code().items()
    }
    assert {folder: names for folder, names in missing.items() if names} == {}


def test_every_folder_the_page_names_exists() -> None:
    assert [folder for folder in blocks() if not (ROOT / folder).is_dir()] == []
