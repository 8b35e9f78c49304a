"""Chronological splits that never move a document once it has been published.

Rule: the first build sorts documents by (published, id) and gives the newest to test, the
next newest to validation and the rest to train, by the configured ratios. Every assignment is
stored. A later build assigns only new documents: it tops validation and test up to their
share of the grown corpus, taking the newest of the new documents, and sends the rest to
train. A document therefore never leaves validation or test (the original splitter ranked
the whole corpus again, so new documents pushed old test documents into train). Documents
without a date sort first (oldest). A preset split (given by the source) always wins.
Documents a build cannot publish yet are ranked too (their split is not stored): they hold
their place by date, so a partial build gives the newest places to no one else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from loralay_build.config import SplitSettings
from loralay_build.corpus.arrays import integers, take

SPLITS = ("train", "validation", "test")
Codes = npt.NDArray[np.int8]  # a split per item: its index in SPLITS, -1 for none


def split_code(name: str | None) -> int:
    return -1 if not name else SPLITS.index(name)


@dataclass(frozen=True)
class SplitColumns:
    """The items to split as columns, row i of each being one item: a corpus of any size is
    ranked in a few bytes an item."""

    ids: pa.Array
    published: pa.Array
    current: Codes  # split stored by an earlier build
    preset: Codes  # split imposed by the source

    def __len__(self) -> int:
        return len(self.current)

    def subset(self, positions: npt.NDArray[np.intp]) -> SplitColumns:
        return SplitColumns(take(self.ids, positions), take(self.published, positions),
                            self.current[positions], self.preset[positions])


def assign_splits(items: SplitColumns, ratios: SplitSettings) -> Codes:
    """Split of every item: stored and preset ones kept, new ones assigned chronologically."""
    out = np.where(items.preset >= 0, items.preset, items.current).astype(np.int8)
    counts = np.bincount(out[out >= 0], minlength=len(SPLITS)).tolist()
    fresh = np.flatnonzero(out < 0)
    newest_first = pc.sort_indices(  # by (published, id), ids unique
        pa.table({"published": take(items.published, fresh), "id": take(items.ids, fresh)}),
        sort_keys=[("published", "descending"), ("id", "descending")])
    ranked = fresh[integers(newest_first)]
    need_test = max(0, round(len(items) * ratios.test) - counts[2])
    need_val = max(0, round(len(items) * ratios.validation) - counts[1])
    out[ranked[:need_test]] = 2
    out[ranked[need_test : need_test + need_val]] = 1
    out[ranked[need_test + need_val :]] = 0
    return out
