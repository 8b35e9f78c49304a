"""How a shard's row groups are encoded: here in the publishing process, or (run.encode_pool)
by worker processes while the publisher reads the next rows.

Each row group is written by a writer of its own, so its bytes depend on its rows alone and
any process can encode it; the shard takes the groups back in order.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from loralay_build.errors import LoralayError

Piece = TypeVar("Piece")


class EncodeError(LoralayError):
    """A row group could not be encoded by a worker (killed, out of memory, or refused)."""


def encode_group(table: pa.Table, schema: pa.Schema, options: dict[str, Any]) -> bytes:
    """The rows of `table` as a Parquet file of one row group (`corpus.rowgroups` copies it)."""
    buffer = io.BytesIO()
    with pq.ParquetWriter(buffer, schema, **options) as writer:
        writer.write_table(table, max(1, table.num_rows))
    return buffer.getvalue()


class GroupEncoder:
    """Encodes row groups in this process."""

    def encode(self, pieces: Iterable[Piece | pa.Table], schema: pa.Schema,
               options: dict[str, Any]) -> Iterator[Piece | bytes]:
        """Each table of `pieces` as the bytes of its row group, any other piece as it is,
        in order."""
        for piece in pieces:
            yield encode_group(piece, schema, options) if isinstance(piece, pa.Table) else piece

    def close(self) -> None:
        """Stop what the encoder started."""
