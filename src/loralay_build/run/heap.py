"""Keep the build parent's heap from growing with the number of documents it handles.

Why: glibc raises its mmap threshold each time a large block allocated by mmap is freed, up
to 32 MiB. After the first documents, every row (word lists, boxes, a work file's bytes:
hundreds of KiB each) is carved from the main heap between small objects that live on, and
the heap can no longer shrink: the parent's resident memory grew by tens of KiB per
document. A fixed threshold keeps such blocks in their own mappings, returned when freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3  # mallopt's parameter number in glibc's malloc.h
MMAP_THRESHOLD = 128 * 1024  # glibc's initial value, kept instead of grown


def pin_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold for this process; False where the C library has no
    mallopt (musl, macOS), which leaves the allocator as it is."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
