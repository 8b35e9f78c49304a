"""The hint about documents waiting for OCR: its estimate is in the unit that fits, and the
command it names runs: `demo` takes `--ocr` like every building command, and running the
hinted command reads the documents."""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

from loralay_build.estimates import cpu_time
from loralay_build.parse.ocr import ocr_hint
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess
from tests.helpers.ocr import needs_tesseract


def test_estimates_are_in_the_unit_that_fits() -> None:
    assert cpu_time(0.2) == "about 1 CPU-s"
    assert cpu_time(25) == "about 25 CPU-s"
    assert cpu_time(89) == "about 89 CPU-s"
    assert cpu_time(720) == "about 12 CPU-min"
    assert cpu_time(3 * 3600 + 1800) == "about 3.5 CPU-h"
    assert cpu_time(40 * 3600) == "about 40 CPU-h"
    assert "about 25 CPU-s" in ocr_hint(4, 10)  # 10 pages at 2.5 CPU-s each, not "0 CPU-min"


def test_the_hint_names_the_build_command_with_ocr() -> None:
    hint = ocr_hint(2, 3, "local --input 'my docs/m.jsonl' --out data")
    command = re.search(r"`([^`]+)`", hint)
    assert command is not None
    assert shlex.split(command.group(1)) == ["build-corpus", "local", "--input",
                                             "my docs/m.jsonl", "--out", "data", "--ocr"]
    assert "`" not in ocr_hint(2, 3)  # no recorded command: no made-up one


def hinted(text: str) -> list[str]:
    """The arguments of the `build-corpus` command a hint names."""
    found = re.search(r"need OCR \([^)]*\): run `([^`]+)`", text)
    assert found is not None, text
    words = shlex.split(found.group(1))
    assert words[0] == "build-corpus"
    return words[1:]


@needs_tesseract("fr")
def test_the_demo_hint_runs(tmp_path: Path) -> None:
    """Without Tesseract (its Python binding made unimportable) the demo's scanned document
    waits for OCR; the hint names `demo … --ocr`, which then says what to install, and
    with Tesseract reads it."""
    block = tmp_path / "block"
    block.mkdir()
    (block / "tesserocr.py").write_text("raise ImportError('not installed')\n")
    without = {"PYTHONPATH": os.pathsep.join([str(block), *sys.path])}
    out = tmp_path / "demo"
    first = run_cli_subprocess("demo", "--out", str(out), "--only", "hal", "--docs", "5",
                               env=without)
    assert first.returncode == 0, first.stderr
    # a crawled source's records that lack a file or an abstract are told the same way
    assert "hal: " in first.stderr and "rejected for what their record gave" in first.stderr
    args = hinted(first.stderr)
    assert args[0] == "demo" and args[-1] == "--ocr"
    status = run_cli_in_process("status", str(out / "hal"))
    assert hinted(status.stdout) == args
    report = run_cli_in_process("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert hinted((tmp_path / "report" / "report.md").read_text()) == args

    refused = run_cli_subprocess(*args, env=without)
    assert refused.returncode == 2, refused.stderr
    assert "pip install 'loralay-build[ocr]'" in refused.stderr
    assert "No such option" not in refused.stderr

    done = run_cli_subprocess(*args)
    assert done.returncode == 0, done.stderr
    assert "need OCR" not in done.stderr
    assert "need OCR" not in run_cli_in_process("status", str(out / "hal")).stdout
