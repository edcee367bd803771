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


def _outside_parentheses(text: str) -> str:
    """`text` without what its parentheses say (a module's description, not a claim)."""
    while True:
        plain = re.sub(r"\([^()]*\)", " ", text)
        if plain == text:
            return plain
        text = plain


def test_every_module_the_page_names_under_a_folder_is_in_that_folder() -> None:
    """A claim's place, not only its words: a module name listed under a folder (after the
    folder's heading, outside the descriptions) must be a module of that folder."""
    modules = folders_of_code()
    known = set().union(*modules.values())
    misplaced = {}
    for folder, text in blocks().items():
        if folder not in modules:
            continue  # the test folders: their modules are named by their tests
        _, colon, listed = _outside_parentheses(text).partition(":")
        words = set(re.findall(r"(?<![\w./`-])[a-z_][a-z0-9_]*(?![\w/.`-])", listed or text))
        elsewhere = sorted((words & known) - modules[folder])
        if colon and elsewhere:
            misplaced[folder] = elsewhere
    assert misplaced == {}


def test_every_path_the_page_names_exists() -> None:
    """Paths (``bench/results/``, ``pyproject.toml``, ...) exist, from the repository's root
    or from a root of code (``incidents/unicode_tables.py`` is the layer's)."""
    text = (ROOT / "docs" / "layout.md").read_text()
    paths = re.findall(r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]*", text)
    paths += re.findall(r"(?<![\w/.-])[\w-]+\.(?:py|toml|txt|json|yml)\b", text)
    roots = [ROOT, *(ROOT / top for top in CODE)]
    missing = {path for path in paths if not any((root / path).exists() for root in roots)}
    assert sorted(missing) == []


def test_every_make_target_the_page_names_exists() -> None:
    text = (ROOT / "docs" / "layout.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+(?: [\w-]+)*):", makefile, re.MULTILINE))
    defined = {name for line in targets for name in line.split()}
    named = set(re.findall(r"\bmake ([a-z][\w-]*)", text))
    assert sorted(named - defined) == []


def test_backticked_names_under_a_folder_are_defined_there() -> None:
    """A class a folder's lines name in backticks (`Table`) is defined in that folder."""
    undefined = {}
    for folder, text in blocks().items():
        names = set(re.findall(r"`([A-Z]\w*)`", text))
        sources = " ".join(path.read_text() for path in (ROOT / folder).glob("*.py"))
        absent = sorted(name for name in names if not re.search(rf"\bclass {name}\b", sources))
        if absent:
            undefined[folder] = absent
    assert undefined == {}
