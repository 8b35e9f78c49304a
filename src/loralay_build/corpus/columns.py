"""A published column declared once: its name, Arrow type and the card's line about it.

Why: a row used to be spelled three times (the row's keys, the Arrow schema, the card's
prose); the schema and the card now read one declaration. The shared columns are declared
here; a source declares its own in its package (`Source.declares`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from loralay_build.structure.roles import role_table


@dataclass(frozen=True)
class Column:
    """One column of a layout dataset. `optional`: a shared column only the sources that
    name it in `Source.columns` publish."""

    name: str
    type: pa.DataType
    doc: str  # the card's "content" cell
    nullable: bool = True
    optional: bool = False

    @property
    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


def names(columns: Iterable[Column]) -> tuple[str, ...]:
    """The names of declared columns, in order (a source's `columns` from its `declares`)."""
    return tuple(column.name for column in columns)


MATCH_TYPE = pa.struct(
    [
        ("lang", pa.string()),
        ("method", pa.string()),
        ("distance", pa.int32()),
        ("page", pa.int32()),
        ("word_start", pa.int32()),
        ("word_end", pa.int32()),
        ("found", pa.bool_()),
        ("leakage", pa.float32()),
    ]
)
ABSTRACT_TYPE = pa.struct([("lang", pa.string()), ("text", pa.string())])
PAGE_SIZE_TYPE = pa.struct([("width", pa.float32()), ("height", pa.float32())])
SECTION_TYPE = pa.struct(
    [
        ("title", pa.string()),
        ("level", pa.int8()),
        ("word_start", pa.int32()),
        ("word_end", pa.int32()),
    ]
)

# The shared columns, in published order. The first five names are those of the published
# LoRaLay datasets, so their consumers keep working.
SHARED: tuple[Column, ...] = (
    Column("article_id", pa.string(), "source-prefixed document id (`<source>:<id>`)",
           nullable=False),
    Column("article_words", pa.list_(pa.string()),
           "body words in reading order, abstracts removed"),
    Column("article_bboxes", pa.list_(pa.list_(pa.int32(), 4)),
           "word boxes `[x0, y0, x1, y1]` in PDF points, top-left origin"),
    Column("article_norm_bboxes", pa.list_(pa.list_(pa.int16(), 4)),
           "word boxes scaled to 0-1000 by the page size (int16)"),
    Column("abstract", pa.string(),
           "the summary: the abstract in the document's main language"),
    Column("abstracts", pa.list_(ABSTRACT_TYPE),
           "every abstract of the record (all removed from the body)"),
    Column("word_pages", pa.list_(pa.int16()), "true 0-based PDF page index of each word"),
    Column("sections", pa.list_(SECTION_TYPE),
           "the body's sections in reading order, found from the layout: `title` as printed "
           "(numbering kept; null for the text before the first heading), `level` (1 = top), "
           "and the half-open range `[word_start, word_end)` of `article_words` they cover; "
           "together they cover every word once"),
    Column("word_roles", pa.list_(pa.int8()),
           f"role of each word in `article_words`: {role_table()}"),
    Column("page_sizes", pa.list_(PAGE_SIZE_TYPE),
           "width and height in points of every page, as displayed"),
    Column("page_text_origin", pa.list_(pa.string()),
           "where each page's words come from: `pdf` (its text layer) or `ocr` "
           "(Tesseract, for scans and broken fonts)"),
    Column("page_ocr_confidence", pa.list_(pa.float32()),
           "Tesseract's mean word confidence (0-1) of each OCRed page; null "
           "for a page read from its text layer"),
    Column("source", pa.string(), "source name"),
    Column("language", pa.string(), "declared main language"),
    Column("lang_detected", pa.string(), "language of the body according to CLD2"),
    Column("lang_confidence", pa.float32(), "CLD2 confidence (0-1)"),
    Column("title", pa.string(), "title"),
    Column("published", pa.string(), "publication date (YYYY, YYYY-MM or YYYY-MM-DD)"),
    Column("doi", pa.string(), "DOI when known", optional=True),
    Column("licence", pa.string(),
           "SPDX licence id (`LicenseRef-…` where SPDX has none, `NOASSERTION` where the "
           "source states nothing)"),
    Column("licence_source", pa.string(),
           "the licence as the source spells it (null when it states none)"),
    Column("article_pdf_url", pa.string(), "where the PDF was downloaded from"),
    Column("pdf_sha256", pa.string(), "sha256 of the PDF bytes"),
    Column("matches", pa.list_(MATCH_TYPE),
           "where each abstract was found before removal, and leakage left after"),
)

# Every registered source's own columns, by name, in registration order (`declare`).
_DECLARED: dict[str, Column] = {}


def declare(columns: Iterable[Column]) -> None:
    """Add a source's own columns to the catalogue; the source registry calls it for every
    source it registers, so the schema and the card know them without naming the source.
    Two sources may share a column only by declaring it identically."""
    for column in columns:
        known = _DECLARED.get(column.name) or next(
            (c for c in SHARED if c.name == column.name), None)
        if known is not None and known != column:
            raise ValueError(f"column {column.name!r} is declared twice, differently")
        if known is None:
            _DECLARED[column.name] = column


def catalogue() -> tuple[Column, ...]:
    """Every column a layout dataset may have, in published order: the shared ones, then
    the sources' own in the order they were registered."""
    return (*SHARED, *_DECLARED.values())
