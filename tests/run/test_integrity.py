"""Across runs, datasets and failures: nothing lost, nothing stale, nothing that looks complete
when it is not (state per dataset, loadable small datasets, honest exit codes, checked input)."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loralay_build.blobs import atomic_write_bytes
from loralay_build.cli import DEMO_DATASETS
from loralay_build.corpus.writer import write_shard
from loralay_build.run.context import BuildRequest
from loralay_build.run.pipeline import Pipeline
from loralay_build.sandbox import Sandbox
from loralay_build.sources import load_settings
from loralay_build.state import State
from tests.helpers.cli import build_local, run_cli_in_process, run_cli_subprocess, write_toml
from tests.helpers.local import make_corpus, write_manifest
from tests.helpers.waits import DEADLINE, wait_for


def load_ids(folder: Path) -> list[str]:
    """Every article id `datasets.load_dataset(folder)` returns, over all splits."""
    import datasets

    loaded = datasets.load_dataset(str(folder), download_mode="force_redownload")
    return [i for split in loaded.values() for i in split["article_id"]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]]]:
    """Six real PDFs with their manifest entries (rendered once for the module)."""
    folder = tmp_path_factory.mktemp("docs")
    return folder, make_corpus(folder, 6)


def test_three_document_build_loads_with_datasets(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    folder, entries = corpus
    manifest = write_manifest(folder / "three.jsonl", entries[:3])
    out = tmp_path / "out"
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out),
                                "--workers", "1", "--no-filter")  # its warnings are checked
    assert result.returncode == 0, result.stderr
    assert "split is empty" in result.stderr
    build = json.loads((out / "local" / "build.json").read_text())
    figures = build["counts"]["splits"]
    assert sum(figures.values()) == 3
    card = (out / "local" / "README.md").read_text()
    for split, count in figures.items():
        assert (f"- split: {split}" in card) == (count > 0)
        assert f"| {split} | {count} |" in card
    assert sorted(load_ids(out / "local")) == [f"local:doc{i}" for i in range(3)]
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0


def test_two_datasets_share_an_output_root(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    folder, entries = corpus
    out = tmp_path / "out"
    first = write_manifest(folder / "a.jsonl", entries[:2])
    second = write_manifest(folder / "b.jsonl", entries[1:4])  # doc1 is in both
    assert build_local(first, out, "--name", "a").returncode == 0
    assert build_local(second, out, "--name", "b").returncode == 0
    state = State(out)
    assert [r.candidate.id for r in state.rows("a", ["published"])] == ["local:doc0",
                                                                        "local:doc1"]
    assert len(state.rows("b", ["published"])) == 3
    assert sorted(load_ids(out / "a")) == ["local:doc0", "local:doc1"]
    assert sorted(load_ids(out / "b")) == ["local:doc1", "local:doc2", "local:doc3"]
    # A dataset of another source is refused before any work, the folder left as it was.
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    other = run_cli_in_process("hal", "--out", str(out), "--name", "a")
    assert other.returncode == 2
    assert "built from 'local'" in other.stderr and "Traceback" not in other.stderr
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


def test_reports_follow_a_changed_reject(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    folder, entries = corpus
    docs = tmp_path / "docs"
    docs.mkdir()
    for entry in entries[:2]:
        (docs / str(entry["pdf"])).write_bytes((folder / str(entry["pdf"])).read_bytes())
    late: dict[str, object] = {"id": "late", "pdf": "late.pdf", "language": "fr",
            "abstracts": {"fr": "une phrase qui ne figure nulle part dans ce document publié"}}
    manifest = write_manifest(docs / "m.jsonl", [*entries[:2], late])
    out = tmp_path / "out"
    assert build_local(manifest, out).returncode == 0
    dataset = out / "local"
    rejects = (dataset / "rejects.jsonl").read_text()
    assert '"unavailable"' in rejects
    shards = {(p.stat().st_ino, p.stat().st_mtime_ns) for p in dataset.glob("*.parquet")}
    # The missing file appears (another document's PDF: its abstract is not in it).
    (docs / "late.pdf").write_bytes((folder / str(entries[3]["pdf"])).read_bytes())
    assert build_local(manifest, out).returncode == 0
    assert State(out).reason_counts("local") == {"abstract_not_found": 1}
    assert json.loads((dataset / "rejects.jsonl").read_text())["reason"] == "abstract_not_found"
    build = json.loads((dataset / "build.json").read_text())
    assert build["counts"]["rejects"] == {"abstract_not_found": 1}
    assert "`abstract_not_found`: 1" in (dataset / "README.md").read_text()
    # Only the reports changed: the shards were not rewritten (only linked under new names).
    assert {(p.stat().st_ino, p.stat().st_mtime_ns) for p in dataset.glob("*.parquet")} == shards


def test_published_files_follow_the_umask(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    folder, entries = corpus
    manifest = write_manifest(folder / "umask.jsonl", entries[:1])
    previous = os.umask(0o022)
    try:
        assert build_local(manifest, tmp_path / "out").returncode == 0
    finally:
        os.umask(previous)
    published = [p for p in (tmp_path / "out" / "local").iterdir()]
    assert published
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in published} == {
        p.name: 0o644 for p in published}


def test_nothing_published_exits_1_unless_allowed(tmp_path: Path) -> None:
    (tmp_path / "page.pdf").write_text("<html>not a pdf</html>")
    rejected = write_manifest(tmp_path / "m.jsonl", [
        {"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y"}}])
    result = build_local(rejected, tmp_path / "out")
    assert result.returncode == 1
    lines = sorted(result.stderr.strip().splitlines())
    assert len(lines) == 2 and "no document published" in lines[1]
    assert "1 document(s) rejected for what their record gave (1 not_pdf)" in lines[0]
    assert build_local(rejected, tmp_path / "out", "--allow-empty").returncode == 0
    run = State(tmp_path / "out").last_run("local")
    assert run is not None and run["exit_code"] == 0


def test_every_document_rejected_exits_1(tmp_path: Path) -> None:
    (tmp_path / "page.pdf").write_text("<html>not a pdf</html>")
    manifest = write_manifest(tmp_path / "m.jsonl", [
        {"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y"}}])
    result = build_local(manifest, tmp_path / "out")
    assert result.returncode == 1
    assert "no document published (1 rejected" in result.stderr


def one_line_usage_error(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert all(w in result.stderr for w in words), result.stderr


def test_bad_out_is_one_line_and_exit_2(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "m.jsonl", [])
    regular = tmp_path / "file"
    regular.write_text("x")
    one_line_usage_error(build_local(manifest, regular), "not a folder")
    # /sys refuses new folders even to root; a read-only folder refuses other users.
    one_line_usage_error(build_local(manifest, Path("/sys/loralay-out")),
                         "/sys is not a writable folder")
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        one_line_usage_error(build_local(manifest, locked), "not writable")


def test_local_manifest_validation(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    entry = {"id": "a", "pdf": "a.pdf", "language": "fr", "abstracts": {"fr": "x"}}
    out = tmp_path / "out"
    outside = write_manifest(docs / "outside.jsonl", [{**entry, "pdf": "../secret.pdf"}])
    one_line_usage_error(build_local(outside, out), "outside the manifest's folder")
    absolute = write_manifest(docs / "abs.jsonl", [{**entry, "pdf": "/etc/passwd"}])
    one_line_usage_error(build_local(absolute, out), "outside the manifest's folder")
    # Allowed on request: the file is then read (and rejected, not a PDF).
    allowed = build_local(absolute, out, "--allow-outside")
    assert allowed.returncode == 1 and "no document published" in allowed.stderr
    bad_language = write_manifest(docs / "lang.jsonl", [{**entry, "language": "french"}])
    one_line_usage_error(build_local(bad_language, out), "ISO 639-1", "french")
    one_line_usage_error(build_local(docs, out), "--input", "directory")


def test_bom_manifest_and_abstract_in_another_language(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path
) -> None:
    folder, entries = corpus
    english_only = {**entries[1], "id": "en-only", "abstracts": {"en": "only English"}}
    manifest = folder / "bom.jsonl"
    manifest.write_text("".join(json.dumps(e) + "\n" for e in [entries[0], english_only]),
                        encoding="utf-8-sig")
    out = tmp_path / "out"
    assert build_local(manifest, out).returncode == 0
    [reject] = [json.loads(x) for x in (out / "local" / "rejects.jsonl").read_text().splitlines()]
    assert reject["id"] == "local:en-only"
    assert reject["detail"] == "abstracts only in en, none in the declared language fr"


def test_configuration_is_checked_before_work(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "m.jsonl", [])
    out = tmp_path / "out"
    workers = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out),
                                 env={"LORALAY_RUN__WORKERS": "0"})
    one_line_usage_error(workers, "workers = 0: must be at least 1")
    typo = write_toml(tmp_path / "typo.toml", {"source": {"serch_url": "http://x"}})
    result = run_cli_in_process("hal", "--out", str(out), "--config", str(typo))
    one_line_usage_error(result, "unknown [source] key(s) for hal: serch_url", "search_url")
    parser = write_toml(tmp_path / "parser.toml", {"parse": {"backend": "pdfminer"}})
    one_line_usage_error(build_local(manifest, out, "--config", str(parser)),
                         "backend must be one of")
    one_line_usage_error(run_cli_in_process("pubmed", "--out", str(out), "--from", "2024-13-01"),
                         "--from", "2024-13-01")
    assert not (out / "local").exists() and not (out / "pubmed").exists()


def test_every_shipped_source_config_passes_its_own_key_check() -> None:
    from loralay_build.sources import load_settings

    for name in ("arxiv", "hal", "koreascience", "local", "pubmed", "scielo"):
        assert load_settings(name, environ={}).source  # raises on an undeclared key


@pytest.fixture
def fake_pdftotext(tmp_path: Path) -> Iterator[Path]:
    """A `pdftotext` that fails on every file, first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "pdftotext"
    tool.write_text("#!/bin/sh\nexit 1\n")
    tool.chmod(0o755)
    yield bin_dir


