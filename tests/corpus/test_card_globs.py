"""The card names each split's shards by one pattern, whatever the number of shards, and
`datasets` loads exactly the published rows and pages through it after an increment and a
takedown."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard

from tests.helpers.cli import run_cli_in_process, write_toml
from tests.helpers.local import make_corpus, write_manifest


def _build(manifest: Path, out: Path, config: Path) -> None:
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter", "--page-images", "--config", str(config))
    assert result.returncode == 0, result.stderr


def _globs(folder: Path) -> dict[str, dict[str, list[str]]]:
    """{config: {split: paths}} as `huggingface_hub` reads the card."""
    configs = DatasetCard.load(folder / "README.md").data["configs"]
    return {c["config_name"]: {f["split"]: f["path"] for f in c["data_files"]}
            for c in configs}


def _published(folder: Path) -> tuple[dict[str, list[str]], int]:
    """Each split's ids, and the number of pages, that build.json lists."""
    build = json.loads((folder / "build.json").read_text())
    ids: dict[str, list[str]] = {}
    for entry in build["files"]:
        table = pq.read_table(folder / entry["name"], columns=["article_id"])
        ids.setdefault(entry["split"], []).extend(table.column(0).to_pylist())
    pages = sum(entry["rows"] for entry in build["pages"]["files"])
    return {split: sorted(found) for split, found in ids.items()}, pages


def _check(folder: Path, cache: Path) -> None:
    """One glob per split and configuration, each matching exactly the listed shards, and
    both configurations load every published row through them."""
    build = json.loads((folder / "build.json").read_text())
    globs = _globs(folder)
    for config, entries in (("default", build["files"]), ("pages", build["pages"]["files"])):
        for split, paths in globs[config].items():
            assert len(paths) == 1 and "*" in paths[0], paths
            listed = {e["name"] for e in entries if e["split"] == split}
            assert len(listed) >= 1
            assert {p.relative_to(folder).as_posix() for p in folder.glob(paths[0])} == listed
    ids, pages = _published(folder)
    text = datasets.load_dataset(str(folder), cache_dir=str(cache))
    assert {split: sorted(text[split]["article_id"]) for split in text} == ids
    images = datasets.load_dataset(str(folder), "pages", cache_dir=str(cache))
    assert sum(len(images[split]) for split in images) == pages
    assert sorted(images) == sorted(ids)
    assert run_cli_in_process("verify", str(folder)).returncode == 0


def test_the_card_names_shards_by_pattern_through_an_increment_and_a_takedown(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entries = make_corpus(docs, 12)
    out = tmp_path / "out"
    folder = out / "local"
    config = write_toml(tmp_path / "c.toml", {"output": {"shard_rows": 2, "rows_per_file": 1},
                                               "split": {"train": 0.5, "validation": 0.25,
                                                         "test": 0.25}})
    _build(write_manifest(docs / "m.jsonl", entries[:10]), out, config)
    assert len(json.loads((folder / "build.json").read_text())["files"]) >= 5
    patterns = _globs(folder)
    _check(folder, tmp_path / "cache1")
    # An increment: two new documents and one retitled, so shards are kept, added, rewritten.
    grown = [*entries[:4], {**entries[4], "title": "Another title"}, *entries[5:12]]
    _build(write_manifest(docs / "m.jsonl", grown), out, config)
    assert {c: sorted(s) for c, s in _globs(folder).items()} == {
        c: sorted(s) for c, s in patterns.items()}  # the same splits, one pattern each
    _check(folder, tmp_path / "cache2")
    # A takedown republishes without the document.
    ids = tmp_path / "ids.txt"
    ids.write_text("doc1\n")
    result = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
    assert result.returncode == 0, result.stderr
    _check(folder, tmp_path / "cache3")
    published, _ = _published(folder)
    assert "local:doc1" not in {i for split in published.values() for i in split}
    # A stray shard that a pattern matches would be read as data: verify names it.
    stray = folder / _globs(folder)["default"]["train"][0].replace("*", "99999-of-99999")
    stray.write_bytes((folder / json.loads(
        (folder / "build.json").read_text())["files"][0]["name"]).read_bytes())
    result = run_cli_in_process("verify", str(folder))
    assert result.returncode == 1 and stray.name in result.stdout
