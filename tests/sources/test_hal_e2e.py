"""`build-corpus hal` end to end against the HAL sandbox, through the real CLI."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import pyarrow.parquet as pq

from loralay_build.config import builtin_config
from loralay_build.corpus.schema import dataset_schema
from loralay_build.sandbox import Sandbox
from loralay_build.sandbox.hal import OUTAGE
from loralay_build.sandbox.server import Reply, Request
from loralay_build.sources.hal import HalSource
from loralay_build.state import State
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess, write_toml
from tests.helpers.cli_runner import assert_dataset_schema, published_splits
from tests.helpers.waits import wait_for

EXPECTED_REJECTS = {
    "scan": "needs_ocr",
    "broken_font": "needs_ocr",
    "html": "not_pdf",
    "missing": "unavailable",
    "forbidden": "unavailable",
}


def shard_bytes(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*-of-*.parquet"))}


def file_requests(sandbox: Sandbox) -> int:
    return len(sandbox.server.requests("/_host/"))


def test_fresh_build_then_noop_rerun(sandbox: Sandbox, hal_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    result = run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config))
    assert result.returncode == 0, result.stderr
    folder = out / "hal"
    rejects = {
        json.loads(line)["id"]: json.loads(line)["reason"]
        for line in (folder / "rejects.jsonl").read_text().splitlines()
    }
    records = sandbox.hal.records
    for docid, record in records.items():
        cid = f"hal:{docid}"
        if record.fields["submitType_s"] != "file" or record.fields["language_s"] != ["fr"] or \
                record.fields["docType_s"] not in ("ART", "COMM"):
            assert cid not in rejects  # excluded by the search filters, never seen
        elif record.behaviour in EXPECTED_REJECTS:
            assert rejects[cid] == EXPECTED_REJECTS[record.behaviour]
        elif "fr_abstract_s" not in record.fields:
            assert rejects[cid] == "abstract_missing_in_metadata"
        elif record.behaviour in ("throttled", "unavailable", "truncated", "legacy"):
            # Transient faults are retried within the run; the document is not lost to them.
            assert rejects.get(cid) in (None, "too_many_pages", "summary_too_short")
    assert "language_mismatch" in rejects.values()
    assert "abstract_not_found" not in rejects.values()  # column-crossing abstracts included
    # Excluded records were never downloaded, and nothing escaped to a real host.
    assert all(e.path.startswith(("/search/", "/_host/")) for e in sandbox.server.requests())

    build = json.loads((folder / "build.json").read_text())
    assert_dataset_schema(folder, HalSource, unfilled=("doi",))  # none in the sandbox
    tables = {p.name: pq.read_table(p) for p in folder.glob("*-of-*.parquet")}
    assert all(t.schema.equals(dataset_schema(HalSource.columns)) for t in tables.values())
    assert sum(t.num_rows for t in tables.values()) == sum(build["counts"]["splits"].values())
    ids = [i for t in tables.values() for i in t.column("article_id").to_pylist()]
    assert len(ids) == len(set(ids)) > 0
    for table in tables.values():
        for row in table.to_pylist():
            assert len(row["article_words"]) == len(row["article_bboxes"]) == len(
                row["word_pages"]) == len(row["article_norm_bboxes"])
            assert all(0 <= v <= 1000 for box in row["article_norm_bboxes"] for v in box)
            assert row["lang_detected"] == "fr"
            record = records[int(row["article_id"].split(":")[1])]
            if record.behaviour != "no_cover":  # the cover page is dropped, its index kept
                assert min(row["word_pages"]) >= 1 and len(row["page_sizes"]) >= 2
            main = next(m for m in row["matches"] if m["lang"] == "fr")
            assert main["found"]
            assert {a["lang"] for a in row["abstracts"]} == {"fr", "en"}
            assert "<i>" not in row["abstract"]

    before = shard_bytes(folder)
    mtimes = {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")}
    downloads = file_requests(sandbox)
    again = run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config))
    assert again.returncode == 0, again.stderr
    assert file_requests(sandbox) == downloads
    assert shard_bytes(folder) == before
    assert {p.name: p.stat().st_mtime_ns for p in folder.glob("*.parquet")} == mtimes

    status = run_cli_in_process("status", str(out), "--json")
    report = json.loads(status.stdout)["hal"]
    assert report["statuses"]["published"] == sum(build["counts"]["splits"].values())
    assert report["rejects"]["not_pdf"] == 1
    assert report["last_run"]["exit_code"] == 0


def test_incremental_run_fetches_only_new_records(
    sandbox: Sandbox, hal_config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "data"
    assert run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config)).returncode == 0
    before = file_requests(sandbox)
    new_ids = sandbox.hal.add_documents(3)
    result = run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config))
    assert result.returncode == 0, result.stderr
    fetched = {e.path.split("/")[3] for e in sandbox.server.requests("/_host/")[before:]}
    assert fetched == {sandbox.hal.records[i].hal_id for i in new_ids}
    last_search = sandbox.server.requests("/search/")[-1].query
    assert "modifiedDate_tdate" in last_search
    state = State(out)
    published = {r.candidate.id for r in state.rows("hal", ["published", "filtered"])}
    assert {f"hal:{i}" for i in new_ids} <= published
    # --since after every modification discovers nothing.
    searches = len(sandbox.server.requests("/search/"))
    late = run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config), "--since",
                              "2030-01")
    assert late.returncode == 0
    assert len(sandbox.server.requests("/search/")) == searches + 1


def test_limit_stops_discovery(sandbox: Sandbox, hal_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    assert run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config), "--limit",
                              "3").returncode == 0
    assert sum(State(out).status_counts("hal").values()) == 3


def test_overlapping_run_exits_75(hal_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "data"
    with State(out).lock("hal"):
        result = run_cli_in_process("hal", "--out", str(out), "--config", str(hal_config))
    assert result.returncode == 75
    assert "another run" in result.stderr


def _requested_or_ended(box: Sandbox, threshold: int, proc: subprocess.Popen[bytes]) -> bool:
    return file_requests(box) >= threshold or proc.poll() is not None


def test_kill_9_then_resume_gives_identical_shards(tmp_path: Path) -> None:
    with Sandbox(docs=12, seed=11) as reference:
        overlay = reference.hal.client_config()
        overlay["run"] = {"workers": 1}
        cfg = write_toml(tmp_path / "ref.toml", overlay)
        assert run_cli_subprocess("hal", "--out", str(tmp_path / "ref"), "--config",
                                  str(cfg)).returncode == 0
    with Sandbox(docs=12, seed=11) as box:
        overlay = box.hal.client_config()
        overlay["run"] = {"workers": 1}
        cfg = write_toml(tmp_path / "kill.toml", overlay)
        out = tmp_path / "killed"
        args = [sys.executable, "-m", "loralay_build.cli", "hal", "--out", str(out),
                "--config", str(cfg)]
        for threshold in (3, 9):  # once mid-download, once later (download or processing)
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for(partial(_requested_or_ended, box, threshold, proc),
                     f"request {threshold} for a PDF")
            assert proc.poll() is None, "the build ended before the kill"
            proc.send_signal(signal.SIGKILL)
            assert proc.wait() == -signal.SIGKILL
        final = run_cli_subprocess("hal", "--out", str(out), "--config", str(cfg))
        assert final.returncode == 0, final.stderr
    assert shard_bytes(out / "hal") == shard_bytes(tmp_path / "ref" / "hal")
    resumed = json.loads((out / "hal" / "build.json").read_text())
    clean = json.loads((tmp_path / "ref" / "hal" / "build.json").read_text())
    # Only the sandbox's port (inside the URL rewrites) differs between the two configs.
    assert resumed.pop("config_hash") != clean.pop("config_hash")
    assert resumed == clean


def test_a_kill_after_the_first_page_loses_no_record(tmp_path: Path) -> None:
    """The high-water mark is saved only after a full pass: modification dates do not follow
    the cursor's docid order, so a mark taken from the first page would hide the older-dated
    records of later pages from every later run."""
    with Sandbox(docs=20, seed=5, faults=False) as box:
        overlay = box.hal.client_config()
        overlay["run"] = {"workers": 1}
        cfg = write_toml(tmp_path / "c.toml", overlay)
        out = tmp_path / "out"
        second_page, release = threading.Event(), threading.Event()
        search = dict(box.server.routes)["/search/"]

        def gated(req: Request) -> Reply:
            if req.arg("cursorMark") not in ("", "*"):
                second_page.set()
                release.wait(30)
            return search(req)

        box.server.routes = [(p, gated if p == "/search/" else h) for p, h in box.server.routes]
        proc = subprocess.Popen(
            [sys.executable, "-m", "loralay_build.cli", "hal", "--out", str(out),
             "--config", str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert second_page.wait(60), "the build never asked for a second page"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
        release.set()
        assert run_cli_subprocess("hal", "--out", str(out), "--config", str(cfg)).returncode == 0
        query = [("q", "*:*"), ("rows", "1000"), ("fl", "docid")]
        query += [("fq", clause) for clause in builtin_config("hal")["source"]["filters"]]
        answer = search(Request("GET", "/search/", query, {}))
        listed = {f"hal:{doc['docid']}" for doc in json.loads(answer.body)["response"]["docs"]}
    state = State(out)
    try:
        discovered = {row.candidate.id for row in state.rows("hal")}
    finally:
        state.close()
    assert len(listed) > 20
    assert listed - discovered == set()


def test_output_loads_with_datasets(sandbox: Sandbox, hal_config: Path, tmp_path: Path) -> None:
    import datasets

    out = tmp_path / "data"
    result = run_cli_subprocess("hal", "--out", str(out), "--config", str(hal_config))
    assert result.returncode == 0, result.stderr
    loaded = datasets.load_dataset(str(out / "hal"))
    counts = json.loads((out / "hal" / "build.json").read_text())["counts"]["splits"]
    # Too few documents for validation and test: they are left out, with a warning.
    assert counts["train"] and not counts["validation"] and not counts["test"]
    assert "validation split is empty" in result.stderr
    assert {k: v.num_rows for k, v in loaded.items()} == {"train": counts["train"]}
    features = loaded["train"].features
    assert features["article_norm_bboxes"].feature.length == 4
    assert features["word_pages"].feature.dtype == "int16"
    row = loaded["train"][0]
    assert row["article_words"] and row["abstract"]


def test_partial_build_then_completed_has_the_splits_of_a_complete_build(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    overlay = sandbox.hal.client_config()
    overlay["run"] = {"workers": 1, "timeout": 30.0}
    overlay["http"].update(backoff_base=0.05, backoff_max=0.1)
    overlay["filters"] = {"enabled": False}  # percentiles of a partial set would differ
    overlay["split"] = {"train": 0.6, "validation": 0.2, "test": 0.2}
    config = write_toml(tmp_path / "hal.toml", overlay)
    whole = tmp_path / "whole"
    assert run_cli_in_process("hal", "--out", str(whole), "--config", str(config)).returncode == 0
    expected = published_splits(whole / "hal")
    evaluated = [sandbox.hal.records[int(cid.split(":")[1])]
                 for cid, split in expected.items() if split != "train"]
    assert evaluated
    behaviours = {record.docid: record.behaviour for record in evaluated}
    for record in evaluated:  # the newest documents' host is down during the first build
        record.behaviour = OUTAGE
    out = tmp_path / "partial"
    first = run_cli_in_process("hal", "--out", str(out), "--config", str(config))
    assert first.returncode == 3, first.stderr
    partial = published_splits(out / "hal")
    assert partial and {cid: expected.get(cid) for cid in partial} == partial
    for record in evaluated:
        record.behaviour = behaviours[record.docid]
    assert run_cli_in_process("hal", "--out", str(out), "--config", str(config)).returncode == 0
    assert published_splits(out / "hal") == expected
