"""SciTLDR's records (Cachola et al. 2020) made from an OpenReview layout dataset's rows: the
source sentences, a 0/1 oracle label per sentence against the TL;DRs, and the TL;DRs.

Two views: `scitldr`, the AIC setting (abstract + introduction + conclusion), and
`scitldr-full`, the FullText setting (the abstract and every body sentence). The introduction
and the conclusion are the sections whose titles name them (numbering stripped), with their
subsections; a row where either is not found keeps what was found and says so in `ic`,
`introduction_found` and `conclusion_found`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from statistics import fmean
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from loralay_build.sources.views.cohan import KEPT_ROLES
from loralay_build.sources.views.row_view import Record, RowView
from loralay_build.text.sentences import split_sentences
from loralay_build.views.schema import ViewColumns, ViewLayout

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
INPUT_COLUMNS = ["article_id", "article_words", "word_roles", "sections", "abstract",
                 "language", "title", "licence", "tldr"]
# A small-capitals heading as PDFs give it: the larger initial apart (`I NTRODUCTION`).
SMALL_CAPS = re.compile(r"\b([A-Z]) (?=[A-Z]{2,}\b)")
NUMBERING = re.compile(r"^\s*(?:(?:\d+|[IVXLC]+|[A-Z])(?:\.\d+)*\.?|§)\s+", re.IGNORECASE)
INTRODUCTION = re.compile(r"^(?:introdu|einleitung|서론|들어가며)", re.IGNORECASE)
CONCLUSION = re.compile(r"conclu|schluss|결론|맺음말", re.IGNORECASE)

COLUMNS: ViewColumns = [
    ("paper_id", pa.string(), "OpenReview id of the paper (the forum id)"),
    ("article_id", pa.string(), "id of the document in the layout dataset"),
    ("title", pa.string(), "title"),
    ("source", pa.list_(pa.string()), "the input sentences: AIC, the abstract's, then the "
     "introduction's and the conclusion's when found (`scitldr`); the abstract's and every "
     "body sentence (`scitldr-full`)"),
    ("source_labels", pa.list_(pa.int8()), "1 for the oracle sentence (the highest ROUGE "
     "against the TL;DRs), 0 for the others; all 0 when no sentence shares a word with them"),
    ("rouge_scores", pa.list_(pa.float32()), "each sentence's ROUGE: the mean F1 of ROUGE-1, "
     "-2 and -L (rouge-score, stemmed), averaged over the TL;DRs"),
    ("target", pa.list_(pa.string()), "the TL;DRs: the authors' (OpenReview `TL;DR`)"),
    ("ic", pa.bool_(), "both the introduction and the conclusion were found"),
    ("introduction_found", pa.bool_(), "a section titled as the introduction was found"),
    ("conclusion_found", pa.bool_(), "a section titled as the conclusion was found"),
    ("licence", pa.string(), "SPDX licence id, as in the layout dataset"),
]
AIC = ViewLayout("scitldr", COLUMNS, "paper_id")
FULL = ViewLayout("scitldr-full", COLUMNS, "paper_id")
SUMMARIES = {
    "scitldr": "SciTLDR-style records (AIC setting) from OpenReview papers: the sentences of "
    "the abstract, the introduction and the conclusion, found by the layout dataset's "
    "section titles, with a 0/1 oracle per sentence against the authors' TL;DR. A paper "
    "whose introduction or conclusion was not found is kept with what was found and "
    "flagged (`ic`, `introduction_found`, `conclusion_found`). Papers without a TL;DR are "
    "left out (counted as `rows_without_tldr`).",
    "scitldr-full": "SciTLDR-style records (FullText setting) from OpenReview papers: the "
    "sentences of the abstract and of every body section (captions, footnotes, tables and "
    "the reference list left out by their word roles), with a 0/1 oracle per sentence "
    "against the authors' TL;DR. Papers without a TL;DR are left out (counted as "
    "`rows_without_tldr`).",
}


def bare_title(title: str | None) -> str:
    """A section title without its numbering, small capitals joined again
    (`1 I NTRODUCTION` -> `INTRODUCTION`)."""
    return NUMBERING.sub("", SMALL_CAPS.sub(r"\1", title or "")).strip()


def _span(sections: list[dict[str, Any]], at: int) -> range:
    """The sections `at` opens: itself and the deeper ones after it."""
    end = at + 1
    while end < len(sections) and sections[end]["level"] > sections[at]["level"]:
        end += 1
    return range(at, end)


def find_parts(sections: list[dict[str, Any]]) -> tuple[range | None, range | None]:
    """The section ranges of the introduction (the first so titled) and of the conclusion
    (the last so titled after the introduction), None where not found."""
    intro = next((i for i, s in enumerate(sections)
                  if INTRODUCTION.search(bare_title(s["title"]))), None)
    after = -1 if intro is None else intro
    conclusions = [i for i, s in enumerate(sections)
                   if i > after and CONCLUSION.search(bare_title(s["title"]))]
    return (None if intro is None else _span(sections, intro),
            _span(sections, conclusions[-1]) if conclusions else None)


@lru_cache(maxsize=1)
def _scorer() -> RougeScorer:
    # Imported when first scored: rouge-score brings NLTK, seconds to import.
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def oracle(sentences: list[str], targets: list[str]) -> tuple[list[int], list[float]]:
    """Each sentence's ROUGE against the targets, and the labels: 1 for the best sentence
    (the first of equals), none when every score is 0."""
    scorer = _scorer()
    scores = [fmean(fmean(s.fmeasure for s in scorer.score(target, sentence).values())
                    for target in targets) if targets else 0.0
              for sentence in sentences]
    best = max(range(len(scores)), key=scores.__getitem__, default=None)
    labels = [0] * len(scores)
    if best is not None and scores[best] > 0:
        labels[best] = 1
    return labels, scores


def _sentences(row: dict[str, Any], parts: list[int], language: str | None) -> list[str]:
    words, roles, sections = row["article_words"], row["word_roles"], row["sections"]
    out: list[str] = []
    for at in parts:
        section = sections[at]
        kept = [words[i] for i in range(section["word_start"], section["word_end"])
                if roles[i] in KEPT_ROLES]
        out += split_sentences(" ".join(kept), language)
    return out


def scitldr_record(row: dict[str, Any], full: bool) -> dict[str, Any] | None:
    """The record of one layout row (its `INPUT_COLUMNS`); None without a TL;DR."""
    tldr = (row["tldr"] or "").strip()
    if not tldr:
        return None
    language = row["language"] or None
    sections = row["sections"]
    intro, conclusion = find_parts(sections)
    parts = (list(range(len(sections))) if full
             else sorted({*(intro or ()), *(conclusion or ())}))
    source = split_sentences(row["abstract"] or "", language) + _sentences(row, parts, language)
    targets = [tldr]
    labels, scores = oracle(source, targets)
    article_id = str(row["article_id"])
    return {
        "paper_id": article_id.split(":", 1)[-1], "article_id": article_id,
        "title": row["title"], "source": source, "source_labels": labels,
        "rouge_scores": scores, "target": targets,
        "ic": intro is not None and conclusion is not None,
        "introduction_found": intro is not None, "conclusion_found": conclusion is not None,
        "licence": row["licence"],
    }


def _tally(record: Record) -> dict[str, int]:
    return {"sentences": len(record["source"]), "rows_ic": record["ic"],
            "rows_without_introduction": not record["introduction_found"],
            "rows_without_conclusion": not record["conclusion_found"],
            "rows_without_oracle": not any(record["source_labels"])}


ROW_VIEWS: dict[str, RowView] = {
    "scitldr": RowView(AIC, SUMMARIES["scitldr"], INPUT_COLUMNS,
                       lambda row: scitldr_record(row, full=False), "rows_without_tldr", _tally),
    "scitldr-full": RowView(FULL, SUMMARIES["scitldr-full"], INPUT_COLUMNS,
                            lambda row: scitldr_record(row, full=True), "rows_without_tldr",
                            _tally),
}
