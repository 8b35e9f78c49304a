"""A running task's request for more wall-clock time, heard by the pool that enforces it.

Why: the pool kills a worker after `[run] timeout` seconds, a bound fit for parsing. A page
read by OCR takes seconds, so the worker asks for each such page's allowance before reading
it; the pool then knows the time goes to OCR and records a kill then as `ocr_timeout`. In
a process without a pool (`--executor serial`) the request is a no-op.
"""

from __future__ import annotations

from collections.abc import Callable

_listener: Callable[[float], None] | None = None


def listen(listener: Callable[[float], None] | None) -> None:
    """Install the function a request goes to (the worker's pipe to its pool)."""
    global _listener
    _listener = listener


def extend(seconds: float) -> None:
    """Ask for `seconds` more for the current task."""
    if _listener is not None:
        _listener(seconds)
