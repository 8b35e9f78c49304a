"""Leakage audit: how much of an abstract is still readable in the body after removal.

A summarisation corpus whose inputs still contain the target teaches copying. The share
of the abstract's word n-grams found in the kept body measures what removal missed
(a second copy, a part outside the matched span), independently of how the span was found.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from loralay_build.native import native_module


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """Word n-grams of a token list."""
    return set(zip(*(tokens[i:] for i in range(n)), strict=False))


class Leakage:
    """Measures abstracts against one body.

    The compiled core looks every body n-gram up in a table of the abstract's n-grams.
    In Python, only runs of at least n body tokens that all occur in an abstract can hold
    one of its n-grams. The runs are found once for the vocabulary of all abstracts to be
    measured (a byte per token and a regular expression), and the n-grams of those runs
    collected; the rest of the body is never cut into n-grams, and each abstract is then
    measured by a set intersection instead of another pass over the body.
    """

    def __init__(
        self, body: Sequence[str], n: int, abstracts: Iterable[Sequence[str]] = ()
    ) -> None:
        self.body = body
        self.n = n
        self._abstracts = tuple(abstracts)
        self._vocabulary: set[str] | None = None  # made when the Python code first needs it
        self._grams: dict[int, set[tuple[str, ...]]] = {}  # n-grams of the runs, per n
        self._shares: dict[tuple[str, ...], float] = {}  # an abstract is asked for twice

    def share(self, abstract: Sequence[str]) -> float:
        """Share of the abstract's n-grams present in the body.

        An abstract shorter than n words counts as one n-gram of its own length.
        """
        key = tuple(abstract)
        share = self._shares.get(key)
        if share is None:
            share = self._shares[key] = self._measured(abstract)
        return share

    def _measured(self, abstract: Sequence[str]) -> float:
        """The share, by the compiled core when both token sequences are lists."""
        native = native_module()
        if native is None or not isinstance(self.body, list) or not isinstance(abstract, list):
            return self.share_python(abstract)
        if not abstract:
            return 0.0
        counts: tuple[int, int] = native.leaked(self.body, abstract, min(self.n, len(abstract)))
        return counts[0] / counts[1]

    def share_python(self, abstract: Sequence[str]) -> float:
        """share in Python alone (the compiled core's reference)."""
        if not abstract:
            return 0.0
        n = min(self.n, len(abstract))
        grams = ngrams(abstract, n)
        return len(grams & self._run_grams(abstract, n)) / len(grams)

    def _run_grams(self, abstract: Sequence[str], n: int) -> set[tuple[str, ...]]:
        """The n-grams of the body runs of vocabulary tokens, the abstract's words included."""
        if self._vocabulary is None:
            self._vocabulary = set().union(*self._abstracts)
        if not self._vocabulary.issuperset(abstract):
            self._vocabulary.update(abstract)
            self._grams.clear()
        found = self._grams.get(n)
        if found is None:
            inside = bytes(map(self._vocabulary.__contains__, self.body))
            found = self._grams[n] = set()
            for run in re.finditer(b"\x01{%d,}" % n, inside):
                found |= ngrams(self.body[run.start() : run.end()], n)
        return found


def leakage_summary(values: Sequence[float] | npt.NDArray[np.float64]) -> dict[str, float]:
    """Distribution of leakage values for build.json: count, mean, median, p90, max, share > 0.
    Sorted as one float array: a corpus's values are not copied into Python objects."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    n = len(ordered)
    if not n:
        return {"count": 0.0, "mean": 0.0, "median": 0.0, "p90": 0.0, "max": 0.0,
                "share_above_0": 0.0}
    middle = n // 2
    return {
        "count": float(n),
        "mean": math.fsum(ordered) / n,
        "median": float(ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2),
        "p90": float(ordered[min(n - 1, round(0.9 * (n - 1)))]),
        "max": float(ordered[-1]),
        "share_above_0": int(np.count_nonzero(ordered > 0)) / n,
    }
