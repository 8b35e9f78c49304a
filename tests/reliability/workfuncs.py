"""Task functions for the isolation property tests; a module of its own so spawned workers
can import it."""

from __future__ import annotations

import os
import time


def behave(task: tuple[str, int]) -> int:
    """Return, raise, hang or kill the worker, as the task says."""
    kind, value = task
    if kind == "raise":
        raise ValueError(f"task {value} failed")
    if kind == "hang":
        while True:
            time.sleep(0.05)
    if kind == "exit":
        os._exit(value % 100 + 1)
    return value * 2
