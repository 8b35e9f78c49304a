"""What every backend yields, the backend protocol, and the registry that selects one by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from loralay_build.errors import Reason, Reject
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Box, Page


@dataclass
class Line:
    """Words of one text line in display space, as the engine grouped them.

    `direction` is the text direction in display space in clockwise quarter turns
    (0 left-to-right, 1 top-to-bottom, 2 upside down, 3 bottom-to-top). `group` is the
    engine's block id when the engine has blocks (kept together when ordering), else -1.
    """

    words: list[str]
    boxes: list[Box]
    sizes: list[float]
    direction: int = 0
    group: int = -1
    bold: bool = False  # its font is bold (read from its first character)


@dataclass
class PageText:
    """One PDF page: its display geometry, its lines, and the counts used for rejection."""

    page: Page
    lines: list[Line] = field(default_factory=list)
    chars: int = 0  # characters in words
    garbage: int = 0  # characters that carry no text: U+FFFD, (cid:N), controls
    bad_boxes: int = 0  # words dropped because their box was not finite
    composed: int = 0  # spacing accent glyphs composed with their letter
    letterless: int = -1  # characters of words without a letter or digit; -1: not counted
    # What the compiled core's ordering reads of each line (union box, size, direction), made
    # with `lines` so it need not read every word's box back; None: read from the lines.
    line_infos: bytes | None = None
    # Share of a nearly empty page covered by images (parse.ocr.scanned), when the backend
    # measured it while the page was loaded; None: measured later if needed.
    image_cover: float | None = None


class Backend(Protocol):
    """A PDF engine turning a file into pages of lines; it raises `Reject` on bad input."""

    def pages(self, path: Path, settings: ParseSettings) -> Iterator[PageText]:
        """Yield every page of the file in PDF order, empty pages included."""
        ...


# Backends are imported on first use, so a worker using PDFium never imports pdfminer.
_REGISTRY: dict[str, tuple[str, str]] = {
    "pdfium": ("loralay_build.parse.pdfium", "PdfiumBackend"),
    "pdfplumber": ("loralay_build.parse.plumber", "PlumberBackend"),
    "poppler": ("loralay_build.parse.poppler", "PopplerBackend"),
}


def _registered(name: str) -> tuple[str, str]:
    """Module and class of the backend `name`; ValueError lists the known names otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown PDF backend {name!r} (known: {known})") from None


def get_backend(name: str) -> Backend:
    """A new backend registered under `name`."""
    module_name, class_name = _registered(name)
    factory: Callable[[], Backend] = getattr(importlib.import_module(module_name), class_name)
    return factory()


def backend_module(name: str) -> str:
    """The module of the backend `name`, for a worker pool to import before forking workers."""
    return _registered(name)[0]


def backend_names() -> list[str]:
    """Names of the selectable backends."""
    return sorted(_REGISTRY)


def check_page_count(count: int, settings: ParseSettings) -> None:
    """Reject files without pages or with more pages than the configured cap."""
    if count <= 0:
        raise Reject(Reason.CORRUPTED, "no pages")
    if count > settings.max_pages:
        raise Reject(Reason.TOO_LARGE, f"{count} pages > max_pages={settings.max_pages}")
