"""What a process does when native code kills it with a signal (SIGABRT, SIGSEGV, SIGBUS).

Why: PDFium aborts when an allocation fails under the worker's address-space limit, so an
exploding file looked like a crash (`corrupted`, "worker killed by SIGABRT") instead of the
`too_large` it is; and under `--executor serial` the same abort ended the whole build with
exit 134 and not a word. A signal handler in C is needed (Python's own handlers run only
between bytecodes, after `abort()` has already ended the process): ctypes gives one that
calls back into Python, which here only reads a few bytes and exits.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
from collections.abc import Callable

FATAL_SIGNALS = (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS)
# A worker's exit status when a fatal signal caught it at its memory limit (the parent turns
# it into `too_large`); any value no Python exit or signal death gives.
MEMORY_EXIT = 86
# At or near the limit: a process using this share of its address space when it died, or
# half of it when an allocation had just failed (the failed one may itself have been large:
# a 1 GiB bomb under 2 GiB dies at 62 %), ran out of memory. Below half, a stale errno
# proves nothing and the crash stays a crash.
NEAR_LIMIT = 0.9
FAILED_ABOVE = 0.5

_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_int)
_installed: list[object] = []  # the C callbacks must live as long as the process
_current: list[bytes] = [b""]  # what `serial` was doing, for its last line


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
    libc.__errno_location.restype = ctypes.POINTER(ctypes.c_int)
    return libc


def _install(handler: Callable[[int], None]) -> Callable[[], None]:
    """Handle the fatal signals with `handler`; returns what puts the previous handlers back."""
    libc = _libc()
    callback = _HANDLER(handler)
    _installed.append(callback)
    previous = {signum: libc.signal(signum, ctypes.cast(callback, ctypes.c_void_p))
                for signum in FATAL_SIGNALS}

    def restore() -> None:
        for signum, old in previous.items():
            libc.signal(signum, old)

    return restore


def _address_space() -> int:
    """This process's virtual size in bytes (0 if unknown), read without building much."""
    try:
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            pages = int(os.read(fd, 64).split()[0])
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def exit_at_memory_limit(limit_bytes: int) -> None:
    """In a worker: a fatal signal raised at or near `limit_bytes` (see NEAR_LIMIT) ends
    the worker with `MEMORY_EXIT`; any other keeps its usual effect."""
    libc = _libc()

    def handler(signum: int) -> None:
        failed = libc.__errno_location()[0] == errno.ENOMEM  # read before anything resets it
        used = _address_space() / limit_bytes
        if used >= NEAR_LIMIT or (failed and used >= FAILED_ABOVE):
            os._exit(MEMORY_EXIT)
        # Give the signal back to the kernel: `abort()` raises it again once this returns,
        # a faulting instruction faults again, and either now ends the process as before.
        libc.signal(signum, None)

    _install(handler)


def doing(what: str) -> None:
    """Name the document this process works on, for the line a fatal signal prints."""
    _current[0] = what.encode("utf-8", "replace")[:300]


def exit_one_line(advice: str) -> Callable[[], None]:
    """In a process without isolation (`--executor serial`): a fatal signal prints one line
    naming the signal, the document being processed and `advice`, and exits 1. Returns what
    puts the previous handlers back."""
    def handler(signum: int) -> None:
        name = signal.Signals(signum).name.encode()
        where = b" while processing " + _current[0] if _current[0] else b""
        os.write(2, b"error: the build process was killed by " + name + where + b"; "
                 + advice.encode() + b"\n")
        os._exit(1)

    return _install(handler)
