"""`local` documents are what their manifest line and PDF bytes say, not where they are: a
moved or copied folder re-processes nothing and changes no published byte, and two folders
of the same documents give the same dataset, byte for byte."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from loralay_build.state import State
from tests.helpers.cli import build_local, run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest


def _folder(root: Path, n: int = 3) -> Path:
    """A folder of `n` generated papers, a page that is not a PDF and an entry whose file
    is missing, with its manifest; returns the manifest."""
    root.mkdir()
    entries = make_corpus(root, n)
    (root / "page.pdf").write_text("<html>not a pdf</html>")
    entries += [{"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y"}},
                {"id": "missing", "pdf": "gone.pdf", "language": "fr", "abstracts": {"fr": "x"}}]
    return write_manifest(root / "docs.jsonl", entries)


def _copy(manifest: Path, to: Path, name: str) -> Path:
    """The folder of `manifest` copied to `to` as a plain copy does it (every file gets a new
    modification time), its manifest renamed `name`."""
    shutil.copytree(manifest.parent, to, copy_function=shutil.copyfile)
    return (to / manifest.name).rename(to / name)


def _every_file(folder: Path) -> dict[str, str]:
    """sha256 of every file of a dataset folder (shards, page shards, card, build.json and
    rejects, each whole)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _last_counts(out: Path) -> dict[str, int]:
    status = run_cli_in_process("status", str(out), "--json")
    assert status.returncode == 0, status.stderr
    counts: dict[str, int] = json.loads(status.stdout)["local"]["last_run"]["counts"]
    return counts


def _file_urls(out: Path) -> dict[str, str]:
    state = State(out)
    try:
        return {r.candidate.id: r.candidate.file_url for r in state.rows("local")}
    finally:
        state.close()


def test_a_moved_folder_reprocesses_nothing_and_keeps_every_byte(tmp_path: Path) -> None:
    manifest = _folder(tmp_path / "monday")
    out = tmp_path / "data"
    first = build_local(manifest, out)
    assert first.returncode == 0, first.stderr
    before = _every_file(out / "local")
    assert any(name.endswith(".parquet") for name in before)
    # The next night's snapshot: the same files copied elsewhere, the old folder gone.
    moved = _copy(manifest, tmp_path / "tuesday", "snapshot.jsonl")
    shutil.rmtree(manifest.parent)
    again = build_local(moved, out)
    assert again.returncode == 0, again.stderr
    counts = _last_counts(out)
    assert (counts["new"], counts["changed"], counts.get("moved")) == (0, 0, 5)
    assert "processed" not in counts and "downloaded" not in counts
    assert _every_file(out / "local") == before
    # Where each PDF now is was recorded, for the next fetch.
    urls = _file_urls(out)
    assert all(Path(url).parent == moved.parent.resolve() for url in urls.values())
    # A PDF changed in the new folder is read from there, and only it is processed again.
    (moved.parent / "doc1.pdf").write_bytes((moved.parent / "doc0.pdf").read_bytes())
    changed = build_local(moved, out)
    assert changed.returncode == 0, changed.stderr
    counts = _last_counts(out)
    assert (counts["changed"], counts.get("moved", 0), counts["downloaded"]) == (1, 0, 1)
    assert counts["rejected_abstract_not_found"] == 1  # doc0's text under doc1's abstracts


def test_two_folders_give_the_same_bytes(tmp_path: Path) -> None:
    """The same documents in two input folders, built into two output folders by two
    executors, give the same shards, page shards, card, build.json and rejects."""
    manifest = _folder(tmp_path / "here")
    elsewhere = _copy(manifest, tmp_path / "there" / "copy", "other-name.jsonl")
    images = ("--page-images",)
    serial = build_local(manifest, tmp_path / "out-a", "--executor", "serial", *images)
    assert serial.returncode == 0, serial.stderr
    local = build_local(elsewhere, tmp_path / "b" / "out-b", "--executor", "local",
                        "--workers", "2", *images)
    assert local.returncode == 0, local.stderr
    reference = _every_file(tmp_path / "out-a" / "local")
    assert any(name.startswith("pages/") for name in reference)
    assert _every_file(tmp_path / "b" / "out-b" / "local") == reference
