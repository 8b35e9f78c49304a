"""The Arrow schema of a layout dataset's shards: a core every dataset has, plus the columns
its source declares (`Source.columns`), so no dataset carries a column its source never fills.
The columns themselves are declared once, in `corpus.columns` and the sources' packages.

Kept apart from `records` so that parser workers, which only need the plain records, never
pay for importing pyarrow.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pyarrow as pa

from loralay_build.corpus.columns import SHARED, catalogue

COLUMNS_KEY = "columns"  # the build record's list of the dataset's column names


def full_schema() -> pa.Schema:
    """Every column a layout dataset may have, in published order (`columns.catalogue`).
    Builds made before datasets had their own schema published all of them."""
    return pa.schema([column.field for column in catalogue()])


def source_columns() -> frozenset[str]:
    """The columns a source declares it fills (`Source.columns`): the optional shared ones
    and every source's own; every other one is the core."""
    return frozenset(c.name for c in catalogue() if c.optional or c not in SHARED)


def __getattr__(name: str) -> Any:
    """`FULL_SCHEMA` and `SOURCE_COLUMNS`, read when asked: sources declare their columns
    as the registry imports them."""
    if name == "FULL_SCHEMA":
        return full_schema()
    if name == "SOURCE_COLUMNS":
        return source_columns()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dataset_schema(declared: Collection[str]) -> pa.Schema:
    """The core columns and the `declared` ones, in published order."""
    full = full_schema()
    unknown = sorted(set(declared) - set(full.names))
    if unknown:
        raise ValueError(f"unknown column(s): {', '.join(unknown)}")
    optional = source_columns()
    return pa.schema([f for f in full if f.name not in optional or f.name in declared])


def build_schema(build: Mapping[str, Any]) -> pa.Schema:
    """The schema of a published layout dataset, from its build record; a record that names
    no columns is of a build that published all of them."""
    return dataset_schema(build.get(COLUMNS_KEY, full_schema().names))


def project(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The columns of `schema` from rows that have them and maybe more (rows of a build
    that published every column), so they publish with this dataset's schema."""
    if table.schema.equals(schema):  # rows of this dataset: nothing to select or add
        return table.replace_schema_metadata(None) if table.schema.metadata else table
    table = _with_page_origins(table)
    missing = [f.name for f in schema if table.schema.get_field_index(f.name) < 0
               or not table.schema.field(f.name).equals(f)]
    if missing:
        raise pa.ArrowInvalid(f"rows lack the column(s) {', '.join(missing)} of the schema")
    return table.select(schema.names).replace_schema_metadata(None)


def _with_page_origins(table: pa.Table) -> pa.Table:
    """Rows made before pages were read by OCR, with the columns saying so: every page's
    text came from the PDF. Exact, so such rows need no reprocessing."""
    if "page_text_origin" in table.column_names or "page_sizes" not in table.column_names:
        return table
    sizes = table.column("page_sizes").combine_chunks()
    offsets = sizes.offsets
    count = offsets[-1].as_py() if len(offsets) else 0
    origin = pa.ListArray.from_arrays(offsets, pa.array(["pdf"] * count, pa.string()))
    confidence = pa.ListArray.from_arrays(offsets, pa.nulls(count, pa.float32()))
    index = table.column_names.index("page_sizes") + 1
    full = full_schema()
    table = table.add_column(index, full.field("page_text_origin"), origin)
    return table.add_column(index + 1, full.field("page_ocr_confidence"), confidence)
