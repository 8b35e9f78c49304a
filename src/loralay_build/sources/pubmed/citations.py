"""CiteBench-style citation records of one article.

Unit "sentence" (ABURAED/XING setup): one record per sentence citing at least one reference,
with up to N sentences of context on each side, never crossing its section. Unit "paragraph"
(CHEN/LU setup): one record per paragraph citing anything; the whole paragraph is the target.
In the target, each marker group is rewritten as "[i, j]" where the numbers index the
record's `cited` list (1-based, marker order); other citations in the paragraph and contexts
become `<cit>`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from loralay_build.sources.pubmed.body import MARK_RE, Body, Marker, Paragraph, marker_index
from loralay_build.sources.pubmed.resolve import Found
from loralay_build.sources.pubmed.sentences import split_sentences

UNITS = ("sentence", "paragraph")
OTHER = "<cit>"


@dataclass(frozen=True)
class CitationOptions:
    unit: str = "sentence"
    context: int = 3  # sentences on each side
    min_resolved: float = 0.0  # share of cited papers that must have an abstract
    lowercase: bool = False


@dataclass(frozen=True)
class _Sentence:
    paragraph: int
    text: str  # with marker characters


def _cited(text: str, markers: list[Marker]) -> list[str]:
    out: list[str] = []
    for found in MARK_RE.finditer(text):
        out += [r for r in markers[marker_index(found.group())].ref_ids if r not in out]
    return out


def _numbered(text: str, markers: list[Marker], cited: list[str]) -> str:
    def number(found: Any) -> str:
        ids = markers[marker_index(found.group())].ref_ids
        return "[" + ", ".join(str(cited.index(r) + 1) for r in ids) + "]"

    return MARK_RE.sub(number, text)


def _plain(text: str) -> str:
    return MARK_RE.sub(OTHER, text)


def citation_records(body: Body, options: CitationOptions,
                     find: Callable[[str], Found]) -> Iterator[dict[str, Any]]:
    """Records (without the citing paper's columns), in document order. `find(ref_id)`
    resolves a reference of `body`; records below the resolved share are skipped."""
    for s_index, section in enumerate(body.sections):
        sentences = [_Sentence(p_index, s) for p_index, p in enumerate(section.paragraphs)
                     for s in split_sentences(p.text)]
        for p_index, paragraph in enumerate(section.paragraphs):
            mine = [i for i, s in enumerate(sentences) if s.paragraph == p_index]
            if options.unit == "paragraph":
                targets = [mine] if MARK_RE.search(paragraph.text) else []
            else:
                targets = [[i] for i in mine if MARK_RE.search(sentences[i].text)]
            for target in targets:
                record = _record(body, section.title, s_index, paragraph, p_index, sentences,
                                 target, options, find)
                if record is not None:
                    yield record


def _record(body: Body, title: str, s_index: int, paragraph: Paragraph, p_index: int,
            sentences: list[_Sentence], target: list[int], options: CitationOptions,
            find: Callable[[str], Found]) -> dict[str, Any] | None:
    markers = paragraph.markers
    target_text = " ".join(sentences[i].text for i in target)
    cited_ids = _cited(target_text, markers)
    cited = []
    for ref_id in cited_ids:
        ref = body.references[ref_id]
        found = find(ref_id)
        cited.append({
            "ref_id": ref_id, "pmid": ref.pmid, "pmcid": found.pmcid or ref.pmcid,
            "doi": ref.doi,
            "title": ref.title or found.title, "abstract": found.abstract,
            "resolved": bool(found.abstract), "resolved_from": found.via,
        })
    resolved = sum(1 for c in cited if c["resolved"])
    if not resolved or resolved < options.min_resolved * len(cited):
        return None
    pieces: list[str] = []
    start = end = 0
    for i in (i for i, s in enumerate(sentences) if s.paragraph == p_index):
        rendered = (_numbered(sentences[i].text, markers, cited_ids) if i in target
                    else _plain(sentences[i].text))
        if i == target[0]:
            start = len(" ".join(pieces)) + (1 if pieces else 0)
        pieces.append(rendered)
        if i == target[-1]:
            end = len(" ".join(pieces))
    paragraph_text = " ".join(pieces)
    first, last = target[0], target[-1]
    before = [_plain(s.text) for s in sentences[max(0, first - options.context):first]]
    after = [_plain(s.text) for s in sentences[last + 1:last + 1 + options.context]]
    if options.lowercase:
        paragraph_text = paragraph_text.lower()
        before = [s.lower() for s in before]
        after = [s.lower() for s in after]
    return {
        "unit": options.unit,
        "section": title,
        "section_index": s_index,
        "paragraph_index": p_index,
        "citation_text": paragraph_text[start:end],
        "paragraph": paragraph_text,
        "citation_start": start,
        "citation_end": end,
        "context_before": before,
        "context_after": after,
        "cited": cited,
        "n_cited": len(cited),
        "n_resolved": resolved,
    }
