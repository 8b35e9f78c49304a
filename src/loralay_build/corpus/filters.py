"""Corpus-level filters whose thresholds come from the corpus itself (percentiles)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from loralay_build.config import FilterSettings
from loralay_build.errors import Reason


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (q in 0..100), as numpy's default method computes it."""
    if not values:
        raise ValueError("percentile of an empty sequence")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass(frozen=True)
class Thresholds:
    max_pages: float | None
    min_summary_words: float | None
    percentiles_applied: bool = False  # False: disabled, or too few documents for them

    def verdict(self, n_pages: int, summary_words: int) -> tuple[Reason, str] | None:
        if self.max_pages is not None and n_pages > self.max_pages:
            return Reason.TOO_MANY_PAGES, f"{n_pages} pages > {self.max_pages:g}"
        if self.min_summary_words is not None and summary_words < self.min_summary_words:
            return (
                Reason.SUMMARY_TOO_SHORT,
                f"{summary_words} words < {self.min_summary_words:g}",
            )
        return None


def compute_thresholds(
    pages: Sequence[int], summary_words: Sequence[int], settings: FilterSettings
) -> Thresholds:
    """Percentile thresholds of the corpus, or none when filters are off or the corpus holds
    fewer than `settings.min_documents` documents."""
    if not settings.enabled or not pages or len(pages) < settings.min_documents:
        return Thresholds(None, None)
    return Thresholds(
        max_pages=percentile(pages, settings.max_pages_percentile),
        min_summary_words=percentile(summary_words, settings.min_abstract_percentile),
        percentiles_applied=True,
    )
