"""Per-document functions for the Ray executor tests, importable by Ray workers and by the
isolated children they spawn."""

from __future__ import annotations

import ctypes
import os

from loralay_build.run.process import Outcome, Task, process_document


def crash_or_process(task: Task) -> Outcome:
    """Segfault or abort the process on the documents named so; process the others."""
    if task.candidate.source_id == "segfault":
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    if task.candidate.source_id == "abort":
        os.abort()
    return process_document(task)
