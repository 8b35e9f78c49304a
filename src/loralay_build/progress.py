"""Progress bars on a terminal, silence under cron."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

T = TypeVar("T")


_hidden = False


def hide_progress() -> None:
    """`-q`: no bars or terminal summaries even on a terminal."""
    global _hidden
    _hidden = True


def interactive() -> bool:
    return not _hidden and sys.stderr.isatty()


class BarSafeHandler(logging.StreamHandler[TextIO]):
    """Writes each log line through tqdm, which lifts the progress bars of the same stream
    out of the way and redraws them below: a line written straight to the terminal would
    land in the middle of a bar.

    Only the process that made the handler draws bars; a forked worker writes plainly, so it
    never waits on a tqdm lock that a thread of its parent held at the fork. Without a
    terminal there is no bar: lines are written plainly, and tqdm is never loaded (cron).
    """

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.pid = os.getpid()

    def emit(self, record: logging.LogRecord) -> None:
        if os.getpid() != self.pid or not interactive():
            super().emit(record)
            return
        from tqdm import tqdm

        try:
            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # logging's contract: report the failure, never raise it
            self.handleError(record)


def progress(items: Iterable[T], total: int | None, desc: str) -> Iterator[T]:
    """Wrap an iterable in a tqdm bar when stderr is a terminal; pass it through otherwise."""
    if not interactive():
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, total=total, desc=desc, unit="doc", leave=False, dynamic_ncols=True)


def batch_progress(batches: Iterable[list[T]], desc: str) -> Iterator[list[T]]:
    """Like `progress` for a stream of batches: the bar counts documents, not batches."""
    if not interactive():
        yield from batches
        return
    from tqdm import tqdm

    with tqdm(desc=desc, unit="doc", leave=False, dynamic_ncols=True) as bar:
        for batch in batches:
            yield batch
            bar.update(len(batch))
