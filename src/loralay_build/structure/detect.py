"""A document's sections and word roles, from its lines: the `sections` and `word_roles`
columns of a row."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
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
)
from loralay_build.structure.headings import MAX_LEVEL, Heading, assign_levels, find_headings
from loralay_build.structure.lines import BodyStyle, Lines, body_style, indices, text_lines
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
    lines = text_lines(doc)
    if lines is None:
        return Structure(_sections(None, [], n), np.zeros(n, dtype=np.int8))
    body = body_style(lines)
    line_roles = np.zeros(len(lines), dtype=np.int8)
    heights = {page.index: page.height for page in doc.pages}
    # A caption's role wins over a footnote's, and either over a table cell's. Formulas are
    # looked for among the lines left: a third of the lines set apart already have a role.
    line_roles[tables(lines, body)] = Role.TABLE
    line_roles[footnotes(lines, body, heights)] = Role.FOOTNOTE
    line_roles[list(captions(lines, body))] = Role.CAPTION
    line_roles[list(formulas(lines, body, line_roles == Role.BODY))] = Role.FORMULA
    skip = line_roles != Role.BODY
    headings = find_headings(lines, body, skip)
    headings = _without_furniture(lines, headings, heights, line_roles)
    # Headings before the first one anchored by numbering or a known name are front
    # matter (title, authors, a thesis's cover pages), when one is anchored.
    first = next((k for k, h in enumerate(headings) if h.anchored), 0)
    for heading in headings[:first]:
        line_roles[heading.first:heading.last + 1] = Role.OTHER
    headings = headings[first:]
    assign_levels(headings)
    headings = _reference_lists(lines, body, headings, line_roles)
    for heading in headings:
        line_roles[heading.first:heading.last + 1] = Role.HEADING
    return Structure(_sections(lines, headings, n), line_roles.repeat(lines.count))


def _without_furniture(lines: Lines, headings: list[Heading], heights: dict[int, float],
                       line_roles: np.ndarray) -> list[Heading]:
    """Headings other than running heads: a text repeated on several pages, in the top or
    bottom eighth of each, is page furniture (role OTHER)."""
    texts: dict[str, list[Heading]] = {}
    for heading in headings:
        texts.setdefault(lines.text(heading.first), []).append(heading)
    furniture: set[int] = set()
    for repeated in texts.values():
        if len(repeated) < 2:
            continue
        for heading in repeated:
            i = heading.first
            height = heights.get(int(lines.page[i]), 0.0)
            if lines.y1[i] <= height / 8 or lines.y0[i] >= height * 7 / 8:
                furniture.add(i)
                line_roles[heading.first:heading.last + 1] = Role.OTHER
    return [h for h in headings if h.first not in furniture]


def _strong(heading: Heading, lines: Lines, body: BodyStyle) -> bool:
    """Set apart by weight or size and not an entry's opening."""
    i = heading.first
    return bool(lines.bold[i] or lines.size[i] >= 1.05 * body.size) and not (
        heading.depth and lines.words[lines.start[i]].rstrip(".").isdigit()
        and lines.count[i] > 6)


def _reference_lists(lines: Lines, body: BodyStyle, headings: list[Heading],
                     line_roles: np.ndarray) -> list[Heading]:
    """Mark the reference lists' lines; headings inside one that are entries set apart
    (numbered, spaced) rather than true headings are dropped. The kept headings."""
    kept: list[Heading] = []
    # The highest level (smallest number) from each heading on, and past the last one.
    highest = [*accumulate([MAX_LEVEL + 1, *(h.level for h in reversed(headings))], min)][::-1]
    k = 0
    while k < len(headings):
        heading = headings[k]
        kept.append(heading)
        k += 1
        words = lines.words[lines.at.start[heading.first]:lines.at.end[heading.last]]
        if not is_reference_heading(words):
            if highest[k] <= heading.level:
                continue  # not the last top-level section
            span = indices(line_roles[heading.last + 1:] == Role.BODY) + heading.last + 1
            if not looks_like_entries(lines, span.tolist()):
                continue
        while k < len(headings) and not _strong(headings[k], lines, body):
            k += 1  # an entry set apart, not a heading
        stop = headings[k].first if k < len(headings) else len(lines)
        span_roles = line_roles[heading.last + 1:stop]
        span_roles[span_roles == Role.BODY] = Role.REFERENCE
    return kept


def _sections(lines: Lines | None, headings: list[Heading], n: int) -> list[dict[str, Any]]:
    """One section per heading, from its first word to the next heading's; the words before
    the first heading make an untitled section."""
    if n == 0:
        return []
    out: list[dict[str, Any]] = []
    starts = [int(lines.start[h.first]) for h in headings] if lines is not None else []
    if not starts or starts[0] > 0:
        out.append({"title": None, "level": 1, "word_start": 0,
                    "word_end": starts[0] if starts else n})
    for k, heading in enumerate(headings):
        assert lines is not None
        title = " ".join(lines.words[lines.at.start[heading.first]:lines.at.end[heading.last]])
        end = starts[k + 1] if k + 1 < len(starts) else n
        out.append({"title": title, "level": heading.level, "word_start": starts[k],
                     "word_end": end})
    return out
