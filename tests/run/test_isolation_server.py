"""Workers are forked from a server that has imported the task's module; the server is
stopped and reaped with the pool, and a worker that died while idle is replaced."""

from __future__ import annotations

import multiprocessing.forkserver
import os
import signal
import threading
from pathlib import Path

from loralay_build.errors import Reason
from loralay_build.parse.backend import backend_module
from loralay_build.run.isolation import IsolatedPool, Limits, WorkerLost
from loralay_build.run.process import Outcome, Task, process_document
from loralay_build.run.worker_results import outcome_of
from tests.helpers.waits import wait_for, zombie_children
from tests.helpers.workfuncs import behave


def _server_pid() -> int | None:
    """The running fork server's pid (a private attribute of the standard library's server)."""
    pid: int | None = vars(multiprocessing.forkserver._forkserver).get("_forkserver_pid")
    return pid


def _parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_workers_come_from_a_preloaded_server_stopped_with_the_pool() -> None:
    pool: IsolatedPool[Task, Outcome] = IsolatedPool(
        process_document, 2, Limits(60.0, 2 << 30, 10), [backend_module("pdfium")]
    )
    with pool:
        assert list(pool.imap_unordered([])) == []  # starts the workers, runs nothing
        server = _server_pid()
        assert server is not None
        # The server imported the worker's module and the PDF engine before forking.
        assert "pdfium" in Path(f"/proc/{server}/maps").read_text()
        workers = [w.process.pid for w in pool._workers]
        assert len(workers) == 2
        assert all(pid is not None and _parent_of(pid) == server for pid in workers)
    assert _server_pid() is None
    # Reaped, not left as a zombie or an orphan: its CPU is counted in this process's children.
    assert not Path(f"/proc/{server}").exists()
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers if pid is not None)


def test_time_a_task_asks_for_ocr_extends_its_deadline_and_its_kill_is_an_ocr_timeout() -> None:
    """A worker reading pages by OCR asks for each page's allowance: it is killed only past
    the timeout plus that allowance, and the kill is reported as an OCR timeout."""
    pool = IsolatedPool(behave, 2, Limits(5.0, 2 << 30, 10))  # 5 s for the ask to arrive
    with pool:
        lost = dict(pool.imap_unordered([("hang", 0), ("ask_time", 1)]))
    hung, read = lost[("hang", 0)], lost[("ask_time", 1)]
    assert isinstance(hung, WorkerLost) and isinstance(read, WorkerLost)
    assert (hung.timed_out, hung.ocr) == (True, False)
    assert (read.timed_out, read.ocr) == (True, True)
    assert read.detail == "killed after 6s, reading pages by OCR"
    assert outcome_of(read).reason == Reason.OCR_TIMEOUT
    assert outcome_of(hung).reason == Reason.TIMEOUT


def test_a_worker_dead_while_idle_is_replaced_before_its_next_task() -> None:
    """A worker can die between tasks (its fork server killed, the OOM killer) before the pool
    notices: the task it was to get goes to a new worker instead of failing the run.

    The stopped server cannot report the worker's exit, so the dead worker still looks alive
    when the next task is sent to it.
    """
    pool = IsolatedPool(behave, 1, Limits(60.0, 2 << 30, 10))
    with pool:
        results = pool.imap_unordered([("exit_later", 2), ("return", 21)])
        assert next(results) == (("exit_later", 2), 4)
        server = _server_pid()
        assert server is not None
        os.kill(server, signal.SIGSTOP)
        resume = threading.Timer(1.0, os.kill, (server, signal.SIGCONT))
        try:
            # the worker has exited (a zombie the stopped server has not reaped); only the
            # server could tell
            wait_for(lambda: bool(zombie_children(server)), "exit of the idle worker")
            resume.start()
            assert dict(results) == {("return", 21): 42}
        finally:
            resume.cancel()
            os.kill(server, signal.SIGCONT)
