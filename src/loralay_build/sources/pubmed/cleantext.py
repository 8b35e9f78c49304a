"""The SumPubMed-style view of one article: abstract as the summary (its labelled parts kept),
body text by section, sentence-split, citations and digits replaced by tokens if asked.

The original lowercased, tokenised and deleted text in brackets; here case, punctuation and
brackets are kept (lowercasing is an option), and boilerplate is removed by JATS element.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

from loralay_build.safexml import child, children
from loralay_build.sources.pubmed.body import Body, render
from loralay_build.sources.pubmed.jats import MAIN_TYPES, flatten
from loralay_build.sources.pubmed.sentences import split_sentences

CIT, DIG = "<cit>", "<dig>"
# Numbers, including decimals and thousands separators; never inside a word ("IN56", "T4").
_DIGITS = re.compile(r"(?<![A-Za-z0-9])\d+(?:[.,]\d+)*(?![A-Za-z0-9])")


@dataclass(frozen=True)
class TextOptions:
    cit: bool = True  # citation marker groups -> <cit>
    dig: bool = True  # numbers -> <dig>
    lowercase: bool = False


def finish(text: str, options: TextOptions) -> str:
    """Digit replacement and case, applied to text whose citations are already rendered."""
    if options.dig:
        text = _DIGITS.sub(DIG, text)
    if options.lowercase:
        text = text.lower().replace("<cit>", CIT).replace("<dig>", DIG)
    return text


def abstract_parts(article: etree._Element) -> list[tuple[str, str]]:
    """(label, text) of the main abstract's parts; one part with label "" when unstructured."""
    meta = child(child(article, "front"), "article-meta")
    main = next((a for a in children(meta, "abstract") if a.get("abstract-type", "")
                 in MAIN_TYPES), None) if meta is not None else None
    if main is None:
        return []
    secs = children(main, "sec")
    if not secs:
        text = " ".join(flatten(p) for p in children(main, "p"))
        return [("", text)] if text else []
    out = []
    for sec in secs:
        title = child(sec, "title")
        label = flatten(title).rstrip(":") if title is not None else ""
        text = " ".join(flatten(p) for p in children(sec, "p"))
        if text:
            out.append((label, text))
    return out


def clean_view(article: etree._Element, body: Body, options: TextOptions) -> dict[str, Any]:
    """Columns of the view that come from the JATS (ids and metadata come from the state)."""
    cit = CIT if options.cit else None
    parts = [(label, finish(text, options)) for label, text in abstract_parts(article)]
    sections: list[dict[str, Any]] = []
    text_blocks: list[str] = []
    for section in body.sections:
        title = finish(section.title, options)
        paragraphs = [[finish(s, options)
                       for s in split_sentences(render(p.text, p.markers, cit))]
                      for p in section.paragraphs]
        sections.append({"title": title, "level": section.level, "paragraphs": paragraphs})
        text_blocks += ([title] if title else []) + [" ".join(p) for p in paragraphs]
    return {
        "abstract": "\n".join(f"{label}: {t}" if label else t for label, t in parts),
        "abstract_sections": [{"label": label, "text": t} for label, t in parts],
        "sections": sections,
        "text": "\n\n".join(text_blocks),
    }
