"""PDF layer: words, boxes, true page indices and reading order from a PDF file.

Backends: "pdfium" (default, pypdfium2), "pdfplumber", "poppler" (`pdftotext -bbox-layout`).
"""

from loralay_build.parse.api import parse_pdf
from loralay_build.parse.backend import backend_names
from loralay_build.parse.clean import CLEANERS, clean_document
from loralay_build.parse.settings import ParseSettings

__all__ = ["CLEANERS", "ParseSettings", "backend_names", "clean_document", "parse_pdf"]
