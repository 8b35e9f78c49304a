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

from loralay_build.config import SplitSettings

SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class SplitItem:
    id: str
    published: str
    current: str | None  # split stored by an earlier build
    preset: str | None  # split imposed by the source (e.g. the original dataset's lists)


def assign_splits(items: list[SplitItem], ratios: SplitSettings) -> dict[str, str]:
    """Split of every item: stored and preset ones kept, new ones assigned chronologically."""
    out: dict[str, str] = {}
    fresh: list[SplitItem] = []
    for item in items:
        fixed = item.preset or item.current
        if fixed:
            out[item.id] = fixed
        else:
            fresh.append(item)
    total = len(items)
    counts = {name: sum(1 for v in out.values() if v == name) for name in SPLITS}
    fresh.sort(key=lambda item: (item.published, item.id), reverse=True)  # newest first
    need_test = max(0, round(total * ratios.test) - counts["test"])
    need_val = max(0, round(total * ratios.validation) - counts["validation"])
    for position, item in enumerate(fresh):
        if position < need_test:
            out[item.id] = "test"
        elif position < need_test + need_val:
            out[item.id] = "validation"
        else:
            out[item.id] = "train"
    return out
