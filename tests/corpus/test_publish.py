"""Publishing costs what changed: across runs of one 40-document `local` dataset, unchanged
shards keep their bytes, the rows equal a full republish, a kill or a full disk in the middle
of an incremental publish keeps one complete version, and `compact` repacks."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import loralay_build.corpus.publish as publisher
from loralay_build.config import OutputSettings
from loralay_build.corpus.card import data_files
from loralay_build.corpus.publish import (
    DictRows,
    Item,
    ItemIndex,
    PublishedRows,
    Selection,
    switch,
    write_shards,
)
from loralay_build.corpus.schema import FULL_SCHEMA, dataset_schema
from loralay_build.corpus.writer import rows_table, write_shard
from loralay_build.sources.local import LocalSource
from loralay_build.state import RunLock
from tests.helpers.cli import run_cli_in_process, write_toml
from tests.helpers.cli_runner import assert_dataset_schema
from tests.helpers.local import make_corpus, write_manifest

BASE_DOCS = 40


def _build(manifest: Path, out: Path) -> subprocess.CompletedProcess[str]:
    config = write_toml(out.parent / f"{out.name}.toml",
                        {"output": {"shard_rows": 8, "rows_per_file": 4},
                         "store": {"keep_work": True}})
    return run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                              "1", "--no-filter", "--config", str(config))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]], Path]:
    """41 rendered documents and an output root where the first 40 are published."""
    docs = tmp_path_factory.mktemp("docs")
    entries = make_corpus(docs, BASE_DOCS + 1)
    out = tmp_path_factory.mktemp("base") / "out"
    result = _build(write_manifest(docs / "base.jsonl", entries[:BASE_DOCS]), out)
    assert result.returncode == 0, result.stderr
    return docs, entries, out


def _copy(base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(base[2], out)
    return out


def _shards(folder: Path) -> dict[str, str]:
    """{sha256: name} of the shards in place: a kept shard keeps its bytes under the name of
    each publication's generation."""
    return {hashlib.sha256(p.read_bytes()).hexdigest(): p.name
            for p in sorted(folder.glob("*.parquet"))}


def _rows_by_split(folder: Path) -> dict[str, pa.Table]:
    """Each split's published rows, sorted by id (the order shards give them is packing)."""
    build = json.loads((folder / "build.json").read_text())
    out = {}
    for split in ("train", "validation", "test"):
        names = [f["name"] for f in build["files"] if f["split"] == split]
        if names:
            table = pa.concat_tables(pq.read_table(folder / n) for n in names)
            out[split] = table.sort_by("article_id").replace_schema_metadata(None)
    return out


def _full_republish(out: Path, manifest: Path, tmp_path: Path) -> dict[str, pa.Table]:
    """The rows a full republish of the same state writes: the dataset folder removed, the
    same command run again (work files and state are kept, so nothing is processed again)."""
    copy = tmp_path / "republish"
    shutil.copytree(out, copy)
    shutil.rmtree(copy / "local")
    result = _build(manifest, copy)
    assert result.returncode == 0, result.stderr
    return _rows_by_split(copy / "local")


