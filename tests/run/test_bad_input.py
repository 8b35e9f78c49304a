"""Bad input as a new user feeds it: bytes that are not text, files that are not what they
should be, values hidden behind a flag, hostile PDFs and damaged output. Each ends in one line
and an exit code, or a recorded reason; nothing is written before the checks pass."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from loralay_build.cli import main
from loralay_build.config import RunSettings
from loralay_build.errors import Reason
from loralay_build.licences import allowed, check_patterns
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Candidate
from loralay_build.run.executors import LocalExecutor
from loralay_build.run.isolation import IsolatedPool
from loralay_build.run.process import Outcome, Task
from loralay_build.run.worker_results import limits_of, outcome_of
from loralay_build.state import State
from loralay_build.text import MatchSettings
from tests.helpers.cli import run_cli_in_process, run_cli_subprocess, write_toml
from tests.helpers.local import make_corpus, write_manifest

BOMB = Path(__file__).parents[1] / "fixtures" / "badpdfs" / "C02_flate_bomb_nested_4GiB.pdf"


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes (the disk as a test compares it)."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two real PDFs, their manifest and the output root of their build (copy before
    changing it)."""
    docs = tmp_path_factory.mktemp("docs")
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 2))
    out = docs / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter")
    assert result.returncode == 0, result.stderr
    return manifest, out


def _copy(out: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    return copy


# -- bytes that are not text, into every file the tool reads ----------------------------------

def _samples() -> list[bytes]:
    """A line that is JSON but for one byte, a BOM then a bad byte, and random bytes, and
    random text made of the characters parsers care about."""
    rng = random.Random(43)
    text = '{}[]":,#\n\r\t aé\u00a0\ufeff\x00-*1'
    return [b'{"id": "a\xff", "pdf": "a.pdf"}\n', b"\xef\xbb\xbf# ids\n\xc3\x28\n",
            *(rng.randbytes(rng.randint(1, 400)) for _ in range(4)),
            *("".join(rng.choice(text) for _ in range(200)).encode() for _ in range(3))]


def _entry_points(tmp_path: Path, out: Path) -> dict[str, Callable[[Path], list[str]]]:
    """Each command-line input that names a file the tool reads as text: the arguments that
    feed it `path`."""
    local = ["local", "--out", str(tmp_path / "o"), "--input"]
    manifest = write_manifest(tmp_path / "ok.jsonl", [{"id": "a", "pdf": "a.pdf"}])

    def split_dir(path: Path) -> Path:
        folder = tmp_path / f"split-{path.name}"
        folder.mkdir(exist_ok=True)
        shutil.copy(path, folder / "test.txt")
        return folder

    return {
        "manifest": lambda p: [*local, str(p)],
        "config": lambda p: [*local, str(manifest), "--config", str(p)],
        "exclude-ids": lambda p: [*local, str(manifest), "--exclude-ids", str(p)],
        "remove --ids": lambda p: ["remove", str(out), "--dataset", "local", "--ids", str(p)],
        "arxiv --ids": lambda p: ["arxiv", "--out", str(tmp_path / "o"), "--ids", str(p)],
        "arxiv --metadata": lambda p: ["arxiv", "--out", str(tmp_path / "o"), "--metadata",
                                       str(p)],
        "arxiv --split-ids": lambda p: ["arxiv", "--out", str(tmp_path / "o"), "--split-ids",
                                        str(split_dir(p))],
        "pubmed --ids": lambda p: ["pubmed", "--out", str(tmp_path / "o"), "--ids", str(p)],
        "openreview --split-ids": lambda p: ["openreview", "--out", str(tmp_path / "o"),
                                             "--venue", "V", "--split-ids", str(split_dir(p))],
    }


def test_random_and_non_utf8_bytes_into_every_file_reading_entry_point(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    """One line and exit 1 or 2 for every sample at every entry point, never a traceback;
    a byte that is not UTF-8 is named with its file, line and offset (the first sample's
    bad byte is on its first line, so every reader reaches it)."""
    out = _copy(built[1], tmp_path)
    for name, args in _entry_points(tmp_path, out).items():
        for n, sample in enumerate(_samples()):
            path = tmp_path / f"{name.replace(' ', '_')}-{n}.txt"
            path.write_bytes(sample)
            result = CliRunner().invoke(main, args(path))
            assert isinstance(result.exception, SystemExit), (name, n, result.exception)
            assert result.exit_code in (1, 2), (name, n, result.stderr)
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1, (name, n, result.stderr)
            if n == 0 or "not UTF-8" in lines[0]:  # a reader may stop at an earlier line
                with pytest.raises(UnicodeDecodeError) as bad:
                    sample.decode("utf-8")
                line = sample.count(b"\n", 0, bad.value.start) + 1
                assert result.exit_code == 2, (name, n, result.stderr)
                read = path.parent / f"split-{path.name}" / "test.txt" if "split" in name \
                    else path
                assert f"{read}: line {line}, byte {bad.value.start}: not UTF-8" in lines[0], \
                    (name, n, lines[0])


def test_a_non_utf8_environment_value_is_one_line(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "m.jsonl", [{"id": "a", "pdf": "a.pdf"}])
    env = {k: v for k, v in os.environb.items()}
    env[b"LORALAY_HTTP__USER_AGENT"] = b"bot \xff"
    result = subprocess.run(
        [sys.executable, "-m", "loralay_build.cli", "local", "--input", str(manifest),
         "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=240)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "configuration error: environment variable LORALAY_HTTP__USER_AGENT: line 1, byte 4: "
        "not UTF-8 text (byte 0xff); save it as UTF-8"]
    assert not (tmp_path / "out").exists()


# -- nothing written before every check has passed --------------------------------------------

MANIFEST_ERRORS = {
    "not JSON": "{not json\n",
    "no pdf": '{"id": "a"}\n',
    "duplicate id": '{"id": "a", "pdf": "a.pdf"}\n{"id": "a", "pdf": "b.pdf"}\n',
    "abstracts": '{"id": "a", "pdf": "a.pdf", "abstracts": ["x"]}\n',
    "language": '{"id": "a", "pdf": "a.pdf", "language": "xx"}\n',
    "language null": '{"id": "a", "pdf": "a.pdf", "language": null}\n',
    "empty": "\n  \n",
    "not UTF-8": '{"id": "\xff"}\n',
}


def test_a_manifest_error_leaves_out_as_it_was(built: tuple[Path, Path],
                                               tmp_path: Path) -> None:
    """Absent stays absent; a built folder stays byte for byte the same (no state, lock or
    blob folder made, no run recorded)."""
    existing = _copy(built[1], tmp_path)
    before = _tree(existing)
    for name, text in MANIFEST_ERRORS.items():
        manifest = tmp_path / "bad.jsonl"
        manifest.write_bytes(text.encode("latin-1"))
        for out in (tmp_path / "absent", existing):
            result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out))
            assert result.returncode == 2, (name, result.stderr)
            assert len(result.stderr.strip().splitlines()) == 1, (name, result.stderr)
            assert str(manifest) in result.stderr, (name, result.stderr)
        assert not (tmp_path / "absent").exists(), name
        assert _tree(existing) == before, name


def test_an_empty_manifest_is_a_usage_error(tmp_path: Path) -> None:
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n\n")
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp_path / "out"),
                                "--allow-empty")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"configuration error: {manifest}: the manifest has no entries")


