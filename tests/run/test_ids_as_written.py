"""Ids as the user writes them: every command taking an id (`inspect`, `remove --ids`,
`retry --ids`, `--exclude-ids`) accepts the source's own id as well as the published
`<source>:<id>`; an id that names two documents is a usage error listing both."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from loralay_build.ids import AmbiguousId, UnknownId, resolve_id
from loralay_build.state import State
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest


def test_resolution() -> None:
    known = {"arxiv:2206.10883", "local:x", "local:local:x"}.__contains__
    assert resolve_id("2206.10883", ["arxiv"], known) == "arxiv:2206.10883"
    assert resolve_id("arxiv:2206.10883", ["arxiv"], known) == "arxiv:2206.10883"
    assert resolve_id("x", ["local"], known) == "local:x"
    with pytest.raises(AmbiguousId) as caught:
        resolve_id("local:x", ["local"], known)
    assert caught.value.matches == ["local:x", "local:local:x"]
    with pytest.raises(UnknownId):
        resolve_id("2206.10884", ["arxiv"], known)


def published(dataset: Path) -> set[str]:
    return {i for p in dataset.glob("*.parquet")
            for i in pq.read_table(p, columns=["article_id"]).column("article_id").to_pylist()}


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, list[str]]:
    entries = make_corpus(tmp_path, 3)
    entries += [{"id": "twin", "pdf": "nowhere.pdf", "language": "fr", "abstracts": {"fr": "a"}},
                {"id": "local:twin", "pdf": "gone.pdf", "language": "fr",
                 "abstracts": {"fr": "a"}}]
    manifest = write_manifest(tmp_path / "docs.jsonl", entries)
    args = ["local", "--input", str(manifest), "--out", str(tmp_path / "out"), "--no-filter",
            "--executor", "serial", "-q"]
    result = run_cli_subprocess(*args)
    assert result.returncode == 0, result.stderr
    return tmp_path / "out", args


def test_every_command_takes_the_id_as_written(built: tuple[Path, list[str]],
                                               tmp_path: Path) -> None:
    out, args = built
    dataset = out / "local"
    assert published(dataset) == {"local:doc0", "local:doc1", "local:doc2"}
    for written in ("doc1", "local:doc1"):
        png = tmp_path / f"{written.replace(':', '_')}.png"
        result = run_cli_in_process("inspect", str(dataset), written, "--out", str(png))
        assert result.returncode == 0 and png.is_file(), result.stderr

    twin = run_cli_in_process("inspect", str(dataset), "local:twin", "--out",
                              str(tmp_path / "t.png"))
    assert twin.returncode == 2
    assert "local:twin, local:local:twin" in twin.stderr and "Traceback" not in twin.stderr

    ids = tmp_path / "ids.txt"
    ids.write_text("local:twin\n")
    refused = run_cli_in_process("retry", str(out), "--dataset", "local", "--ids", str(ids))
    assert refused.returncode == 2 and "local:local:twin" in refused.stderr
    ids.write_text("twin  # the manifest's own id\n")
    queued = run_cli_in_process("retry", str(out), "--dataset", "local", "--ids", str(ids))
    assert queued.returncode == 0 and "1 document(s) queued again" in queued.stdout
    state = State(out)
    try:
        rows = {i: state.row("local", i) for i in ("local:twin", "local:local:twin")}
    finally:
        state.close()
    assert {i: row.status if row else None for i, row in rows.items()} == {
        "local:twin": "discovered", "local:local:twin": "rejected"}

    ids.write_text("doc2\n")
    removed = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
    assert removed.returncode == 0, removed.stderr
    assert published(dataset) == {"local:doc0", "local:doc1"}

    excluded = tmp_path / "test-set.txt"
    excluded.write_text("doc1\n")
    again = run_cli_subprocess(*args, "--exclude-ids", str(excluded))
    assert again.returncode == 0, again.stderr
    assert published(dataset) == {"local:doc0"}
    rejects = {json.loads(x)["id"]: json.loads(x)["reason"]
               for x in (dataset / "rejects.jsonl").read_text().splitlines()}
    assert rejects["local:doc1"] == "excluded"
