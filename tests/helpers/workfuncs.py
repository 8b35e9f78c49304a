"""Task functions for the isolation property tests; a module of its own so spawned workers
can import it."""

from __future__ import annotations

import os
import threading
import time

from loralay_build import deadline


def behave(task: tuple[str, int]) -> int:
    """Return, raise, hang or kill the worker, as the task says ("exit_later": answer, then
    exit `value` tenths of a second later, while idle)."""
    kind, value = task
    if kind == "exit_later":
        threading.Timer(value / 10, os._exit, (1,)).start()
    if kind == "raise":
        raise ValueError(f"task {value} failed")
    if kind == "ask_time":  # ask for `value` seconds (an OCR page's allowance), then hang
        deadline.extend(value)
    if kind in ("hang", "ask_time"):
        while True:
            time.sleep(0.05)
    if kind == "exit":
        os._exit(value % 100 + 1)
    return value * 2


def libraries(task: str) -> tuple[bool, str | None]:
    """Whether the library file `task` is mapped into this worker, and its LD_PRELOAD."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        mapped = any(line.rstrip().endswith(os.path.realpath(task)) for line in maps)
    return mapped, os.environ.get("LD_PRELOAD")
