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
