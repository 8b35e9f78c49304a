"""The published rows of a layout dataset, read back for a view: only the columns the view
needs, one record batch in memory at a time, each row with the split it was published in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from loralay_build.corpus.folder import read_build
from loralay_build.errors import LoralayError

BATCH_ROWS = 64


class ViewInputError(LoralayError):
    """The layout dataset lacks what a view is made from (a build made before the column
    existed); the message says how to get it."""


def published_rows(folder: Path, columns: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(split, row) for every row of the shards the dataset's build record lists."""
    for entry in read_build(folder).get("files", []):
        shard = pq.ParquetFile(folder / entry["name"])
        names = shard.schema_arrow.names
        missing = [name for name in columns if name not in names]
        if missing:
            raise ViewInputError(
                f"{folder.name}: its rows have no {', '.join(missing)} column (built by an "
                "earlier version); build it again to add them, then the view is written")
        for batch in shard.iter_batches(batch_size=BATCH_ROWS, columns=columns):
            for row in pa.Table.from_batches([batch]).to_pylist():
                yield str(entry["split"]), row
