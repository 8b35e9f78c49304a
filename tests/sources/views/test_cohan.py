"""`build-corpus local --view cohan`: Cohan et al.'s records made from generated PDFs with
headings, a caption and a reference list, read back by `datasets` and by a loader written as
the `scientific_papers` and `ccdv/*-summarization` ones are, with nothing changed but the
path; and beside PubMed's own views."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest
from click.testing import CliRunner

from loralay_build.cli import main
from loralay_build.corpus.verify import verify_dataset
from loralay_build.sandbox.pubmed import PubmedSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.views.cohan import COLUMNS, KEPT_ROLES, RELEASE_FOLDER
from loralay_build.structure.roles import Role
from tests.helpers.cli import run_cli_in_process, write_toml
from tests.helpers.cli_runner import FAST, published_splits, rows, write_config
from tests.helpers.local import write_manifest
from tests.helpers.papers import CAPTION_WORD, REFERENCE_WORD, structured_papers


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("cohan")
    docs = tmp / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "manifest.jsonl", structured_papers(docs, 8))
    splits = write_toml(tmp / "splits.toml", {"split": {"train": 0.4, "validation": 0.3,
                                                        "test": 0.3}})
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp / "data"),
                                "--config", str(splits), "--view", "cohan", "--no-filter",
                                "--workers", "1")
    assert result.returncode == 0, result.stderr
    yield tmp / "data"


def test_view_loads_with_its_declared_columns_and_verifies(built: Path) -> None:
    folder = built / "local-cohan"
    assert verify_dataset(folder) == []
    loaded = datasets.load_dataset(str(folder))
    for split in loaded.values():
        assert split.column_names == [name for name, _, _ in COLUMNS]
    assert sum(len(split) for split in loaded.values()) == len(rows(built / "local"))


def test_sections_are_the_layout_rows_sections_with_body_words_only(built: Path) -> None:
    layout = rows(built / "local")
    loaded = datasets.load_dataset(str(built / "local-cohan"))
    records = {r["article_id"]: r for split in loaded.values() for r in split}
    assert records.keys() == layout.keys()
    for article_id, row in layout.items():
        record = records[article_id]
        assert record["section_names"] == [s["title"] or "" for s in row["sections"]]
        assert "1 Introduction" in record["section_names"]
        words, roles = row["article_words"], row["word_roles"]
        for section, sentences in zip(row["sections"], record["sections"], strict=True):
            kept = [words[i] for i in range(section["word_start"], section["word_end"])
                    if roles[i] in KEPT_ROLES]
            assert " ".join(sentences).split() == kept
        assert record["article_text"] == [s for section in record["sections"] for s in section]
        text = " ".join(record["article_text"])
        for word, role in ((CAPTION_WORD, Role.CAPTION), (REFERENCE_WORD, Role.REFERENCE)):
            assert {roles[i] for i, w in enumerate(words) if word in w} == {role}
            assert word not in text  # dropped with its role
        assert record["abstract_text"] and " ".join(record["abstract_text"]) == row["abstract"]
        assert len(record["abstract_text"]) > 1  # sentences, not one string
        assert record["title"] == row["title"] and record["licence"] == row["licence"]


class CohanRelease(datasets.GeneratorBasedBuilder):  # type: ignore[misc]
    """A loader as `scientific_papers` and `ccdv/arxiv-summarization` are written: the
    release's `train.txt` / `val.txt` / `test.txt`, one JSON record a line; only `PATH`
    (where the release was unpacked) is ours."""

    PATH = ""
    VERSION = datasets.Version("1.1.1")

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(features=datasets.Features({
            "article": datasets.Value("string"), "abstract": datasets.Value("string"),
            "section_names": datasets.Value("string"), "sections": datasets.Value("string")}))

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=name, gen_kwargs={"path": os.path.join(
                    self.PATH, file)})
                for name, file in ((datasets.Split.TRAIN, "train.txt"),
                                   (datasets.Split.VALIDATION, "val.txt"),
                                   (datasets.Split.TEST, "test.txt"))]

    def _generate_examples(self, path: str) -> Iterator[tuple[str, dict[str, str]]]:
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                summary = "\n".join(d["abstract_text"]).replace("<S>", "").replace("</S>", "")
                yield d["article_id"], {
                    "article": "\n".join(d["article_text"]),
                    "abstract": summary,
                    "section_names": "\n".join(d["section_names"]),
                    "sections": "\n".join(" ".join(s).strip() for s in d["sections"]),
                }


def test_a_loader_of_the_original_release_reads_the_records(built: Path,
                                                            tmp_path: Path) -> None:
    CohanRelease.PATH = str(built / "local-cohan" / RELEASE_FOLDER)
    builder = CohanRelease(cache_dir=str(tmp_path / "cache"))
    builder.download_and_prepare()
    loaded = builder.as_dataset()
    parquet = datasets.load_dataset(str(built / "local-cohan"))
    assert {k: len(v) for k, v in loaded.items()} == {k: len(v) for k, v in parquet.items()}
    assert len(loaded) == 3  # every split holds papers
    mine = {r["article_id"]: r for split in parquet.values() for r in split}
    examples = [example for split in loaded.values() for example in split]
    assert len(examples) == len(mine)
    by_article = {"\n".join(r["article_text"]): r for r in mine.values()}
    for example in examples:
        record = by_article[example["article"]]
        assert example["abstract"] == "\n".join(record["abstract_text"])
        assert example["section_names"].split("\n") == record["section_names"]


def test_pubmed_writes_cohan_beside_its_own_views(tmp_path: Path) -> None:
    with SandboxServer() as server:
        box = PubmedSandbox(server, n_docs=6)
        config = write_config(tmp_path / "c.toml", box.client_config(), FAST)
        out = tmp_path / "data"
        result = CliRunner().invoke(main, ["pubmed", "--out", str(out), "--config", str(config),
                                           "--split-ids", str(box.write_split_dir(
                                               tmp_path / "splits")),
                                           "--view", "sumpubmed", "--view", "cohan"],
                                    catch_exceptions=False)
    assert result.exit_code == 0, result.output
    layout = published_splits(out / "pubmed")
    for view in ("sumpubmed", "cohan"):
        assert verify_dataset(out / f"pubmed-{view}") == []
        assert published_splits(out / f"pubmed-{view}") == layout  # same rows, same splits
    records = rows(out / "pubmed-cohan")
    assert all(record["article_text"] and record["section_names"]
               for record in records.values())
