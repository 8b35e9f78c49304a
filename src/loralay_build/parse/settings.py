"""Limits and switches of the PDF layer, in one frozen record so workers can share it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loralay_build.errors import ConfigError
from loralay_build.tables import from_table

BACKENDS = ("pdfium", "pdfplumber", "poppler")


@dataclass(frozen=True)
class ParseSettings:
    """How a PDF is turned into words, and when it is rejected instead.

    Defaults:
    - ``max_pages`` 300: beyond the 99th percentile of page counts of the sources (theses
      included); longer files cost more than they bring to a summarization corpus.
    - ``max_chars_per_page`` 200,000: a page beyond this is not prose (C04-like scatter
      plots of glyphs); the document is rejected as too large rather than grouped for minutes.
    - ``min_chars_per_page`` 20: an average below this over all pages is a scan carrying a
      stamp or a page number only; kept low because short valid files (a one-line control
      page, a title page) must pass, while article pages hold 2,000–5,000 characters.
    - ``max_garbage_ratio`` 0.3: share of characters that are U+FFFD, ``(cid:N)`` or control
      characters above which the text layer is garbage (missing ToUnicode maps).
    - ``max_garbage_page_ratio`` 0.6: the same share on one page of at least 200 characters
      (a font without a usable encoding, often on the abstract's page); higher than the
      document's because a page of formulas or a table of symbols is legitimately dense.
    - ``x_tolerance_ratio`` 0.15: pdfplumber's word gap relative to the font size; its fixed
      default (3 pt) glues words in LaTeX papers.
    - ``reading_order`` True: column-aware order; False keeps the engine's order per page.
    - ``compose_accents`` True: a spacing accent glyph over a letter becomes the accented
      letter (old TeX fonts draw "é" as "e" and "´"); False keeps the glyphs as the engine
      gives them.
    """

    backend: str = "pdfium"
    max_pages: int = 300
    max_chars_per_page: int = 200_000
    min_chars_per_page: int = 20
    max_garbage_ratio: float = 0.3
    max_garbage_page_ratio: float = 0.6
    x_tolerance_ratio: float = 0.15
    reading_order: bool = True
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