def test_language_null_is_a_usage_error(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "m.jsonl", [
        {"id": "a", "pdf": "a.pdf", "language": "fr"},
        {"id": "b", "pdf": "b.pdf", "language": None, "abstracts": {"fr": "x"}}])
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"configuration error: {manifest}: line 2 (id 'b'): 'language' must be the ISO 639-1 "
        'code of the document\'s main language, e.g. "language": "en" (fr, es, ...); got null')


# -- a failed run is visible -------------------------------------------------------------------

def test_status_shows_the_failed_last_run_and_its_reason(tmp_path: Path) -> None:
    (tmp_path / "page.pdf").write_text("<html>not a pdf</html>")
    manifest = write_manifest(tmp_path / "m.jsonl", [
        {"id": "html", "pdf": "page.pdf", "language": "fr", "abstracts": {"fr": "x y"}}])
    out = tmp_path / "out"
    failed = run_cli_in_process("local", "--input", str(manifest), "--out", str(out))
    assert failed.returncode == 1
    status = run_cli_in_process("status", str(out))
    assert status.returncode == 0, status.stderr
    assert "exit 1" in status.stdout
    assert "local: no document published (1 rejected" in status.stdout
    run = json.loads(run_cli_in_process("status", str(out), "--json").stdout)["local"]["last_run"]
    assert run["exit_code"] == 1 and run["reason"].startswith("local: no document published")


def test_status_shows_a_dataset_whose_only_run_found_nothing(tmp_path: Path) -> None:
    """A run that stored no candidate (a source that listed nothing) is still listed."""
    state = State(tmp_path)
    try:
        state.claim("hal", "hal")
        run = state.start_run("hal", "hal --out x")
        state.finish_run(run, 1, {}, "hal: no document published (0 rejected, …)")
    finally:
        state.close()
    status = run_cli_in_process("status", str(tmp_path))
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines()[0] == "hal"
    assert "exit 1" in status.stdout and "hal: no document published" in status.stdout


# -- every layer of configuration is checked ----------------------------------------------------

