"""Limits and switches of the PDF layer, in one frozen record so workers can share it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loralay_build.errors import ConfigError
from loralay_build.tables import from_table

BACKENDS = ("pdfium", "pdfplumber", "poppler")


@dataclass(frozen=True)
class ParseSettings:
    """How a PDF is turned into words, and when it is rejected instead."""

    # the PDF library (--parser): pdfium, pdfplumber, or poppler (needs `pdftotext`)
    backend: str = "pdfium"
    # beyond the 99th percentile of page counts of the sources (theses included); a longer
    # file costs more than it brings to a summarization corpus (rejected as `too_large`)
    max_pages: int = 300
    # a page beyond this is not prose (scatter plots of glyphs): the document is rejected as
    # `too_large` rather than grouped for minutes
    max_chars_per_page: int = 200_000
    # an average below this over all pages is a scan carrying a stamp or a page number only;
    # low, because short valid files (a title page) must pass, where article pages hold
    # 2,000-5,000 characters
    min_chars_per_page: int = 20
    # share of characters that are U+FFFD, `(cid:N)` or control characters above which the
    # text layer is garbage (missing ToUnicode maps)
    max_garbage_ratio: float = 0.3
    # the same share on one page of at least 200 characters (a font without a usable
    # encoding, often on the abstract's page); higher than the document's, as a page of
    # formulas or a table of symbols is legitimately dense
    max_garbage_page_ratio: float = 0.6
    # pdfplumber's word gap relative to the font size; its fixed default (3 pt) glues words
    # in LaTeX papers
    x_tolerance_ratio: float = 0.15
    reading_order: bool = True  # column-aware order; false keeps the engine's order per page
    # a spacing accent glyph over a letter becomes the accented letter (old TeX fonts draw
    # "é" as "e" and "´"); false keeps the glyphs as the engine gives them
    compose_accents: bool = True

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"[parse] backend must be one of {', '.join(BACKENDS)}, "
                              f"got {self.backend!r}")
        if self.max_pages < 1 or self.max_chars_per_page < 1 or self.min_chars_per_page < 0:
            raise ConfigError("parse limits must be positive")
        if not 0.0 <= self.max_garbage_ratio <= 1.0:
            raise ConfigError("max_garbage_ratio must lie in [0, 1]")
        if not 0.0 <= self.max_garbage_page_ratio <= 1.0:
            raise ConfigError("max_garbage_page_ratio must lie in [0, 1]")
        if self.x_tolerance_ratio <= 0.0:
            raise ConfigError("x_tolerance_ratio must be positive")

    @classmethod
    def from_mapping(cls, values: Mapping[str, object]) -> ParseSettings:
        """Build settings from a config section; unknown keys and wrong types are errors."""
        return from_table(cls, values, "parse")

