"""`local` keeps the user's PDFs where they are: the blob store links them instead of copying,
and a PDF changed or removed after it was read is noticed and read again."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.helpers.cli import run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest


def _published(folder: Path) -> dict[str, str]:
    """article_id -> pdf_sha256 over every listed shard."""
    build = json.loads((folder / "build.json").read_text())
    out: dict[str, str] = {}
    for entry in build["files"]:
        table = pq.read_table(folder / entry["name"], columns=["article_id", "pdf_sha256"])
        out.update(zip(*(c.to_pylist() for c in table.columns), strict=True))
    return out


def _build(manifest: Path, out: Path, *extra: str) -> str:
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter", "--allow-empty", *extra)
    assert result.returncode == 0, result.stderr
    return result.stderr


def _blobs(out: Path) -> list[Path]:
    return sorted(p for p in (out / ".loralay" / "blobs").glob("??/*"))


def test_pdfs_are_hard_linked_and_a_changed_one_is_read_again(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 3)
    for entry in entries:  # a trailing comment that can change without changing the size
        path = docs / str(entry["pdf"])
        path.write_bytes(path.read_bytes() + b"\n% mark 0\n")
    manifest = write_manifest(docs / "docs.jsonl", entries)
    out = tmp_path / "out"
    _build(manifest, out)
    inodes = {(docs / str(e["pdf"])).stat().st_ino for e in entries}
    assert {p.stat().st_ino for p in _blobs(out)} == inodes  # no copy: the same files
    # doc1 changes in place, keeping its size and time: only its content tells.
    path = docs / "doc1.pdf"
    stat = path.stat()
    data = path.read_bytes().replace(b"% mark 0", b"% mark 1")
    with path.open("r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    # Another parser: every document is processed again from the stored files.
    errors = _build(manifest, out, "--parser", "pdfplumber")
    assert "local:doc1: its stored PDF is gone or changed" in errors
    published = _published(out / "local")
    assert published["local:doc1"] == hashlib.sha256(data).hexdigest()
    assert published["local:doc0"] == hashlib.sha256((docs / "doc0.pdf").read_bytes()).hexdigest()
    (docs / "doc2.pdf").unlink()  # gone: unpublished, and said why
    _build(manifest, out)
    assert sorted(_published(out / "local")) == ["local:doc0", "local:doc1"]
    rejects = (out / "local" / "rejects.jsonl").read_text()
    assert "local:doc2" in rejects and "no such file" in rejects


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="needs a second filesystem")
def test_pdfs_on_another_filesystem_are_referenced_by_path(tmp_path: Path) -> None:
    docs = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        if docs.stat().st_dev == tmp_path.stat().st_dev:
            pytest.skip("/dev/shm is on the same filesystem here")
        entries = make_corpus(docs, 2)
        manifest = write_manifest(docs / "docs.jsonl", entries)
        out = tmp_path / "out"
        _build(manifest, out)
        blobs = _blobs(out)
        assert len(blobs) == 2 and all(p.is_symlink() for p in blobs)
        assert {p.resolve() for p in blobs} == {(docs / str(e["pdf"])).resolve()
                                                for e in entries}
        assert sorted(_published(out / "local")) == ["local:doc0", "local:doc1"]
    finally:
        shutil.rmtree(docs)
