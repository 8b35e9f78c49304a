"""T19: `build-corpus verify` flags every corrupted, truncated, missing or stray shard."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loralay_build.corpus.verify import verify_dataset
from loralay_build.sandbox import Sandbox
from tests.helpers import buildrun
from tests.helpers.cli import run_cli_in_process
from tests.helpers.reliability import Figure


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("verify")
    with Sandbox(docs=12, seed=3) as sandbox:
        assert buildrun.run(tmp / "out", buildrun.write_config(sandbox, tmp / "c.toml")) == 0
    return tmp / "out" / "hal"


def _copy(built: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "hal"
    shutil.copytree(built, folder)
    return folder


def _shards(folder: Path) -> list[Path]:
    build = json.loads((folder / "build.json").read_text())
    return [folder / f["name"] for f in build["files"] if f["rows"]]


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_clean_dataset_passes(built: Path) -> None:
    result = run_cli_in_process("verify", str(built))
    assert result.returncode == 0, result.stdout + result.stderr
    assert verify_dataset(built) == []


def test_corruptions_are_flagged(built: Path, tmp_path: Path, figure: Figure) -> None:
    """One flipped byte per shard, one truncated shard, one deleted shard, one stray file."""
    flagged = total = 0
    for shard in _shards(built):
        folder = _copy(built, tmp_path / f"flip-{shard.name}")
        _flip(folder / shard.name, (folder / shard.name).stat().st_size // 3)
        total += 1
        problems = verify_dataset(folder)
        flagged += any(p.startswith(shard.name) for p in problems)
        result = run_cli_in_process("verify", str(folder))
        assert result.returncode == 1 and shard.name in result.stdout
    for case in ("truncated", "deleted", "stray"):
        folder = _copy(built, tmp_path / case)
        target = _shards(folder)[0]
        if case == "truncated":
            target.write_bytes(target.read_bytes()[:-100])
        elif case == "deleted":
            target.unlink()
        else:
            shutil.copy(target, folder / "train-00009-of-00009.parquet")
        total += 1
        flagged += bool(verify_dataset(folder))
    figure("T19", "corrupted / truncated / deleted / stray shards flagged", "100 %",
           f"{flagged}/{total}")
    assert flagged == total


def test_page_checksums_catch_what_the_manifest_cannot(built: Path, tmp_path: Path) -> None:
    """A flipped data byte is caught by the page CRC even when build.json was written after
    the damage (its sha256 then matches)."""
    folder = _copy(built, tmp_path / "crc")
    shard = _shards(folder)[0]
    _flip(shard, shard.stat().st_size // 3)
    build = json.loads((folder / "build.json").read_text())
    for entry in build["files"]:
        if entry["name"] == shard.name:
            entry["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
    (folder / "build.json").write_text(json.dumps(build))
    problems = verify_dataset(folder)
    assert problems and all(shard.name in p for p in problems)


def test_page_checksums_catch_a_flip_in_an_uncompressed_shard(built: Path,
                                                               tmp_path: Path) -> None:
    """Without compression no decoder notices a flipped letter: only the page CRC does.

    The shard is rewritten uncompressed (checksums kept) and listed with its new sha256, then
    one letter of a word changes case, which leaves valid UTF-8 and valid rows behind.
    """
    folder = _copy(built, tmp_path / "plain")
    shard = _shards(folder)[0]
    table = pq.read_table(shard)
    pq.write_table(table, shard, compression="none", write_page_checksum=True,
                   use_dictionary=False)
    word = next(w for w in table.column("article_words")[0].as_py() if w.isascii() and len(w) > 7)
    data = bytearray(shard.read_bytes())
    offset = data.find(word.encode())
    assert offset > 0
    data[offset] ^= 0x20
    shard.write_bytes(bytes(data))
    build = json.loads((folder / "build.json").read_text())
    for entry in build["files"]:
        if entry["name"] == shard.name:
            entry["sha256"] = hashlib.sha256(shard.read_bytes()).hexdigest()
            entry["bytes"] = shard.stat().st_size
    (folder / "build.json").write_text(json.dumps(build))
    problems = verify_dataset(folder)
    assert problems and all(shard.name in p for p in problems)


def test_row_invariants(built: Path, tmp_path: Path) -> None:
    """A shard rewritten with bad rows: a duplicate id, mismatched lists, a box past 1000."""
    folder = _copy(built, tmp_path / "rows")
    shard = _shards(folder)[0]
    rows = pq.read_table(shard).to_pylist()
    bad = dict(rows[0])
    bad["word_pages"] = list(bad["word_pages"])[:-1]
    bad["article_norm_bboxes"] = [[0, 0, 1001, 5], *bad["article_norm_bboxes"][1:]]
    table = pa.Table.from_pylist([*rows, bad], schema=pq.read_schema(shard))
    pq.write_table(table, shard)
    problems = "\n".join(verify_dataset(folder))
    assert "already in" in problems
    assert "list lengths differ" in problems
    assert "normalised box out of range" in problems
    assert "rows" in problems and "sha256" in problems


def test_columns_and_features_must_match_the_build_record(built: Path, tmp_path: Path) -> None:
    """The card declares the features of the columns build.json names, and every shard has
    exactly those columns: a card typing a column otherwise, or a record naming a column the
    shards lack, is flagged."""
    folder = _copy(built, tmp_path / "features")
    card = (folder / "README.md").read_text()
    retyped = card.replace("- name: lang_confidence\n    dtype: float32",
                           "- name: lang_confidence\n    dtype: float64")
    assert retyped != card
    (folder / "README.md").write_text(retyped)
    assert any("README.md" in p for p in verify_dataset(folder))
    folder = _copy(built, tmp_path / "columns")
    build = json.loads((folder / "build.json").read_text())
    build["columns"] = [*build["columns"], "tldr"]
    (folder / "build.json").write_text(json.dumps(build))
    problems = verify_dataset(folder)
    assert problems and all("schema differs" in p or "README.md" in p for p in problems)
    build["columns"] = [*build["columns"], "no_such_column"]
    (folder / "build.json").write_text(json.dumps(build))
    assert verify_dataset(folder) == [
        "build.json: its columns are not a layout dataset's (unknown column(s): no_such_column)"]
