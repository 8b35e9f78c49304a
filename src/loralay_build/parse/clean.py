"""Cleaners: drop words that are not the article's text, counting each removal.

Each cleaner returns the indices of the words it removes; `clean_document` applies them in
the order given and records the counts in `Document.removed[name]`. Pages stay in
`doc.pages` and words keep their true page index whatever is removed. The shared cleaners
are here; a source declares its own (`Source.cleaners`) as instances of the parametrised
ones (`CoverPage`, `MarginStamp`), data a worker unpickles without importing the source.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from loralay_build.records import Document, int_array

Cleaner = Callable[[Document], set[int]]

_NUMBER = re.compile(r"^\d{1,4}$")
_ROMAN = re.compile(r"^[ivxlc]{1,6}$", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")

# Share of the page height at the top and bottom where running headers and footers sit.
MARGIN_BAND = 0.12
# A gutter of line numbers has at least this many numbers on a page.
MIN_LINE_NUMBERS = 8


def _pages_of(doc: Document) -> dict[int, list[int]]:
    """Word indices per true page index, in document order."""
    pages: dict[int, list[int]] = defaultdict(list)
    for i, page in enumerate(doc.word_pages):
        pages[page].append(i)
    return pages


def _lines_of(doc: Document, indices: Sequence[int]) -> dict[int, list[int]]:
    lines: dict[int, list[int]] = defaultdict(list)
    for i in indices:
        lines[doc.line_ids[i]].append(i)
    return lines


@dataclass(frozen=True)
class CoverPage:
    """A repository's generated cover page: the first page with words, when it carries the
    repository's `marker` and one of its `banners` (typographic apostrophes read as `'`)."""

    marker: str
    banners: tuple[str, ...]

    def __call__(self, doc: Document) -> set[int]:
        pages = _pages_of(doc)
        if not pages:
            return set()
        first = min(pages)
        text = " ".join(doc.words[i] for i in pages[first]).replace("\u2019", "'")
        if self.marker in text and any(banner in text for banner in self.banners):
            return set(pages[first])
        return set()


@dataclass(frozen=True)
class MarginStamp:
    """A repository's vertical identifier stamp in the margin of the first page: a vertical
    word matching `pattern` (a regex), and the lines lying within its band."""

    pattern: str

    def __call__(self, doc: Document) -> set[int]:
        pages = _pages_of(doc)
        if not pages:
            return set()
        indices = pages[min(pages)]
        stamp = re.compile(self.pattern)
        for i in indices:
            x0, y0, x1, y1 = doc.boxes[i]
            if stamp.match(doc.words[i]) and y1 - y0 > x1 - x0:
                band = (x0 - 2.0, x1 + 2.0)
                removed: set[int] = set()
                for line in _lines_of(doc, indices).values():
                    if all(band[0] <= doc.boxes[j][0] and doc.boxes[j][2] <= band[1]
                           for j in line):
                        removed.update(line)
                return removed
        return set()


def running_headers(doc: Document) -> set[int]:
    """Lines in the top or bottom band that repeat over pages (digits ignored), and page numbers.

    The band tests run on whole columns, over the words ordered by (page, line): the order
    they come in from the parser, so sorting is needed only for documents made otherwise.
    Only lines lying wholly inside one band reach Python, one string key per line.
    """
    if not doc.words:
        return set()
    heights = np.zeros(max(page.index for page in doc.pages) + 1, dtype=np.float64)
    heights[[page.index for page in doc.pages]] = [page.height for page in doc.pages]
    boxes = doc.box_array()
    pages, line_ids = int_array(doc.word_pages), int_array(doc.line_ids)
    lines = pages * (int(line_ids.max()) + 1) + line_ids
    index, words = np.arange(len(lines)), doc.words
    if (lines[1:] < lines[:-1]).any():
        index = np.argsort(lines, kind="stable")
        lines, pages, boxes = lines[index], pages[index], boxes[index]
        words = [words[i] for i in index.tolist()]
    height = heights[pages]
    starts = np.flatnonzero(np.concatenate(([True], lines[1:] != lines[:-1])))
    all_top = np.logical_and.reduceat(boxes[:, 3] <= MARGIN_BAND * height, starts)
    all_bottom = np.logical_and.reduceat(boxes[:, 1] >= (1.0 - MARGIN_BAND) * height, starts)
    banded = np.flatnonzero(all_top | all_bottom)
    if not len(banded):
        return set()
    ends = np.append(starts[1:], len(lines))
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    found: list[tuple[tuple[str, str], int, int]] = []
    for a, b, is_top, page in zip(starts[banded].tolist(), ends[banded].tolist(),
                                  all_top[banded].tolist(), pages[starts[banded]].tolist(),
                                  strict=True):
        text = " ".join(words[a:b])
        key = ("top" if is_top else "bottom",
               "#" if _ROMAN.match(text) else _DIGITS.sub("#", text.casefold()))
        seen[key].add(page)
        found.append((key, a, b))
    repeats = 2 if np.count_nonzero(np.diff(pages)) < 4 else 3  # at most 4 pages with words
    return {i for key, a, b in found if len(seen[key]) >= repeats
            for i in index[a:b].tolist()}


def line_numbers(doc: Document) -> set[int]:
    """Gutters of line numbers: aligned, increasing numbers outside the text on a page."""
    removed: set[int] = set()
    for indices in _pages_of(doc).values():
        lines = _lines_of(doc, indices)
        numbers = [
            i for line in lines.values() for i in (line[0], line[-1]) if _NUMBER.match(doc.words[i])
        ]
        numbers = sorted(set(numbers), key=lambda i: doc.boxes[i][2])
        clusters: list[list[int]] = []
        for i in numbers:
            if clusters and doc.boxes[i][2] - doc.boxes[clusters[-1][-1]][2] <= 4.0:
                clusters[-1].append(i)
            else:
                clusters.append([i])
        for cluster in clusters:
            if len(cluster) >= MIN_LINE_NUMBERS and _increasing(doc, cluster):
                removed.update(cluster)
    return removed


def _increasing(doc: Document, cluster: list[int]) -> bool:
    """Numbers read top to bottom mostly go up, as line numbers do."""
    values = [int(doc.words[i]) for i in sorted(cluster, key=lambda i: doc.boxes[i][1])]
    ups = sum(b > a for a, b in itertools.pairwise(values))
    return ups >= 0.8 * (len(values) - 1)


# Every cleaner a source's `cleaners` key may name: the shared ones, and the sources' own
# (`declare_cleaners`, called by the source registry).
CLEANERS: dict[str, Cleaner] = {
    "running_headers": running_headers,
    "line_numbers": line_numbers,
}


def declare_cleaners(cleaners: Iterable[tuple[str, Cleaner]]) -> None:
    """Make a source's cleaners known by name, to every source's configuration."""
    for name, cleaner in cleaners:
        if CLEANERS.setdefault(name, cleaner) != cleaner:
            raise ValueError(f"cleaner {name!r} is declared twice, differently")


def clean_document(doc: Document, cleaners: Sequence[str],
                   known: Mapping[str, Cleaner] = CLEANERS) -> Document:
    """Apply the named cleaners in order; each removal is counted under its cleaner's name.
    `known`: the cleaners by name (a worker gets those of its task, `Task.cleaners`)."""
    unknown = [name for name in cleaners if name not in known]
    if unknown:
        raise ValueError(f"unknown cleaners {unknown} (known: {sorted(known)})")
    for name in cleaners:
        drop = known[name](doc)
        if not drop:
            continue
        doc = doc.select(np.delete(np.arange(len(doc)), sorted(drop)))
        doc.removed[name] = doc.removed.get(name, 0) + len(drop)
    return doc
