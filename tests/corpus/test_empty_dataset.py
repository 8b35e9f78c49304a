"""A dataset without rows is never left where `datasets.load_dataset` reads other files as data,
and `verify` does not call it sound."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest

from loralay_build.state import State
from tests.helpers.cli import build_local, run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest


def test_a_dataset_without_rows_leaves_no_folder(tmp_path: Path) -> None:
    (tmp_path / "page.pdf").write_text("<html>not a pdf</html>")
    manifest = write_manifest(tmp_path / "m.jsonl", [
        {"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y"}}])
    out = tmp_path / "out"
    failed = build_local(manifest, out)
    assert failed.returncode == 1
    given, line = sorted(failed.stderr.strip().splitlines())
    assert "no document published (1 rejected" in line and "build-corpus status" in line
    assert "rejected for what their record gave (1 not_pdf)" in given
    assert not (out / "local").exists()
    assert build_local(manifest, out, "--allow-empty").returncode == 0
    assert not (out / "local").exists()
    state = State(out)
    try:
        assert state.reason_counts("local") == {"not_pdf": 1}
    finally:
        state.close()


def test_a_dataset_emptied_by_a_later_build_refuses_to_load(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 1)
    manifest = write_manifest(docs / "m.jsonl", entries)
    out = tmp_path / "out"
    assert build_local(manifest, out).returncode == 0
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    (docs / str(entries[0]["pdf"])).write_text("<html>gone</html>")
    emptied = build_local(manifest, out, "--allow-empty")
    assert emptied.returncode == 0, emptied.stderr
    folder = out / "local"
    build = json.loads((folder / "build.json").read_text())
    assert build["files"] == [] and not list(folder.glob("*.parquet"))
    assert "No document is published" in (folder / "README.md").read_text()
    with pytest.raises(datasets.exceptions.DataFilesNotFoundError):
        datasets.load_dataset(str(folder))
    verified = run_cli_in_process("verify", str(folder))
    assert verified.returncode == 1 and "no document published" in verified.stdout


def test_verify_refuses_a_card_that_does_not_list_the_shards(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 1))
    out = tmp_path / "out"
    assert build_local(manifest, out).returncode == 0
    card = out / "local" / "README.md"
    text = card.read_text()
    start, end = text.index("configs:"), text.index("language:")
    card.write_text(text[:start] + text[end:])  # as older builds wrote an empty dataset
    verified = run_cli_in_process("verify", str(out / "local"))
    assert verified.returncode == 1 and "`configs`" in verified.stdout
    legacy = tmp_path / "legacy"
    shutil.copytree(out / "local", legacy)
    build = json.loads((legacy / "build.json").read_text())
    for entry in build["files"]:
        (legacy / entry["name"]).unlink()
    (legacy / "build.json").write_text(json.dumps({**build, "files": []}))
    verified = run_cli_in_process("verify", str(legacy))
    assert verified.returncode == 1 and "no document published" in verified.stdout
