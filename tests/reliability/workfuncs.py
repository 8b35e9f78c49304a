"""Task functions for the isolation property tests; a module of its own so spawned workers
can import it."""

from __future__ import annotations

import os
import threading
import time


def behave(task: tuple[str, int]) -> int:
    """Return, raise, hang or kill the worker, as the task says ("exit_later": answer, then
    exit `value` tenths of a second later, while idle)."""
    kind, value = task
    if kind == "exit_later":
        threading.Timer(value / 10, os._exit, (1,)).start()
    if kind == "raise":
        raise ValueError(f"task {value} failed")
    if kind == "hang":
        while True:
            time.sleep(0.05)
    if kind == "exit":
        os._exit(value % 100 + 1)
    return value * 2
