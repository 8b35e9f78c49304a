"""Lines that are not running text: captions, footnotes, table cells, displayed formulas,
and the reference list.

Why from the layout: a caption opens with its label and number; a footnote is set small at
the foot of a page; a table's cells line up on a grid; a reference list is the section a
references heading opens, or whose lines open like entries ("[12]", "3.", "Smith, J.").
"""

from __future__ import annotations

import re

import numpy as np

from loralay_build.structure.headings import is_caption_start
from loralay_build.structure.lines import (
    BodyStyle,
    Lines,
    either_case,
    groups,
    indices,
    opening_pairs,
    runs,
)

REFERENCE_NAMES = frozenset({
    "references", "reference", "bibliography", "bibliographie", "bibliografía", "bibliografia",
    "références", "referências", "referencias", "literature cited", "literatura citada",
    "works cited", "referências bibliográficas", "referencias bibliográficas",
    "références bibliographiques", "참고문헌", "참고 문헌",
})
_ENTRY = re.compile(r"^(?:\[\d{1,3}\]|\d{1,3}\.|\(\d{1,3}\))$")
_YEAR = re.compile(r"(?:19|20)\d\d")
_NUMBERED = re.compile(r"^[\divxlc.]+\s+")
# A caption label's opening, and the two ASCII characters it can start with.
_LABEL = re.compile(r"\n(?:(?i:fig|tab|qua|grá|gra|cha|abb|sch|pla|lâm)|그림|표)")
_LABEL_PAIRS = opening_pairs(either_case(["fi", "ta", "qu", "gr", "ch", "ab", "sc", "pl"]))
_NONE = np.zeros(0, dtype=np.int64)  # no line
_MATH = re.compile("[=∑∫≤≥±×√∈→∞∂≈≠∀∃∇∏⊂⊆∪∩]")


def captions(lines: Lines, body: BodyStyle) -> set[int]:
    """Caption lines: a line opening with a caption label whose number is followed by
    punctuation, or set apart (small, bold, or first in its block), with the following
    lines of its block that are not larger than it."""
    out: set[int] = set()
    words, at = lines.words, lines.at
    size, bold, block, page, above = at.size, at.bold, at.block, at.page, at.gap_above
    for i in lines.opening(_LABEL, _LABEL_PAIRS).tolist():
        line = words[at.start[i]:at.end[i]]
        if i in out or len(line) < 2 or not is_caption_start(line[:3]):
            continue
        small = size[i] < 0.95 * body.size
        apart = (small or bold[i] or i == 0 or block[i - 1] != block[i]
                 or not 0 <= above[i] <= body.apart)
        marked = line[1][-1] in ".:)-–—|" or line[0].isupper() or (
            len(line) > 2 and line[2] in {"-", "–", "—", ":", "|", "."})
        if not (apart and (marked or small or bold[i])):
            continue
        out.add(i)
        j = i + 1
        count = len(line)
        while (j < len(lines) and block[j] == block[i] and count < 80
               and 0 <= above[j] <= body.apart
               and page[j] == page[i] and size[j] <= size[i] * 1.05
               and not is_caption_start(lines.words_of(j))):
            count += at.count[j]
            out.add(j)
            j += 1
    return out


def footnotes(lines: Lines, body: BodyStyle, heights: dict[int, float]) -> np.ndarray:
    """The indices of the small lines in the lower part of a page with no body line under
    them, in order."""
    small = lines.size < 0.92 * body.size
    if not small.any():
        return _NONE
    first = int(lines.page.min())
    pages = lines.page - first
    by_page = np.zeros(int(pages.max()) + 1)
    for page, value in heights.items():
        if 0 <= page - first < len(by_page):
            by_page[page - first] = value
    height = by_page[pages]
    lowest = np.zeros(len(by_page))
    text = (lines.size >= 0.97 * body.size) & (lines.count > 2)
    np.maximum.at(lowest, pages[text], lines.y1[text])
    low = (lines.y0 >= 0.6 * height) & (lines.y0 >= lowest[pages] - 0.5 * body.size)
    return indices(small & low & (height > 0))


