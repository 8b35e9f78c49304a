"""The layout of a view (a dataset derived from a layout dataset's published rows): its
columns with the card's text, and the column that identifies a row. A source declares its
views (`Source.views`); the registry hands them here, for the card and `verify`."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

ViewColumns = list[tuple[str, pa.DataType, str]]


@dataclass(frozen=True)
class ViewLayout:
    name: str
    columns: ViewColumns
    id_column: str  # unique across the dataset


_VIEWS: dict[str, ViewLayout] = {}


def declare_views(views: tuple[ViewLayout, ...]) -> None:
    """Make a source's views known by name (the source registry calls it)."""
    for view in views:
        if view.name in _VIEWS:
            raise ValueError(f"view {view.name!r} is declared twice")
        _VIEWS[view.name] = view


def arrow_schema(columns: ViewColumns) -> pa.Schema:
    return pa.schema([(name, kind) for name, kind, _ in columns])


def card_columns(columns: ViewColumns) -> list[tuple[str, str, str]]:
    return [(name, str(kind), doc) for name, kind, doc in columns]


def view_layout(view: str) -> tuple[pa.Schema, str] | None:
    """A view's shard schema and its id column (unique across the dataset), or None for a
    view this version does not know."""
    layout = _VIEWS.get(view)
    return None if layout is None else (arrow_schema(layout.columns), layout.id_column)
