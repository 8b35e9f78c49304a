"""Plain records passed between stages (the shards' Arrow schema is in corpus.schema)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from loralay_build.native import native_module

Box = tuple[float, float, float, float]


def _core_buffer(kernel: str, values: Sequence[Any]) -> bytearray | None:
    """What the compiled core's `kernel` (box_array, int_array) makes of a list: None without
    the core, for another sequence, or when the kernel leaves the values to numpy."""
    native = native_module()
    if native is None or not isinstance(values, list):
        return None
    data: bytearray | None = getattr(native, kernel)(values)
    return data


def box_array(boxes: Sequence[Box]) -> np.ndarray:
    """Boxes as an (n, 4) float64 array, read straight from the tuples' floats (by the
    compiled core when it is built, at a third of the cost)."""
    data = _core_buffer("box_array", boxes)
    if data is None:
        return box_array_python(boxes)
    return np.frombuffer(data, dtype=np.float64).reshape(-1, 4)


def box_array_python(boxes: Sequence[Box]) -> np.ndarray:
    """box_array in numpy alone (the compiled core's reference)."""
    flat = np.fromiter(itertools.chain.from_iterable(boxes), dtype=np.float64, count=4 * len(boxes))
    return flat.reshape(-1, 4)


def int_array(values: Sequence[int]) -> np.ndarray:
    """Integers (word pages, line ids) as an int64 array, read straight from the ints (by the
    compiled core when it is built, at a fifth of the cost)."""
    data = _core_buffer("int_array", values)
    if data is None:
        return np.asarray(values, dtype=np.int64)
    return np.frombuffer(data, dtype=np.int64)


@dataclass
class Candidate:
    """One document found by discovery, before anything is downloaded."""

    id: str  # "<source>:<source_id>"
    source: str
    source_id: str
    dataset: str  # output dataset folder name (e.g. "hal", "scielo-es")
    title: str = ""
    language: str = ""  # declared main language (ISO 639-1)
    abstracts: dict[str, str] = field(default_factory=dict)  # every abstract, keyed by language
    published: str = ""  # YYYY, YYYY-MM or YYYY-MM-DD; "" when unknown
    file_url: str = ""  # remote URL, or a local path for `local`
    landing_url: str = ""
    licence: str = ""
    doi: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Page:
    """A page as displayed: size after /Rotate is applied, and its true index in the PDF."""

    index: int  # 0-based index in the PDF file
    width: float
    height: float
    rotation: int = 0
    ocr_confidence: float | None = None  # mean word confidence (0-1) of an OCRed page


@dataclass
class Document:
    """Words of a parsed PDF in reading order, stored column-wise for cheap slicing.

    Boxes are (x0, y0, x1, y1) in points, top-left origin, display (rotated) space.
    `word_pages` holds the true 0-based PDF page index of each word.
    """

    pages: list[Page]
    words: list[str] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    word_pages: list[int] = field(default_factory=list)
    line_ids: list[int] = field(default_factory=list)
    block_ids: list[int] = field(default_factory=list)
    font_sizes: list[float] = field(default_factory=list)
    bold_lines: set[int] = field(default_factory=set)  # ids of the lines set in a bold font
    removed: dict[str, int] = field(default_factory=dict)  # words removed per cleaner
    composed: int = 0  # spacing accent glyphs the parser composed with their letter
    _box_array: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.words)

    def box_array(self) -> np.ndarray:
        """`boxes` as an (n, 4) float64 array, made once: cleaners, checks and the row builder
        all need it, and a selection carries it over instead of converting the tuples again."""
        if self._box_array is None or len(self._box_array) != len(self.boxes):
            self._box_array = box_array(self.boxes)
        return self._box_array

    def select(self, keep: Sequence[int] | np.ndarray) -> Document:
        """A new document holding only the words at the given indices (in that order).

        Cleaners and abstract removal keep long runs of consecutive words, so each column is
        copied by slices of those runs rather than word by word.
        """
        runs = _runs(keep, len(self.words))
        selected = Document(
            pages=list(self.pages),
            words=_pick(self.words, runs),
            boxes=_pick(self.boxes, runs),
            word_pages=_pick(self.word_pages, runs),
            line_ids=_pick(self.line_ids, runs),
            block_ids=_pick(self.block_ids, runs),
            font_sizes=_pick(self.font_sizes, runs),
            bold_lines=self.bold_lines,
            removed=dict(self.removed),
            composed=self.composed,
        )
        cached = self._box_array
        if cached is not None and len(cached) == len(self.boxes):
            selected._box_array = np.concatenate([cached[a:b] for a, b in runs] or [cached[:0]])
        return selected


def _pick(values: list[Any], runs: list[tuple[int, int]]) -> list[Any]:
    """The items of `values` in each [start, stop) run, in order (by the compiled core when
    it is built: one copy of the pointers instead of a slice per run and its extend)."""
    native = native_module()
    if native is not None and isinstance(values, list):
        picked: list[Any] | None = native.pick(values, runs)
        if picked is not None:
            return picked
    return _pick_python(values, runs)


def _pick_python(values: Sequence[Any], runs: list[tuple[int, int]]) -> list[Any]:
    """_pick in Python alone (the compiled core's reference)."""
    out: list[Any] = []
    for start, stop in runs:
        out += values[start:stop]
    return out


def _runs(keep: Sequence[int] | np.ndarray, size: int) -> list[tuple[int, int]]:
    """The indices as [start, stop) runs of consecutive ascending values, in order (by the
    compiled core for a list of int: no array is made of it)."""
    native = native_module()
    if native is not None and isinstance(keep, list):
        found: list[tuple[int, int]] | None = native.runs(keep, size)
        if found is not None:
            return found
    return _runs_python(keep, size)


def _runs_python(keep: Sequence[int] | np.ndarray, size: int) -> list[tuple[int, int]]:
    """_runs in numpy alone (the compiled core's reference)."""
    index = np.asarray(keep, dtype=np.int64).reshape(-1)
    if not len(index):
        return []
    if index.min() < 0 or index.max() >= size:
        raise IndexError(f"word index out of range 0..{size - 1}")
    breaks = np.flatnonzero(np.diff(index) != 1) + 1
    starts = index[np.concatenate(([0], breaks))]
    stops = index[np.concatenate((breaks - 1, [len(index) - 1]))] + 1
    return list(zip(starts.tolist(), stops.tolist(), strict=True))


@dataclass(frozen=True)
class MatchRecord:
    """Where one abstract was found in the word stream (indices before removal)."""

    lang: str
    method: str  # exact | approx | faithful-exact | faithful-fuzzysearch | faithful-regex | none
    distance: int  # edit distance on the normalised text; -1 when not found
    page: int  # true page index of the first matched word; -1 when not found
    word_start: int  # first word (inclusive); -1 when not found
    word_end: int  # last word (exclusive); -1 when not found
    found: bool
    leakage: float = 0.0  # share of the abstract's word 5-grams still in the body after removal