def tables(lines: Lines, body: BodyStyle) -> np.ndarray:
    """The indices, in order, of the lines that are cells of a grid: rows of three or more
    short segments side by side, two or more such rows on a page sharing two or more column
    starts."""
    tolerance = max(body.size * 0.5, 1.0)
    row = np.rint((lines.y0 + lines.y1) / 2 / tolerance).astype(np.int64)
    key = lines.page * 1_000_000 + row
    same = groups(key)
    inverse, counts = same.inverse, same.counts
    wide = counts[inverse] >= 3
    if not wide.any():
        return _NONE
    longest = np.maximum.reduceat(lines.count[same.order], same.starts)
    cells = wide & (longest[inverse] <= 6)
    if not cells.any():
        return _NONE
    # A row is a table's when another row of its page shares two column starts with it:
    # count, for every pair of rows, the column starts they share.
    members = indices(cells)
    column = np.rint(lines.x0[members] / 3).astype(np.int64)
    # Each (page, column start) is one spot; rows are numbered across pages.
    row_of = inverse[members]
    column -= column.min()
    spot = lines.page[members] * (int(column.max()) + 1) + column
    placed = spot * len(counts) + row_of
    placed.sort()
    held = runs(placed)[0]  # (spot, row) pairs, by spot
    spot, rows = held // len(counts), held % len(counts)
    size = runs(spot)[1]  # the rows of each spot, in spot order
    first = size.cumsum() - size
    # Every (row, other row) of each spot: a row repeated once per row of its spot.
    per = size.repeat(size)
    left = rows.repeat(per)
    base = first.repeat(size).repeat(per)
    step = np.arange(len(left)) - (per.cumsum() - per).repeat(per)
    right = rows[base + step]
    other = left != right
    pairs = left[other] * len(counts) + right[other]
    pairs.sort()
    shared, times = runs(pairs)
    in_table = np.zeros(len(counts), dtype=bool)
    in_table[shared[times >= 2] // len(counts)] = True
    return members.compress(in_table[row_of])


def formulas(lines: Lines, body: BodyStyle, among: np.ndarray) -> set[int]:
    """Displayed formulas among the lines of the mask `among`: short lines set apart (space
    above or below, or indented from the line above) carrying a relation or operator sign
    and few words."""
    apart = (lines.gap_above > body.apart) | (lines.gap_below > body.apart)
    apart[1:] |= lines.x0[1:] > lines.x0[:-1] + 2 * body.size  # indented from the line above
    out: set[int] = set()
    words, at = lines.words, lines.at
    search = _MATH.search
    # Only lines set apart and short enough are looked at: most lines are neither.
    for i in indices(apart & (lines.count <= 20) & among).tolist():
        line = words[at.start[i]:at.end[i]]
        text = " ".join(line)
        # Of the signs, ASCII holds only "=": most lines are ASCII, and `in` far cheaper.
        if not (("=" in text) if text.isascii() else search(text)):
            continue
        wordy = sum(len(w) >= 3 and w.isalpha() for w in line)
        if wordy <= max(1, len(line) // 3):
            out.add(i)
    return out


def is_reference_heading(words: list[str]) -> bool:
    text = _NUMBERED.sub("", " ".join(words).lower().strip(" .:"))
    return text in REFERENCE_NAMES or text.replace(" ", "") in REFERENCE_NAMES


def looks_like_entries(lines: Lines, members: list[int]) -> bool:
    """Most lines of the span open like reference entries or carry a year."""
    if len(members) < 3:
        return False
    firsts = lines.firsts
    if sum(bool(_ENTRY.match(firsts[i])) for i in members) >= 0.3 * len(members):
        return True
    if len(members) < 6:
        return False
    years = sum(bool(_YEAR.search(lines.text(i))) for i in members)
    return years >= 0.5 * len(members)
