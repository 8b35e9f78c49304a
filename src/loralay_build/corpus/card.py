"""The dataset card (README.md): YAML configs so `datasets.load_dataset(folder)` works."""

from __future__ import annotations

from typing import Any

from loralay_build.corpus.schema import EXAMPLE_SCHEMA
from loralay_build.corpus.split import SPLITS

COLUMN_DOCS = {
    "article_id": "source-prefixed document id (`hal:1234567`)",
    "article_words": "body words in reading order, abstracts removed",
    "article_bboxes": "word boxes `[x0, y0, x1, y1]` in PDF points, top-left origin",
    "article_norm_bboxes": "word boxes scaled to 0-1000 by the page size (int16)",
    "abstract": "the summary: the abstract in the document's main language",
    "abstracts": "every abstract of the record (all removed from the body)",
    "word_pages": "true 0-based PDF page index of each word",
    "page_sizes": "width and height in points of every page, as displayed",
    "source": "source name",
    "language": "declared main language",
    "lang_detected": "language of the body according to CLD2",
    "lang_confidence": "CLD2 confidence (0-1)",
    "title": "title",
    "published": "publication date (YYYY, YYYY-MM or YYYY-MM-DD)",
    "doi": "DOI when known",
    "licence": "licence of the file when the source gives one",
    "article_pdf_url": "where the PDF was downloaded from",
    "pdf_sha256": "sha256 of the PDF bytes",
    "matches": "where each abstract was found before removal, and leakage left after",
    # OpenReview (SciTLDR) columns; null or empty for other sources
    "abstract_original": "the abstract as the source wrote it (Markdown/LaTeX), not normalised",
    "tldr": "the authors' TL;DR (OpenReview), as written",
    "tldr_key": "the metadata key the TL;DR was read from (`TL;DR` or `TLDR`)",
    "venue": "venue as the source names it (`ICLR 2024 poster`)",
    "venue_id": "venue id the document was selected from (`ICLR.cc/2024/Conference`)",
    "year": "year of the venue",
    "decision": "decision text, or the selection status (accepted, under_review, ...)",
    "keywords": "author keywords",
    "reviews": "with --with-reviews: review, meta-review and decision summaries",
    "reference_text": "the document's text from its HTML (EUR-Lex acts); null for other sources",
}


CARD_FILE = "README.md"

SOURCE_NOTES = {
    "eurlex": (
        "EUR-Lex-Sum rebuilt through Cellar. A row is one (act, language): the act is the "
        "document (words and boxes from its Official Journal PDF, its XHTML text in "
        "`reference_text`; either may be missing) and its LEGISSUM summary is the target "
        "(`abstract`), a separate document, so nothing is removed from the act (match method "
        "`separate`, with the summary's leakage into the act). Pairing rule: of the act's "
        "summaries in that language, the current (non-obsolete) one covering the fewest acts, "
        "ties by LEGISSUM id; every summary-act link is kept in the state database. Obsolete "
        "summaries are skipped. With `--split-preset eurlex-sum`, acts linked by a shared "
        "summary form one group, and groups present (act and summary) in every requested "
        "language go to validation or test by a hash of their smallest CELEX id, the rest to "
        "train: a summary never spans two splits and an act has the same split in every "
        "language. The default chronological split orders acts by their own date. "
        "Acts not longer than their summary (in words) are dropped as `reference_too_short`. "
        "Licence: EUR-Lex content, CC BY 4.0 (Commission Decision 2011/833/EU)."
    ),
}


def data_files_yaml(files: list[dict[str, Any]]) -> list[str]:
    """YAML `configs` naming each shard of this build, not a pattern: while a new build is
    published beside this one, `datasets.load_dataset` still reads exactly this set. Empty
    splits are left out, since `datasets` cannot load a split without rows; a dataset without
    rows lists no file, so loading it fails instead of reading build.json as data."""
    shards = {s: [f["name"] for f in files if f["split"] == s] for s in SPLITS}
    lines = ["configs:", "- config_name: default", "  data_files:"]
    if not any(shards.values()):
        return [*lines[:-1], "  data_files: []"]
    for split, names in shards.items():
        if names:
            lines += [f"  - split: {split}", "    path:"] + [f"    - {n}" for n in names]
    return lines