def _assert_same_rows(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> None:
    assert sorted(a) == sorted(b)
    for split in a:
        assert a[split].num_rows == b[split].num_rows
        assert a[split].equals(b[split]), split


def _rows_of(folder: Path, shards: dict[str, str], contents: set[str]) -> int:
    return sum(pq.read_metadata(folder / shards[c]).num_rows for c in contents)


def test_adding_a_document_only_adds_a_shard(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    docs, entries, _ = base
    out = _copy(base, tmp_path)
    before = _shards(out / "local")
    assert len(before) >= 6  # several shards, so "only one changes" means something
    manifest = write_manifest(docs / "grown.jsonl", entries[: BASE_DOCS + 1])
    result = _build(manifest, out)
    assert result.returncode == 0, result.stderr
    after = _shards(out / "local")
    assert set(before) <= set(after)  # every old shard keeps its bytes
    added = set(after) - set(before)
    assert len(added) == 1 and _rows_of(out / "local", after, added) == 1
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    _assert_same_rows(_rows_by_split(out / "local"), _full_republish(out, manifest, tmp_path))
    # verify compares the rows with what a full republish writes: the work files.
    shard = out / "local" / after[next(iter(added))]
    key = json.loads(pq.read_metadata(shard).metadata[b"loralay.members"])[0][1]
    work = out / ".loralay" / "work" / key[:2] / f"{key}.arrow"
    other = next(p for p in work.parent.parent.glob("*/*.arrow") if p != work)
    work.write_bytes(other.read_bytes())
    result = run_cli_in_process("verify", str(out / "local"))
    assert result.returncode == 1 and "local:doc40 differs from its work file" in result.stdout


def test_removing_a_document_rewrites_only_its_shard(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    docs, entries, _ = base
    out = _copy(base, tmp_path)
    before = _shards(out / "local")
    # The record loses its abstract: the document is rejected, so it leaves the dataset.
    gone = {**entries[3], "abstracts": {}}
    manifest = write_manifest(docs / "shrunk.jsonl",
                              [*entries[:3], gone, *entries[4:BASE_DOCS]])
    result = _build(manifest, out)
    assert result.returncode == 0, result.stderr
    after = _shards(out / "local")
    removed, added = set(before) - set(after), set(after) - set(before)
    assert len(removed) == 1 and len(added) == 1
    ids = pq.read_table(out / "local" / after[next(iter(added))], columns=["article_id"])
    assert "local:doc3" not in ids.column(0).to_pylist()
    assert _rows_of(out / "local", after, added) == len(ids) == 7  # the rest of doc3's 8
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    _assert_same_rows(_rows_by_split(out / "local"), _full_republish(out, manifest, tmp_path))


def _files_by_split(folder: Path) -> dict[str, list[dict[str, Any]]]:
    build = json.loads((folder / "build.json").read_text())
    out: dict[str, list[dict[str, Any]]] = {}
    for entry in build["files"]:
        out.setdefault(entry["split"], []).append(entry)
    return out


def _assert_file_rule(folder: Path, rows_per_file: int) -> None:
    """Each split holds at most one shard per `rows_per_file` rows (one when fewer)."""
    for split, files in _files_by_split(folder).items():
        rows = sum(f["rows"] for f in files)
        assert len(files) <= max(1, rows // rows_per_file), (split, [f["rows"] for f in files])


def test_an_increment_keeps_the_file_rule_and_rewrites_only_what_it_must(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    # Train's 38 rows in shards of 6 (the last of 2), at most 38 // 5 = 7 of them. Four
    # removals in four shards leave 20 rows to repack: 4 new shards beside 3 kept would be
    # 7 for 34 rows, one more than 34 // 5, so the smallest kept shard joins the repack.
    docs, entries, _ = base
    out = tmp_path / "out"
    config = write_toml(tmp_path / "rule.toml", {"output": {"shard_rows": 6, "rows_per_file": 5}})

    def build(manifest: Path) -> None:
        result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out),
                                    "--workers", "1", "--no-filter", "--config", str(config))
        assert result.returncode == 0, result.stderr

    build(write_manifest(docs / "rule.jsonl", entries[:BASE_DOCS]))
    folder = out / "local"
    _assert_file_rule(folder, 5)
    train = _files_by_split(folder)["train"]
    assert sorted(f["rows"] for f in train) == [2, 6, 6, 6, 6, 6, 6]
    full = [f for f in train if f["rows"] == 6]
    hit = [full[0], full[1], full[3], full[5]]
    gone = {pq.read_table(folder / f["name"], columns=["article_id"]).column(0)[0].as_py()
            for f in hit}
    smallest = next(f for f in train if f["rows"] == 2)
    before = _shards(folder)
    build(write_manifest(docs / "rule-shrunk.jsonl",
                         [e if f"local:{e['id']}" not in gone else {**e, "abstracts": {}}
                          for e in entries[:BASE_DOCS]]))
    _assert_file_rule(folder, 5)
    after = _shards(folder)
    removed = {before[c] for c in set(before) - set(after)}
    assert removed == {f["name"] for f in [*hit, smallest]}
    added = set(after) - set(before)
    assert _rows_of(folder, after, added) == 4 * 5 + 2
    assert len(_files_by_split(folder)["train"]) == 34 // 5
    assert run_cli_in_process("verify", str(folder)).returncode == 0


def test_a_folder_of_small_shards_is_merged_without_processing_again(tmp_path: Path) -> None:
    # A folder published with 16-row shards (as the previous default did), then built again
    # unchanged with the default layout: its rows are repacked from the shards in place.
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, BASE_DOCS))
    out = tmp_path / "out"
    args = ("local", "--input", str(manifest), "--out", str(out), "--workers", "1",
            "--no-filter")
    assert run_cli_in_process(*args).returncode == 0
    folder = out / "local"
    rows = _rows_by_split(folder)
    assert run_cli_in_process("compact", str(folder), "--shard-rows", "16").returncode == 0
    assert len(_files_by_split(folder)["train"]) == 3
    result = run_cli_in_process(*args)
    assert result.returncode == 0, result.stderr
    status = run_cli_in_process("status", str(out), "--json")
    counts = json.loads(status.stdout)["local"]["last_run"]["counts"]
    assert counts["new"] == counts["changed"] == 0 and "processed" not in counts
    assert {split: len(files) for split, files in _files_by_split(folder).items()} == {
        split: 1 for split in rows}
    _assert_same_rows(_rows_by_split(folder), rows)
    assert run_cli_in_process("verify", str(folder)).returncode == 0
    # Up to date now: the next run keeps every shard.
    before = _shards(folder)
    assert run_cli_in_process(*args).returncode == 0
    assert _shards(folder) == before


KILLER = """
import os, signal, sys
from loralay_build import cli
from loralay_build.corpus import publish
point, target = sys.argv[1], sys.argv[2]
real_shard, real_write, real_unlink = publish.write_shard, publish.atomic_write_bytes, \\
    publish.Path.unlink
def die():
    os.kill(os.getpid(), signal.SIGKILL)
def shard(path, *args):
    real_shard(path, *args)
    if point == "shard":
        die()
def write(path, data):
    if point == path.name:
        die()
    real_write(path, data)
def unlink(path, missing_ok=False):
    if point == "stale" and path.suffix == ".parquet":
        die()
    real_unlink(path, missing_ok)
publish.write_shard, publish.atomic_write_bytes, publish.Path.unlink = shard, write, unlink
sys.argv = ["build-corpus", *sys.argv[3:]]
cli.main()
"""


def _ids(folder: Path) -> list[str]:
    import datasets

    loaded = datasets.load_dataset(str(folder), download_mode="force_redownload")
    return sorted(i for split in loaded.values() for i in split["article_id"])


@pytest.mark.parametrize("point", ["shard", "rejects.jsonl", "README.md", "build.json", "stale"])
def test_kill_during_an_incremental_publish(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path, point: str
) -> None:
    """kill -9 at each step of a publish that both adds and rewrites a shard: readers see the
    old rows or the new ones, and the same command then gives what an uninterrupted run does."""
    docs, entries, _ = base
    out = _copy(base, tmp_path)
    old = _ids(out / "local")
    retitled = {**entries[5], "title": "Another title"}  # its shard is rewritten
    manifest = write_manifest(docs / f"kill-{point}.jsonl",
                              [*entries[:5], retitled, *entries[6 : BASE_DOCS + 1]])
    config = write_toml(tmp_path / "out.toml", {"output": {"shard_rows": 8, "rows_per_file": 4}})
    args = ["local", "--input", str(manifest), "--out", str(out), "--workers", "1",
            "--no-filter", "--config", str(config)]
    killed = subprocess.run([sys.executable, "-c", KILLER, point, "", *args],
                            capture_output=True, text=True, timeout=240)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    new = sorted(f"local:{e['id']}" for e in entries[: BASE_DOCS + 1])
    assert _ids(out / "local") == (
        old if point in ("shard", "rejects.jsonl", "README.md") else new)
    result = run_cli_in_process(*args)
    assert result.returncode == 0, result.stderr
    assert _ids(out / "local") == new
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    clean = tmp_path / "clean"
    shutil.copytree(base[2], clean)
    assert run_cli_in_process(*[str(clean) if a == str(out) else a for a in args]).returncode == 0
    assert _shards(out / "local") == _shards(clean / "local")
    assert (out / "local" / "build.json").read_bytes() == (clean / "local" /
                                                         "build.json").read_bytes()


def test_a_full_disk_keeps_the_previous_version(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    """Shard writes fail with EFBIG (RLIMIT_FSIZE) as they would with ENOSPC: one line, exit 1,
    the previous version loads and verifies, and no new shard is left behind."""
    docs, entries, _ = base
    out = _copy(base, tmp_path)
    before = _shards(out / "local")
    old = _ids(out / "local")
    # Another compression level rewrites every shard, here into one train shard larger than
    # the limit, which lets the state database and the small files through.
    config = write_toml(tmp_path / "zstd.toml", {"output": {"shard_rows": 64, "zstd_level": 1}})
    manifest = write_manifest(docs / "full.jsonl", entries[:BASE_DOCS])
    limit = 3 * (out / ".loralay" / "state.sqlite").stat().st_size // 2
    train = sum((out / "local" / n).stat().st_size for n in before.values()
                if n.startswith("train"))
    assert train > 1.2 * limit
    code = ("import resource, sys\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
            "from loralay_build import cli\n"
            "sys.argv = ['build-corpus', *sys.argv[1:]]\ncli.main()\n")
    result = subprocess.run(
        [sys.executable, "-c", code, "local", "--input", str(manifest), "--out", str(out),
         "--workers", "1", "--no-filter", "--config", str(config)],
        capture_output=True, text=True, timeout=240)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "publishing failed" in line]
    assert len(errors) == 1 and "previous version is kept" in errors[0]
    assert _shards(out / "local") == before
    assert _ids(out / "local") == old
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0


def test_compact_repacks_small_shards_with_the_same_rows(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    docs, entries, _ = base
    out = _copy(base, tmp_path)
    manifest = write_manifest(docs / "compact.jsonl", entries[: BASE_DOCS + 1])
    assert _build(manifest, out).returncode == 0
    rows = _rows_by_split(out / "local")
    fragmented = len(_shards(out / "local"))
    result = run_cli_in_process("compact", str(out / "local"), "--shard-rows", "8")
    assert result.returncode == 0, result.stderr
    assert len(_shards(out / "local")) < fragmented
    _assert_same_rows(_rows_by_split(out / "local"), rows)
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    assert run_cli_in_process("compact", str(out / "local"), "--shard-rows", "8").stdout.endswith(
        "already compact\n")
    compacted = _shards(out / "local")
    assert _build(manifest, out).returncode == 0  # up to date: nothing rewritten
    assert _shards(out / "local") == compacted


def test_streaming_load(base: tuple[Path, list[dict[str, object]], Path]) -> None:
    import datasets

    folder = base[2] / "local"
    loaded = datasets.load_dataset(str(folder), streaming=True)
    ids = sorted(row["article_id"] for split in loaded.values() for row in split)
    assert ids == sorted(f"local:doc{i}" for i in range(BASE_DOCS))


def test_page_index_and_row_groups_bounded_by_bytes(tmp_path: Path) -> None:
    """Rows of about 3 MB each: a 4 MB bound makes one row group per row, where their one
    segment alone would put all five in one; every column chunk has its offset index."""
    words = [f"word{i:06d}" for i in range(200_000)]
    rows = [{"article_id": f"x{i}", "article_words": words, "abstract": "a"} for i in range(5)]
    table = rows_table(rows, FULL_SCHEMA)
    assert 2_000_000 < table.slice(0, 1).nbytes < 4_000_000
    path = tmp_path / "big.parquet"
    settings = OutputSettings(row_group_bytes=4_000_000)
    write_shard(path, FULL_SCHEMA, [[table]], settings, {})
    meta = pq.read_metadata(path)
    assert meta.num_row_groups == 5
    for group in range(meta.num_row_groups):
        assert meta.row_group(group).total_byte_size <= 4_000_000
        for column in range(meta.num_columns):
            assert meta.row_group(group).column(column).has_offset_index


def test_a_crash_during_a_republish_with_the_same_shard_count(tmp_path: Path) -> None:
    """Every row changes, so the new set has exactly the old shard count: the new shards must
    still get names no listed file has, or a crash before the switch leaves a mixed set."""
    schema = pa.schema([pa.field("article_id", pa.string()), pa.field("text", pa.string())])
    settings = OutputSettings(shard_rows=1, rows_per_file=1)

    def run(version: str, crash: bool = False) -> None:
        rows = {f"a{i}": {"article_id": f"a{i}", "text": version} for i in range(3)}
        items = {"train": [Item(i, version) for i in rows], "validation": [], "test": []}

        shards = write_shards(tmp_path, version, items, DictRows(rows, schema), schema, settings)
        if crash:
            raise KeyboardInterrupt
        assert shards is not None
        build: dict[str, Any] = {"fingerprint": version, "files": shards.files}
        switch(shards, build, "---\n" + "\n".join(data_files(shards.files)) + "\n---\n")

    run("old")
    listed = json.loads((tmp_path / "build.json").read_text())["files"]
    with pytest.raises(KeyboardInterrupt):
        run("new", crash=True)
    texts = [pq.read_table(tmp_path / f["name"]).column("text").to_pylist() for f in listed]
    assert texts == [["old"]] * 3
    run("new")
    assert _ids_texts(tmp_path) == {"new"}


def test_published_rows_finds_every_key_and_no_other(tmp_path: Path) -> None:
    """The index of published rows by content key: every key of every shard is found and
    reads back its own row, a key published nowhere is not, and a key whose sha256 ends in
    NUL bytes (which a fixed-width byte array drops) is found like the others."""
    nul = next(k for k in (f"nul{i}" for i in range(100_000))
               if hashlib.sha256(k.encode()).digest().endswith(b"\0"))
    keys = [f"key{i}" for i in range(9)] + [nul]
    schema = pa.schema([pa.field("article_id", pa.string()), pa.field("text", pa.string())])
    rows = {k: {"article_id": f"a{i}", "text": k} for i, k in enumerate(keys)}

    items = {"train": [Item(rows[k]["article_id"], k) for k in keys[:6]],
             "validation": [Item(rows[k]["article_id"], k) for k in keys[6:]], "test": []}
    by_id = {row["article_id"]: row for row in rows.values()}
    shards = write_shards(tmp_path, "f", items, DictRows(by_id, schema), schema,
                          OutputSettings(shard_rows=4, rows_per_file=1, row_group_rows=3))
    assert shards is not None
    switch(shards, {"fingerprint": "f", "files": shards.files},
           "---\n" + "\n".join(data_files(shards.files)))
    published = PublishedRows(tmp_path)
    for key in reversed(keys):  # out of shard order: row groups are read again as needed
        assert key in published
        assert published.read(key).to_pylist() == [rows[key]]
    assert "key9" not in published and "" not in published


def test_a_published_row_is_read_without_its_row_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row read back from a shard holds the rows decoded with it (a batch), not its whole
    row group, and rows are found wherever the reading starts and whichever way it goes."""
    schema = pa.schema([pa.field("article_id", pa.string()), pa.field("text", pa.string())])
    rows = {f"a{i}": {"article_id": f"a{i}", "text": f"{i}" * 10_000} for i in range(6)}
    items = {"train": [Item(cid, f"key-{cid}") for cid in rows], "validation": [], "test": []}
    shards = write_shards(tmp_path, "f", items, DictRows(rows, schema), schema,
                          OutputSettings(shard_rows=6, rows_per_file=1, row_group_rows=3))
    assert shards is not None
    switch(shards, {"fingerprint": "f", "files": shards.files},
           "---\n" + "\n".join(data_files(shards.files)))
    monkeypatch.setattr(publisher.RowStream, "BATCH_ROWS", 1)
    published = PublishedRows(tmp_path)
    for cid in ["a4", "a5", "a1", "a2", "a0", "a3", "a3"]:  # forwards, back, within a group
        read = published.read(f"key-{cid}")
        assert read.to_pylist() == [rows[cid]]
        assert read.get_total_buffer_size() < 11_000  # its own text, not its group's three


def _ids_texts(folder: Path) -> set[str]:
    build = json.loads((folder / "build.json").read_text())
    return {t for f in build["files"] for t in pq.read_table(folder / f["name"])
            .column("text").to_pylist()}


def test_gc_deletes_only_what_nothing_refers_to(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    docs, entries, _ = base
    out = _copy(base, tmp_path)
    retitled = {**entries[1], "title": "Another title"}  # new work file, same PDF
    gone = {**entries[2], "abstracts": {}}  # rejected before download: PDF and work file unused
    manifest = write_manifest(docs / "gc.jsonl", [entries[0], retitled, gone,
                                                  *entries[3:BASE_DOCS]])
    assert _build(manifest, out).returncode == 0
    with RunLock(out / ".loralay" / "local.lock"):
        held = run_cli_in_process("gc", str(out))
    assert held.returncode == 75 and "a build is running" in held.stderr
    assert len(list((out / ".loralay" / "work").glob("*/*.arrow"))) == BASE_DOCS + 1
    result = run_cli_in_process("gc", str(out))
    assert result.returncode == 0, result.stderr
    assert "1 blob(s) and 2 work file(s) deleted" in result.stdout
    assert len(list((out / ".loralay" / "work").glob("*/*.arrow"))) == BASE_DOCS - 1
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    shards = _shards(out / "local")
    again = _build(manifest, out)
    assert again.returncode == 0, again.stderr
    assert _shards(out / "local") == shards
    assert "0 blob(s) and 0 work file(s) deleted" in run_cli_in_process("gc", str(out)).stdout


def test_compact_refuses_while_a_build_runs_or_without_a_complete_build(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    out = _copy(base, tmp_path)
    before = _shards(out / "local")
    with RunLock(out / ".loralay" / "local.lock"):
        held = run_cli_in_process("compact", str(out / "local"), "--shard-rows", "100")
    assert held.returncode == 75 and "another run holds" in held.stderr
    shard = out / "local" / sorted(before.values())[0]
    shard.write_bytes(shard.read_bytes()[:-10])  # cut short: not the listed file any more
    broken = run_cli_in_process("compact", str(out / "local"), "--shard-rows", "100")
    assert broken.returncode == 1 and "Traceback" not in broken.stderr
    assert broken.stderr.count("\n") == 1 and "no complete published build" in broken.stderr
    assert set(_shards(out / "local").values()) == set(before.values())


def test_output_settings_that_change_no_shard_byte_keep_every_shard(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    docs = base[0]
    out = _copy(base, tmp_path)
    before = _shards(out / "local")
    config = write_toml(tmp_path / "plain.toml",
                        {"output": {"shard_rows": 8, "rows_per_file": 4,
                                    "work_compression": "none"}})
    result = run_cli_in_process("local", "--input", str(docs / "base.jsonl"), "--out", str(out),
                                "--workers", "1", "--no-filter", "--config", str(config))
    assert result.returncode == 0, result.stderr
    assert set(_shards(out / "local")) == set(before)


def test_work_files_deleted_once_published(
    base: tuple[Path, list[dict[str, object]], Path], tmp_path: Path
) -> None:
    """By default (`[store] keep_work = false`) no work file outlives publishing; a rewritten
    shard reads its unchanged rows back from the old one, and a lost dataset folder is rebuilt
    by processing again. The rows stay those of a build that kept its work files."""
    docs, entries, _ = base
    out = tmp_path / "out"
    config = write_toml(tmp_path / "nowork.toml", {"output": {"shard_rows": 8, "rows_per_file": 4}})

    def build(manifest: Path) -> None:
        result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out),
                                    "--workers", "1", "--no-filter", "--config", str(config))
        assert result.returncode == 0, result.stderr

    def work_files() -> list[Path]:
        return list((out / ".loralay" / "work").glob("*/*.arrow"))

    build(docs / "base.jsonl")
    assert work_files() == []
    before = _shards(out / "local")
    changed = write_manifest(docs / "nowork.jsonl", [*entries[:3], {**entries[3], "abstracts": {}},
                                                     *entries[4 : BASE_DOCS + 1]])
    build(changed)
    after = _shards(out / "local")
    assert len(set(before) - set(after)) == 1  # doc3's shard, rewritten from the old one
    assert work_files() == []
    kept = _copy(base, tmp_path / "kept")
    assert _build(changed, kept).returncode == 0
    _assert_same_rows(_rows_by_split(out / "local"), _rows_by_split(kept / "local"))
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    shutil.rmtree(out / "local")
    build(changed)
    _assert_same_rows(_rows_by_split(out / "local"), _rows_by_split(kept / "local"))


# A build as versions before per-dataset schemas made it: shards of every column, and a build
# record (so a card) that names no columns.
EVERY_COLUMN_BUILD = """
import sys
from loralay_build import cli
from loralay_build.corpus.schema import SOURCE_COLUMNS
from loralay_build.run import publish_write
from loralay_build.sources.local import LocalSource
LocalSource.columns = tuple(SOURCE_COLUMNS)
publish_write.COLUMNS_KEY = "unnamed"
sys.argv = ["build-corpus", *sys.argv[1:]]
cli.main()
"""


@pytest.mark.parametrize("keep_work", [True, False])
def test_a_grown_build_republishes_a_folder_of_every_column(tmp_path: Path,
                                                           keep_work: bool) -> None:
    """A folder published with every column still compacts, verifies, loads and inspects.
    The next build, with one more document, rewrites every shard in the dataset's own schema
    (no old shard stays beside a new one), and its rows equal a fresh build's: the old rows
    are read from work files of every column or, with `keep_work = false`, from the old
    shards."""
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 9)
    entries[0].update(licence="CC-BY-4.0", url="https://example.org/doc0")
    config = write_toml(tmp_path / "c.toml", {"output": {"shard_rows": 4, "rows_per_file": 1},
                                              "store": {"keep_work": keep_work}})

    def args(manifest: Path, out: Path) -> list[str]:
        return ["local", "--input", str(manifest), "--out", str(out), "--workers", "1",
                "--no-filter", "--config", str(config)]

    out = tmp_path / "out"
    folder = out / "local"
    old = subprocess.run([sys.executable, "-c", EVERY_COLUMN_BUILD,
                          *args(write_manifest(docs / "old.jsonl", entries[:8]), out)],
                         capture_output=True, text=True, timeout=240)
    assert old.returncode == 0, old.stderr
    compacted = run_cli_in_process("compact", str(folder), "--shard-rows", "8")
    assert compacted.returncode == 0 and "already compact" not in compacted.stdout
    before = _shards(folder)
    assert all(pq.read_schema(folder / n).remove_metadata().equals(FULL_SCHEMA)
               for n in before.values())
    assert "dataset_info" not in (folder / "README.md").read_text()
    assert run_cli_in_process("verify", str(folder)).returncode == 0
    assert len(_ids(folder)) == 8
    stats = run_cli_in_process("stats", str(folder), "--json")
    assert stats.returncode == 0 and json.loads(stats.stdout)["splits"]["train"]["documents"]
    inspected = run_cli_in_process("inspect", str(folder), "local:doc1", "--out",
                                   str(tmp_path / "p.png"))
    assert inspected.returncode == 0, inspected.stderr
    grown = write_manifest(docs / "grown.jsonl", entries)
    result = run_cli_in_process(*args(grown, out))
    assert result.returncode == 0, result.stderr
    after = _shards(folder)
    assert not set(before) & set(after)
    schema = dataset_schema(LocalSource.columns)
    assert all(pq.read_schema(folder / n).remove_metadata().equals(schema)
               for n in after.values())
    verified = run_cli_in_process("verify", str(folder))
    assert verified.returncode == 0, verified.stdout
    assert_dataset_schema(folder, LocalSource)
    assert run_cli_in_process(*args(grown, tmp_path / "fresh")).returncode == 0
    _assert_same_rows(_rows_by_split(folder), _rows_by_split(tmp_path / "fresh" / "local"))


@pytest.mark.parametrize("colliding", [False, True])
def test_an_item_index_finds_items_by_id_and_key(colliding: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Each item is found at its position, through a view made when read too; an id under
    another key, or absent, is not found. Ids whose hashes collide are told apart by the id."""
    if colliding:  # every id of one length gets the same hash
        monkeypatch.setattr(publisher, "hash", len, raising=False)
    items = [Item(f"id{i:03d}", f"k{i}") for i in range(50)]
    view = Selection(items.__getitem__, np.arange(10, 50))
    assert list(view[:2]) == items[10:12] and view[-1] == items[49]
    for sequence, expected in ((items, list(range(50))), (view, [-1] * 10 + list(range(40)))):
        found = ItemIndex(sequence).positions(
            [*items[::-1], Item("id007", "other"), Item("id999", "k0")])
        assert found.tolist() == [*expected[::-1], -1, -1]
