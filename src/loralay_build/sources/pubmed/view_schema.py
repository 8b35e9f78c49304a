"""The columns of PubMed's two views (SumPubMed and citation records), with the card's text
for every column; the source declares them as its views (`views.schema.ViewLayout`)."""

from __future__ import annotations

import pyarrow as pa

from loralay_build.views.schema import ViewLayout

META: list[tuple[str, pa.DataType, str]] = [
    ("article_id", pa.string(), "id of the article, as in the layout dataset (`pubmed:PMC…`)"),
    ("pmcid", pa.string(), "PMC id"),
    ("doi", pa.string(), "DOI when known"),
    ("title", pa.string(), "article title"),
    ("published", pa.string(), "publication date (YYYY, YYYY-MM or YYYY-MM-DD)"),
    ("licence", pa.string(), "SPDX licence id (`LicenseRef-…` where SPDX has none, "
     "`NOASSERTION` where the source states nothing)"),
    ("licence_source", pa.string(), "the licence as the PMC Cloud Service spells it"),
    ("journal", pa.string(), "journal title from the JATS journal-meta"),
]

SUMPUBMED: list[tuple[str, pa.DataType, str]] = [
    *META,
    ("abstract", pa.string(), "the summary: main abstract, one labelled part per line "
     "(`Background: …`)"),
    ("abstract_sections", pa.list_(pa.struct([("label", pa.string()), ("text", pa.string())])),
     "the abstract's labelled parts (label empty when unstructured)"),
    ("sections", pa.list_(pa.struct([
        ("title", pa.string()), ("level", pa.int32()),
        ("paragraphs", pa.list_(pa.list_(pa.string()))),
    ])), "body sections in document order (level 1 = top); each paragraph is a list of "
     "sentences"),
    ("text", pa.string(), "the body as plain text: section titles and paragraphs separated "
     "by blank lines"),
]

CITED = pa.struct([
    ("ref_id", pa.string()), ("pmid", pa.string()), ("pmcid", pa.string()),
    ("doi", pa.string()), ("title", pa.string()), ("abstract", pa.string()),
    ("resolved", pa.bool_()), ("resolved_from", pa.string()),
])

CITATIONS: list[tuple[str, pa.DataType, str]] = [
    ("citation_id", pa.string(), "`<article_id>#<n>`, n counting the article's records"),
    *META[:7],
    ("abstract", pa.string(), "the citing article's main abstract"),
    ("unit", pa.string(), "`sentence` (one citation sentence) or `paragraph` (a whole "
     "paragraph, CHEN/LU setup)"),
    ("section", pa.string(), "title of the section the citation is in"),
    ("section_index", pa.int32(), "0-based index of that section in the body"),
    ("paragraph_index", pa.int32(), "0-based index of the paragraph in its section"),
    ("citation_text", pa.string(), "the target text; each marker group rewritten `[i, j]`, "
     "numbers indexing `cited` (1-based)"),
    ("paragraph", pa.string(), "the whole paragraph; other citations as `<cit>`"),
    ("citation_start", pa.int32(), "character offset of `citation_text` in `paragraph`"),
    ("citation_end", pa.int32(), "end offset (exclusive) of `citation_text` in `paragraph`"),
    ("context_before", pa.list_(pa.string()), "up to N sentences before, same section"),
    ("context_after", pa.list_(pa.string()), "up to N sentences after, same section"),
    ("cited", pa.list_(CITED), "cited references in marker order (ranges expanded): ids from "
     "the reference list, title, abstract, `resolved`, and `resolved_from` (`state` = an "
     "article of this crawl, `oai` = PMC GetRecord, empty = unresolved)"),
    ("n_cited", pa.int32(), "number of cited references"),
    ("n_resolved", pa.int32(), "how many of them have an abstract"),
]

VIEWS = (ViewLayout("sumpubmed", SUMPUBMED, "article_id"),
         ViewLayout("citations", CITATIONS, "citation_id"))
