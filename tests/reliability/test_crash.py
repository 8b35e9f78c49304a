"""T15-T17 and T20: kill -9 at random moments, overlapping runs, idempotent re-runs and split
stability, all with the real `build-corpus hal` in a subprocess against the HAL sandbox."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from loralay_build.sandbox import Sandbox
from tests.helpers import buildrun
from tests.helpers.reliability import Figure
from tests.helpers.waits import DEADLINE

DOCS = 16
SEED = 5


@dataclass
class Reference:
    folder: Path
    digests: dict[str, str]
    seconds: float


def build_reference(tmp: Path, docs: int) -> Reference:
    """One uninterrupted build of a fresh sandbox: what every other run must reproduce."""
    with Sandbox(docs=docs, seed=SEED) as sandbox:
        config = buildrun.write_config(sandbox, tmp / "config.toml")
        start = time.monotonic()
        assert buildrun.run(tmp / "out", config) == 0
        seconds = time.monotonic() - start
    folder = tmp / "out" / "hal"
    return Reference(folder, buildrun.digests(folder), seconds)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return build_reference(tmp_path_factory.mktemp("reference"), DOCS)


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[tuple[Sandbox, Path, Path]]:
    """A new sandbox identical to the reference's, its config, and an empty output root."""
    with Sandbox(docs=DOCS, seed=SEED) as sandbox:
        yield sandbox, buildrun.write_config(sandbox, tmp_path / "config.toml"), tmp_path / "out"


