"""The terminal's bars count documents, also when a source hands them over in batches."""

from __future__ import annotations

import fcntl
import io
import logging
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tqdm import tqdm

from loralay_build import progress
from loralay_build.progress import BarSafeHandler


def test_the_discover_bar_counts_documents_not_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    bars: list[tqdm[Any]] = []

    class Recorded(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, file=io.StringIO(), **kwargs)
            bars.append(self)

    monkeypatch.setattr(progress, "interactive", lambda: True)
    monkeypatch.setattr("tqdm.tqdm", Recorded)  # what `progress` loads when it draws
    batches = [list(range(10)), list(range(3))]
    assert list(progress.batch_progress(iter(batches), "discover")) == batches
    (bar,) = bars
    assert (bar.n, bar.unit) == (13, "doc")


CHILD = """
import logging, time
from loralay_build.cli import _setup_logging
from loralay_build.progress import progress
_setup_logging(0, False)
for i in progress(range(6), 6, "fetch"):
    time.sleep(0.15)
    if i in (2, 4):
        logging.getLogger("loralay_build.test").warning("line %d while the bar is drawn", i)
"""


def screen(output: str) -> list[str]:
    """The rows a terminal shows after `output` (carriage returns, newlines, cursor up,
    erase to end of line; other escapes dropped)."""
    rows: list[list[str]] = [[]]
    row = col = 0
    i = 0
    while i < len(output):
        char = output[i]
        if char == "\x1b":
            end = i + 2
            while end < len(output) and not output[end].isalpha():
                end += 1
            code = output[i:end + 1]
            if code == "\x1b[A":
                row = max(0, row - 1)
            elif code == "\x1b[K":
                del rows[row][col:]
            i = end + 1
            continue
        if char == "\r":
            col = 0
        elif char == "\n":
            row, col = row + 1, 0
            while len(rows) <= row:
                rows.append([])
        else:
            line = rows[row]
            if col >= len(line):
                line.extend(" " * (col - len(line) + 1))
            line[col] = char
            col += 1
        i += 1
    return ["".join(r).rstrip() for r in rows]


def test_log_lines_on_a_terminal_stay_out_of_the_progress_bar() -> None:
    """A warning logged while a bar is drawn on a terminal gets a row of its own."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave, env=os.environ.copy())
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(60) == 0
    output = b"".join(chunks).decode()
    assert "fetch:" in output  # a bar was drawn
    rows = screen(output)
    for i in (2, 4):
        (row,) = [r for r in rows if f"line {i} while the bar is drawn" in r]
        assert re.fullmatch(rf"\d{{4}}-\d\d-\d\d [\d:,]+ WARNING loralay_build.test: "
                            rf"line {i} while the bar is drawn", row), rows


def test_a_forked_worker_logs_even_when_the_bar_lock_was_held_at_the_fork(
        tmp_path: Path) -> None:
    """A thread of the parent holds tqdm's lock while a worker is forked: in the worker that
    lock stays held for ever, so a worker writing through tqdm would hang."""
    out = tmp_path / "log.txt"
    with out.open("w", encoding="utf-8") as stream:
        handler = BarSafeHandler(stream)
        lock = tqdm.get_lock()
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with lock:
                held.set()
                release.wait()

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait()
        pid = os.fork()
        if pid == 0:  # the worker
            handler.emit(logging.makeLogRecord({"msg": "from the worker", "levelno": 30}))
            stream.flush()
            os._exit(0)
        release.set()
        holder.join()
        deadline = time.monotonic() + 20
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail("the worker hung on the bar lock")
            time.sleep(0.05)
    assert out.read_text(encoding="utf-8") == "from the worker\n"