@pytest.mark.parametrize("value", ["two", 0])
def test_a_flag_does_not_hide_a_bad_file_value(tmp_path: Path, value: object) -> None:
    config = write_toml(tmp_path / "c.toml", {"run": {"workers": value}})
    manifest = write_manifest(tmp_path / "m.jsonl", [{"id": "a", "pdf": "a.pdf"}])
    out = tmp_path / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--config",
                                str(config), "--workers", "2")
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "[run] workers" in line and f"set by --config {config}" in line
    assert "overridden by command-line options" in line
    assert not out.exists()


def test_licence_ids_compare_without_case() -> None:
    assert check_patterns(["cc-by-4.0", "Redistributable", "cc-by-nc-*"]) == (
        "CC-BY-4.0", "redistributable", "cc-by-nc-*")
    assert allowed("CC-BY-NC-SA-4.0", check_patterns(["cc-by-nc-*"]))
    assert allowed("CC-BY-4.0", check_patterns(["cc-by-4.0"]))
    assert not allowed("CC-BY-SA-4.0", check_patterns(["cc-by-4.0"]))


# -- reasons that say what happened -------------------------------------------------------------

def _bomb_task() -> Task:
    candidate = Candidate(id="local:bomb", source="local", source_id="bomb", dataset="local",
                          title="bomb", language="en", abstracts={"en": "An abstract."})
    return Task(candidate, str(BOMB), "0" * 64, ParseSettings(), MatchSettings())


def test_a_worker_killed_at_its_memory_limit_is_too_large() -> None:
    """PDFium aborts when an allocation fails under the worker's RLIMIT_AS."""
    executor = LocalExecutor(RunSettings(workers=1, timeout=60, memory_limit_mb=700))
    try:
        [(_, outcome)] = list(executor.run([_bomb_task()]))
    finally:
        executor.close()
    assert outcome.reason is Reason.TOO_LARGE, outcome
    assert "memory limit of 700 MiB" in outcome.detail


def test_a_crash_far_from_the_memory_limit_stays_corrupted() -> None:
    from tests.helpers.raywork import crash_or_process

    control = BOMB.parent / "A00_control_valid.pdf"
    tasks = []
    for crash in ("abort", "segfault"):
        task = _bomb_task()
        tasks.append(replace(task, pdf_path=str(control),
                             candidate=replace(task.candidate, source_id=crash)))
    pool: IsolatedPool[Task, Outcome] = IsolatedPool(
        crash_or_process, 1, limits_of(RunSettings(timeout=60, memory_limit_mb=2048)))
    with pool:
        found = {task.candidate.source_id: outcome_of(result)
                 for task, result in pool.imap_unordered(tasks)}
    assert {k: (o.reason, o.detail) for k, o in found.items()} == {
        "abort": (Reason.CORRUPTED, "worker killed by SIGABRT"),
        "segfault": (Reason.CORRUPTED, "worker killed by SIGSEGV")}


def _address_space_limit(megabytes: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 2**20, megabytes * 2**20))
    return limit


def test_serial_reports_a_fatal_signal_of_its_own_process_in_one_line(tmp_path: Path) -> None:
    """Under a shell's `ulimit -v`, the bomb aborts the serial build itself."""
    shutil.copy(BOMB, tmp_path / "bomb.pdf")
    manifest = write_manifest(tmp_path / "m.jsonl", [
        {"id": "bomb", "pdf": "bomb.pdf", "language": "en", "abstracts": {"en": "x y z"}}])
    result = subprocess.run(
        [sys.executable, "-m", "loralay_build.cli", "local", "--input", str(manifest),
         "--out", str(tmp_path / "out"), "--executor", "serial"],
        capture_output=True, text=True, timeout=240, env=dict(os.environ),
        preexec_fn=_address_space_limit(1500))
    assert result.returncode == 1, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: the build process was killed by SIGABRT while processing "
                           "local:bomb;"), line
    assert "--executor serial has no isolation" in line
    status = run_cli_in_process("status", str(tmp_path / "out"))  # the run could not record its end
    assert "exit none (the process was killed)" in status.stdout, status.stdout


