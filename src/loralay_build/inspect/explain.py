"""Why the PDF parsed again for a picture cannot be lined up with the published row.

Only what is known to differ is named: the versions of the programs that read PDFs (from
build.json), the settings that change a row (build.json's `processing_hash` against those
of this parse, named when they are not the defaults), a page read by OCR again. Settings
that are the defaults, and the ones the build used, are never blamed.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from loralay_build.corpus.folder import package_versions
from loralay_build.inspect.locate import Located
from loralay_build.sources import load_settings

# What turns a PDF into a row's words.
PARSING_PACKAGES = ("loralay_build", "pypdfium2", "pdfplumber", "pdfminer.six")
ROW_SECTIONS = ("parse", "match")  # settings sections that change the words of a row


def changed_versions(build: dict[str, Any]) -> list[str]:
    """`package old → new` for each program that reads PDFs and changed since the build."""
    made = build.get("versions") or {}
    now = package_versions()
    return [f"{name} {made[name]} → {now[name]}" for name in PARSING_PACKAGES
            if made.get(name) and now.get(name) and made[name] != now[name]]


def non_default(located: Located) -> list[str]:
    """`[section] key = value` for each row-changing setting of this parse that is not
    the default."""
    defaults = load_settings(located.source).raw
    out = []
    for section in ROW_SECTIONS:
        mine, default = located.settings.raw.get(section, {}), defaults.get(section, {})
        out += [f"[{section}] {key} = {value!r}" for key, value in sorted(mine.items())
                if default.get(key) != value]
    return out


def why_different(located: Located, pages: Collection[int], read_by_ocr: set[int]) -> str:
    """The note for pages whose parse holds the row's words differently."""
    head = (f"removed words not drawn on page(s) {', '.join(str(p + 1) for p in sorted(pages))}:"
            " the PDF parsed again differs from the row")
    versions = changed_versions(located.build)
    if versions:
        return f"{head}, which other versions made ({', '.join(versions)})"
    made = located.build.get("processing_hash")
    if made and made != located.settings.processing_hash():
        mine = non_default(located)
        if mine:
            return (f"{head}: the rows were made with other settings than this parse's "
                    f"({', '.join(mine)}), which the build state records now")
        return (f"{head}: the rows were made with other [parse] or [match] settings than "
                "the defaults used here" + ("" if located.settings_recorded else
                                            " (no build state beside the dataset)"))
    if read_by_ocr & set(pages):
        return f"{head}: Tesseract read the page differently this time"
    return f"{head}; the PDF may have changed since it was built"
