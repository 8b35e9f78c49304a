"""The candidates a publish places, as columns: row i of every column is one candidate, in
id order. A publish decides over the whole dataset at once (percentile filters, the
chronological ranking), so what it holds per candidate sets the parent's memory on a large
corpus: about 80 bytes here, against about 700 for an object with its strings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from loralay_build.corpus.arrays import take, to_arrow
from loralay_build.corpus.dedup import split_key
from loralay_build.corpus.publish import Item
from loralay_build.corpus.split import SPLITS, Codes, SplitColumns, split_code
from loralay_build.licences import to_spdx
from loralay_build.state import PUBLISHED, Row

CHUNK = 256  # candidates gathered as Python values before they become columns
NUMBERS = (("status", np.uint16), ("split", np.int8), ("preset", np.int8),
           ("n_pages", np.int32), ("summary_words", np.int32), ("language", np.uint16),
           ("licence", np.uint16), ("day", np.int32))
UNDATED = np.iinfo(np.int32).min  # the `day` of a candidate without a date: the oldest
Positions = npt.NDArray[np.intp]


class Names:
    """Small codes for the few distinct strings a column repeats (status, language,
    licence)."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._codes: dict[str, int] = {}

    def code(self, value: str) -> int:
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self.values)
            self.values.append(value)
        return code


@dataclass(frozen=True)
class PlanRows:
    """What publishing holds of each candidate while it decides, and no more. The
    chronological key is kept only for candidates whose split is still to be given; the
    statistics are read again for the published rows alone (`kept_statistics`)."""

    ids: pa.Array
    status: npt.NDArray[np.uint16]  # codes of `names`
    work_keys: npt.NDArray[np.uint8]  # (n, 32): the work file's sha256; zeros: none
    split: Codes  # stored by an earlier build
    preset: Codes  # imposed by the source
    n_pages: npt.NDArray[np.int32]
    summary_words: npt.NDArray[np.int32]
    language: npt.NDArray[np.uint16]
    licence: npt.NDArray[np.uint16]  # SPDX
    day: npt.NDArray[np.int32]  # the published date, in days since 1970 (or UNDATED)
    split_keys: pa.Array  # "" once the split is fixed (stored or preset)
    names: Names

    @classmethod
    def read(cls, rows: Iterable[Row], count: int, names: Names,
             each: Callable[[Row], None] = lambda row: None) -> PlanRows:
        """The columns of `rows` (in id order); `each` sees every row as it passes. `count`
        (how many rows there are) sizes the columns up front: growing them would copy them,
        and a copy doubles them for a moment."""
        numbers: dict[str, Any] = {name: np.zeros(count, dtype) for name, dtype in NUMBERS}
        keys = np.zeros((count, 32), np.uint8)
        ids: list[pa.Array] = []
        split_keys: list[pa.Array] = []
        n = 0
        for values in _chunks(rows, names, each):
            end = n + len(values)
            if end > len(keys):  # more rows than counted
                numbers = {name: np.resize(column, end) for name, column in numbers.items()}
                keys = np.resize(keys, (end, 32))
            columns = list(zip(*values, strict=True))
            ids.append(to_arrow(columns[0], pa.string()))
            split_keys.append(to_arrow(columns[1], pa.string()))
            keys[n:end] = np.frombuffer(b"".join(columns[2]), np.uint8).reshape(-1, 32)
            for (name, _), column in zip(NUMBERS, columns[3:], strict=True):
                numbers[name][n:end] = column
            n = end
        empty = to_arrow([], pa.string())
        return PlanRows(pa.concat_arrays([empty, *ids]), numbers["status"][:n], keys[:n],
                        numbers["split"][:n], numbers["preset"][:n], numbers["n_pages"][:n],
                        numbers["summary_words"][:n], numbers["language"][:n],
                        numbers["licence"][:n], numbers["day"][:n],
                        pa.concat_arrays([empty, *split_keys]), names)

    def __len__(self) -> int:
        return len(self.status)

    def id(self, at: int) -> str:
        return str(self.ids[at].as_py())

    def ids_of(self, positions: Positions) -> Iterator[str]:
        """The ids at `positions`, a chunk converted at a time."""
        for start in range(0, len(positions), CHUNK):
            yield from take(self.ids, positions[start : start + CHUNK]).to_pylist()

    def item(self, at: int) -> Item:
        """The publisher's item of a row: its id and work key."""
        return Item(self.id(at), self.work_key(at))

    def work_key(self, at: int) -> str:
        key = self.work_keys[at].tobytes()
        return "" if key == bytes(32) else key.hex()

    def find(self, cid: str) -> int | None:
        """The position of `cid`, by bisection of the sorted ids."""
        low, high = 0, len(self)
        while low < high:
            middle = (low + high) // 2
            if self.id(middle) < cid:
                low = middle + 1
            else:
                high = middle
        return low if low < len(self) and self.id(low) == cid else None

    def unpublished_ids(self, among: npt.NDArray[np.bool_]) -> Iterator[str]:
        """The ids of the rows `among` selects that no earlier build published."""
        published = self.status == self.names.code(PUBLISHED)
        return self.ids_of(np.flatnonzero(among & ~published))

    def splitting(self, positions: Positions) -> SplitColumns:
        """What the chronological assignment reads of the candidates at `positions`."""
        return SplitColumns(take(self.ids, positions), take(self.split_keys, positions),
                            self.split[positions], self.preset[positions])


def _chunks(rows: Iterable[Row], names: Names,
            each: Callable[[Row], None]) -> Iterator[list[tuple[object, ...]]]:
    """The values of the rows, CHUNK rows at a time: (id, split key, work key, then the
    NUMBERS)."""
    values: list[tuple[object, ...]] = []
    for row in rows:
        each(row)
        cand = row.candidate
        preset = cand.extra.get("split")
        values.append((
            cand.id, "" if row.split or preset else split_key(cand),
            bytes.fromhex(row.work_key) if row.work_key else bytes(32),
            names.code(row.status), split_code(row.split),
            split_code(None if preset is None else str(preset)),
            int(row.stats.get("n_pages", 0)), int(row.stats.get("summary_words", 0)),
            names.code(cand.language), names.code(to_spdx(cand.source, cand.licence)),
            published_day(cand.published)))
        if len(values) == CHUNK:
            yield values
            values = []
    if values:
        yield values


class SplitMap(Mapping[str, str]):
    """{id: split} of the candidates of some columns that have one (-1: none), looked up by
    bisection rather than held as a dict."""

    def __init__(self, *parts: tuple[PlanRows, Codes]) -> None:
        self.parts = parts

    def __getitem__(self, cid: str) -> str:
        for rows, codes in self.parts:
            at = rows.find(cid)
            if at is not None and codes[at] >= 0:
                return SPLITS[codes[at]]
        raise KeyError(cid)

    def __iter__(self) -> Iterator[str]:
        for rows, codes in self.parts:
            yield from rows.ids_of(np.flatnonzero(codes >= 0))

    def __len__(self) -> int:
        return sum(int(np.count_nonzero(codes >= 0)) for _, codes in self.parts)


def published_day(published: str) -> int:
    """`published` (YYYY, YYYY-MM or YYYY-MM-DD) as days since 1970, a partial date as its
    first day; UNDATED when there is none."""
    try:
        day = np.datetime64(published, "D")
    except ValueError:
        return int(UNDATED)
    return int(UNDATED) if np.isnat(day) else int(day.astype(np.int64))