def test_missing_program_is_exit_2_and_retry_requeues(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path, fake_pdftotext: Path
) -> None:
    folder, entries = corpus
    manifest = write_manifest(folder / "poppler.jsonl", entries[:2])
    out = tmp_path / "out"
    no_path = build_local(manifest, out, "--parser", "poppler", env={"PATH": str(tmp_path)})
    one_line_usage_error(no_path, "pdftotext", "poppler-utils")
    assert not (out / "local").exists()
    # A broken program rejects every document; once fixed, `retry` queues them again.
    broken = {"PATH": f"{fake_pdftotext}:{os.environ['PATH']}"}
    failed = build_local(manifest, out, "--parser", "poppler", env=broken)
    assert failed.returncode == 1
    assert State(out).reason_counts("local") == {"corrupted": 2}
    retry = run_cli_in_process("retry", str(out), "--dataset", "local", "--reason",
                               "corrupted,timeout")
    assert retry.returncode == 0 and "2 document(s) queued again" in retry.stdout
    fixed = build_local(manifest, out, "--parser", "poppler")
    assert fixed.returncode == 0, fixed.stderr
    assert State(out).status_counts("local") == {"published": 2}
    unknown = run_cli_in_process("retry", str(out), "--dataset", "local", "--reason", "corupted")
    assert unknown.returncode == 2 and "corupted" in unknown.stderr


