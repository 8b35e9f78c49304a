"""A view made row by row from a layout dataset's published rows: what the view publisher
needs to know of it (`sources.views.publish`), declared by the view's own module."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loralay_build.views.schema import ViewLayout

Record = dict[str, Any]


@dataclass(frozen=True)
class RowView:
    """A view made row by row: its layout and card summary, the layout columns it reads,
    the record of a row (None: the row has no record, counted as `left_out`), and what it
    counts of a record."""

    layout: ViewLayout
    summary: str
    reads: list[str]
    record: Callable[[Record], Record | None]
    left_out: str
    tally: Callable[[Record], dict[str, int]]