def test_a_folder_given_as_pdf_says_so(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").mkdir()
    manifest = write_manifest(tmp_path / "m.jsonl", [
        {"id": "a", "pdf": "a.pdf", "language": "fr", "abstracts": {"fr": "x y"}}])
    out = tmp_path / "out"
    assert run_cli_in_process("local", "--input", str(manifest), "--out", str(out)).returncode == 1
    state = State(out)
    try:
        [row] = state.rows("local")
    finally:
        state.close()
    assert row.reason == Reason.NOT_PDF and row.detail == "a.pdf is a folder, not a PDF file"


def test_the_outside_folder_hint_names_the_flag(tmp_path: Path) -> None:
    manifest = write_manifest(tmp_path / "m.jsonl", [{"id": "a", "pdf": "/etc/passwd"}])
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "give --allow-outside" in result.stderr


# -- repairs are announced ------------------------------------------------------------------------

def _repaired(manifest: Path, out: Path, shard: Path, intact: bytes) -> list[str]:
    """Build again: the shard holds its bytes again, the run counts one repair and the
    folder verifies. Returns the log lines naming the shard."""
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1", "--no-filter")
    assert result.returncode == 0, result.stderr
    assert shard.read_bytes() == intact
    state = State(out)
    try:
        run = state.last_run("local")
    finally:
        state.close()
    assert run is not None and run["counts"]["shards_repaired"] == 1
    assert run_cli_in_process("verify", str(out / "local")).returncode == 0
    return [line for line in result.stderr.splitlines() if str(shard) in line]


def test_a_truncated_shard_is_repaired_with_a_warning_naming_it(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, original = built
    out = _copy(original, tmp_path)
    shard = sorted((out / "local").glob("*.parquet"))[0]
    intact = shard.read_bytes()
    shard.write_bytes(intact[: len(intact) // 2])
    warning = _repaired(manifest, out, shard, intact)
    assert len(warning) == 1 and "WARNING" in warning[0]
    assert f"{shard}: truncated: {len(intact) // 2} bytes" in warning[0]
    assert "written again" in warning[0]


def test_a_shard_written_over_at_its_size_is_repaired_with_a_warning_naming_it(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    manifest, original = built
    out = _copy(original, tmp_path)
    shard = sorted((out / "local").glob("*.parquet"))[0]
    intact = shard.read_bytes()
    middle = len(intact) // 2
    shard.write_bytes(intact[:middle] + bytes(64) + intact[middle + 64:])
    warning = _repaired(manifest, out, shard, intact)
    assert warning and "WARNING" in warning[0] and "written over" in warning[0], warning


# -- smaller ------------------------------------------------------------------------------------

def test_remove_twice_counts_the_second_as_already_removed(
        built: tuple[Path, Path], tmp_path: Path) -> None:
    out = _copy(built[1], tmp_path)
    ids = tmp_path / "ids.txt"
    ids.write_text("doc0\n")
    first = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
    assert first.returncode == 0, first.stderr
    assert first.stderr.strip().splitlines()[-1] == "local: 1 document(s) removed and unpublished"
    second = run_cli_in_process("remove", str(out), "--dataset", "local", "--ids", str(ids))
    assert second.returncode == 0, second.stderr
    assert second.stderr.strip().splitlines()[-1] == (
        "local: 0 document(s) removed and unpublished, 1 already removed")
    shards = sorted((out / "local").glob("*.parquet"))
    assert [i for s in shards for i in pq.read_table(s)["article_id"].to_pylist()] == [
        "local:doc1"]


def test_demo_takes_the_filter_options() -> None:
    """Checked before the sandbox starts a single build: an unknown licence is refused."""
    result = CliRunner().invoke(main, ["demo", "--only", "hal", "--licences", "cc-by-40"])
    assert result.exit_code == 2, result.output
    assert "unknown licence 'cc-by-40'; did you mean CC-BY-4.0" in result.stderr


def test_arguments_that_are_not_utf8_are_recorded_escaped(tmp_path: Path) -> None:
    """A folder or file name with a byte that is not UTF-8 reaches the run record and a
    reject's detail as `\\xff`, not as a traceback from SQLite."""
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/docs\xff"))
    folder.mkdir()
    manifest = folder / "m.jsonl"  # `\udcff` in the JSON: the file's own byte 0xff
    manifest.write_text(json.dumps({"id": "a", "pdf": os.fsdecode(b"a\xff.pdf"),
                                    "language": "fr", "abstracts": {"fr": "x y"}}) + "\n")
    out = tmp_path / "out"
    result = run_cli_subprocess("local", "--input", str(manifest), "--out", str(out))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    status = run_cli_in_process("status", str(out), "--json")
    run = json.loads(status.stdout)["local"]["last_run"]
    assert f"--input '{tmp_path}/docs\\xff/m.jsonl'" in run["command"]  # quoted as a shell would
    state = State(out)
    try:
        [row] = state.rows("local")
    finally:
        state.close()
    assert row.detail == "no such file: a\\xff.pdf"


def test_an_option_value_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    """A venue is sent in requests: a byte that is not UTF-8 is refused before any."""
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "loralay_build.cli", "openreview", "--venue", b"V\xff",
         "--out", str(out)], capture_output=True, text=True, timeout=240, env=dict(os.environ))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "usage error: --venue: 'V\\xff' is not UTF-8 text"]
    assert not out.exists()
