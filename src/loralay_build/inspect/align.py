"""Line a parse of the PDF up with the published row, page by page.

The row's words are the parse's cleaned words with the abstracts taken out, in the same
order, with their boxes rounded: walking both in order, a parsed word that is not the
row's next word (same text, same box) is one the build removed. A page where the row's
words do not all turn up in order was parsed differently from the build: nothing on it is
said to be removed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from loralay_build.nfc import nfc_words
from loralay_build.records import Box, Document

# The row holds boxes rounded to whole points.
BOX_TOLERANCE = 0.51


@dataclass
class Alignment:
    pages: list[int] = field(default_factory=list)  # pages lined up with the row
    removed: list[int] = field(default_factory=list)  # parse indices the row lacks there
    failed: list[int] = field(default_factory=list)  # pages that could not be lined up


def _same_box(parsed: Box, published: Box) -> bool:
    return all(abs(a - b) <= BOX_TOLERANCE for a, b in zip(parsed, published, strict=True))


def align_pages(parsed: Document,
                published: Mapping[int, Sequence[tuple[str, Box]]]) -> Alignment:
    """Line up `parsed` (cleaned, abstracts still in) with the row's words and boxes on
    each page of `published`."""
    indices: dict[int, list[int]] = defaultdict(list)
    for i, page in enumerate(parsed.word_pages):
        if page in published:
            indices[page].append(i)
    out = Alignment()
    for page in sorted(published):
        row = published[page]
        at = indices[page]
        words = nfc_words([parsed.words[i] for i in at])
        removed: list[int] = []
        j = 0
        for i, word in zip(at, words, strict=True):
            if j < len(row) and word == row[j][0] and _same_box(parsed.boxes[i], row[j][1]):
                j += 1
            else:
                removed.append(i)
        if j == len(row):
            out.pages.append(page)
            out.removed += removed
        else:
            out.failed.append(page)
    return out
