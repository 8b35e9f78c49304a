"""The run's record (`status --json`, `last_run.counts`): what each stage counted, a count a
stage took present even when zero, a count it did not take absent."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest


def _last_counts(out: Path) -> dict[str, int]:
    status = run_cli_in_process("status", str(out), "--json")
    assert status.returncode == 0, status.stderr
    counts: dict[str, int] = json.loads(status.stdout)["local"]["last_run"]["counts"]
    return counts


def test_each_run_records_what_its_stages_counted(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 3)
    manifest = write_manifest(docs / "m.jsonl", [
        *entries, {"id": "noabs", "pdf": "doc1.pdf", "language": "fr", "abstracts": {}}])
    out = tmp_path / "out"
    args = ("local", "--input", str(manifest), "--out", str(out), "--workers", "1",
            "--no-filter")
    assert run_cli_in_process(*args).returncode == 0
    assert _last_counts(out) == {
        "discovered": 4, "new": 4, "changed": 0, "gone": 0, "downloaded": 3, "processed": 3,
        "file_changed": 0, "published_rows": 3, "waiting_retry": 0, "discovery_failed": 0}
    # Nothing new: the stages that ran record their zeros, the others nothing.
    assert run_cli_in_process(*args).returncode == 0
    assert _last_counts(out) == {
        "discovered": 4, "new": 0, "changed": 0, "gone": 0, "file_changed": 0,
        "published_rows": 3, "waiting_retry": 0, "discovery_failed": 0}
    # A limited listing does not judge what is gone.
    assert run_cli_in_process(*args, "--limit", "3").returncode == 0
    assert _last_counts(out) == {
        "discovered": 3, "new": 0, "changed": 0, "file_changed": 0,
        "published_rows": 3, "waiting_retry": 0, "discovery_failed": 0}
