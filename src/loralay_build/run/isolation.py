"""Persistent worker processes that each handle one document at a time under hard limits.

Why a custom pool: a PDF engine can loop forever at constant memory, inflate a few KB into
GBs, or abort the whole process. Only a separate process that the parent can SIGKILL bounds
all three, and `ProcessPoolExecutor` cannot kill one stuck task. Workers are capped with
RLIMIT_AS, reused across documents, killed and replaced on timeout or death, and recycled
after a number of documents.

Workers are forked from a fork server: a clean process started once per pool that has
imported the task function's module (numpy, the PDF engine). A worker then costs a fork
(~10 ms) instead of a fresh interpreter importing everything (~0.2 s of CPU), which a
replacement after every timeout would pay again. The parent itself is never forked: it may
hold threads and open databases.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import multiprocessing as mp
import multiprocessing.forkserver
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, Generic, TypeVar, cast

from loralay_build import deadline
from loralay_build.run import allocator
from loralay_build.run.fatal import MEMORY_EXIT, exit_at_memory_limit

log = logging.getLogger(__name__)

TaskT = TypeVar("TaskT")
ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class Limits:
    timeout: float  # wall-clock seconds per task
    memory_bytes: int  # RLIMIT_AS of each worker
    recycle_after: int  # tasks per worker before it is replaced
    allocator: str = ""  # the malloc library workers run with (run/allocator.py); "" = libc's


class WorkerLost(Exception):
    """The worker did not answer: it was killed on timeout or died on its own
    (`out_of_memory`: at its address-space limit)."""

    def __init__(self, timed_out: bool, detail: str, out_of_memory: bool = False,
                 ocr: bool = False) -> None:
        super().__init__(detail)
        self.timed_out = timed_out
        self.detail = detail
        self.out_of_memory = out_of_memory
        self.ocr = ocr  # the task had asked for time to read pages by OCR


PR_SET_PDEATHSIG = 1  # linux/prctl.h
# The message a worker sends before its result to get more time for its task (`deadline`).
EXTEND = "extend"
# A parse allocates millions of short-lived tuples and floats: with the default first-generation
# threshold (700) the collector runs hundreds of times per 300 documents (~0.4 s CPU);
# at 20,000 it runs a dozen times (~0.1 s), holding a few MB more at most.
WORKER_GC_THRESHOLD = 20_000


def _die_with_parent() -> None:
    """Ask the kernel to SIGKILL this worker when its parent, the fork server, dies (Linux).

    A worker stuck in an endless parse never reads its pipe, so it would not notice a build
    killed with -9; without this it would spin on as an orphan. The fork server exits once
    the build is gone (see `_release_server`), and its workers with it.
    """
    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(0)


def _release_server() -> None:
    """Close this worker's copy of the fork server's "alive" pipe.

    The server exits when every holder of that pipe has closed it. Forked workers inherit a
    copy; closing it leaves the build process as the only holder, so a killed build ends the
    server, and `_die_with_parent` then ends the workers.
    """
    server: Any = multiprocessing.forkserver._forkserver  # its fd is not public API
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
        server._forkserver_alive_fd = None


def _limit_self(memory_bytes: int) -> None:
    _release_server()
    _die_with_parent()
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as handle:
        handle.write("1000")  # under memory pressure the kernel kills a worker first
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers stop


def set_worker_collector() -> None:
    """The garbage collector as a worker runs it (benchmarks of the stages set it too): the
    modules imported so far are permanent, kept out of every collection, and a collection
    starts after WORKER_GC_THRESHOLD allocations instead of 700."""
    gc.freeze()
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


def _worker_main(
    conn: Connection, func: Callable[[object], object], memory_bytes: int, preloaded: str
) -> None:
    _limit_self(memory_bytes)
    if preloaded:
        allocator.unload_from_environment(preloaded)
    exit_at_memory_limit(memory_bytes)
    set_worker_collector()
    deadline.listen(lambda seconds: conn.send((EXTEND, seconds)))
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        try:
            result: object = ("ok", func(task))
        except BaseException as exc:  # every failure is reported, none kills the loop
            result = ("error", f"{type(exc).__name__}: {exc}"[:500])
        conn.send(result)


@contextlib.contextmanager
def _main_left_out(func: Callable[..., object]) -> Iterator[None]:
    """Keep a worker from re-running the parent's main module.

    A worker forked from the server, like a spawned one, imports the parent's `__main__` (by
    its file, or by its module name under `python -m`) so that functions defined there
    unpickle. Under `build-corpus` or `python -m loralay_build.cli` that imports the whole CLI
    (Arrow, every source) into each worker: ~0.2 s of CPU and ~45 MiB per worker for nothing,
    as the worker's function lives in an importable module. Only then are the main module's
    file and name hidden while a worker starts.
    """
    main = sys.modules["__main__"]
    path, spec = getattr(main, "__file__", None), getattr(main, "__spec__", None)
    if getattr(func, "__module__", "__main__") == "__main__" or (path is None and spec is None):
        yield
        return
    if path is not None:
        del main.__file__
    main.__spec__ = None
    try:
        yield
    finally:
        main.__spec__ = spec
        if path is not None:
            main.__file__ = path


class _Worker:
    def __init__(self, ctx: mp.context.ForkServerContext, func: Callable[..., object],
                 limits: Limits, preloaded: str) -> None:
        self.conn, child = ctx.Pipe()
        self.process: BaseProcess = ctx.Process(
            target=_worker_main, args=(child, func, limits.memory_bytes, preloaded),
            daemon=True,
        )
        with _main_left_out(func):
            self.process.start()
        child.close()
        self.done = 0
        self.task: object | None = None
        self.started = 0.0
        self.extended = 0.0  # seconds the task asked for beyond the timeout (OCR)

    def deadline(self, timeout: float) -> float:
        return self.started + timeout + self.extended

    def kill(self) -> None:
        if self.process.is_alive() and self.process.pid is not None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.join(5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(2)
        if self.process.is_alive():
            self.kill()
        else:
            self.conn.close()


def _stop_server() -> None:
    """Stop the fork server and wait for it, once its workers have exited.

    Waiting for it also brings its workers' CPU time into this process's accounting of its
    children (`RUSAGE_CHILDREN`); a server left to exit after the build would lose it.
    """
    server: Any = multiprocessing.forkserver._forkserver  # stopping it is not public API
    stop = getattr(server, "_stop", None)
    if stop is not None:  # else the server ends on its own once this process has
        stop()


def _lost(process: BaseProcess, limits: Limits) -> WorkerLost:
    """How a worker that died on its own is reported."""
    code = process.exitcode
    if code == MEMORY_EXIT:
        return WorkerLost(False, f"worker aborted at its memory limit of "
                          f"{limits.memory_bytes // 2**20} MiB ([run] memory_limit_mb)",
                          out_of_memory=True)
    if code is not None and code < 0:
        return WorkerLost(False, f"worker killed by {signal.Signals(-code).name}")
    return WorkerLost(False, f"worker exited with code {code}")


class IsolatedPool(Generic[TaskT, ResultT]):
    """Run `func` over tasks in `workers` isolated processes; results come as they finish.

    Each result is `(task, value)` on success, or `(task, WorkerLost | str)` when the worker
    timed out, died, or `func` raised (the string holds the exception).
    """

    def __init__(self, func: Callable[[TaskT], ResultT], workers: int, limits: Limits,
                 preload: Sequence[str] = ()) -> None:
        """`preload`: modules the fork server imports besides `func`'s own (those `func`
        imports on first use), so that no worker pays for them."""
        self.func = func
        self.size = max(1, workers)
        self.limits = limits
        self.ctx = mp.get_context("forkserver")
        module = getattr(func, "__module__", "__main__")
        own = [] if module == "__main__" else [module]  # a main script's: imported by each worker
        self.ctx.set_forkserver_preload([*own, *preload])
        self.preloaded = allocator.resolve(limits.allocator)
        self.restarts = 0
        self._workers: list[_Worker] = []

    def __enter__(self) -> IsolatedPool[TaskT, ResultT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers = []
        _stop_server()

    def _spawn(self) -> _Worker:
        if self.preloaded:  # the server's start is the one moment the allocator can be set
            with allocator.preloaded(self.preloaded):
                multiprocessing.forkserver.ensure_running()
        return _Worker(self.ctx, self.func, self.limits, self.preloaded)

    def imap_unordered(
        self, tasks: Iterable[TaskT]
    ) -> Iterator[tuple[TaskT, ResultT | WorkerLost | str]]:
        pending = iter(tasks)
        exhausted = False
        while len(self._workers) < self.size:
            self._workers.append(self._spawn())
        while True:
            for i, worker in enumerate(self._workers):
                if worker.task is None and not exhausted:
                    task = next(pending, None)
                    if task is None:
                        exhausted = True
                        break
                    self._assign(i, task)
            busy = [w for w in self._workers if w.task is not None]
            if not busy:
                return
            now = time.monotonic()
            soonest = min(w.deadline(self.limits.timeout) for w in busy)
            ready = wait([w.conn for w in busy], timeout=max(0.0, soonest - now))
            for worker in busy:
                current = cast(TaskT, worker.task)
                if worker.conn in ready:
                    try:
                        status, value = worker.conn.recv()
                    except (EOFError, OSError):
                        worker.process.join(5)
                        yield current, _lost(worker.process, self.limits)
                        self._replace(worker)
                        continue
                    if status == EXTEND:
                        worker.extended += float(value)
                        continue
                    worker.task = None
                    worker.done += 1
                    yield current, (value if status == "ok" else str(value))
                elif time.monotonic() >= worker.deadline(self.limits.timeout):
                    worker.kill()
                    yield current, self._timed_out(worker)
                    self._replace(worker)

    def _timed_out(self, worker: _Worker) -> WorkerLost:
        seconds = self.limits.timeout + worker.extended
        if worker.extended:
            return WorkerLost(True, f"killed after {seconds:.0f}s, reading pages by OCR",
                              ocr=True)
        return WorkerLost(True, f"killed after {seconds:.0f}s")

    def _assign(self, i: int, task: TaskT) -> None:
        """Send `task` to worker `i`, replaced first when due or dead.

        A worker that died while idle (its fork server killed, say) can still look alive:
        the send then fails, and the task goes to a new worker instead of failing the run.
        """
        worker = self._workers[i]
        if worker.done >= self.limits.recycle_after or not worker.process.is_alive():
            worker.stop()
            worker = self._workers[i] = self._spawn()
        try:
            worker.conn.send(task)
        except OSError:
            worker.stop()
            worker = self._workers[i] = self._spawn()
            worker.conn.send(task)
        worker.task, worker.started, worker.extended = task, time.monotonic(), 0.0

    def _replace(self, worker: _Worker) -> None:
        self.restarts += 1
        log.info("replacing worker pid %s", worker.process.pid)
        worker.kill()
        self._workers[self._workers.index(worker)] = self._spawn()
