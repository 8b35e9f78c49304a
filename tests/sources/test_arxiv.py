"""arXiv source: ids, metadata layouts, split files, and `build-corpus arxiv` end to end
against the arXiv sandbox (snapshot, OAI-PMH incremental, Atom lookups)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loralay_build.sandbox.arxiv import ArxivSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.arxiv import ArxivSource
from loralay_build.sources.arxiv.files import bucket_prefix
from loralay_build.sources.arxiv.meta import from_kaggle, normalise_id
from loralay_build.sources.presets import read_split_dir
from loralay_build.state import State
from tests.helpers.cli_runner import (
    FAST,
    assert_dataset_schema,
    invoke_cli,
    published_splits,
    rejects,
    rows,
    status,
    write_config,
)


def test_ids_are_normalised_with_the_slash_put_back() -> None:
    assert normalise_id("astro-ph9702020") == "astro-ph/9702020"
    assert normalise_id("quant-ph/0201082v1") == "quant-ph/0201082"
    assert normalise_id("math.GT0309136") == "math.GT/0309136"
    assert normalise_id("arXiv:1412.6980v9") == "1412.6980"
    assert normalise_id("oai:arXiv.org:0704.0001") == "0704.0001"
    assert normalise_id("abc") is None


def test_bucket_prefix_uses_the_archive_folder() -> None:
    assert bucket_prefix("0906.5594") == "arxiv/arxiv/pdf/0906/0906.5594v"
    assert bucket_prefix("quant-ph/0602109") == "arxiv/quant-ph/pdf/0602/0602109v"
    assert bucket_prefix("math.GT/0309136") == "arxiv/math/pdf/0309/0309136v"


def test_both_snapshot_layouts_give_the_same_record() -> None:
    common = {"id": "0704.0002", "title": "Sparsity-certifying\n  Graph Decompositions",
              "abstract": "  We describe 45\\% of\nthe graphs.\n"}
    old = from_kaggle({**common, "categories": ["math.CO cs.CG"], "versions": ["v1", "v2"],
                       "versions_dates": ["Sat, 31 Mar 2007 02:26:18 GMT",
                                          "Sat, 13 Dec 2008 17:26:00 GMT"]})
    new = from_kaggle({**common, "categories": "math.CO cs.CG", "versions": [
        {"version": "v1", "created": "Sat, 31 Mar 2007 02:26:18 GMT"},
        {"version": "v2", "created": "Sat, 13 Dec 2008 17:26:00 GMT"}]})
    assert old == new
    assert old is not None
    assert old.created == "2007-03-31" and old.version == 2
    assert old.categories == ["math.CO", "cs.CG"]
    assert old.title == "Sparsity-certifying Graph Decompositions"
    assert old.abstract == "We describe 45\\% of the graphs."


def test_split_files_of_every_shape(tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text('{"article_id": "astro-ph9702020"}\n')
    (tmp_path / "val.txt").write_text("1001.0063\n\n")
    (tmp_path / "test.json").write_text('{"article_id": "1412.6980"}\n')
    (tmp_path / "notes.md").write_text("ignored")
    assert read_split_dir(tmp_path, normalise_id) == {
        "astro-ph/9702020": "train", "1001.0063": "validation", "1412.6980": "test",
    }


@pytest.fixture
def arxiv_box() -> Iterator[ArxivSandbox]:
    with SandboxServer() as server:
        yield ArxivSandbox(server, n_docs=8)


def test_snapshot_build_keeps_original_splits(arxiv_box: ArxivSandbox, tmp_path: Path) -> None:
    snapshot = arxiv_box.write_snapshot(tmp_path / "snapshot.jsonl")
    splits = arxiv_box.write_split_dir(tmp_path / "splits")
    unlisted = [p.id for p in arxiv_box.papers.values() if not p.split]
    (tmp_path / "ids.txt").write_text("".join(i + "\n" for i in unlisted))
    config = write_config(tmp_path / "c.toml", arxiv_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("arxiv", "--out", str(out), "--config", str(config), "--metadata",
                        str(snapshot), "--split-ids", str(splits), "--ids",
                        str(tmp_path / "ids.txt"))
    assert result.exit_code == 0, result.output
    assert_dataset_schema(out / "arxiv", ArxivSource, unfilled=("doi",))  # none in the sandbox
    published = published_splits(out / "arxiv")
    for paper in arxiv_box.papers.values():
        article_id = f"arxiv:{paper.id}"
        if paper.behaviour == "robot":
            assert rejects(out / "arxiv")[article_id] == "blocked"
        elif paper.split:
            assert published[article_id] == paper.split, paper.id
        else:
            assert article_id in published  # not in any list: the chronological rule
    assert status(out, "arxiv")["rejects"] == {"blocked": 1}
    build = json.loads((out / "arxiv" / "build.json").read_text())
    assert build["counts"]["cleaner_removed_words"]["arxiv_stamp"] >= 5 * len(published)
    # The stamp and the LaTeX-converted abstract are gone from the words; `%` did not truncate.
    row = rows(out / "arxiv")["arxiv:1801.10000"]
    assert row["abstract"].endswith("Gains reach 12% on 3–5 day windows.")
    assert not any(w.startswith("arXiv:") for w in row["article_words"])
    state = State(out)
    try:
        chosen = {r.candidate.source_id: r.candidate for r in state.rows("arxiv")}
    finally:
        state.close()
    old_style = chosen["hep-th/0101001"]  # two versions, the newest missing from the bucket
    assert (old_style.extra["version"], old_style.extra["host"]) == (1, "gcs")
    assert old_style.extra["cohan_id"] == "hep-th0101001"
    assert chosen["1803.10002"].extra["host"] == "export"


def test_oai_incremental_runs_are_paced_and_add_only_new_records(
    arxiv_box: ArxivSandbox, tmp_path: Path
) -> None:
    interval = 0.3
    config = write_config(tmp_path / "c.toml", arxiv_box.client_config(),
                          {"http": {"min_interval": interval}}, FAST)
    out = tmp_path / "data"
    args = ("arxiv", "--out", str(out), "--config", str(config), "--oai", "--categories", "cs")
    first = invoke_cli(*args)
    assert first.exit_code == 0, first.output
    oai = arxiv_box.server.requests("/arxiv/oai")
    assert [e.status for e in oai][:1] == [503]  # flow control, honoured
    assert any("badResumptionToken" not in e.query and "resumptionToken" in e.query for e in oai)
    gaps = [b.time - a.time for a, b in itertools.pairwise(oai)]
    # Arrival times carry the loaded machine's scheduling jitter; the pacing shows in the
    # mean gap, and no two requests arrive together.
    assert sum(gaps) / len(gaps) >= interval - 0.05 and min(gaps) >= interval / 2, gaps
    known = status(out, "arxiv")["statuses"]
    new_ids = arxiv_box.add_papers(3)
    cs_new = [i for i in new_ids if arxiv_box.papers[i].categories[0].startswith("cs")]
    before = len(arxiv_box.server.requests("/arxiv/oai"))
    second = invoke_cli(*args)
    assert second.exit_code == 0, second.output
    again = arxiv_box.server.requests("/arxiv/oai")[before:]
    mark = max(p.datestamp for p in arxiv_box.papers.values() if p.id not in new_ids)
    assert f"from={mark}" in again[0].query
    run = status(out, "arxiv")
    assert run["last_run"]["counts"]["new"] == len(cs_new)
    assert sum(run["statuses"].values()) == sum(known.values()) + len(cs_new)


def test_id_list_uses_the_atom_api_through_its_rate_limit(
    arxiv_box: ArxivSandbox, tmp_path: Path
) -> None:
    (tmp_path / "ids.txt").write_text("1801.10000\nhep-th0101001\n")
    config = write_config(tmp_path / "c.toml", arxiv_box.client_config(), FAST)
    out = tmp_path / "data"
    result = invoke_cli("arxiv", "--out", str(out), "--config", str(config), "--ids",
                        str(tmp_path / "ids.txt"), "--pdf-version", "metadata")
    assert result.exit_code == 0, result.output
    assert [e.status for e in arxiv_box.server.requests("/arxiv/api/query")] == [429, 200]
    assert set(published_splits(out / "arxiv")) == {"arxiv:1801.10000", "arxiv:hep-th/0101001"}
    # `metadata` policy: the abstract's version (v2), fetched from the export host.
    assert len(arxiv_box.server.requests("/_host/export.arxiv.org/pdf/hep-th/0101001v2")) == 1


def test_an_older_pdf_is_matched_against_its_own_abstract(arxiv_box: ArxivSandbox,
                                                          tmp_path: Path) -> None:
    revised = [p for p in arxiv_box.papers.values() if len(p.created) > 1 and p.behaviour == "ok"]
    for paper in revised:
        paper.behaviour = "latest_missing"  # v2 in the metadata, only v1 in the bucket
    snapshot = arxiv_box.write_snapshot(tmp_path / "snapshot.jsonl")
    config = write_config(tmp_path / "c.toml", arxiv_box.client_config(), FAST)
    out = tmp_path / "data"
    args = ("arxiv", "--out", str(out), "--config", str(config), "--metadata", str(snapshot))
    assert invoke_cli(*args).exit_code == 0
    published = rows(out / "arxiv")
    paper = arxiv_box.papers["hep-th/0101001"]
    assert paper.behaviour == "latest_missing" and paper.printed(1) != paper.printed(2)
    for older in [paper, *revised]:
        row = published[f"arxiv:{older.id}"]
        assert row["version"] == 1 and row["abstract"] == older.printed(1)
        assert row["matches"][0]["found"]
    row = published["arxiv:hep-th/0101001"]
    for other in arxiv_box.papers.values():
        if other.behaviour == "ok":  # the version the metadata describes
            assert published[f"arxiv:{other.id}"]["version"] == len(other.created)

    def versioned() -> list[str]:
        return [e.query for e in arxiv_box.server.requests("/arxiv/api/query")
                if e.status == 200 and "0101001v1" in e.query]

    assert revised and len(versioned()) == 1  # one request for every older version
    assert all(f"{p.id}v1" in versioned()[0] for p in revised)
    assert invoke_cli(*args).exit_code == 0  # the state keeps v1's abstract: not asked again
    assert len(versioned()) == 1
    assert rows(out / "arxiv")["arxiv:hep-th/0101001"] == row


def test_an_earlier_crawl_supplies_the_abstract_of_the_version_used(
        arxiv_box: ArxivSandbox, tmp_path: Path) -> None:
    paper = arxiv_box.papers["hep-th/0101001"]  # only v1 in the bucket
    lines = [json.loads(line) for line in arxiv_box.snapshot_lines()]
    record = next(r for r in lines if r["id"] == paper.id)
    record["abstract"] = paper.latex(1)  # the snapshot of when v1 was the newest
    for key in ("versions", "versions_dates"):  # either snapshot layout
        if key in record:
            record[key] = record[key][:1]
    snapshot = tmp_path / "snapshot.jsonl"
    snapshot.write_text("".join(json.dumps(r) + "\n" for r in lines))
    config = write_config(tmp_path / "c.toml", arxiv_box.client_config(), FAST)
    out = tmp_path / "data"
    args = ("arxiv", "--out", str(out), "--config", str(config), "--metadata", str(snapshot))
    assert invoke_cli(*args).exit_code == 0
    first = rows(out / "arxiv")["arxiv:hep-th/0101001"]
    assert first["version"] == 1 and first["abstract"] == paper.printed(1)
    arxiv_box.write_snapshot(snapshot)  # v2 announced, its PDF not in the bucket
    assert invoke_cli(*args).exit_code == 0
    assert not [e for e in arxiv_box.server.requests("/arxiv/api/query") if "v1" in e.query]
    assert rows(out / "arxiv")["arxiv:hep-th/0101001"] == first
