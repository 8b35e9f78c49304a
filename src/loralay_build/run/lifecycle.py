"""One build from the command line's point of view: checks before any work, the dataset lock,
the run record, signals, and the exit code.

Why: a problem of the environment or the configuration must stop the build before the first
document (exit 2 with the fix), not turn into a reject recorded against every document.
The lines meant for the user go to the caller's `notify` as they happen (the command line
writes them to stderr), and the exit code comes back in the result: nothing here prints.
"""

from __future__ import annotations

import logging
import shlex
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

from loralay_build.config import Settings
from loralay_build.errors import GIVEN_INPUT, ConfigError, LockHeld, LoralayError
from loralay_build.layout import OutputLayout
from loralay_build.parse.ocr import check_ocr, ocr_hint, textless_hint
from loralay_build.progress import interactive
from loralay_build.run.context import BuildRequest
from loralay_build.run.heap import pin_mmap_threshold
from loralay_build.run.pipeline import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_USAGE,
    NothingPublished,
    Pipeline,
    check_dataset_name,
)
from loralay_build.sources import get_source, load_settings
from loralay_build.sources.base import ChecksInput
from loralay_build.state import State, check_owner, recorded_source
from loralay_build.writable import check_folder_can_be_made, check_writable_folder

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

log = logging.getLogger("loralay_build")

# Programs a parser backend runs, and how to get them.
BACKEND_PROGRAMS = {"poppler": ("pdftotext", "install poppler-utils (apt install poppler-utils)")}


# Takes each line a build has for the user, when it has it (the command line: stderr).
Notify = Callable[[str], None]


class Terminated(KeyboardInterrupt):
    """SIGTERM (sent by `timeout`, systemd, docker stop), stopped like Ctrl-C."""


def check_environment(settings: Settings) -> None:
    """Programs the configuration needs are on PATH, and with `--ocr` the OCR engine and the
    models of every language the source's documents may be in."""
    program = BACKEND_PROGRAMS.get(settings.parse.backend)
    if program is not None and shutil.which(program[0]) is None:
        raise ConfigError(f"the {settings.parse.backend} parser needs `{program[0]}` on PATH: "
                          f"{program[1]}, or choose another --parser")
    if settings.ocr.enabled:
        check_ocr(settings.ocr, settings.source.ocr_languages())


def check_output_root(layout: OutputLayout, dataset: str) -> None:
    """The root is (or can be made) a folder this process can write in, and so is the
    dataset's folder when an earlier build made it (publishing would fail after all the
    work). Nothing is made here: a refused build leaves the disk as it was."""
    check_folder_can_be_made(layout.root, "--out")
    check_folder_can_be_made(layout.state_dir, "--out")
    folder = layout.dataset(dataset)
    if folder.exists() or folder.is_symlink():
        check_writable_folder(folder, "the dataset folder", create=False)


# Set by the first Ctrl-C or SIGTERM: a command building several datasets stops before the
# next one even when the interrupt was raised where Python swallows it (inside a finaliser).
STOP = threading.Event()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """For the duration of the block (main thread only), SIGTERM raises `Terminated` and
    SIGINT `KeyboardInterrupt`, both setting `STOP`.

    A signal can land while the main thread runs a finaliser (a connection pool closed by
    the garbage collector), where Python prints the exception as ignored, with a traceback,
    and carries on. Such an interrupt is not printed: the block raises it when it ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised: list[BaseException] = []  # by the handlers below
    swallowed: list[BaseException] = []  # of those, the ones a finaliser ignored

    def interrupt(exc: KeyboardInterrupt) -> NoReturn:
        STOP.set()
        raised.append(exc)
        raise exc

    def on_term(signum: int, frame: FrameType | None) -> None:
        interrupt(Terminated())

    def on_int(signum: int, frame: FrameType | None) -> None:
        interrupt(KeyboardInterrupt())

    def on_unraisable(unraisable: UnraisableHookArgs) -> None:
        if unraisable.exc_value is not None and unraisable.exc_value in raised:
            swallowed.append(unraisable.exc_value)
        else:
            previous_hook(unraisable)

    previous = signal.signal(signal.SIGTERM, on_term), signal.signal(signal.SIGINT, on_int)
    previous_hook, sys.unraisablehook = sys.unraisablehook, on_unraisable
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
        sys.unraisablehook = previous_hook
    if swallowed:
        raise swallowed[0]


@dataclass(frozen=True)
class BuildResult:
    """A build's exit code and the rows its dataset holds after it (0: nothing published);
    for a multi-dataset command (run.multi), the command's code and the rows of all."""

    code: int
    rows: int = 0
    discovery_failures: int = 0  # parts of discovery that failed (the run is partial)


def check_build(source: str, layout: OutputLayout, name: str | None, config: Path | None,
                overrides: dict[str, Any]) -> tuple[str, Settings] | str:
    """The dataset name and settings of a build, or the one line that refuses it (exit 2).
    Nothing is written here: a refused build leaves the output root as it was."""
    try:
        dataset = check_dataset_name(source if name is None else name)
        check_owner(layout.root, dataset, source, recorded_source(layout, dataset))
    except ConfigError as exc:
        return f"usage error: --name: {exc}"
    try:
        settings = load_settings(source, config, overrides=overrides)
        check_environment(settings)
        check_output_root(layout, dataset)
        reader = get_source(source)
        if isinstance(reader, ChecksInput):
            reader.check_input(settings.source)
    except ConfigError as exc:
        return f"configuration error: {exc}"
    return dataset, settings


