"""Accent composition: a spacing accent glyph drawn over a letter becomes that accented letter.

Older TeX fonts (OT1) typeset "é" as "e" plus a separate "´" glyph moved over it. Engines emit
that glyph as it is: inside the word ("e´", "Teˇsanovi´c") or as a word of its own that splits
the accented word in two ("Resum ´ e´"). Every backend runs its words through
`compose_accents` before grouping them into lines, so the same rule applies everywhere: an
accent whose box overlaps a letter along the text is composed with it (NFC); a removed
stand-alone accent rejoins the two halves of the word it split, with the union of their boxes.
An accent that overlaps no letter (a minute mark after digits, "´" used as an apostrophe, a
maths prime drawn beside its symbol) is text and stays.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loralay_build.records import Box

# Spacing accents and their modifier-letter forms -> the combining mark they stand for.
COMBINING: dict[str, str] = {
    "\u00b4": "\u0301", "\u02ca": "\u0301",  # acute
    "\u0060": "\u0300", "\u02cb": "\u0300",  # grave
    "\u00a8": "\u0308",  # diaeresis
    "\u02c6": "\u0302",  # circumflex
    "\u02dc": "\u0303",  # tilde
    "\u00b8": "\u0327",  # cedilla
    "\u02da": "\u030a",  # ring
    "\u02c7": "\u030c",  # caron
    "\u02d8": "\u0306",  # breve
    "\u02d9": "\u0307",  # dot above
    "\u02dd": "\u030b",  # double acute
    "\u02db": "\u0328",  # ogonek
    "\u00af": "\u0304", "\u02c9": "\u0304",  # macron
}
ACCENT = re.compile("[" + "".join(COMBINING) + "]")
# TeX puts accents over a dotless i or j; the composed letter has its dot back.
_DOTLESS = {"\u0131": "i", "\u0237": "j"}
# Share of the narrower of accent and letter that must overlap along the text.
MIN_OVERLAP = 0.4
# A gap between the two halves of a split word below this share of its height is no space.
MAX_JOIN_GAP = 0.1
# Words searched on each side of a stand-alone accent for its letter: engines often emit a
# line's accents after the line's letters, so the whole engine line is searched, up to this.
WINDOW = 60

CharBoxes = Callable[[int], Sequence[Box]]


@dataclass
class Composed:
    """The words after composition; `origin[k]` is the input index of new word k's first
    piece, and `runs` the input runs as ranges of the new words (empty runs dropped)."""

    words: list[str]
    boxes: list[Box]
    origin: list[int]
    runs: list[tuple[int, int]]
    count: int


def compose_accents(
    words: Sequence[str],
    boxes: Sequence[Box],
    runs: Sequence[tuple[int, int]],
    char_boxes: CharBoxes | None = None,
) -> Composed | None:
    """Compose the spacing accents of one page's words; None when there is none to compose.

    `runs` are (start, end) ranges of words that may share an accent (the engine's lines):
    a stand-alone accent looks for its letter within its run only. `char_boxes(i)` gives the
    box of each character of word i; backends that cannot tell pass None, and then only
    stand-alone accents are composed, on letter positions estimated from the word's width.
    """
    if not ACCENT.search("\n".join(words)):
        return None
    return _Composer(words, boxes, runs, char_boxes).run()


def _x_overlap(a: Box, b: Box) -> float:
    return min(a[2], b[2]) - max(a[0], b[0])


def _near_vertically(accent: Box, letter: Box) -> bool:
    """The accent overlaps the letter vertically or sits within half its height of it."""
    reach = 0.5 * (letter[3] - letter[1])
    return accent[3] >= letter[1] - reach and accent[1] <= letter[3] + reach


def _union(boxes: Sequence[Box]) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _estimated(word: str, box: Box) -> list[Box]:
    """Character boxes spread evenly over the word's width (no engine character boxes)."""
    step = (box[2] - box[0]) / max(len(word), 1)
    return [(box[0] + k * step, box[1], box[0] + (k + 1) * step, box[3]) for k in range(len(word))]


class _Composer:
    def __init__(
        self,
        words: Sequence[str],
        boxes: Sequence[Box],
        runs: Sequence[tuple[int, int]],
        char_boxes: CharBoxes | None,
    ) -> None:
        self.words, self.boxes, self.runs, self.char_boxes = words, boxes, runs, char_boxes
        self.starts = [start for start, _ in runs]
        self.cache: dict[int, Sequence[Box]] = {}
        self.marks: dict[tuple[int, int], list[str]] = {}  # (word, char) -> combining marks
        self.dropped: set[tuple[int, int]] = set()  # accent characters composed away
        self.extra: dict[int, list[Box]] = {}  # boxes of accents joined to a word
        self.count = 0

    def chars(self, i: int) -> Sequence[Box]:
        if i not in self.cache:
            word, box = self.words[i], self.boxes[i]
            real = self.char_boxes(i) if self.char_boxes is not None else None
            self.cache[i] = real if real is not None and len(real) == len(word) else (
                _estimated(word, box)
            )
        return self.cache[i]

    def run(self) -> Composed:
        hits = [i for i, word in enumerate(self.words) if ACCENT.search(word)]
        for i in hits:
            self._compose_word(i)
        return self._rebuild({*hits, *self.extra})

    def _compose_word(self, i: int) -> None:
        word = self.words[i]
        alone = all(c in COMBINING for c in word)
        if not alone and self.char_boxes is None:
            return
        start, end = self._run_of(i)
        if alone:
            near = range(max(start, i - WINDOW), min(end, i + WINDOW + 1))
            targets = [j for j in near if j != i and not ACCENT.fullmatch(self.words[j][:1])]
        else:  # an accent at a word's edge may sit on the neighbouring word's letter
            targets = [j for j in (i - 1, i, i + 1) if start <= j < end]
        for k, char in enumerate(word):
            if char not in COMBINING:
                continue
            accent = self.boxes[i] if len(word) == 1 else self.chars(i)[k]
            found = self._letter_under(accent, targets, i)
            if found is None:
                continue
            self.marks.setdefault(found, []).append(COMBINING[char])
            self.dropped.add((i, k))
            if found[0] != i:
                self.extra.setdefault(found[0], []).append(accent)
            self.count += 1

    def _run_of(self, i: int) -> tuple[int, int]:
        """The run holding word i (runs are sorted and disjoint), or the word alone."""
        k = bisect.bisect_right(self.starts, i) - 1
        if k >= 0 and self.runs[k][0] <= i < self.runs[k][1]:
            return self.runs[k]
        return (i, i + 1)

    def _letter_under(self, accent: Box, targets: list[int], source: int) -> tuple[int, int] | None:
        """The (word, char) of the letter the accent overlaps most, if it overlaps enough."""
        best: tuple[int, int] | None = None
        best_overlap = 0.0
        width = accent[2] - accent[0]
        for j in targets:
            word = self.words[j]
            for m, box in enumerate(self.chars(j)):
                char = word[m]
                if not char.isalpha() or char in COMBINING or (j, m) in self.dropped:
                    continue
                overlap = _x_overlap(accent, box)
                need = MIN_OVERLAP * min(width, box[2] - box[0])
                if overlap > best_overlap and overlap >= need and _near_vertically(accent, box):
                    best, best_overlap = (j, m), overlap
        return best

    def _text(self, i: int) -> str:
        word = self.words[i]
        pieces = []
        for m, char in enumerate(word):
            if (i, m) in self.dropped:
                continue
            marks = self.marks.get((i, m))
            if marks:
                base = _DOTLESS.get(char, char)
                char = unicodedata.normalize("NFC", base + "".join(marks))
            pieces.append(char)
        return "".join(pieces)

    def _joinable(self, left: Box, right: Box) -> bool:
        """Two word halves on one baseline with no space between them."""
        height = left[3] - left[1]
        gap = right[0] - left[2]
        shared = min(left[3], right[3]) - max(left[1], right[1])
        return -MAX_JOIN_GAP * height <= gap <= MAX_JOIN_GAP * height and shared > 0.5 * height

    def _box(self, i: int) -> Box:
        """The union of the word's remaining characters and of the accents composed into it."""
        word = self.words[i]
        kept = [self.boxes[i]]
        if any((i, m) in self.dropped for m in range(len(word))):
            boxes = self.chars(i)
            kept = [boxes[m] for m in range(len(word)) if (i, m) not in self.dropped]
        return _union([*kept, *self.extra.get(i, [])])

    def _rebuild(self, touched: set[int]) -> Composed:
        """The words after composition; `touched` holds every word with an accent or given
        one (the others, most of a page, are copied as they are)."""
        words: list[str] = []
        boxes: list[Box] = []
        origin: list[int] = []
        new_index = [0] * (len(self.words) + 1)
        run_start = {start for start, _ in self.runs}
        split = False  # an accent composed away stood between the last word and this one
        for i, word in enumerate(self.words):
            new_index[i] = len(words)
            if not split and word and i not in touched:
                words.append(word)
                boxes.append(self.boxes[i])
                origin.append(i)
                continue
            if i in run_start:
                split = False
            changed = i in touched
            text = self._text(i) if changed else word
            if not text:
                split = split or bool(words)
                continue
            box = self._box(i) if changed else self.boxes[i]
            split = split or (i, 0) in self.dropped
            if split and boxes and self._joinable(boxes[-1], box):
                words[-1] += text
                boxes[-1] = _union([boxes[-1], box])
            else:
                words.append(text)
                boxes.append(box)
                origin.append(i)
            split = (i, len(word) - 1) in self.dropped
        new_index[len(self.words)] = len(words)
        # Joins never cross a run, so a run ends where the next input word's new word starts.
        runs = [(new_index[s], new_index[e]) for s, e in self.runs]
        return Composed(words, boxes, origin, [(s, e) for s, e in runs if e > s], self.count)

