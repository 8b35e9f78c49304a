from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from loralay_build import blobs
from loralay_build.blobs import BlobStore


def test_commit_names_the_file_by_its_hash(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    with store.staging() as handle:
        handle.write(b"%PDF-1.4 data")
        sha = store.commit(handle)
    assert sha == hashlib.sha256(b"%PDF-1.4 data").hexdigest()
    assert store.path(sha).read_bytes() == b"%PDF-1.4 data"
    assert not list(store.tmp.iterdir())


def test_a_failed_download_leaves_nothing(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    with pytest.raises(RuntimeError), store.staging() as handle:
        handle.write(b"%PDF-1.4 half")
        raise RuntimeError("connection reset")
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


def test_leftovers_of_a_crash_are_cleaned(tmp_path: Path) -> None:
    store = BlobStore(tmp_path)
    (store.tmp / "abc.part").write_bytes(b"partial")
    assert store.clean_staging() == 1
    assert not list(store.tmp.iterdir())


@pytest.mark.parametrize("mask", [0o022, 0o002])
def test_blobs_follow_the_umask(tmp_path: Path, mask: int) -> None:
    """Like shards and work files: a group-shared output folder (or Ray's shared blobs) must
    be able to read the downloaded files."""
    source = tmp_path / "in.pdf"
    source.write_bytes(b"%PDF-1.4 shared")
    previous = os.umask(mask)
    try:
        store = BlobStore(tmp_path / "blobs")
        added = store.add_file(source)
        with store.staging() as handle:
            handle.write(b"%PDF-1.4 streamed")
            streamed = store.commit(handle)
        [batched] = store.add_many([b"RIFF page image"])
    finally:
        os.umask(previous)
    for sha in (added, streamed, batched):
        assert stat.S_IMODE(store.path(sha).stat().st_mode) == 0o666 & ~mask


def test_a_batch_of_blobs_is_stored_with_two_syncs_in_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Page images come by the hundred per batch: a sync per file and per folder would cost
    more than writing them. Every staged file is synced before any is renamed."""
    store = BlobStore(tmp_path)
    kept = store.add_many([b"already there"])[0]
    syncs: list[list[str]] = []
    real_sync = blobs.sync_filesystem

    def sync(path: Path) -> None:  # records what is under a final name at each sync
        syncs.append(sorted(p.name for p in tmp_path.glob("??/*")))
        real_sync(path)

    monkeypatch.setattr(blobs, "sync_filesystem", sync)
    monkeypatch.setattr(os, "fsync", lambda fd: pytest.fail("one fsync per file"))
    data = [b"page 1", b"page 2", b"page 1", b"already there", b"page 3"]
    shas = store.add_many(data)
    assert shas == [hashlib.sha256(d).hexdigest() for d in data]
    assert [store.path(s).read_bytes() for s in shas] == data
    assert syncs == [[kept], sorted({kept, *shas})]  # staged files durable before renames
    assert not list(store.tmp.iterdir())
    assert store.add_many([b"page 2"]) == [shas[1]] and len(syncs) == 2  # nothing new
