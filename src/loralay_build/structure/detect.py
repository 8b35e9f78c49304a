"""A document's sections and word roles, from its lines: the `sections` and `word_roles`
columns of a row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from loralay_build.records import Document
from loralay_build.structure.elements import (
    captions,
    footnotes,
    formulas,
    is_reference_heading,
    looks_like_entries,
    tables,
    title_lines,
)
from loralay_build.structure.headings import Heading, find_headings
from loralay_build.structure.lines import BodyStyle, TextLine, body_style, text_lines
from loralay_build.structure.roles import Role


@dataclass
class Structure:
    """`sections`: dicts of title (null before the first heading), level (1 = top),
    word_start and word_end (half-open, over the document's words), covering every word in
    order. `roles`: one `Role` code (int8) per word."""

    sections: list[dict[str, Any]]
    roles: np.ndarray


def detect_structure(doc: Document) -> Structure:
    """The structure of a cleaned body; one untitled section when no line is a heading."""
    n = len(doc.words)
    roles = np.zeros(n, dtype=np.int8)
    lines = text_lines(doc)
    if not lines:
        return Structure(_sections([], [], n), roles)
    body = body_style(lines)
    line_roles = [Role.BODY] * len(lines)
    heights = {page.index: page.height for page in doc.pages}
    for found, role in ((formulas(lines), Role.FORMULA), (tables(lines, body), Role.TABLE),
                        (footnotes(lines, body, heights), Role.FOOTNOTE),
                        (captions(lines, body), Role.CAPTION)):
        for i in found:
            line_roles[i] = role
    skip = {i for i, role in enumerate(line_roles) if role != Role.BODY}
    headings = find_headings(lines, body, skip)
    title = title_lines(lines, body, headings)
    if title:
        headings = headings[1:]
        for i in title:
            line_roles[i] = Role.OTHER
    headings = _reference_lists(lines, body, headings, line_roles)
    for heading in headings:
        for i in range(heading.first, heading.last + 1):
            line_roles[i] = Role.HEADING
    for line, role in zip(lines, line_roles, strict=True):
        if role:
            roles[line.start:line.end] = role
    return Structure(_sections(lines, headings, n), roles)


def _strong(heading: Heading, lines: list[TextLine], body: BodyStyle) -> bool:
    line = lines[heading.first]
    return (line.bold or line.size >= 1.05 * body.size) and not (
        heading.depth and line.words[0].rstrip(".").isdigit() and len(line.words) > 6)


def _reference_lists(lines: list[TextLine], body: BodyStyle, headings: list[Heading],
                     line_roles: list[Role]) -> list[Heading]:
    """Mark the reference lists' lines; headings inside one that are entries set apart
    (numbered, spaced) rather than true headings are dropped. The kept headings."""
    kept: list[Heading] = []
    k = 0
    while k < len(headings):
        heading = headings[k]
        kept.append(heading)
        k += 1
        named = is_reference_heading([w for i in range(heading.first, heading.last + 1)
                                      for w in lines[i].words])
        end = next((h.first for h in headings[k:] if h.level <= heading.level), len(lines))
        if not named:
            last_top = all(h.level > heading.level for h in headings[k:])
            span = [lines[i] for i in range(heading.last + 1, end) if not line_roles[i]]
            if not (last_top and looks_like_entries(span)):
                continue
        while k < len(headings) and not _strong(headings[k], lines, body):
            k += 1  # an entry set apart, not a heading
        stop = headings[k].first if k < len(headings) else len(lines)
        for i in range(heading.last + 1, stop):
            if not line_roles[i]:
                line_roles[i] = Role.REFERENCE
    return kept


def _sections(lines: list[TextLine], headings: list[Heading], n: int) -> list[dict[str, Any]]:
    """One section per heading, from its first word to the next heading's; the words before
    the first heading make an untitled section."""
    if n == 0:
        return []
    out: list[dict[str, Any]] = []
    starts = [lines[h.first].start for h in headings]
    if not starts or starts[0] > 0:
        out.append({"title": None, "level": 1, "word_start": 0,
                    "word_end": starts[0] if starts else n})
    for k, heading in enumerate(headings):
        words = [w for i in range(heading.first, heading.last + 1) for w in lines[i].words]
        end = starts[k + 1] if k + 1 < len(starts) else n
        out.append({"title": " ".join(words), "level": heading.level,
                    "word_start": starts[k], "word_end": end})
    return out
