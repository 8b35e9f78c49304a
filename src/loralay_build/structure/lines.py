"""The document's text lines as the structure detector reads them: box, page, block, font
size and weight, and the gaps to the lines above and below, one numpy array each.

Why arrays: a page holds some eighty lines and the detector must cost a small share of the
few milliseconds a page takes to build, so every test that looks at all lines is one array
operation; only the few lines that may be headings or captions are looked at one by one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple, cast

import numpy as np

from loralay_build.records import Document, int_array

_LETTER = re.compile(r"[^\W\d_]")
_BEYOND_ASCII = 128 * 128  # the key of two first characters not both ASCII


@dataclass
class Lines:
    """The lines of a document in reading order; line `i` holds words
    `[start[i], end[i])`. A gap is -1 where no line of the same column and page is there."""

    words: list[str]
    firsts: tuple[str, ...]  # the first word of each line
    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    page: np.ndarray
    block: np.ndarray
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    size: np.ndarray
    bold: np.ndarray
    gap_above: np.ndarray
    gap_below: np.ndarray

    def __len__(self) -> int:
        return len(self.start)

    @cached_property
    def at(self) -> Scalars:
        """The columns for reading one line's values: lists for the word ranges, read most,
        and memory views for the rest (a view costs nothing to make, a list a few percent of
        the detector's time, and both read several times cheaper than a numpy array)."""
        return Scalars(self.start.tolist(), self.end.tolist(), self.count.tolist(),
                       *(cast("Sequence[Any]", column.data) for column in (
                           self.page, self.block, self.size, self.bold, self.gap_above,
                           self.gap_below)))

    @cached_property
    def _joined_firsts(self) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        """The first words, each after a newline; where each one's newline is in that text;
        the code point of each one's first character; and the key of its first two
        characters in an `opening_pairs` table (a one-character word's second is the next
        newline). Read from the text's UTF-32 code units (one per character), several times
        cheaper than looking at the words one by one."""
        joined = "\n" + "\n".join(self.firsts)
        codes = np.frombuffer((joined + "\n\n").encode("utf-32-le"), dtype=np.uint32)
        breaks = indices(codes == 10)[:-2]
        if len(breaks) != len(self.firsts):  # a word holding a newline
            lengths = np.array([len(first) for first in self.firsts], dtype=np.int64)
            breaks = np.cumsum(lengths + 1) - (lengths + 1)
        first, second = codes[breaks + 1], codes[breaks + 2]
        keys = np.where((first > 127) | (second > 127), _BEYOND_ASCII, first * 128 + second)
        return joined, breaks, first, keys

    @property
    def heads(self) -> np.ndarray:
        """The code point of each line's first character."""
        return self._joined_firsts[2]

    def opening(self, pattern: re.Pattern[str], pairs: np.ndarray,
                among: np.ndarray | None = None) -> np.ndarray:
        """Indices of the lines (of the mask `among`, else all) whose first word `pattern`
        matches, in order. The pattern opens with the newline before the word (MULTILINE,
        `$` at the word's end); it is tried only where the word's first two characters are
        a pair `pairs` holds (see `opening_pairs`) or are not both ASCII. That spares the
        regex engine most lines: a search through all of them costs several times more."""
        joined, breaks, _, keys = self._joined_firsts
        maybe = pairs[keys]
        tried = indices(maybe if among is None else maybe & among)
        match = pattern.match
        return tried[[match(joined, at) is not None for at in breaks[tried].tolist()]]

    def words_of(self, i: int) -> list[str]:
        at = self.at
        return self.words[at.start[i]:at.end[i]]

    def text(self, i: int) -> str:
        return " ".join(self.words_of(i))


@dataclass(frozen=True)
class Scalars:
    """`Lines`' columns as Python sequences, for the lines looked at one by one."""

    start: list[int]
    end: list[int]
    count: list[int]
    page: Sequence[int]
    block: Sequence[int]
    size: Sequence[float]
    bold: Sequence[bool]
    gap_above: Sequence[float]
    gap_below: Sequence[float]


@dataclass(frozen=True)
class BodyStyle:
    """The typical line of the document: the font size carrying most words and the usual
    vertical space between two lines of a paragraph."""

    size: float
    gap: float

    @property
    def apart(self) -> float:
        """A gap wider than this sets a line apart from the one above or below."""
        return self.gap + 0.25 * self.size


def opening_pairs(pairs: Iterable[str]) -> np.ndarray:
    """The table `Lines.opening` reads: which two ASCII characters (a newline, the end of
    a one-character word) a match of its pattern may open with; a pair beyond ASCII is
    always tried."""
    table = np.zeros(_BEYOND_ASCII + 1, dtype=bool)
    for pair in pairs:
        table[ord(pair[0]) * 128 + ord(pair[1])] = True
    table[_BEYOND_ASCII] = True
    return table


def either_case(pairs: Iterable[str]) -> list[str]:
    """Every pair in both cases, letter by letter."""
    return [a + b for pair in pairs for a in {pair[0].lower(), pair[0].upper()}
            for b in {pair[1].lower(), pair[1].upper()}]


def indices(mask: np.ndarray) -> np.ndarray:
    """Where a 1-D mask is true: `np.flatnonzero` without its generic wrapping, which costs
    more than the search on a document's few hundred lines."""
    found: np.ndarray = mask.nonzero()[0]
    return found


def letters(text: str) -> str:
    return "".join(_LETTER.findall(text))


def text_lines(doc: Document) -> Lines | None:
    """The document's lines; None when the parser gave no line ids."""
    n = len(doc.words)
    if n == 0 or len(doc.line_ids) != n:
        return None
    ids = int_array(doc.line_ids)
    bounds = indices(_run_opens(ids))  # where each line starts, and past the last
    start, end = bounds[:-1], bounds[1:]
    boxes = doc.box_array()
    lo = np.minimum.reduceat(boxes[:, :2], start, axis=0)
    hi = np.maximum.reduceat(boxes[:, 2:], start, axis=0)
    at = itemgetter(*start.tolist(), 0)  # one lookup of every line's first item (and a spare)
    if len(doc.font_sizes) == n:
        size = np.fromiter(at(doc.font_sizes), dtype=np.float64, count=len(start) + 1)[:-1]
    else:
        size = hi[:, 1] - lo[:, 1]
    block = (int_array(list(at(doc.block_ids)))[:-1] if len(doc.block_ids) == n
             else np.zeros(len(start), dtype=np.int64))
    lines = Lines(
        words=doc.words, firsts=at(doc.words)[:-1], start=start, end=end, count=end - start,
        page=int_array(list(at(doc.word_pages)))[:-1], block=block,
        x0=lo[:, 0], y0=lo[:, 1], x1=hi[:, 0], y1=hi[:, 1], size=size,
        bold=_bold(ids[start], doc.bold_lines),
        gap_above=np.full(len(start), -1.0), gap_below=np.full(len(start), -1.0),
    )
    _gaps(lines)
    if lines.bold.any() and lines.count[lines.bold].sum() > 0.4 * n:
        lines.bold[:] = False  # a bold body: weight sets nothing apart
    return lines


def _bold(ids: np.ndarray, bold_lines: set[int]) -> np.ndarray:
    """Whether each line id (never negative) is in `bold_lines`, by one lookup table."""
    if not bold_lines:
        return np.zeros(len(ids), dtype=bool)
    marked = np.fromiter(bold_lines, dtype=np.int64, count=len(bold_lines))
    table = np.zeros(max(int(ids.max()), int(marked.max())) + 1, dtype=bool)
    table[marked] = True
    return table.take(ids)


def _gaps(lines: Lines) -> None:
    """The gap between two consecutive lines when the second sits under the first in the
    same column of the same page."""
    if len(lines) < 2:
        return
    size = lines.size[:-1]
    overlap = np.minimum(lines.x1[:-1], lines.x1[1:]) - np.maximum(lines.x0[:-1], lines.x0[1:])
    gap = lines.y0[1:] - lines.y1[:-1]
    stacked = ((lines.page[:-1] == lines.page[1:]) & (lines.y0[1:] >= lines.y0[:-1] + 0.5 * size)
               & (overlap > -0.5 * size) & (gap < 20 * size))
    gap = np.where(stacked, np.maximum(gap, 0.0), -1.0)
    lines.gap_below[:-1] = gap
    lines.gap_above[1:] = gap


def body_style(lines: Lines) -> BodyStyle:
    """The body's font size (most words, 0.5 pt bins) and its usual line gap (median)."""
    bins = np.rint(lines.size * 2).astype(np.int64)
    np.minimum(np.maximum(bins, 0, out=bins), 4000, out=bins)  # np.clip costs twice as much
    weights = np.bincount(bins, weights=lines.count)
    size = float(weights.argmax()) / 2 if len(weights) else 10.0
    if size <= 0:
        size = 10.0
    gaps = lines.gap_below[(lines.gap_below >= 0) & (np.abs(lines.size - size) <= 0.1 * size)]
    gap = _median(gaps) if len(gaps) else 0.3 * size
    return BodyStyle(size=size, gap=gap)


def _median(values: np.ndarray) -> float:
    """`np.median` of a non-empty array, which it sorts in place, without its generic
    machinery (a tenth of the detector's time on short documents)."""
    values.sort()
    half = len(values) // 2
    if len(values) % 2:
        return float(values[half])
    return float((values[half - 1] + values[half]) / 2)


class Groups(NamedTuple):
    """The equal values of a 1-D array: `order` sorts it, each group starts at `starts` in
    that order, `inverse` gives each value's group and `counts` each group's size."""

    order: np.ndarray
    starts: np.ndarray
    inverse: np.ndarray
    counts: np.ndarray


def groups(values: np.ndarray) -> Groups:
    """`np.unique(values, return_inverse=True, return_counts=True)` and the sort behind it,
    for a 1-D array: numpy's own costs several times more on a document's few hundred
    values."""
    order = values.argsort(kind="stable")
    opens = _run_opens(values[order])
    bounds = indices(opens)
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = opens[:-1].cumsum() - 1
    return Groups(order, bounds[:-1], inverse, bounds[1:] - bounds[:-1])


def runs(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a sorted 1-D array and how often each occurs."""
    bounds = indices(_run_opens(ordered))
    return ordered[bounds[:-1]], bounds[1:] - bounds[:-1]


def _run_opens(values: np.ndarray) -> np.ndarray:
    """Where a run of equal values opens in a 1-D array, and True past its end: the run
    bounds without `np.diff` and `np.append`, which cost more than the rest together."""
    opens = np.empty(len(values) + 1, dtype=bool)
    opens[0] = opens[-1] = True
    np.not_equal(values[1:], values[:-1], out=opens[1:-1])
    return opens
