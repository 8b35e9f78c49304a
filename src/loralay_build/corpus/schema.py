"""The Arrow schema of the published shards.

Kept apart from `records` so that parser workers, which only need the plain records, never
pay for importing pyarrow.
"""

from __future__ import annotations

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

# -- OpenReview (SciTLDR) columns: null or empty for the other sources -------------------------
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

# Column order and types of every published shard. The first five names are those of the
# published LoRaLay datasets, so their consumers keep working.
EXAMPLE_SCHEMA = pa.schema(
    [
        pa.field("article_id", pa.string(), nullable=False),
        pa.field("article_words", pa.list_(pa.string())),
        pa.field("article_bboxes", pa.list_(pa.list_(pa.int32(), 4))),
        pa.field("article_norm_bboxes", pa.list_(pa.list_(pa.int16(), 4))),
        pa.field("abstract", pa.string()),
        pa.field("abstracts", pa.list_(ABSTRACT_TYPE)),
        pa.field("word_pages", pa.list_(pa.int16())),
        pa.field("page_sizes", pa.list_(PAGE_SIZE_TYPE)),
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
        # The version of the paper the PDF is (arXiv); null for sources without versions.
        pa.field("version", pa.int16()),
        # The act's text from its HTML (EUR-Lex); null for sources without a reference text.
        pa.field("reference_text", pa.string()),
    ]
)
