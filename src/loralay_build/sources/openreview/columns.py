"""OpenReview's own columns (SciSummary/SciTLDR-style): the TL;DR, the venue and its outcome,
and with --with-reviews the review summaries."""

from __future__ import annotations

import pyarrow as pa

from loralay_build.corpus.columns import Column

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
COLUMNS: tuple[Column, ...] = (
    Column("abstract_original", pa.string(),
           "the abstract as the source wrote it (Markdown/LaTeX), not normalised"),
    Column("tldr", pa.string(), "the authors' TL;DR (OpenReview), as written"),
    Column("tldr_key", pa.string(), "the metadata key the TL;DR was read from (`TL;DR` or `TLDR`)"),
    Column("venue", pa.string(), "venue as the source names it (`ICLR 2024 poster`)"),
    Column("venue_id", pa.string(),
           "venue id the document was selected from (`ICLR.cc/2024/Conference`)"),
    Column("year", pa.int16(), "year of the venue"),
    Column("decision", pa.string(),
           "the decision text as the venue wrote it (`Accept (Poster)`); null if none"),
    Column("status", pa.string(),
           "normalised outcome: accepted, rejected, withdrawn, desk_rejected or under_review"),
    Column("keywords", pa.list_(pa.string()), "author keywords"),
    Column("reviews", pa.list_(REVIEW_TYPE),
           "with --with-reviews: review, meta-review and decision summaries"),
)
