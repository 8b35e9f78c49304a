"""The benchmark's model of a Hub upload: chunks cut by content within Xet's size bounds, and
only the chunks the previous version lacks are sent."""

from __future__ import annotations

import random
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
sys.path.insert(0, str(SCRIPTS))
from hub_transfer import MAX_CHUNK, MIN_CHUNK, chunk_ends, transfer  # noqa: E402


def _random(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def test_chunks_are_cut_by_content_within_the_bounds() -> None:
    data = _random(3_000_000, 1)
    ends = chunk_ends(data)
    sizes = [b - a for a, b in zip([0, *ends], ends, strict=False)]
    assert ends[-1] == len(data) and sum(sizes) == len(data)
    assert all(MIN_CHUNK <= s <= MAX_CHUNK for s in sizes[:-1])
    assert 24 <= len(sizes) <= 80  # about one chunk per 64 KiB beyond the 8 KiB minimum
    assert chunk_ends(b"\0" * 300_000) == [131072, 262144, 300000]  # no cut: the maximum
    # Bytes inserted near the start move the later cut points with them.
    moved = chunk_ends(b"x" * 1000 + data)
    assert {e - 1000 for e in moved[3:]} == set(ends[3:])


def test_an_upload_sends_only_the_chunks_the_previous_version_lacks(tmp_path: Path) -> None:
    old = tmp_path / "old"
    new = tmp_path / "new"
    old.mkdir()
    new.mkdir()
    base = _random(2_000_000, 2)
    (old / "a.parquet").write_bytes(base)
    (old / "b.parquet").write_bytes(_random(500_000, 3))
    edited = base[:1_000_000] + b"one edit" + base[1_000_000:]
    (new / "a-renamed.parquet").write_bytes(edited)  # renamed and edited in the middle
    (new / "b.parquet").write_bytes((old / "b.parquet").read_bytes())  # unchanged
    (new / "c.parquet").write_bytes(_random(100_000, 4))  # new
    moved = transfer(sorted(old.iterdir()), sorted(new.iterdir()))
    assert moved.files == 3 and moved.total == len(edited) + 500_000 + 100_000
    assert 100_000 < moved.sent <= 100_000 + 2 * MAX_CHUNK  # the new file, the edit's chunks
    assert transfer(sorted(new.iterdir()), sorted(new.iterdir())).sent == 0
