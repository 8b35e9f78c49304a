"""What the local and the Ray executors share about isolated workers: the limits a worker
runs under, and what its result means for the document."""

from __future__ import annotations

from loralay_build.config import MiB, RunSettings
from loralay_build.errors import Reason
from loralay_build.run.isolation import Limits, WorkerLost
from loralay_build.run.task import Outcome


def limits_of(settings: RunSettings) -> Limits:
    return Limits(settings.timeout, settings.memory_limit_mb * MiB, settings.recycle_after,
                  settings.allocator)


def outcome_of(result: Outcome | WorkerLost | str) -> Outcome:
    """What an isolated worker returned, as an outcome: a lost worker is a reject."""
    if isinstance(result, Outcome):
        return result
    if isinstance(result, WorkerLost):
        reason = Reason.TOO_LARGE if result.out_of_memory else Reason.CORRUPTED
        if result.timed_out:
            reason = Reason.OCR_TIMEOUT if result.ocr else Reason.TIMEOUT
        return Outcome(reason=reason, detail=result.detail)
    return Outcome(reason=Reason.CORRUPTED, detail=result)
