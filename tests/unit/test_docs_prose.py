"""The docs read at 3 a.m.: no paragraph and no list item of a page (or the README) runs
past `LONGEST` words. Tables, code blocks, headings and placeholders are not prose."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LONGEST = 100
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def long_units(text: str) -> list[str]:
    """The paragraphs and list items of `text` longer than `LONGEST` words, each cut short."""
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    found = []
    for paragraph in re.split(r"\n\s*\n", prose):
        if paragraph.lstrip().startswith(("|", "#", "{{")):
            continue
        for unit in re.split(r"\n(?=\s*(?:[-*]|\d+\.) )", paragraph):
            words = unit.split()
            if len(words) > LONGEST:
                found.append(f"{len(words)} words: {' '.join(words[:12])} …")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_paragraph_runs_past_a_hundred_words(page: Path) -> None:
    assert not long_units(page.read_text()), long_units(page.read_text())


def test_the_check_sees_a_long_paragraph_and_a_long_list_item() -> None:
    long = " ".join(["word"] * (LONGEST + 1))
    assert len(long_units(f"{long}\n\n- short\n- {long}\n\n| {long} |\n")) == 2