def render_card(dataset: str, build: dict[str, Any]) -> str:
    """Card text generated from the schema and the build record."""
    splits = build["counts"]["splits"]
    languages = sorted(build.get("languages", [])) or ["multilingual"]
    lines = ["---", *data_files_yaml(build["files"])]
    lines += ["language:"] + [f"- {lang}" for lang in languages]
    lines += [
        "task_categories:", "- summarization", "license: other", "pretty_name: " + dataset,
        "---", "", f"# {dataset}", "",
        "Long-document summarization corpus with the layout of every word, built by "
        "`loralay-build`. Each row is one document: its body words with boxes and page "
        "indices, the abstract as the summary, and every abstract of the record removed "
        "from the body.", "",
        "## Splits", "", "| split | documents |", "|---|---|",
    ]
    lines += [f"| {s} | {splits.get(s, 0)} |" for s in SPLITS]
    empty = [s for s in SPLITS if not splits.get(s, 0)]
    if len(empty) == len(SPLITS):
        lines += ["", "No document is published (see the dropped documents below): the card "
                  "lists no data file, so `datasets.load_dataset` refuses this folder."]
    elif empty:
        lines += ["", f"Empty, so not published: {', '.join(empty)} (too few documents)."]
    ratios = build["split_ratios"]
    lines += [
        "",
        "Chronological by `published`: the first build sends the newest documents to test, "
        "the next newest to validation and the rest to train "
        f"({ratios['train']:.0%} / {ratios['validation']:.0%} / {ratios['test']:.0%}). "
        "Assignments are stored and never change; later builds top validation and test up "
        "to their share with the newest new documents, so no document ever moves from "
        "validation or test into train. Documents without a date count as oldest.",
        "", "## Filters", "",
    ]
    if build.get("source") in SOURCE_NOTES:
        lines[-3:-3] = ["", "## Source notes", "", SOURCE_NOTES[build["source"]]]
    thresholds = build["thresholds"]
    if thresholds.get("filters_enabled") and thresholds.get("percentiles_applied") is False:
        lines += [f"The percentile filters were not applied: the corpus holds fewer than "
                  f"{thresholds.get('min_documents')} documents, too few for percentiles to "
                  "mean anything, so only the absolute limits (such as the parser's page "
                  "limit) apply.", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(thresholds.items())]
    lines += ["", "Dropped documents, by reason (see `rejects.jsonl`):", ""]
    rejects = build["counts"]["rejects"]
    lines += [f"- `{k}`: {v}" for k, v in sorted(rejects.items())] or ["- none"]
    clusters = build.get("duplicate_clusters")
    lines += [] if clusters is None else [
        "", "## Duplicates", "",
        f"{len(clusters)} cluster(s) of near-duplicate documents (identical PDF, or equal "
        "normalised title with similar abstract; see `duplicate_clusters` in build.json). "
        "Each cluster is one work: only its representative, the earliest member (by venue "
        "year when known, date, then id), is published; the others are dropped as `duplicate`.",
    ]
    lines += ["", "## Columns", "", "| column | type | content |", "|---|---|---|"]
    for field in EXAMPLE_SCHEMA:
        lines.append(f"| `{field.name}` | `{field.type}` | {COLUMN_DOCS[field.name]} |")
    lines += [
        "", "## Licence", "",
        "Each file keeps the licence of its source; the `licence` column holds it per row "
        "where the source provides one. Check it before redistribution.", "",
    ]
    return "\n".join(lines)


def render_view_card(dataset: str, summary: str, columns: list[tuple[str, str, str]],
                     build: dict[str, Any]) -> str:
    """Card of a derived view: the same YAML configs, the view's own columns and counts."""
    splits = build["counts"]["splits"]
    lines = ["---", *data_files_yaml(build["files"])]
    lines += ["language:", "- en", "task_categories:", "- summarization", "license: other",
              "pretty_name: " + dataset, "---", "", f"# {dataset}", "", summary, "",
              "## Splits", "", "| split | rows |", "|---|---|"]
    lines += [f"| {s} | {splits.get(s, 0)} |" for s in SPLITS]
    lines += ["", "Each article keeps the split it has in the layout dataset "
              f"`{build['layout_dataset']}`, so all views of one article share a split.", "",
              "## Counts", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(build["counts"].items()) if k != "splits"]
    lines += ["", "## Options", ""]
    lines += [f"- `{k}`: {v}" for k, v in sorted(build["options"].items())]
    lines += ["", "## Columns", "", "| column | type | content |", "|---|---|---|"]
    lines += [f"| `{name}` | `{kind}` | {doc} |" for name, kind, doc in columns]
    lines += ["", "## Licence", "", "Each row keeps its article's licence in `licence`; check "
              "it before redistribution.", ""]
    return "\n".join(lines)
