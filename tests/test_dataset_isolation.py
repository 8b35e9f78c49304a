"""Two datasets of one source in one `--out`: the same ids never share state, work or marks."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.state import PUBLISHED, State
from tests.helpers.cli import run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest


def _titles(folder: Path) -> dict[str, str]:
    return {row["article_id"]: row["title"]
            for path in folder.glob("*.parquet")
            for row in pq.read_table(path, columns=["article_id", "title"]).to_pylist()}


def _shards(folder: Path) -> set[bytes]:
    """The shards' contents (a republication keeps them under its own generation's names)."""
    return {path.read_bytes() for path in folder.glob("*.parquet")}


def test_two_local_datasets_with_the_same_ids_keep_their_own_documents(tmp_path: Path) -> None:
    """The second dataset's processing must not overwrite the first one's rows, work keys or
    statuses, even though every id is the same: a re-run of the first finds nothing new."""
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 4)
    first = write_manifest(docs / "first.jsonl", entries[:3])
    # The same ids for other papers: doc1..doc3 published as doc0..doc2.
    second = write_manifest(docs / "second.jsonl",
                            [{**e, "id": f"doc{i}"} for i, e in enumerate(entries[1:])])
    out = tmp_path / "out"
    common = ["--out", str(out), "--workers", "1", "--no-filter"]
    for name, manifest in (("first", first), ("second", second)):
        result = run_cli_in_process("local", "--input", str(manifest), "--name", name, *common)
        assert result.returncode == 0, result.stderr

    expected_first = {f"local:doc{i}": str(entries[i]["title"]) for i in range(3)}
    expected_second = {f"local:doc{i}": str(entries[i + 1]["title"]) for i in range(3)}
    assert _titles(out / "first") == expected_first
    assert _titles(out / "second") == expected_second

    state = State(out)
    try:
        for name in ("first", "second"):
            assert state.status_counts(name) == {PUBLISHED: 3}
        work_keys = {name: {row.candidate.id: row.work_key for row in state.rows(name)}
                     for name in ("first", "second")}
    finally:
        state.close()
    assert not set(work_keys["first"].values()) & set(work_keys["second"].values())

    before = _shards(out / "first")
    result = run_cli_in_process("local", "--input", str(first), "--name", "first", *common)
    assert result.returncode == 0, result.stderr
    assert _shards(out / "first") == before
    assert _titles(out / "first") == expected_first


def test_marks_belong_to_their_dataset(tmp_path: Path) -> None:
    """A watermark set for one dataset is not seen by another of the same source."""
    state = State(tmp_path)
    try:
        state.set_mark("hal-a", "modified_since", "2024-01-01")
        assert state.get_mark("hal-b", "modified_since") is None
        state.set_mark("hal-b", "modified_since", "2020-01-01")
        assert state.get_mark("hal-a", "modified_since") == "2024-01-01"
    finally:
        state.close()
