"""The CLI's rough edges: option validation and help, quiet and verbose output, `status`."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import click

from loralay_build.cli import DEMO_DATASETS, demo, main
from loralay_build.errors import Reason
from loralay_build.records import Candidate
from loralay_build.sandbox import Sandbox
from loralay_build.state import FILTERED, State
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess
from tests.helpers.local import make_corpus, write_manifest


def test_demo_only_accepts_the_demo_datasets() -> None:
    with Sandbox(docs=5) as box:
        assert tuple(job.dataset for job in box.demo_builds()) == DEMO_DATASETS
    result = run_cli_in_process("demo", "--only", "hal-typo", "--out", "/nonexistent/demo")
    assert result.returncode == 2 and "hal-typo" in result.stderr
    assert not Path("/nonexistent/demo").exists()
    helptext = run_cli_in_process("demo", "--help").stdout
    assert all(name in helptext for name in DEMO_DATASETS)


def test_demo_options_have_help() -> None:
    options = [p for p in demo.params if isinstance(p, click.Option)]
    assert options and all(p.help for p in options), [p.name for p in options if not p.help]


def test_arxiv_pdf_version_does_not_shadow_the_global_version() -> None:
    assert "--pdf-version" in run_cli_in_process("arxiv", "--help").stdout
    assert run_cli_in_process("arxiv", "--version", "latest").returncode == 2
    version = run_cli_in_process("--version")
    assert version.returncode == 0 and "version" in version.stdout


def test_pubmed_from_help_is_about_pubmed() -> None:
    pubmed = main.commands["pubmed"]
    arxiv = main.commands["arxiv"]
    helps = {cmd.name: next(p.help for p in cmd.params if p.name == "from_")
             for cmd in (pubmed, arxiv)}
    assert "PMC" in (helps["pubmed"] or "")
    assert "v1" not in (helps["pubmed"] or "") and "snapshot" not in (helps["pubmed"] or "")
    assert "v1" in (helps["arxiv"] or "")


def local_args(tmp_path: Path, *flags: str) -> list[str]:
    """`build-corpus local` over two good PDFs and an HTML page posing as one."""
    docs = tmp_path / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    entries = make_corpus(docs, 2)
    (docs / "page.pdf").write_text("<html>not a pdf</html>")
    entries.append({"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x"}})
    manifest = write_manifest(docs / "docs.jsonl", entries)
    return ["local", "--input", str(manifest), "--out", str(tmp_path / "data"),
            "--executor", "serial", "--no-filter", *flags]


def test_verbose_logs_each_reject_with_its_reason(tmp_path: Path) -> None:
    result = run_cli_subprocess(*local_args(tmp_path, "-v"))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "local:html" in line]
    assert any("INFO" in line and "not_pdf" in line for line in lines), result.stderr
    quiet = run_cli_subprocess(*local_args(tmp_path / "again"))
    assert "local:html" not in quiet.stderr


def run_on_terminal(tmp_path: Path, *flags: str) -> str:
    """Run a local build with stderr on a pseudo-terminal; what the terminal showed."""
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "loralay_build.cli", *local_args(tmp_path, *flags)],
            stdout=subprocess.PIPE, stderr=secondary, timeout=240, check=False)
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(primary)
    assert result.returncode == 0
    return b"".join(chunks).decode(errors="replace")


def test_quiet_hides_progress_bars_on_a_terminal(tmp_path: Path) -> None:
    loud = run_on_terminal(tmp_path / "loud")
    assert "process" in loud and "doc" in loud  # a tqdm bar was drawn
    # -q leaves only the line on the document rejected for its record (the HTML page)
    quiet = run_on_terminal(tmp_path / "quiet", "-q").strip()
    assert quiet.startswith("local: 1 document(s) rejected for what their record gave (1 "
                            "not_pdf); their list: ") and "\n" not in quiet, quiet


def test_status_counts_add_up_and_last_run_is_local_time(tmp_path: Path) -> None:
    state = State(tmp_path)
    state.upsert([Candidate(id=f"x:{i}", source="x", source_id=str(i), dataset="d")
                  for i in range(5)])
    state.reject("d", "x:0", Reason.NOT_PDF, "html")
    state.reject("d", "x:1", Reason.UNAVAILABLE, "404")
    state.set_status("d", "x:2", FILTERED, reason=Reason.SUMMARY_TOO_SHORT.value, detail="3 words")
    run_id = state.start_run("d", "local --input m.jsonl")
    state.finish_run(run_id, 0, {})
    run = state.last_run("d")
    assert run is not None
    finished = run["finished"]
    state.close()
    result = run_cli_subprocess("status", str(tmp_path), "--json", env={"TZ": "Asia/Tokyo"})
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)["d"]
    assert sum(info["rejects"].values()) == info["statuses"]["rejected"] == 2
    assert sum(info["filtered"].values()) == info["statuses"]["filtered"] == 1
    text = run_cli_subprocess("status", str(tmp_path), env={"TZ": "Asia/Tokyo"}).stdout
    local = datetime.fromtimestamp(finished, ZoneInfo("Asia/Tokyo"))
    assert local.strftime("%Y-%m-%d %H:%M:%S+09:00") in text
    assert info["last_run"]["when_local"].endswith("+09:00")


def test_demo_expected_fault_logs_at_info_and_reports_writes(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    first = run_cli_subprocess("demo", "--only", "pubmed", "--docs", "12", "--out", str(out), "-v")
    assert first.returncode == 0, first.stderr
    token_lines = [x for x in first.stderr.splitlines() if "badResumptionToken" in x]
    assert token_lines and all(" INFO " in x for x in token_lines)
    assert "pubmed: written to" in first.stdout
    second = run_cli_subprocess("demo", "--only", "pubmed", "--docs", "12", "--out", str(out))
    assert second.returncode == 0, second.stderr
    assert "written to" not in second.stdout and "nothing new" in second.stdout
    assert "WARNING" not in second.stderr
