"""Row groups encoded by worker processes (run.encode_pool): the bytes the publishing process
would write, in shard order among the groups copied as they are, in a build as in a unit, and
a clear error when a worker cannot encode a group."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pytest

from loralay_build.config import OutputSettings
from loralay_build.corpus.encoder import EncodeError, GroupEncoder
from loralay_build.corpus.publish import DictRows, Item, PublishError, write_shards
from loralay_build.corpus.schema import FULL_SCHEMA
from loralay_build.corpus.writer import _options, rows_table
from loralay_build.run.encode_pool import PoolEncoder
from tests.helpers.cli import run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest
from tests.helpers.rows import compact_row, plain_row

OPTIONS = _options(OutputSettings())


def _tables(count: int) -> list[pa.Table]:
    return [rows_table([(compact_row if i % 2 else plain_row)(i)], FULL_SCHEMA)
            for i in range(count)]


def test_workers_give_the_pieces_back_in_order_with_the_same_bytes(tmp_path: Path) -> None:
    """The second table is the largest, so a later one is encoded before it is."""
    tables = _tables(5)
    tables[1] = pa.concat_tables(_tables(400)).combine_chunks()
    pieces: list[str | pa.Table] = ["copy a", tables[0], tables[1], "copy b", *tables[2:],
                                    "copy c"]
    encoder = PoolEncoder(2, 2048, 1, tmp_path)
    try:
        first = list(encoder.encode(pieces, FULL_SCHEMA, OPTIONS))
        assert encoder.pool is not None and encoder.encoded == 1  # one table here, four there
        later = list(encoder.encode(pieces[::-1], FULL_SCHEMA, OPTIONS))  # the next shard
    finally:
        encoder.close()
    assert encoder.pool is None and list(tmp_path.iterdir()) == []  # the groups' files gone
    assert first == list(GroupEncoder().encode(pieces, FULL_SCHEMA, OPTIONS))
    assert later == list(GroupEncoder().encode(pieces[::-1], FULL_SCHEMA, OPTIONS))


def test_a_group_a_worker_cannot_encode_is_an_error(tmp_path: Path) -> None:
    good = _tables(1)[0]
    foreign = pa.table({"other": [1]})  # not the shard's schema: the writer refuses it
    encoder = PoolEncoder(2, 2048, 0, tmp_path / "scratch")
    (tmp_path / "scratch").mkdir()
    try:
        with pytest.raises(EncodeError, match="a worker failed to encode a row group"):
            list(encoder.encode([good, foreign, good, good], FULL_SCHEMA, OPTIONS))
    finally:
        encoder.close()
    assert list((tmp_path / "scratch").iterdir()) == []


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_build_encoded_by_workers_is_byte_identical(tmp_path: Path) -> None:
    """Two builds and their increments (a document gone, two new), one encoding every row
    group in workers: every shard, the card and build.json are the same bytes. One-row
    groups make a shard of many groups, and the rewritten shard copies some between the
    encoded ones."""
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 8)
    manifest = docs / "docs.jsonl"
    groups = {"LORALAY_OUTPUT__ROW_GROUP_ROWS": "1"}

    def build(out: Path, *env: tuple[str, str]) -> str:
        result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out),
                                    "--workers", "2", "--no-filter", "-v",
                                    env={**groups, **dict(env)})
        assert result.returncode == 0, result.stderr
        return result.stderr

    for increment, shown in enumerate((entries[:6], entries[1:])):
        write_manifest(manifest, shown)
        here = build(tmp_path / "here")
        there = build(tmp_path / "there", ("LORALAY_RUN__ENCODE_AFTER_GROUPS", "0"))
        assert "encoded by 2 worker(s)" in there and "encoded by" not in here
        assert ("copied in their row groups" in there) == bool(increment)
        assert _files(tmp_path / "there" / "local") == _files(tmp_path / "here" / "local")
        assert not list((tmp_path / "there").rglob("encode-*"))  # the groups' files gone


def test_a_lost_worker_fails_the_publication_with_nothing_written(tmp_path: Path) -> None:
    """A worker that cannot encode (here: 1 MiB of address space) makes the publication fail
    with the publisher's message, and no shard of it stays behind."""
    schema = pa.schema([pa.field("article_id", pa.string()), pa.field("text", pa.string())])
    rows = {f"a{i}": {"article_id": f"a{i}", "text": f"{i}" * 1000} for i in range(6)}
    items = {"train": [Item(cid, f"key-{cid}") for cid in rows], "validation": [], "test": []}
    settings = OutputSettings(shard_rows=3, rows_per_file=1, row_group_rows=1)
    encoder = PoolEncoder(2, 1, 1, tmp_path / "scratch")
    (tmp_path / "scratch").mkdir()
    try:
        with pytest.raises(PublishError, match=r"publishing failed \(a worker failed to encode "
                           r"a row group: .*\); the previous version is kept"):
            write_shards(tmp_path, "f", items, DictRows(rows, schema), schema, settings,
                         encoder=encoder)
    finally:
        encoder.close()
    assert [p.name for p in tmp_path.iterdir()] == ["scratch"]
    assert list((tmp_path / "scratch").iterdir()) == []
