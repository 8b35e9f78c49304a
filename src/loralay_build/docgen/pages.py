"""Which page holds which generated part, and how a part is put between its markers."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from loralay_build.docgen import columns_page, commands_page, settings_page

COMMAND = "python3 -m loralay_build.docgen"


def _cell(text: str) -> str:
    return text.strip().replace("|", "\\|")


def make_targets(root: Path) -> str:
    """The Makefile's targets with their `##` comments, as a table."""
    text = (root / "Makefile").read_text(encoding="utf-8")
    rows = re.findall(r"^([a-z][\w-]*):[^=\n]*?##\s*(.+)$", text, re.M)
    lines = ["| target | what it does |", "|---|---|"]
    lines += [f"| `make {name}` | {_cell(doc)} |" for name, doc in rows]
    return "\n".join(lines) + "\n"


# page (from the project's folder) -> its generated parts, by marker name
PAGES: dict[str, dict[str, Callable[[Path], str]]] = {
    "docs/output-format.md": {"columns": lambda _: columns_page.render()},
    "docs/configuration.md": {"settings": lambda _: settings_page.render()},
    "docs/development.md": {"make": make_targets},
    "docs/commands.md": {"options": lambda _: commands_page.render()},
}


def begin(name: str) -> str:
    return f"<!-- BEGIN GENERATED {name}: written by `{COMMAND}`, do not edit -->"


def end(name: str) -> str:
    return f"<!-- END GENERATED {name} -->"


def regenerate(page: str, text: str, root: Path) -> str:
    """The page's text with each generated part written afresh between its markers."""
    for name, render in PAGES[page].items():
        start, stop = begin(name), end(name)
        head, found, rest = text.partition(start)
        if not found or stop not in rest:
            raise SystemExit(f"{page}: the markers of the generated part {name!r} are missing:"
                             f"\n{start}\n{stop}")
        _, _, tail = rest.partition(stop)
        text = f"{head}{start}\n\n{render(root)}\n{stop}{tail}"
    return text
