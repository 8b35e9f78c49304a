"""The memory allocator the worker processes run with (`[run] allocator`).

Why: parsing allocates and frees millions of small blocks inside PDFium, which calls the C
library's malloc. mimalloc in its place takes 3 to 4 % off the CPU of a whole build and
about 8 % off parsing, with the same shards (docs/benchmarks.md, "The workers' allocator").
A library only replaces malloc when it is preloaded as a process starts, so it is named in
`LD_PRELOAD` while the pool's fork server starts, and every worker forked from the server
inherits it. Each worker then takes it out of its own environment again, so that the
programs it runs (tesseract, pdftotext) start with the environment the build was given.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

PRELOAD = "LD_PRELOAD"


def _library_dirs() -> list[Path]:
    """Where the dynamic loader looks for a bare library name: LD_LIBRARY_PATH, then the
    system's library folders."""
    # Debian's multiarch folder; a Python built elsewhere (conda) may not know its name.
    arch = sysconfig.get_config_var("MULTIARCH") or f"{platform.machine()}-linux-gnu"
    listed = [Path(p) for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    system = [Path(root, arch) for root in ("/lib", "/usr/lib")]
    return [*listed, *system, *map(Path, ("/lib64", "/usr/lib64", "/lib", "/usr/lib",
                                          "/usr/local/lib"))]


def resolve(name: str) -> str:
    """The file of the allocator `name` (a path, or a library file name searched as the
    loader does), or "" for the C library's own malloc: when `name` is empty, the library is
    not installed, or the platform has no `LD_PRELOAD`."""
    if not name or not sys.platform.startswith("linux"):
        return ""
    candidates = [Path(name)] if "/" in name else [d / name for d in _library_dirs()]
    found = next((str(path) for path in candidates if path.is_file()), "")
    if not found:  # a path that is not there is a mistake; a library not installed is not
        level = logging.WARNING if "/" in name else logging.DEBUG
        log.log(level, "[run] allocator %s not found: workers use the C library's malloc",
                name)
    return found


@contextlib.contextmanager
def preloaded(library: str) -> Iterator[None]:
    """`library` first in LD_PRELOAD for the processes started meanwhile."""
    before = os.environ.get(PRELOAD)
    os.environ[PRELOAD] = f"{library}:{before}" if before else library
    try:
        yield
    finally:
        if before is None:
            del os.environ[PRELOAD]
        else:
            os.environ[PRELOAD] = before


def unload_from_environment(library: str) -> None:
    """Undo `preloaded` in a process started under it: the programs it runs start without
    `library`."""
    value = os.environ.get(PRELOAD)
    if value is None:
        return
    entries = value.replace(" ", ":").split(":")
    if library in entries:
        entries.remove(library)
    rest = ":".join(e for e in entries if e)
    if rest:
        os.environ[PRELOAD] = rest
    else:
        del os.environ[PRELOAD]