def kill_and_resume(
    sandbox: Sandbox, config: Path, out: Path, kills: int, seed: int, docs: int,
) -> tuple[Counter[str], int]:
    """Kill the build `kills` times at random moments, then let it finish.

    A moment is an amount of progress the killed run has committed, never a time: the n-th
    candidate status it changed (discovered, fetched, processed, published: four per
    document). n is drawn so the kills together use under seven eighths of a build's
    changes, which spreads them over discovery, download and parsing whatever the machine's
    load, and leaves the resuming run work to do.

    Returns the phases the kills landed in and the worker processes left alive by a kill.
    """
    rng = random.Random(seed)
    phases: Counter[str] = Counter()
    orphans = 0
    for _ in range(kills):
        wanted = rng.randint(1, max(1, 7 * docs // (2 * kills)))
        seen = len(sandbox.server.log)
        before = buildrun.statuses(out)
        proc = buildrun.start(out, config)
        end = time.monotonic() + DEADLINE
        workers: set[int] = set()
        while (proc.poll() is None and buildrun.changed(out, before) < wanted
               and time.monotonic() < end):
            workers |= buildrun.children(proc.pid)
            time.sleep(0.02)
        if proc.poll() is not None:
            phases["finished before the kill"] += 1
            continue
        workers |= buildrun.children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(DEADLINE)
        assert proc.stderr is not None
        proc.stderr.close()
        during = sandbox.server.log[seen:]
        stage = buildrun.phase(out)
        if stage == "download" and during and during[-1].path.startswith("/search/"):
            stage = "discovery"  # this run was still paging through the search API
        phases[stage] += 1
        orphans += len(buildrun.wait_gone(workers, DEADLINE))
    assert buildrun.run(out, config) == 0
    return phases, orphans


def _compare(reference: Reference, out: Path) -> tuple[int, int, bool]:
    """(documents lost, documents duplicated, every file byte-identical)."""
    want = buildrun.split_ids(reference.folder)
    got = buildrun.split_ids(out / "hal")  # raises on a document published twice
    lost = len(set(want) - set(got))
    duplicated = sum(1 for k in got if k in want and got[k] != want[k])
    return lost, duplicated, buildrun.digests(out / "hal") == reference.digests


def _kill_test(reference: Reference, fresh: tuple[Sandbox, Path, Path], kills: int,
               figure: Figure, docs: int = DOCS) -> None:
    sandbox, config, out = fresh
    phases, orphans = kill_and_resume(sandbox, config, out, kills, kills, docs)
    lost, duplicated, identical = _compare(reference, out)
    figure("T15", f"kill -9 x{kills} then resume: lost / duplicated / identical bytes / "
           "orphan workers", "0 / 0 / yes / 0",
           f"{lost} / {duplicated} / {'yes' if identical else 'NO'} / {orphans} "
           f"(kills by phase: {dict(sorted(phases.items()))})")
    assert (lost, duplicated, identical, orphans) == (0, 0, True, 0)
    # Every kill must land on a running build, or the test proves nothing about resuming.
    assert phases["finished before the kill"] == 0, phases
    assert sum(phases.values()) - phases["start"] >= 1, phases


def test_kill_resume_short(reference: Reference, fresh: tuple[Sandbox, Path, Path],
                           figure: Figure) -> None:
    """T15 (default suite): three kills, resume, byte-identical output."""
    _kill_test(reference, fresh, 3, figure)


@pytest.mark.slow
def test_kill_resume_long(tmp_path: Path, figure: Figure) -> None:
    """T15: sixteen kills over a larger corpus, spread over discovery, download, parsing
    and writing."""
    docs = 64
    (tmp_path / "reference").mkdir()
    reference = build_reference(tmp_path / "reference", docs)
    with Sandbox(docs=docs, seed=SEED) as sandbox:
        config = buildrun.write_config(sandbox, tmp_path / "config.toml")
        _kill_test(reference, (sandbox, config, tmp_path / "out"), 16, figure, docs)


def test_overlapping_runs(fresh: tuple[Sandbox, Path, Path], figure: Figure) -> None:
    """T16: two runs started together: one builds, the other exits 75 at once."""
    _sandbox, config, out = fresh
    procs = [buildrun.start(out, config) for _ in range(2)]
    started = time.monotonic()
    codes: list[int] = []
    loser_seconds = 0.0
    for proc in procs:
        try:
            proc.wait(buildrun.RUN_TIMEOUT)
        finally:
            assert proc.stderr is not None
            proc.stderr.close()
        if proc.returncode == 75:
            loser_seconds = time.monotonic() - started
        codes.append(proc.returncode)
    figure("T16", "two overlapping runs: exit codes", "[0, 75]", f"{sorted(codes)}")
    assert sorted(codes) == [0, 75]
    assert loser_seconds < buildrun.RUN_TIMEOUT


def test_rerun_is_idempotent(reference: Reference, fresh: tuple[Sandbox, Path, Path],
                             figure: Figure) -> None:
    """T17: a second run with no new input downloads nothing and rewrites no file."""
    sandbox, config, out = fresh
    assert buildrun.run(out, config) == 0
    folder = out / "hal"
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}
    files_before = len(sandbox.server.requests("/_host/"))
    assert buildrun.run(out, config) == 0
    downloads = len(sandbox.server.requests("/_host/")) - files_before
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}
    rewritten = sum(1 for name in after if before.get(name) != after[name])
    rewritten += len(set(before) - set(after))
    figure("T17", "idempotent re-run: downloads / rewritten files", "0 / 0",
           f"{downloads} / {rewritten}")
    assert (downloads, rewritten) == (0, 0)
    assert buildrun.digests(folder) == reference.digests


def test_split_stability(fresh: tuple[Sandbox, Path, Path], figure: Figure) -> None:
    """T20: 10 % newer documents, rebuild: nothing leaves validation or test."""
    sandbox, config, out = fresh
    assert buildrun.run(out, config) == 0
    before = buildrun.split_ids(out / "hal")
    sandbox.hal.add_documents(max(1, len(sandbox.hal.records) // 10))
    assert buildrun.run(out, config) == 0
    after = buildrun.split_ids(out / "hal")
    held = {k: v for k, v in before.items() if v != "train"}
    moved = sum(1 for k, v in held.items() if after.get(k) != v)
    changed = sum(1 for k, v in before.items() if after.get(k) != v)
    figure("T20", "documents that changed split after +10 % newer documents", "0",
           f"{changed} ({moved} of {len(held)} from validation/test; "
           f"{len(after) - len(before)} new)")
    assert len(after) > len(before)
    assert changed == 0


def test_cli_runs_in_subprocess() -> None:
    """The helper really runs the CLI (guards the other tests against a silent no-op)."""
    out = subprocess.run(buildrun.command(Path("/nonexistent"), Path("/nonexistent.toml")),
                         capture_output=True, timeout=60)
    assert out.returncode == 2
