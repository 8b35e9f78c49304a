"""Compact column values that cross the worker boundary instead of lists of Python objects.

A document's words travel as one UTF-8 buffer with int32 offsets (Arrow's string layout), and
its boxes and pages as numpy arrays: pickling them copies a few buffers, where lists cost one
object per word and per coordinate on both sides of the pipe. The parent turns them into
Arrow arrays without a per-word step.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from loralay_build.native import native_module


@dataclass(frozen=True)
class Strings:
    """A list of strings in Arrow's layout: `offsets[k]:offsets[k+1]` of `data` is string k."""

    data: bytes
    offsets: bytes  # n + 1 little-endian int32

    @classmethod
    def pack(cls, values: Sequence[str]) -> Strings:
        """The strings in Arrow's layout, by the compiled core when it is built (a quarter of
        the cost)."""
        native = native_module()
        if native is not None and isinstance(values, list):
            packed = native.pack(values)
            if packed is not None:
                return cls(*packed)
        return cls.pack_python(values)

    @classmethod
    def pack_python(cls, values: Sequence[str]) -> Strings:
        """`pack` in Python and numpy alone (the compiled core's reference)."""
        joined = "".join(values)
        data = joined.encode("utf-8")
        offsets = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)),
                  out=offsets[1:])
        if len(data) != len(joined):
            # Non-ASCII: map character offsets to byte offsets through each code point's
            # UTF-8 length, for the whole text at once.
            points = np.frombuffer(joined.encode("utf-32-le"), dtype="<u4")
            widths = 1 + (points >= 0x80) + (points >= 0x800) + (points >= 0x10000)
            ends = np.zeros(len(points) + 1, dtype=np.int64)
            np.cumsum(widths, out=ends[1:])
            offsets = ends[offsets]
        return cls(data, offsets.astype("<i4").tobytes())

    def __len__(self) -> int:
        return len(self.offsets) // 4 - 1

    def unpack(self) -> list[str]:
        offsets = np.frombuffer(self.offsets, dtype="<i4").tolist()
        return [self.data[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets)]
