"""Splitting an engine's text line where the geometry says it is really two lines."""

from __future__ import annotations

import re
from collections.abc import Sequence

from loralay_build.records import Box

# Characters that carry no text: replacement char, C0 controls (whitespace aside), and the
# private-use area symbol fonts map their glyphs to.
# U+0002 is left out: PDFium uses it to mark a line-end hyphen.
GARBAGE = re.compile("[\ufffd\x00\x01\x03-\x08\x0e-\x1f\ue000-\uf8ff]")
CONTROLS = re.compile("[\x00\x01\x03-\x08\x0e-\x1f\x7f]")
# Bidi embedding and override marks some engines wrap rotated text in.
BIDI_MARKS = re.compile("[\u202a-\u202e]")

# A gap wider than this many font sizes between two words of a line is a column gutter or
# a table cell boundary; justified text stays well below it.
MAX_WORD_GAP = 1.5
# Words overlapping across the line direction by less than this share of the thinner box
# sit on different lines.
MIN_LINE_OVERLAP = 0.3


def line_breaks(boxes: Sequence[Box], sizes: Sequence[float], direction: int) -> list[int]:
    """Indices of the words that start a new line within one engine line.

    Engines join text that merely shares a baseline (both columns of a page drawn line by
    line, table rows); a large or backward jump along the text direction, or words that do
    not overlap across it, start a new line.
    """
    starts: list[int] = []
    for i in range(1, len(boxes)):
        p0, p1, p2, p3 = boxes[i - 1]
        c0, c1, c2, c3 = boxes[i]
        size = max(sizes[i - 1], sizes[i], 1.0)
        if direction == 0:
            gap, overlap, thin = c0 - p2, min(p3, c3) - max(p1, c1), min(p3 - p1, c3 - c1)
        elif direction == 1:
            gap, overlap, thin = c1 - p3, min(p2, c2) - max(p0, c0), min(p2 - p0, c2 - c0)
        elif direction == 2:
            gap, overlap, thin = p0 - c2, min(p3, c3) - max(p1, c1), min(p3 - p1, c3 - c1)
        else:
            gap, overlap, thin = p1 - c3, min(p2, c2) - max(p0, c0), min(p2 - p0, c2 - c0)
        if gap > MAX_WORD_GAP * size or gap < -0.5 * size or overlap < MIN_LINE_OVERLAP * thin:
            starts.append(i)
    return starts


def direction_of(boxes: Sequence[Box]) -> int:
    """Text direction of a line guessed from its word boxes (engines that do not report it)."""
    if len(boxes) >= 2:
        dx = (boxes[-1][0] + boxes[-1][2]) - (boxes[0][0] + boxes[0][2])
        dy = (boxes[-1][1] + boxes[-1][3]) - (boxes[0][1] + boxes[0][3])
        if abs(dx) >= abs(dy):
            return 0 if dx >= 0 else 2
        return 1 if dy > 0 else 3
    x0, y0, x1, y1 = boxes[0]
    return 0 if x1 - x0 >= y1 - y0 else 1
