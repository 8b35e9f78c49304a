"""The document's text lines as the structure detector reads them: words, box, page, block,
font size and weight, and the gaps to the lines above and below.

Why: headings, captions and footnotes are properties of lines, not words; the parser's
`line_ids` give the lines in reading order, so this is one pass over runs of words.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from loralay_build.records import Document

_LETTER = re.compile(r"[^\W\d_]")


@dataclass
class TextLine:
    """One line of the body, in reading order: words [start, end) of the document."""

    start: int
    end: int
    page: int
    block: int
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    bold: bool
    words: list[str]
    gap_above: float = -1.0  # vertical space to the line before, -1: none on this page/column
    gap_below: float = -1.0

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def letters(self) -> str:
        return "".join(_LETTER.findall(self.text))


@dataclass(frozen=True)
class BodyStyle:
    """The typical line of the document: the font size carrying most words and the usual
    vertical space between two lines of a paragraph."""

    size: float
    gap: float


def text_lines(doc: Document) -> list[TextLine]:
    """The document's lines in reading order; empty when the parser gave no line ids."""
    n = len(doc.words)
    if n == 0 or len(doc.line_ids) != n:
        return []
    ids = np.asarray(doc.line_ids)
    cuts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    starts = np.concatenate([[0], cuts]).tolist()
    ends = np.concatenate([cuts, [n]]).tolist()
    boxes = doc.box_array()
    lo = np.minimum.reduceat(boxes[:, :2], starts, axis=0).tolist()
    hi = np.maximum.reduceat(boxes[:, 2:], starts, axis=0).tolist()
    sizes = doc.font_sizes if len(doc.font_sizes) == n else None
    blocks = doc.block_ids if len(doc.block_ids) == n else None
    bold = doc.bold_lines
    words = doc.words
    out = []
    for start, end, (x0, y0), (x1, y1) in zip(starts, ends, lo, hi, strict=True):
        size = sizes[start] if sizes is not None else y1 - y0
        out.append(TextLine(start, end, doc.word_pages[start],
                            blocks[start] if blocks is not None else 0, x0, y0, x1, y1,
                            float(size), doc.line_ids[start] in bold, words[start:end]))
    _gaps(out)
    return out


def _stacked(upper: TextLine, lower: TextLine) -> bool:
    """`lower` sits under `upper` in the same column of the same page."""
    overlap = min(upper.x1, lower.x1) - max(upper.x0, lower.x0)
    return (upper.page == lower.page and lower.y0 >= upper.y0 + 0.5 * upper.size
            and overlap > -0.5 * upper.size and lower.y0 - upper.y1 < 20 * upper.size)


def _gaps(lines: list[TextLine]) -> None:
    for upper, lower in itertools.pairwise(lines):
        if _stacked(upper, lower):
            gap = max(0.0, lower.y0 - upper.y1)
            upper.gap_below = lower.gap_above = gap


def body_style(lines: list[TextLine]) -> BodyStyle:
    """The body's font size (most words, 0.5 pt bins) and its usual line gap (median)."""
    counts: Counter[float] = Counter()
    for line in lines:
        counts[round(line.size * 2) / 2] += line.end - line.start
    size = counts.most_common(1)[0][0] if counts else 10.0
    gaps = [line.gap_below for line in lines
            if line.gap_below >= 0 and abs(line.size - size) <= 0.1 * size]
    gap = float(np.median(gaps)) if gaps else 0.3 * size
    return BodyStyle(size=size if size > 0 else 10.0, gap=gap)
