"""The Arrow schema of a layout dataset's shards: a core every dataset has, plus the columns
its source declares (`Source.columns`), so no dataset carries a column its source never fills.

Kept apart from `records` so that parser workers, which only need the plain records, never
pay for importing pyarrow.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pyarrow as pa

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

# -- OpenReview (SciTLDR) columns -------------------------------------------------------------
REVIEW_TYPE = pa.struct(
    [
        ("kind", pa.string()),  # Official_Review | Meta_Review | Decision
        ("note_id", pa.string()),
        ("title", pa.string()),
        ("summary", pa.string()),
        ("rating", pa.string()),
        ("confidence", pa.string()),
        ("decision", pa.string()),
    ]
)
OPENREVIEW_FIELDS = [
    pa.field("abstract_original", pa.string()),
    pa.field("tldr", pa.string()),
    pa.field("tldr_key", pa.string()),
    pa.field("venue", pa.string()),
    pa.field("venue_id", pa.string()),
    pa.field("year", pa.int16()),
    pa.field("decision", pa.string()),
    pa.field("status", pa.string()),
    pa.field("keywords", pa.list_(pa.string())),
    pa.field("reviews", pa.list_(REVIEW_TYPE)),
]
# -- end of the OpenReview columns ------------------------------------------------------------

# Every column a layout dataset may have, in published order. The first five names are those
# of the published LoRaLay datasets, so their consumers keep working. Builds made before
# datasets had their own schema published all of them.
FULL_SCHEMA = pa.schema(
    [
        pa.field("article_id", pa.string(), nullable=False),
        pa.field("article_words", pa.list_(pa.string())),
        pa.field("article_bboxes", pa.list_(pa.list_(pa.int32(), 4))),
        pa.field("article_norm_bboxes", pa.list_(pa.list_(pa.int16(), 4))),
        pa.field("abstract", pa.string()),
        pa.field("abstracts", pa.list_(ABSTRACT_TYPE)),
        pa.field("word_pages", pa.list_(pa.int16())),
        pa.field("page_sizes", pa.list_(PAGE_SIZE_TYPE)),
        pa.field("page_text_origin", pa.list_(pa.string())),
        pa.field("page_ocr_confidence", pa.list_(pa.float32())),
        pa.field("source", pa.string()),
        pa.field("language", pa.string()),
        pa.field("lang_detected", pa.string()),
        pa.field("lang_confidence", pa.float32()),
        pa.field("title", pa.string()),
        pa.field("published", pa.string()),
        pa.field("doi", pa.string()),
        pa.field("licence", pa.string()),
        pa.field("licence_source", pa.string()),
        pa.field("article_pdf_url", pa.string()),
        pa.field("pdf_sha256", pa.string()),
        pa.field("matches", pa.list_(MATCH_TYPE)),
        *OPENREVIEW_FIELDS,
        # The version of the paper the PDF is (arXiv).
        pa.field("version", pa.int16()),
        # The act's text from its HTML (EUR-Lex).
        pa.field("reference_text", pa.string()),
    ]
)
# The columns a source declares it fills (`Source.columns`); every other one is the core.
SOURCE_COLUMNS = frozenset(["doi", *(f.name for f in OPENREVIEW_FIELDS), "version",
                            "reference_text"])
COLUMNS_KEY = "columns"  # the build record's list of the dataset's column names


def dataset_schema(declared: Collection[str]) -> pa.Schema:
    """The core columns and the `declared` ones, in published order."""
    unknown = sorted(set(declared) - set(FULL_SCHEMA.names))
    if unknown:
        raise ValueError(f"unknown column(s): {', '.join(unknown)}")
    return pa.schema([f for f in FULL_SCHEMA if f.name not in SOURCE_COLUMNS
                      or f.name in declared])


def build_schema(build: Mapping[str, Any]) -> pa.Schema:
    """The schema of a published layout dataset, from its build record; a record that names
    no columns is of a build that published all of them."""
    return dataset_schema(build.get(COLUMNS_KEY, FULL_SCHEMA.names))


def project(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The columns of `schema` from rows that have them and maybe more (rows of a build
    that published every column), so they publish with this dataset's schema."""
    table = _with_page_origins(table)
    missing = [f.name for f in schema if table.schema.get_field_index(f.name) < 0
               or not table.schema.field(f.name).equals(f)]
    if missing:
        raise pa.ArrowInvalid(f"rows lack the column(s) {', '.join(missing)} of the schema")
    return table.select(schema.names).replace_schema_metadata(None)


def _with_page_origins(table: pa.Table) -> pa.Table:
    """Rows made before pages were read by OCR, with the columns saying so: every page's
    text came from the PDF. Exact, so such rows need no reprocessing."""
    if "page_text_origin" in table.column_names or "page_sizes" not in table.column_names:
        return table
    sizes = table.column("page_sizes").combine_chunks()
    offsets = sizes.offsets
    count = offsets[-1].as_py() if len(offsets) else 0
    origin = pa.ListArray.from_arrays(offsets, pa.array(["pdf"] * count, pa.string()))
    confidence = pa.ListArray.from_arrays(offsets, pa.nulls(count, pa.float32()))
    index = table.column_names.index("page_sizes") + 1
    table = table.add_column(index, FULL_SCHEMA.field("page_text_origin"), origin)
    return table.add_column(index + 1, FULL_SCHEMA.field("page_ocr_confidence"), confidence)
