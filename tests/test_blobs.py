from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

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