def test_sigterm_stops_like_ctrl_c(tmp_path: Path) -> None:
    with Sandbox(docs=12, seed=11) as box:
        overlay = box.hal.client_config()
        overlay["run"] = {"workers": 1}
        overlay["http"]["min_interval"] = 0.3  # slow enough to be caught mid-download
        config = write_toml(tmp_path / "hal.toml", overlay)
        out = tmp_path / "out"
        proc = subprocess.Popen(
            [sys.executable, "-m", "loralay_build.cli", "hal", "--out", str(out),
             "--config", str(config)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: len(box.server.requests("/_host/")) >= 2 or proc.poll() is not None,
                 "second download")
        assert proc.poll() is None, "the build ended before the signal"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 130, err
    assert "terminated (SIGTERM)" in err and "Traceback" not in err
    run = State(out).last_run("hal")
    assert run is not None and run["exit_code"] == 130 and run["finished"]


def _pipeline(manifest: Path, out: Path) -> tuple[Pipeline, State]:
    """An in-process local build: serial, one document per shard, every split populated."""
    settings = load_settings("local", environ={}, overrides={
        "source": {"input": str(manifest)}, "run": {"executor": "serial"},
        "output": {"shard_rows": 1, "rows_per_file": 1}, "filters": {"enabled": False},
        "split": {"train": 0.5, "validation": 0.25, "test": 0.25}})
    state = State(out)
    return Pipeline(BuildRequest("local", "local", settings), state), state


@pytest.mark.parametrize("crash_at", ["shards", "rejects.jsonl", "README.md", "build.json",
                                      "cleanup"])
def test_interrupted_republish_leaves_one_complete_set(
    corpus: tuple[Path, list[dict[str, object]]], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    folder, entries = corpus
    manifest = folder / f"crash-{crash_at}.jsonl"
    out = tmp_path / "out"
    write_manifest(manifest, entries[:4])
    pipeline, state = _pipeline(manifest, out)
    assert pipeline.run() == 0
    old = sorted(load_ids(out / "local"))
    retitled = {**entries[0], "title": "A new title"}  # its shard is replaced, not kept
    write_manifest(manifest, [retitled, *entries[1:]])
    pipeline, state = _pipeline(manifest, out)

    def crash(*args: object) -> None:
        raise KeyboardInterrupt

    real_write_shard, real_atomic, real_unlink = write_shard, atomic_write_bytes, Path.unlink
    if crash_at == "shards":  # the first shard is written, the second is not
        calls: list[object] = []

        def shard_then_crash(*args: Any) -> Any:
            calls.append(args[0])
            return real_write_shard(*args) if len(calls) == 1 else crash()

        monkeypatch.setattr("loralay_build.corpus.publish.write_shard", shard_then_crash)
    elif crash_at == "cleanup":
        monkeypatch.setattr(Path, "unlink", lambda p, missing_ok=False: crash()
                            if p.suffix == ".parquet" else real_unlink(p, missing_ok))
    else:
        monkeypatch.setattr("loralay_build.corpus.publish.atomic_write_bytes",
                            lambda p, data: crash() if p.name == crash_at
                            else real_atomic(p, data))
    with pytest.raises(KeyboardInterrupt):
        pipeline.run()
    monkeypatch.undo()
    loaded = load_ids(out / "local")
    assert len(loaded) == len(set(loaded))
    new = sorted(f"local:{e['id']}" for e in entries)
    switched = crash_at in ("build.json", "cleanup")  # the card is written before build.json
    assert sorted(loaded) == (new if switched else old)
    # The state never calls published what the files do not hold.
    assert {r.candidate.id for r in state.rows("local", ["published"])} <= set(loaded)
    state.close()
    pipeline, state = _pipeline(manifest, out)
    assert pipeline.run() == 0
    assert sorted(load_ids(out / "local")) == new
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    build = json.loads((out / "local" / "build.json").read_text())
    assert sorted(p.name for p in (out / "local").glob("*.parquet")) == sorted(
        f["name"] for f in build["files"])


def test_every_demo_dataset_loads_with_datasets(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = run_cli_in_process("demo", "--out", str(out), "--docs", "8")
    assert result.returncode == 0, result.stderr
    printed = re.findall(r"load_dataset\('([^']+)'\)", result.stdout)
    views = ["pubmed-sumpubmed", "pubmed-citations"]  # built alongside the pubmed dataset
    assert sorted(Path(p).name for p in printed) == sorted([*DEMO_DATASETS, *views])
    for folder in printed:
        build = json.loads((Path(folder) / "build.json").read_text())
        assert len(load_ids(Path(folder))) == sum(build["counts"]["splits"].values()) > 0
