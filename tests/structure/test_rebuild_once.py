"""A dataset built before the structure columns existed gains `sections` and `word_roles` on
its next build: the row format is part of each document's work key, so every row is
processed again once, and the build after that processes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from tests.helpers.cli import build_local, run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest

STRUCTURE = ("sections", "word_roles")

# Started in every interpreter of the first build (the CLI and its workers): the code as
# it was before the structure columns, with the row format it had then.
PREVIOUS_FORMAT = f'''
import loralay_build.corpus.columns as columns
import loralay_build.run.process as process
import loralay_build.run.task as task

task.ROW_FORMAT = "2"
columns.SHARED = tuple(c for c in columns.SHARED if c.name not in {STRUCTURE!r})
_build_row = process.build_row


def build_row(*args, **kwargs):
    row = _build_row(*args, **kwargs)
    for name in {STRUCTURE!r}:
        del row[name]
    return row


process.build_row = build_row
'''


def _processed(out: Path) -> int:
    status = run_cli_in_process("status", str(out), "--json")
    assert status.returncode == 0, status.stderr
    counts: dict[str, int] = json.loads(status.stdout)["local"]["last_run"]["counts"]
    return counts.get("processed", 0)


def _rows(out: Path) -> list[dict[str, object]]:
    shards = sorted((out / "local").rglob("*.parquet"))
    assert shards
    return [row for shard in shards for row in pq.read_table(shard).to_pylist()]


def test_rows_of_the_previous_format_are_rebuilt_once(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 3))
    out = tmp_path / "out"
    previous = tmp_path / "previous"
    previous.mkdir()
    (previous / "sitecustomize.py").write_text(PREVIOUS_FORMAT)
    path = os.pathsep.join(p for p in (str(previous), os.environ.get("PYTHONPATH")) if p)

    old = build_local(manifest, out, env={"PYTHONPATH": path})
    assert old.returncode == 0, old.stderr
    assert _processed(out) == 3
    old_rows = _rows(out)
    assert len(old_rows) == 3
    assert not any(name in row for row in old_rows for name in STRUCTURE)

    new = build_local(manifest, out)
    assert new.returncode == 0, new.stderr
    assert _processed(out) == 3  # every row once, none twice
    rows = _rows(out)
    assert sorted(str(r["article_id"]) for r in rows) == sorted(
        str(r["article_id"]) for r in old_rows)
    for row in rows:
        words = row["article_words"]
        assert isinstance(words, list) and words
        roles = row["word_roles"]
        assert isinstance(roles, list) and len(roles) == len(words)
        sections = row["sections"]
        assert isinstance(sections, list) and sections
        assert sections[0]["word_start"] == 0 and sections[-1]["word_end"] == len(words)
        # make_corpus prints "1 Partie", "2 Partie", "3 Partie" as numbered headings.
        assert [s["title"] for s in sections if s["title"]][-3:] == [
            "1 Partie", "2 Partie", "3 Partie"]

    again = build_local(manifest, out)
    assert again.returncode == 0, again.stderr
    assert _processed(out) == 0
    assert sorted(map(str, _rows(out))) == sorted(map(str, rows))
