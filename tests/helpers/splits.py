"""Split-assignment inputs built from plain tuples."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from loralay_build.corpus.arrays import to_arrow
from loralay_build.corpus.split import SPLITS, Codes, SplitColumns, split_code


class SplitItem(NamedTuple):
    id: str
    published: str
    current: str | None  # split stored by an earlier build
    preset: str | None  # split imposed by the source


def split_columns(items: list[SplitItem]) -> SplitColumns:
    return SplitColumns(to_arrow([i.id for i in items], pa.string()),
                        to_arrow([i.published for i in items], pa.string()),
                        np.array([split_code(i.current) for i in items], np.int8),
                        np.array([split_code(i.preset) for i in items], np.int8))


def named(columns: SplitColumns, codes: Codes) -> dict[str, str]:
    """{id: split} of the items `codes` gives a split."""
    return {cid: SPLITS[code] for cid, code in zip(columns.ids.to_pylist(), codes.tolist(),
                                                    strict=True) if code >= 0}
