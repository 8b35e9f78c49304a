"""Waits on an event (a file, a log line, a state mark, a process state), never on elapsed
time: the deadline only bounds a wait that fails, one that succeeds ends on its event."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

DEADLINE = 300.0  # generous: a loaded machine slows the event, it does not lose it
POLL = 0.01


def wait_for(ready: Callable[[], bool], what: str, seconds: float = DEADLINE) -> None:
    """Until `ready()` holds; fails with `what` once `seconds` have passed without it."""
    end = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < end, f"no {what} within {seconds:.0f} s"
        time.sleep(POLL)


def parent_of(pid: int) -> int | None:
    """The parent's pid, or None once the process is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError):
        return None


def state_of(pid: int) -> str:
    """The process's state letter (R, S, T when stopped, Z when a zombie), "" once gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def zombie_children(pid: int) -> set[int]:
    """Children of `pid` that have exited and wait for it to reap them."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and parent_of(int(entry.name)) == pid \
                and state_of(int(entry.name)) == "Z":
            found.add(int(entry.name))
    return found
