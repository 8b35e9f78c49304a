"""Bad paths and unwritable places give one line and an exit code, never a traceback, and never
a folder the user did not ask for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest

from loralay_build.corpus.publish import PublishError
from loralay_build.run.context import BuildRequest
from loralay_build.run.pipeline import Pipeline
from loralay_build.sources import load_settings
from loralay_build.state import State
from tests.helpers.cli import run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "loralay_build.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=240, env=dict(os.environ))


@pytest.mark.parametrize("command", [
    ["local", "--input", "m.jsonl"], ["demo", "--only", "hal"], ["report", "."],
    ["inspect", ".", "x"]])
def test_a_url_as_out_is_refused(tmp_path: Path, command: list[str]) -> None:
    write_manifest(tmp_path / "m.jsonl", [])
    result = _cli(tmp_path, *command, "--out", "s3://bucket/x")
    assert result.returncode == 2, result.stderr
    assert "is a URL" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "s3:").exists()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A manifest of one real PDF and the output root of its build."""
    docs = tmp_path_factory.mktemp("docs")
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 1))
    out = docs / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1")
    assert result.returncode == 0, result.stderr
    return manifest, out


def _one_line(result: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), result.stderr


def test_inspect_out_in_a_missing_or_read_only_folder(built: tuple[Path, Path]) -> None:
    _, out = built
    ids = pq.read_table(next((out / "local").glob("*.parquet")), columns=["article_id"])
    article = ids.column(0)[0].as_py()
    missing = run_cli_in_process("inspect", str(out / "local"), article, "--out",
                                 "/nonexistent/x.png")
    _one_line(missing, 2, "/nonexistent", "does not exist")
    assert not Path("/nonexistent").exists()
    # sysfs refuses new files even to root.
    _one_line(run_cli_in_process("inspect", str(out / "local"), article, "--out",
                                 "/sys/kernel/x.png"),
              2, "not writable")


def test_report_out_on_a_read_only_place(built: tuple[Path, Path]) -> None:
    _, out = built
    _one_line(run_cli_in_process("report", str(out), "--out", "/sys/kernel/loralay-report"), 2,
              "/sys/kernel is not a writable folder")
    _one_line(run_cli_in_process("report", str(out), "--out", "/sys/kernel"), 2, "not writable")


def test_an_unwritable_dataset_folder_stops_the_build_before_work(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, _ = built
    out = tmp_path / "out"
    out.mkdir()
    (out / "local").symlink_to("/sys/kernel")
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1")
    _one_line(result, 2, "dataset folder", "not writable")
    state = State(out)
    try:
        assert state.status_counts("local") == {}
    finally:
        state.close()


def test_a_folder_lost_while_publishing_is_one_line_and_the_work_is_kept(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, _ = built
    out = tmp_path / "out"
    settings = load_settings("local", environ={}, overrides={
        "source": {"input": str(manifest)}, "run": {"executor": "serial"}})
    state = State(out)
    try:
        pipeline = Pipeline(BuildRequest("local", "local", settings), state)
        pipeline.discover()
        pipeline.fetch()
        pipeline.process()
        (out / "local").symlink_to("/sys/kernel")  # after the checks, before publishing
        with pytest.raises(PublishError, match=r"publishing failed|cannot write"):
            pipeline.publish()
    finally:
        state.close()
    (out / "local").unlink()
    again = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                               "1")
    assert again.returncode == 0, again.stderr
    assert len(datasets.load_dataset(str(out / "local"))["train"]) == 1