def run_build(
    source: str,
    layout: OutputLayout,
    name: str | None,
    config: Path | None,
    overrides: dict[str, Any],
    since: str | None = None,
    limit: int | None = None,
    allow_empty: bool = False,
    listed: bool = False,
    listing_failures: int = 0,
    *,
    notify: Notify,
) -> BuildResult:
    """Check, lock, run the pipeline and record the run: its exit code, and how many rows the
    dataset holds (for multi-dataset commands);
    `listed`: an earlier build of the command already listed the crawl, with
    `listing_failures` parts of it failed."""
    checked = check_build(source, layout, name, config, overrides)
    if isinstance(checked, str):
        notify(checked)
        return BuildResult(EXIT_USAGE)
    dataset, settings = checked
    state = State(layout.root)
    request = BuildRequest(source, dataset, settings, since, limit, shlex.join(sys.argv[1:]),
                           allow_empty, listed, listing_failures)
    try:
        with state.lock(dataset):
            try:
                state.claim(dataset, source)
            except ConfigError as exc:
                notify(f"usage error: --name: {exc}")
                return BuildResult(EXIT_USAGE)
            return _run(request, state, notify)
    except LockHeld as exc:
        notify(f"{exc}: exiting")
        return BuildResult(EXIT_LOCKED)
    finally:
        state.close()


def _run(request: BuildRequest, state: State, notify: Notify) -> BuildResult:
    pin_mmap_threshold()  # the parent's memory must not follow the corpus size
    run_id = state.start_run(request.dataset, request.command or request.source)
    code = EXIT_FAILURE
    reason: str | None = "stopped by an unexpected error"
    pipeline = Pipeline(request, state)
    try:
        with sigterm_as_interrupt():
            code = pipeline.run()
        reason = _partial_reason(pipeline) if code == EXIT_PARTIAL else None
    except ConfigError as exc:
        reason = f"configuration error: {exc}"
        notify(reason)
        code = EXIT_USAGE
    except NothingPublished as exc:
        reason = str(exc)
        notify(reason)
    except LoralayError as exc:
        reason = f"build failed: {exc}"
        log.error("%s", reason)
    except Terminated:
        reason = "terminated (SIGTERM)"
        notify(f"{reason}; run the same command again to resume")
        code = EXIT_INTERRUPTED
    except KeyboardInterrupt:
        reason = "interrupted"
        notify(f"{reason}; run the same command again to resume")
        code = EXIT_INTERRUPTED
    finally:
        state.finish_run(run_id, code, dict(pipeline.stats.counts()),
                         reason.splitlines()[0] if reason else None)
    _summary(state, request, pipeline.stats.counts(), code, notify)
    given = rejected_input(pipeline.stats.rejected(), state.layout.dataset(request.dataset))
    if given:
        notify(f"{request.dataset}: {given}")
    return BuildResult(code, pipeline.stats.published_rows or 0,
                       pipeline.stats.discovery_failed or 0)


def _partial_reason(pipeline: Pipeline) -> str:
    """Why a run ended partial (exit 3), in one line."""
    stats = pipeline.stats
    views = stats.after_publish
    parts = [f"{stats.waiting_retry} document(s) wait for a retry" if stats.waiting_retry
             else "",
             f"{stats.discovery_failed} part(s) of discovery failed" if stats.discovery_failed
             else "",
             f"{views['views_full_text_waiting']} view full text(s) wait"
             if views["views_full_text_waiting"] else "",
             f"{views['views_empty']} view(s) without rows" if views["views_empty"] else ""]
    return "partial: " + ", ".join(p for p in parts if p)


def _summary(state: State, request: BuildRequest, counts: dict[str, int], code: int,
             notify: Notify) -> None:
    """The dataset's state, and what this run did: a failed run does not read as 'nothing new'."""
    statuses = state.status_counts(request.dataset)
    line = ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) or "nothing stored"
    done = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v)
    outcome = {EXIT_OK: "", EXIT_PARTIAL: "partial, exit 3"}.get(code, f"failed, exit {code}")
    run = "; ".join(filter(None, (outcome, done))) or "nothing new"
    log.info("%s: %s (this run: %s)", request.dataset, line, run)
    if interactive():
        notify(f"{state.layout.dataset(request.dataset)}: {line} (this run: {run})")
    documents, pages = state.waiting_for_ocr(request.dataset)
    if documents and not request.settings.ocr.enabled:
        # a warning when this run found new ones, so that cron mails it once
        report = log.warning if counts.get("rejected_needs_ocr") else log.info
        report("%s: %s", request.dataset, ocr_hint(documents, pages, request.command))
    documents, pages = state.without_text(request.dataset)
    if documents and not request.settings.ocr.enabled:
        # a warning when this run processed documents, so that cron does not mail it nightly
        report = log.warning if counts.get("processed") else log.info
        report("%s: %s", request.dataset, textless_hint(documents, pages, request.command))


def rejected_input(rejected: Mapping[str, int], folder: Path) -> str:
    """One line on the documents a run rejected for what their records gave (`GIVEN_INPUT`),
    per reason, and where their list is; empty when there are none. Said whether or not a
    terminal is there and whatever the verbosity: under cron it is the only trace of a
    manifest naming a missing file. Such rejects do not change the exit code."""
    found = {reason.value: rejected.get(reason.value, 0) for reason in GIVEN_INPUT}
    found = {reason: n for reason, n in found.items() if n}
    if not found:
        return ""
    listed = folder / "rejects.jsonl"
    where = (f"their list: {listed}" if listed.is_file()
             else f"nothing published, so no list yet: `build-corpus status {folder}` counts them")
    return (f"{sum(found.values())} document(s) rejected for what their record gave ("
            + ", ".join(f"{n} {reason}" for reason, n in sorted(found.items()))
            + f"); {where}")
