"""Row groups of a publication encoded by worker processes while the publisher reads the next
rows.

Why: Parquet encoding (zstd, the nested box lists, page checksums, content-defined chunks) is
most of what publishing costs the parent, about 0.25 ms of CPU a page, and it runs after every
document is processed, while the workers wait. A small publication (a nightly increment, a few
hundred documents) is encoded in the parent: starting the workers would cost more than they
save.

The workers' fork server imports this module: Arrow, the isolated pool, nothing of the build.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from loralay_build.corpus.encoder import EncodeError, GroupEncoder, Piece, encode_group
from loralay_build.run.isolation import IsolatedPool, Limits, WorkerLost

log = logging.getLogger(__name__)

ENCODE_TIMEOUT = 600.0  # seconds for one row group (up to `row_group_bytes` of rows)


@dataclass(frozen=True)
class GroupJob:
    """One row group to encode, the `index`-th piece of its shard: its rows are an Arrow IPC
    stream in the file `path`. The publisher writes each group once and holds no copy of
    it; pickled, a table's columns would cost six times the CPU of the stream and be held
    twice more on the way. The worker reads the file rather than mapping it, as the work
    store does: a mapped file cut short would kill it (SIGBUS)."""

    index: int
    path: str
    schema: pa.Schema
    options: dict[str, Any]


def encode_job(job: GroupJob) -> bytes:
    """A worker's task."""
    with pa.OSFile(job.path) as source:
        return encode_group(pa.ipc.open_stream(source).read_all(), job.schema, job.options)


class PoolEncoder(GroupEncoder):
    """Encodes row groups in `workers` isolated processes once `start_after` groups of the
    publication were encoded here (`[run] encode_after_groups`); the pool then serves every
    later shard of it."""

    def __init__(self, workers: int, memory_mb: int, start_after: int, scratch: Path) -> None:
        """`scratch`: where the groups' rows wait for a worker (files ending in `.part`, which
        the blob store's staging clean-up removes should a build die)."""
        self.workers, self.memory_mb, self.start_after = workers, memory_mb, start_after
        self.scratch = scratch
        self.encoded = 0
        self.pool: IsolatedPool[GroupJob, bytes] | None = None

    def encode(self, pieces: Iterable[Piece | pa.Table], schema: pa.Schema,
               options: dict[str, Any]) -> Iterator[Piece | bytes]:
        stream = iter(pieces)
        for piece in stream:
            if self.pool is None and isinstance(piece, pa.Table) and (
                    self.encoded >= self.start_after):
                log.info("row groups from the %d-th on encoded by %d worker(s)",
                         self.encoded + 1, self.workers)
                self.pool = IsolatedPool(encode_job, self.workers,
                                         Limits(ENCODE_TIMEOUT, self.memory_mb << 20, 10**9))
            if self.pool is not None:
                rest = itertools.chain([piece], stream)
                del piece  # a group is held by its job alone
                yield from self._in_workers(self.pool, rest, schema, options)
                return
            if isinstance(piece, pa.Table):
                self.encoded += 1
                yield encode_group(piece, schema, options)
            else:
                yield piece

    def _in_workers(self, pool: IsolatedPool[GroupJob, bytes], stream: Iterator[Piece | pa.Table],
                    schema: pa.Schema, options: dict[str, Any]) -> Iterator[Piece | bytes]:
        """The pieces in order, the tables encoded by the pool: a result waits until every
        piece before it is out (the pool runs at most one job a worker)."""
        ready: dict[int, Piece | bytes] = {}
        waiting: set[str] = set()  # files of the jobs not done
        emitted = count = 0

        def jobs() -> Iterator[GroupJob]:
            nonlocal count
            for piece in stream:
                index, count = count, count + 1
                if isinstance(piece, pa.Table):
                    path = str(self.scratch / f"encode-{os.getpid()}-{index}.part")
                    waiting.add(path)
                    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(
                            sink, piece.schema) as writer:
                        writer.write_table(piece)
                    del piece  # the file is what travels: the group is not held twice
                    yield GroupJob(index, path, schema, options)
                else:
                    ready[index] = piece

        try:
            for job, result in pool.imap_unordered(jobs()):
                waiting.discard(job.path)
                os.unlink(job.path)
                if isinstance(result, WorkerLost | str):
                    raise EncodeError(f"a worker failed to encode a row group: {result}")
                ready[job.index] = result
                while emitted in ready:
                    yield ready.pop(emitted)
                    emitted += 1
        finally:
            for path in waiting:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        while emitted < count:  # the pieces after the last table
            yield ready.pop(emitted)
            emitted += 1

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
