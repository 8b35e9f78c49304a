"""What uploading a new version of a dataset folder to the Hub would send.

The Hub's storage (Xet) splits every uploaded file into chunks cut by content and stores each
chunk once, so an upload sends only the chunks the repository does not hold yet. Its chunker
is a gear rolling hash with a 64 KiB target, chunks of at least 8 KiB and at most 128 KiB
(xet-core's published parameters). This module cuts files the same way (its gear table is its
own, so the cut points differ from Xet's, not their statistics) and counts the bytes of a new
version's chunks absent from the previous version's files: the bytes a nightly upload moves.

    python scripts/hub_transfer.py PREVIOUS_FOLDER CURRENT_FOLDER
"""

from __future__ import annotations

import argparse
import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MIN_CHUNK = 8 * 1024
MAX_CHUNK = 128 * 1024
TARGET_BITS = 16  # a cut where the hash's top 16 bits are zero: one byte in 64 KiB
WINDOW = 64  # bytes a 64-bit gear hash depends on: older ones are shifted out
BLOCK = 1 << 22  # bytes hashed at a time, so memory stays flat on large shards

_RNG = random.Random(2026)
GEAR = np.array([_RNG.getrandbits(64) for _ in range(256)], dtype=np.uint64)


def _cut_candidates(data: bytes) -> npt.NDArray[np.int64]:
    """Offsets whose gear hash allows a cut. The hash at `i` is the sum of gear[data[i-k]]
    shifted left by k, k < 64, so it is computed for all offsets at once by doubling the
    window six times; it equals the hash restarted at a chunk's start wherever a cut may
    fall (at least MIN_CHUNK bytes in, MIN_CHUNK > WINDOW)."""
    values = np.frombuffer(data, dtype=np.uint8)
    found = []
    for start in range(0, len(values), BLOCK):
        low = max(0, start - WINDOW + 1)
        window = GEAR[values[low:start + BLOCK]]
        span = 1
        while span < WINDOW:
            shifted = np.zeros_like(window)
            shifted[span:] = window[:-span] << np.uint64(span)
            window = window + shifted
            span *= 2
        hits = np.flatnonzero((window >> np.uint64(64 - TARGET_BITS)) == 0) + low
        found.append(hits[hits >= start])
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def chunk_ends(data: bytes) -> list[int]:
    """The end offset of each chunk of `data`: at the first allowed cut at least MIN_CHUNK
    bytes after the chunk's start, or MAX_CHUNK bytes after it, or at the end."""
    candidates = _cut_candidates(data)
    ends: list[int] = []
    start = 0
    while start < len(data):
        at = int(np.searchsorted(candidates, start + MIN_CHUNK - 1))
        cut = int(candidates[at]) + 1 if at < len(candidates) else len(data)
        start = min(cut, start + MAX_CHUNK, len(data))
        ends.append(start)
    return ends


_CHUNKED: dict[bytes, dict[bytes, int]] = {}  # by the file's sha256: nights share files


def chunks(path: Path) -> dict[bytes, int]:
    """{chunk digest: size} of a file."""
    data = path.read_bytes()
    whole = hashlib.sha256(data).digest()
    if whole in _CHUNKED:
        return _CHUNKED[whole]
    out = {}
    start = 0
    for end in chunk_ends(data):
        out[hashlib.sha256(data[start:end]).digest()] = end - start
        start = end
    _CHUNKED[whole] = out
    return out


@dataclass(frozen=True)
class Transfer:
    sent: int  # bytes of chunks the previous version does not hold (each counted once)
    total: int  # bytes of the current version's files
    files: int  # files of the current version


def files_of(folder: Path) -> list[Path]:
    """Every file a Hub upload of the folder would hold (hidden files aside)."""
    return [p for p in sorted(folder.rglob("*")) if p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(folder).parts)]


def transfer(previous: Iterable[Path], current: Sequence[Path]) -> Transfer:
    """What uploading `current` sends to a repository holding `previous`."""
    known: set[bytes] = set()
    for path in previous:
        known.update(chunks(path))
    sent = 0
    for path in current:
        for digest, size in chunks(path).items():
            if digest not in known:
                sent += size
                known.add(digest)
    return Transfer(sent, sum(p.stat().st_size for p in current), len(current))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("previous", type=Path)
    parser.add_argument("current", type=Path)
    args = parser.parse_args()
    moved = transfer(files_of(args.previous), files_of(args.current))
    print(f"{moved.files} files, {moved.total} bytes; an upload sends {moved.sent} bytes "
          f"({100 * moved.sent / max(1, moved.total):.2f} %)")


if __name__ == "__main__":
    main()
