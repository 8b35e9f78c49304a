"""Executors: the same per-document function, run in-process or in isolated workers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from loralay_build.config import RunSettings
from loralay_build.errors import ConfigError, Reason
from loralay_build.run.isolation import IsolatedPool, Limits, WorkerLost
from loralay_build.run.process import Outcome, Task, process_document

MiB = 1024 * 1024


class Executor(Protocol):
    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        """Process tasks; outcomes may come in any order."""
        ...

    def close(self) -> None: ...


class SerialExecutor:
    """In the calling process, one after the other: for debugging (no timeout, no limits)."""

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        for task in tasks:
            try:
                outcome = process_document(task)
            except Exception as exc:  # a parser bug costs one document, not the run
                outcome = Outcome(reason=Reason.CORRUPTED, detail=f"{type(exc).__name__}: {exc}")
            yield task, outcome

    def close(self) -> None:
        return None


class LocalExecutor:
    """Isolated worker processes on this machine (the default)."""

    def __init__(self, settings: RunSettings) -> None:
        limits = Limits(settings.timeout, settings.memory_limit_mb * MiB, settings.recycle_after)
        self.pool: IsolatedPool[Task, Outcome] = IsolatedPool(
            process_document, settings.workers, limits
        )

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        for task, result in self.pool.imap_unordered(tasks):
            if isinstance(result, Outcome):
                yield task, result
            elif isinstance(result, WorkerLost):
                reason = Reason.TIMEOUT if result.timed_out else Reason.CORRUPTED
                yield task, Outcome(reason=reason, detail=result.detail)
            else:
                yield task, Outcome(reason=Reason.CORRUPTED, detail=result)

    def close(self) -> None:
        self.pool.close()


def make_executor(settings: RunSettings) -> Executor:
    if settings.executor == "serial":
        return SerialExecutor()
    if settings.executor == "local":
        return LocalExecutor(settings)
    raise ConfigError(f"unknown executor {settings.executor!r} (serial or local)")
