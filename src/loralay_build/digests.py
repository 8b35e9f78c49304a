"""Sets of sha256 digests that cost 32 bytes an entry.

Why: a run remembers something per document (the files it fetched, the content keys the
published shards hold). As Python strings in a set or dict that is 100 to 250 bytes each,
which at hundreds of thousands of documents is what makes the driver's memory grow with the
corpus. A sorted array of 32-byte values holds the same, exactly.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Digests = npt.NDArray[np.bytes_]


def find(ordered: Digests, digest: bytes) -> int | None:
    """The index of a 32-byte `digest` in a sorted S32 array, or None."""
    at = int(np.searchsorted(ordered, digest))
    # An S32 element is read back without its trailing NUL bytes; two 32-byte digests are
    # equal exactly when their stripped forms are.
    if at < len(ordered) and ordered[at] == digest.rstrip(b"\0"):
        return at
    return None


class DigestSet:
    """A growing set of 32-byte digests: additions are appended to a buffer and merged into
    the sorted array when the set is next asked."""

    def __init__(self) -> None:
        self._ordered: Digests = np.empty(0, dtype="S32")
        self._added = bytearray()

    def add(self, digest: bytes) -> None:
        if len(digest) != 32:
            raise ValueError(f"expected a 32-byte digest, got {len(digest)} bytes")
        self._added += digest

    def __contains__(self, digest: bytes) -> bool:
        if self._added:
            added = np.frombuffer(bytes(self._added), dtype="S32")
            self._ordered = np.sort(np.concatenate([self._ordered, added]))
            self._added.clear()
        return find(self._ordered, digest) is not None
