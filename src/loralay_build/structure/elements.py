"""Lines that are not running text: captions, footnotes, table cells, displayed formulas,
the printed title, and the reference list.

Why from the layout: a caption opens with its label and number; a footnote is set small at
the foot of a page; a table's cells line up on a grid; a reference list is the section a
references heading opens, or whose lines open like entries ("[12]", "3.", "Smith, J.").
"""

from __future__ import annotations

import re
from collections import defaultdict

from loralay_build.structure.headings import Heading, is_caption_start
from loralay_build.structure.lines import BodyStyle, TextLine

REFERENCE_NAMES = frozenset({
    "references", "reference", "bibliography", "bibliographie", "bibliografía",
    "bibliografia", "références", "referências", "referencias", "literature", "literatura",
    "works", "cited", "참고문헌", "참고", "문헌",
})
_ENTRY = re.compile(r"^(?:\[\d{1,3}\]|\d{1,3}\.|\(\d{1,3}\))$")
_YEAR = re.compile(r"(?:19|20)\d\d")
_MATH = frozenset("=∑∫≤≥±×√∈→∞∂≈≠∀∃∇∏⊂⊆∪∩")


def captions(lines: list[TextLine], body: BodyStyle) -> set[int]:
    """Caption lines: a line opening with a caption label whose number is followed by
    punctuation, a capital, or that is set apart (small, bold, or first in its block), with
    the following lines of its block that are not larger than it."""
    out: set[int] = set()
    for i, line in enumerate(lines):
        if i in out or not is_caption_start(line.words):
            continue
        number = line.words[1]
        apart = (line.size < 0.95 * body.size or line.bold or i == 0
                 or lines[i - 1].block != line.block or line.gap_above > body.gap + 0.2 * body.size
                 or line.gap_above < 0)
        marked = number[-1] in ".:)-–—" or line.words[0].isupper() or (
            len(line.words) > 2 and line.words[2] in {"-", "–", "—", ":", "|"})
        if not (apart and (marked or line.size < 0.95 * body.size or line.bold)):
            continue
        out.add(i)
        j = i + 1
        while (j < len(lines) and lines[j].block == line.block and lines[j].page == line.page
               and lines[j].size <= line.size * 1.05 and not is_caption_start(lines[j].words)):
            out.add(j)
            j += 1
    return out


def footnotes(lines: list[TextLine], body: BodyStyle, heights: dict[int, float]) -> set[int]:
    """Small lines in the lowest quarter of a page with nothing but small lines under them."""
    out: set[int] = set()
    by_page: dict[int, list[int]] = defaultdict(list)
    for i, line in enumerate(lines):
        by_page[line.page].append(i)
    for page, members in by_page.items():
        height = heights.get(page, 0.0)
        if height <= 0:
            continue
        small = [i for i in members if lines[i].size < 0.92 * body.size]
        lowest_body = max((lines[i].y1 for i in members if lines[i].size >= 0.97 * body.size
                           and len(lines[i].words) > 2), default=0.0)
        for i in small:
            line = lines[i]
            if line.y0 >= 0.6 * height and line.y0 >= lowest_body - 0.5 * body.size:
                out.add(i)
    return out


def tables(lines: list[TextLine], body: BodyStyle) -> set[int]:
    """Lines that are cells of a grid: rows of three or more short segments side by side,
    two or more such rows on a page sharing two or more column starts."""
    out: set[int] = set()
    rows: dict[tuple[int, int], list[int]] = defaultdict(list)
    tolerance = max(body.size * 0.5, 1.0)
    for i, line in enumerate(lines):
        rows[(line.page, round((line.y0 + line.y1) / 2 / tolerance))].append(i)
    grid: dict[int, list[list[int]]] = defaultdict(list)
    for (page, _), members in rows.items():
        if len(members) >= 3 and all(len(lines[i].words) <= 6 for i in members):
            grid[page].append(members)
    for members_rows in grid.values():
        if len(members_rows) < 2:
            continue
        starts = [{round(lines[i].x0 / 3) for i in row} for row in members_rows]
        for k, row in enumerate(members_rows):
            if any(len(starts[k] & starts[m]) >= 2 for m in range(len(starts)) if m != k):
                out.update(row)
    return out


def formulas(lines: list[TextLine]) -> set[int]:
    """Displayed formulas: short lines carrying a relation or operator sign and few words."""
    out: set[int] = set()
    for i, line in enumerate(lines):
        text = line.text
        if len(line.words) > 20 or not any(ch in _MATH for ch in text):
            continue
        wordy = sum(len(w) >= 3 and w.isalpha() for w in line.words)
        if wordy <= max(1, len(line.words) // 3):
            out.add(i)
    return out


def title_lines(lines: list[TextLine], body: BodyStyle, headings: list[Heading]) -> set[int]:
    """The document's printed title: the first heading when it is on the first page, set
    in the largest size of the document and well above the body's."""
    if not headings or not lines:
        return set()
    first = headings[0]
    line = lines[first.first]
    largest = max(x.size for x in lines)
    if line.page == lines[0].page and line.size >= largest - 0.1 and line.size >= 1.3 * body.size \
            and not first.depth:
        return set(range(first.first, first.last + 1))
    return set()


def is_reference_heading(words: list[str]) -> bool:
    text = " ".join(words).lower().strip(" .:")
    text = re.sub(r"^[\divxlc.]+\s+", "", text)
    return text in REFERENCE_NAMES or text.replace(" ", "") in REFERENCE_NAMES or any(
        text.startswith(name) and len(text) <= len(name) + 12
        for name in ("references", "bibliograph", "referências", "referencias", "références",
                     "literature cited", "works cited"))


def looks_like_entries(lines: list[TextLine]) -> bool:
    """Most lines of the span open like reference entries or carry a year."""
    if len(lines) < 3:
        return False
    opening = sum(bool(_ENTRY.match(line.words[0])) for line in lines if line.words)
    years = sum(bool(_YEAR.search(line.text)) for line in lines)
    return opening >= 0.3 * len(lines) or (years >= 0.5 * len(lines) and len(lines) >= 6)
