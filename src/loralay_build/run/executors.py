"""Executors: the same per-document function, run in-process or in isolated workers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from loralay_build.config import EXECUTORS, RunSettings
from loralay_build.errors import ConfigError, Reason
from loralay_build.run.fatal import doing, exit_one_line
from loralay_build.run.isolation import IsolatedPool
from loralay_build.run.task import Outcome, Task
from loralay_build.run.worker_results import limits_of, outcome_of


def process_document(task: Task) -> Outcome:
    """run.process.process_document, that module imported on the first call: in a worker,
    or in this process for the serial executor. A build's parent never imports it."""
    from loralay_build.run.process import process_document as process

    return process(task)


class Executor(Protocol):
    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        """Process tasks; outcomes may come in any order."""
        ...

    def close(self) -> None: ...


SERIAL_ADVICE = ("--executor serial has no isolation (no process of its own per document, no "
                 "memory limit, no timeout): use --executor local to make such a file a reject")


class SerialExecutor:
    """In the calling process, one after the other: for debugging (no timeout, no limits).

    A file that crashes native code ends the build; it says so in one line (exit 1)."""

    def __init__(self) -> None:
        self._restore = exit_one_line(SERIAL_ADVICE)

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        for task in tasks:
            doing(task.candidate.id)
            try:
                outcome = process_document(task)
            except Exception as exc:  # a parser bug costs one document, not the run
                outcome = Outcome(reason=Reason.CORRUPTED, detail=f"{type(exc).__name__}: {exc}")
            finally:
                doing("")
            yield task, outcome

    def close(self) -> None:
        self._restore()


class LocalExecutor:
    """Isolated worker processes on this machine (the default)."""

    def __init__(self, settings: RunSettings, preload: Sequence[str] = ()) -> None:
        # The fork server imports the work's module (the parser and the matcher) for the
        # workers.
        self.pool: IsolatedPool[Task, Outcome] = IsolatedPool(
            process_document, settings.workers, limits_of(settings),
            ["loralay_build.run.process", *preload]
        )

    def run(self, tasks: Iterable[Task]) -> Iterator[tuple[Task, Outcome]]:
        for task, result in self.pool.imap_unordered(tasks):
            yield task, outcome_of(result)

    def close(self) -> None:
        self.pool.close()


def check_executor(settings: RunSettings) -> None:
    """Refuse an unknown or uninstalled executor before any crawling is done."""
    if settings.executor not in EXECUTORS:
        raise ConfigError(f"unknown executor {settings.executor!r} ({', '.join(EXECUTORS)})")
    if settings.executor == "ray":
        import loralay_build.run.ray_executor  # noqa: F401  (raises ConfigError without Ray)


def make_executor(settings: RunSettings, preload: Sequence[str] = ()) -> Executor:
    """The configured executor; `preload` names modules local workers import before forking
    (the PDF backend, which is otherwise imported on first use)."""
    check_executor(settings)
    if settings.executor == "serial":
        return SerialExecutor()
    if settings.executor == "ray":
        from loralay_build.run.ray_executor import RayExecutor

        return RayExecutor(settings)
    return LocalExecutor(settings, preload)
