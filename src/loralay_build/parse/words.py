"""Splitting an engine's text line where the geometry says it is really two lines."""

from __future__ import annotations

import itertools
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
# Word centres further apart than this many font sizes across the text direction sit on
# different lines (superscripts stay within it).
MAX_CROSS_SHIFT = 0.6
# Per direction: index of the leading and trailing coordinate along the text, its sign,
# and the two coordinates across the text.
_AXES = {0: (0, 2, 1.0, 1, 3), 1: (1, 3, 1.0, 0, 2), 2: (2, 0, -1.0, 1, 3), 3: (3, 1, -1.0, 0, 2)}


def line_spans(boxes: Sequence[Box], size: float, direction: int) -> list[tuple[int, int]]:
    """(start, end) word ranges of the real lines within one engine line.

    Engines join text that merely shares a baseline (both columns of a page drawn line by
    line, table rows): a large or backward jump along the text direction, or a jump across
    it, starts a new line.
    """
    n = len(boxes)
    if n < 2:
        return [(0, n)]
    lead, trail, sign, c0, c1 = _AXES[direction % 4]
    size = max(size, 1.0)
    far, back, cross = MAX_WORD_GAP * size, -0.5 * size, 2.0 * MAX_CROSS_SHIFT * size
    starts = [
        i
        for i, (p, c) in enumerate(itertools.pairwise(boxes), 1)
        if not back <= sign * (c[lead] - p[trail]) <= far
        or abs(c[c0] + c[c1] - p[c0] - p[c1]) > cross
    ]
    if not starts:
        return [(0, n)]
    cuts = [0, *starts, n]
    return list(itertools.pairwise(cuts))


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
