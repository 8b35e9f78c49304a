"""PDF layer: words, boxes, true page indices and reading order from a PDF file.

Backends: "pdfium" (default, pypdfium2), "pdfplumber", "poppler" (`pdftotext -bbox-layout`).
The names below are imported on first use: a build's parent reads only the settings modules
of this package, and importing the parser would load PDFium into it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loralay_build.lazy import lazy_attributes

if TYPE_CHECKING:
    from loralay_build.parse.api import parse_pdf
    from loralay_build.parse.backend import backend_names
    from loralay_build.parse.clean import CLEANERS, clean_document
    from loralay_build.parse.settings import ParseSettings

__all__ = ["CLEANERS", "ParseSettings", "backend_names", "clean_document", "parse_pdf"]

_MODULES = {
    "parse_pdf": "api",
    "backend_names": "backend",
    "CLEANERS": "clean",
    "clean_document": "clean",
    "ParseSettings": "settings",
}

__getattr__ = lazy_attributes(__name__, _MODULES)
