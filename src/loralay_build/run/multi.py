"""Commands that build several datasets in one go (`demo`, `eurlex`, `scielo`): one interrupt
stops them all, and one result (its exit code) sums them up.

Why: under cron a language without documents must not fail every night, and Ctrl-C or SIGTERM
must stop the command, not just the dataset being built at that moment.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loralay_build.layout import OutputLayout
from loralay_build.run.lifecycle import (
    STOP,
    BuildResult,
    Notify,
    check_build,
    run_build,
    sigterm_as_interrupt,
)
from loralay_build.run.pipeline import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_USAGE,
)

log = logging.getLogger("loralay_build")


@dataclass(frozen=True)
class DatasetJob:
    """One dataset of a multi-dataset command."""

    source: str
    dataset: str
    config: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    since: str | None = None
    limit: int | None = None


def build_all(
    jobs: Iterable[DatasetJob],
    layout: OutputLayout,
    allow_empty: bool,
    notify: Notify,
    after: Callable[[DatasetJob, BuildResult], None] | None = None,
) -> BuildResult:
    """Build each dataset in turn and return the command's result (`combined`); each build's
    lines for the user, then the command's own, go to `notify`.

    The first Ctrl-C or SIGTERM ends the whole command with 130; datasets built so far stay
    published and the same command resumes the rest.
    """
    jobs = list(jobs)
    for job in jobs:  # every dataset's options are checked before the first one starts
        refused = check_build(job.source, layout, job.dataset, job.config, job.overrides)
        if isinstance(refused, str):
            notify(refused)
            return BuildResult(EXIT_USAGE)
    results: list[BuildResult] = []
    listed: dict[str, int] = {}  # source -> failed parts of its listing by this command
    STOP.clear()
    try:
        with sigterm_as_interrupt():
            for job in jobs:
                if STOP.is_set():
                    raise KeyboardInterrupt
                # Each dataset may be empty on its own; the command decides below.
                result = run_build(job.source, layout, job.dataset, job.config, job.overrides,
                                   job.since, job.limit, allow_empty=True,
                                   listed=job.source in listed,
                                   listing_failures=listed.get(job.source, 0),
                                   notify=notify)
                if result.code == EXIT_INTERRUPTED:
                    return BuildResult(EXIT_INTERRUPTED)
                if result.code not in (EXIT_USAGE, EXIT_LOCKED) and job.source not in listed:
                    # One listing feeds every dataset of a crawl: a host that is down is
                    # tried once per run, not once per language.
                    listed[job.source] = result.discovery_failures
                if result.code == EXIT_OK and not result.rows:
                    folder = layout.dataset(job.dataset)
                    log.warning("%s: no document to publish; %s", job.dataset,
                                "its card lists no data file" if folder.exists()
                                else "no dataset folder written")
                results.append(result)
                if after is not None:
                    after(job, result)
    except KeyboardInterrupt:
        notify("interrupted; run the same command again to resume")
        return BuildResult(EXIT_INTERRUPTED)
    return combined(results, allow_empty, notify)


def combined(results: list[BuildResult], allow_empty: bool, notify: Notify) -> BuildResult:
    """The worst dataset's code with the rows of all, except that an empty dataset is only a
    warning: the command fails for emptiness (exit 1) only when none of its datasets holds
    a document."""
    worst = max((r.code for r in results), default=EXIT_OK)
    rows = sum(r.rows for r in results)
    if worst == EXIT_OK and not allow_empty and not rows:
        notify("no document published in any dataset (see `build-corpus status`); "
               "--allow-empty accepts that")
        return BuildResult(EXIT_FAILURE)
    return BuildResult(worst, rows)
