"""Which page holds which generated part, and how a part is put between its markers."""

from __future__ import annotations

from collections.abc import Callable

from loralay_build.docgen import columns_page, settings_page

COMMAND = "python3 -m loralay_build.docgen"

# page (from the project's folder) -> its generated parts, by marker name
PAGES: dict[str, dict[str, Callable[[], str]]] = {
    "docs/output-format.md": {"columns": columns_page.render},
    "docs/configuration.md": {"settings": settings_page.render},
}


def begin(name: str) -> str:
    return f"<!-- BEGIN GENERATED {name}: written by `{COMMAND}`, do not edit -->"


def end(name: str) -> str:
    return f"<!-- END GENERATED {name} -->"


def regenerate(page: str, text: str) -> str:
    """The page's text with each generated part written afresh between its markers."""
    for name, render in PAGES[page].items():
        start, stop = begin(name), end(name)
        head, found, rest = text.partition(start)
        if not found or stop not in rest:
            raise SystemExit(f"{page}: the markers of the generated part {name!r} are missing:"
                             f"\n{start}\n{stop}")
        _, _, tail = rest.partition(stop)
        text = f"{head}{start}\n\n{render()}\n{stop}{tail}"
    return text
