"""Where short exact strings (seeds) occur in a body, through an index of its k-grams.

Seed voting looks up about a hundred seeds per candidate search, and an abstract cut by the
reading order is searched again piece by piece, hundreds of times on one body. Each lookup
with str.find scans the body, and those scans dominated the cost of matching. The index
hashes every k-gram once, groups the positions by hash, and answers all seeds of a search
with one binary search each. Every hit is checked against the text, so a hash collision can
cost time but never change an answer: the answers are exactly those of repeated str.find,
per seed the first occurrences in ascending order, overlapping ones included. The compiled
core builds and reads the same kind of index (KgramIndex is its reference).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from loralay_build.native import native_module

Hashes = npt.NDArray[np.uint64]
# Any multiplier gives correct answers (hits are verified); a large odd one keeps groups small.
_BASE = 0x100000001B3
# An odd multiplier whose product's top bits depend on every bit of the hash.
_MIX = 0x9E3779B97F4A7C15


def _codes(text: str) -> npt.NDArray[np.uint32]:
    """The code points of a text, as str.find compares them (lone surrogates included)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def kgram_hashes(codes: npt.NDArray[np.uint32], k: int, base: int = _BASE) -> Hashes:
    """Polynomial hash modulo 2**64 of every k-gram of a code sequence.

    Built by doubling, the hashes of (a+b)-grams from those of a-grams and b-grams, in about
    2 log2(k) array passes instead of k.
    """
    width = len(codes)
    if width < k:
        return np.zeros(0, dtype=np.uint64)
    block, size = codes.astype(np.uint64), 1  # hashes of the size-grams
    # Hashes of the length-grams, length the sum of the bits of k taken so far (0-grams hash to 0).
    result: Hashes = np.zeros(width + 1, dtype=np.uint64)
    length, rest = 0, k
    while rest:
        if rest & 1:
            count = width - length - size + 1
            result = _joined(result[:count], block[length : length + count], size, base)
            length += size
        rest >>= 1
        if rest:
            count = width - 2 * size + 1
            block = _joined(block[:count], block[size : size + count], size, base)
            size *= 2
    return result


def seed_hashes(seeds: Sequence[str], k: int, base: int = _BASE) -> Hashes:
    """kgram_hashes of each k-character seed, as one matrix product (cheaper for a few seeds)."""
    codes = _codes("".join(seeds)).reshape(len(seeds), k).astype(np.uint64)
    powers = np.array([pow(base, k - 1 - j, 1 << 64) for j in range(k)], dtype=np.uint64)
    hashes: Hashes = codes @ powers  # integer products wrap around modulo 2**64
    return hashes


def _joined(head: Hashes, tail: Hashes, tail_length: int, base: int) -> Hashes:
    """Hashes of head grams followed by tail grams of `tail_length` (wraps modulo 2**64)."""
    return head * np.uint64(pow(base, tail_length, 1 << 64)) + tail


def _group(hashes: Hashes) -> npt.NDArray[np.uint16]:
    """16 bits of each hash, mixed so that they depend on every character of the k-gram."""
    return ((hashes * np.uint64(_MIX)) >> np.uint64(48)).astype(np.uint16)


class KgramIndex:
    """The start positions of a text's k-grams, grouped by 16 bits of their hash.

    A 16-bit group key sorts in linear time (numpy's stable sort of small integers is a
    radix sort) and keeps positions ascending within a group. A group may also hold a few
    unrelated k-grams; the check against the text drops them.
    """

    def __init__(self, text: str, k: int, base: int = _BASE) -> None:
        self.text = text
        self.k = k
        self.base = base
        groups = _group(kgram_hashes(_codes(text), k, base))
        self.order = np.argsort(groups, kind="stable")
        self.groups = groups[self.order]

    def first(self, seeds: Sequence[str], limit: int) -> list[list[int]]:
        """The first `limit` occurrences of each seed, ascending, overlapping ones included.

        The same answers as repeated str.find; every seed must be k characters long.
        """
        if any(len(seed) != self.k for seed in seeds):
            raise ValueError(f"seeds must be {self.k} characters long")
        if not seeds:
            return []
        wanted = _group(seed_hashes(seeds, self.k, self.base))
        starts = np.searchsorted(self.groups, wanted, side="left").tolist()
        ends = np.searchsorted(self.groups, wanted, side="right").tolist()
        return [
            self._verified(seed, start, end, limit)
            for seed, start, end in zip(seeds, starts, ends, strict=True)
        ]

    def _verified(self, seed: str, start: int, end: int, limit: int) -> list[int]:
        """The first `limit` positions of group entries [start, end) that really hold the seed.

        A frequent k-gram fills a large group: only as many entries as still needed are
        taken at a time, since nearly all of them hold the seed.
        """
        found: list[int] = []
        while start < end and len(found) < limit:
            stop = min(end, start + limit - len(found))
            taken = self.order[start:stop].tolist()
            found += [at for at in taken if self.text.startswith(seed, at)]
            start = stop
        return found


class CoreIndex(NamedTuple):
    """The compiled core's k-gram index of a text (bytes): the same answers as KgramIndex."""

    core: ModuleType
    text: str
    table: bytes

    def first(self, seeds: Sequence[str], limit: int) -> list[list[int]]:
        """See KgramIndex.first."""
        hits: list[list[int]] = self.core.seed_hits(self.text, self.table, list(seeds), limit)
        return hits


def kgram_index(text: str, k: int) -> KgramIndex | CoreIndex:
    """The compiled core's index of the k-grams when it is built, else KgramIndex."""
    native = native_module()
    if native is not None and (made := native.kgram_index(text, k)) is not None:
        return CoreIndex(native, text, made)
    return KgramIndex(text, k)


class SeedFinder:
    """Seed lookups on one body, through one k-gram index per seed length, built when needed.

    An index costs less than looking up one abstract's seeds with str.find (each scans the
    body), so even a body searched once is indexed.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.indexes: dict[int, KgramIndex | CoreIndex] = {}

    def first(self, seeds: Sequence[str], limit: int) -> list[list[int]]:
        """The first `limit` occurrences of each seed (all of one length): see KgramIndex."""
        if not seeds:
            return []
        k = len(seeds[0])
        index = self.indexes.get(k)
        if index is None:
            index = self.indexes[k] = kgram_index(self.text, k)
        return index.first(seeds, limit)
