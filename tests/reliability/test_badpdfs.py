"""T1-T4: the hostile PDF corpus through the real isolation layer, with both backends.

Every file must come back with a status and a reason, no document may run past its timeout
plus 2 s, workers stay under their address-space cap, the parent survives, and no empty
document becomes a row.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from loralay_build.config import RunSettings
from loralay_build.errors import Reason
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Candidate
from loralay_build.run.executors import LocalExecutor
from loralay_build.run.process import Outcome, Task
from loralay_build.text import MatchSettings
from tests.helpers.reliability import BADPDFS, Figure

TIMEOUT = 6.0
GRACE = 2.0  # a document may take this much longer than its timeout before it is killed
MEMORY_MB = 2048
HANGS = {"B03", "B04", "C06", "F02"}  # loop forever in pdfminer at constant memory
BOMBS = {"C01", "C02"}  # 1 GiB and 4 GiB once inflated
SLOW_PLUMBER = {"C04", "C05"}  # several seconds of pure-Python parsing
SILENT_EMPTIES = {"A07", "B10", "E01", "E02", "E03"}  # no error, but nothing usable
EMPTY_REASONS = {Reason.CORRUPTED, Reason.NO_TEXT_LAYER, Reason.NEEDS_OCR}
RECOVERABLE = {"B10"}  # an engine may recover its page (pdfium finds 24 characters)


@dataclass
class Sweep:
    outcomes: dict[str, Outcome]
    seconds: dict[str, float]
    restarts: int
    peak_child_rss: int  # bytes, the largest any finished child process reached
    wall: float


def _files(exclude: set[str] = frozenset()) -> list[Path]:  # type: ignore[assignment]
    files = sorted(BADPDFS.glob("*.pdf"))
    assert len(files) == 37, "tests/fixtures/badpdfs must hold the 37 hostile PDFs"
    return [f for f in files if f.name[:3] not in exclude]


def _task(path: Path, backend: str) -> Task:
    candidate = Candidate(
        id=f"badpdf:{path.stem}", source="local", source_id=path.stem, dataset="badpdfs",
        title=path.stem, language="en",
        abstracts={"en": "A hostile document used to check that nothing empty is published."},
        published="2024-01-01",
    )
    return Task(candidate, str(path), "0" * 64, ParseSettings(backend=backend), MatchSettings())


def sweep(files: list[Path], backend: str, workers: int = 2) -> Sweep:
    """Run every file through LocalExecutor; time each from the moment a worker takes it."""
    settings = RunSettings(workers=workers, timeout=TIMEOUT, memory_limit_mb=MEMORY_MB)
    executor = LocalExecutor(settings)
    started: dict[str, float] = {}

    def tasks() -> Iterator[Task]:
        for path in files:
            started[path.name[:3]] = time.monotonic()  # the pool pulls a task as it sends it
            yield _task(path, backend)

    outcomes: dict[str, Outcome] = {}
    seconds: dict[str, float] = {}
    begin = time.monotonic()
    try:
        for task, outcome in executor.run(tasks()):
            key = Path(task.pdf_path).name[:3]
            seconds[key] = time.monotonic() - started[key]
            outcomes[key] = outcome
    finally:
        restarts = executor.pool.restarts
        executor.close()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return Sweep(outcomes, seconds, restarts, peak, time.monotonic() - begin)


def _check(result: Sweep, files: list[Path]) -> None:
    names = {f.name[:3] for f in files}
    assert set(result.outcomes) == names
    for key, outcome in result.outcomes.items():
        if outcome.row is None:
            assert isinstance(outcome.reason, Reason), key
            assert outcome.detail or outcome.reason is not Reason.CORRUPTED, key
        else:
            row = outcome.row
            assert row["article_words"], f"{key}: an empty document became a row"
            n = len(row["article_words"])
            assert n == len(row["article_bboxes"]) == len(row["article_norm_bboxes"]) == len(
                row["word_pages"])
    assert max(result.seconds.values()) <= TIMEOUT + GRACE
    assert result.peak_child_rss <= MEMORY_MB * 1024 * 1024


def _report(figure: Figure, result: Sweep, files: list[Path], backend: str, test: str) -> None:
    with_reason = sum(1 for o in result.outcomes.values() if o.row is not None or o.reason)
    rows = sum(o.row is not None for o in result.outcomes.values())
    figure(test, f"{backend}: files with a status and reason", f"{len(files)}/{len(files)}",
           f"{with_reason}/{len(files)} (rows {rows}, restarts {result.restarts}, "
           f"{result.wall:.1f} s)")
    figure(test, f"{backend}: max wall per document", f"<= {TIMEOUT + GRACE:.0f} s",
           f"{max(result.seconds.values()):.2f} s")
    figure(test, f"{backend}: peak worker RSS", f"<= {MEMORY_MB} MiB",
           f"{result.peak_child_rss / 2**20:.0f} MiB")


@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
def test_sweep_fast(backend: str, figure: Figure) -> None:
    """T1/T4 (default suite): every file except the bombs, and for pdfplumber its hangs and
    slow giants, which the slow sweep covers."""
    exclude = BOMBS | (HANGS | SLOW_PLUMBER if backend == "pdfplumber" else set())
    files = _files(exclude)
    result = sweep(files, backend)
    _check(result, files)
    _report(figure, result, files, f"{backend} (default suite)", "T1")
    # T4: the sweep's abstract is in no file, so no file can become a row; what must hold is
    # that an empty document is caught by the parse checks, never handed on to matching.
    empties = SILENT_EMPTIES & set(result.outcomes)
    reasons = {k: result.outcomes[k].reason for k in sorted(empties)}
    missed = [k for k, reason in reasons.items()
              if reason not in EMPTY_REASONS and not (k in RECOVERABLE and reason)]
    figure("T4", f"{backend}: silent empties not caught as empty", "0",
           f"{len(missed)} of {sorted(empties)} "
           f"({', '.join(f'{k}={r}' for k, r in reasons.items())})")
    assert not missed, reasons


def test_hang_is_killed_and_pool_recovers(figure: Figure) -> None:
    """T2 (default suite): one pdfminer hang becomes `timeout`, the worker is replaced and the
    next document is processed normally."""
    files = [BADPDFS / "B03_ref_cycle_contents.pdf", BADPDFS / "A00_control_valid.pdf"]
    result = sweep(files, "pdfplumber", workers=1)
    assert result.outcomes["B03"].reason is Reason.TIMEOUT
    assert TIMEOUT <= result.seconds["B03"] <= TIMEOUT + GRACE
    assert result.outcomes["A00"].reason is not Reason.TIMEOUT
    assert result.restarts == 1
    figure("T2", "pdfplumber hang B03 -> timeout, worker replaced", f"<= {TIMEOUT + GRACE:.0f} s",
           f"{result.seconds['B03']:.2f} s, restarts {result.restarts}")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["pdfium", "pdfplumber"])
def test_sweep_full(backend: str, figure: Figure) -> None:
    """T1-T3: all 37 files, bombs and hangs included."""
    files = _files()
    result = sweep(files, backend)
    _check(result, files)
    _report(figure, result, files, backend, "T1")
    if backend == "pdfplumber":
        hangs = {k: result.outcomes[k].reason for k in HANGS}
        figure("T2", "pdfplumber hangs turned into timeout", f"{len(HANGS)}/{len(HANGS)}",
               f"{sum(r is Reason.TIMEOUT for r in hangs.values())}/{len(HANGS)}")
        assert all(r is Reason.TIMEOUT for r in hangs.values())
    bombs = {k: f"{result.outcomes[k].reason}" for k in sorted(BOMBS)}
    figure("T3", f"{backend}: bombs contained (worker RSS <= cap, parent alive)",
           f"<= {MEMORY_MB} MiB", f"{bombs}, peak {result.peak_child_rss / 2**20:.0f} MiB")
    assert all(result.outcomes[k].row is None for k in BOMBS)
