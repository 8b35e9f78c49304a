"""Compact columns: the worker's arrays give the same Arrow rows as lists of Python values."""

from __future__ import annotations

import pickle
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.columns import Strings
from loralay_build.config import OutputSettings
from loralay_build.corpus.schema import FULL_SCHEMA, SOURCE_COLUMNS, dataset_schema
from loralay_build.corpus.writer import WorkStore, dict_rows_table, rows_table, write_shard
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Candidate, Document, Page
from loralay_build.run.process import Task, build_row
from loralay_build.sources import SOURCES
from loralay_build.text import MatchSettings
from tests.helpers.rows import compact_row, plain_row

WORDS = st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=8), max_size=40)
COORD = st.floats(-50.0, 900.0, allow_nan=False)
BOX = st.tuples(COORD, COORD, COORD, COORD)


@given(WORDS)
def test_strings_round_trip_through_pickle(words: list[str]) -> None:
    packed = pickle.loads(pickle.dumps(Strings.pack(words)))
    assert packed.unpack() == words
    assert len(packed) == len(words)


def _reference_norm(box: tuple[float, ...], width: float, height: float) -> list[int]:
    """The per-word formula the arrays replace."""
    x0, y0, x1, y1 = box
    out = [int(1000 * x0 / width), int(1000 * y0 / height),
           int(1000 * x1 / width), int(1000 * y1 / height)]
    out = [min(1000, max(0, v)) for v in out]
    return [min(out[0], out[2]), min(out[1], out[3]), max(out[0], out[2]), max(out[1], out[3])]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(BOX, st.integers(0, 2)), min_size=1, max_size=30), WORDS)
def test_row_of_compact_columns_equals_the_python_row(
    items: list[tuple[tuple[float, float, float, float], int]], text: list[str]
) -> None:
    pages = [Page(0, 612.0, 792.0), Page(2, 595.5, 842.25)]
    items = [(box, 0 if page == 1 else page) for box, page in items]
    words = [(text[i] if i < len(text) else "w") for i in range(len(items))]
    doc = Document(pages=pages, words=words, boxes=[b for b, _ in items],
                   word_pages=[p for _, p in items])
    cand = Candidate(id="local:x", source="local", source_id="x", dataset="d", language="en")
    task = Task(cand, "x.pdf", "0" * 64, ParseSettings(), MatchSettings())
    row = build_row(task, doc, {"en": "an abstract"}, [], ("en", 0.9))
    sizes = {p.index: p for p in pages}
    plain = dict(row)
    plain["article_words"] = [unicodedata.normalize("NFC", w) for w in words]  # published NFC
    plain["article_bboxes"] = [[round(v) for v in b] for b, _ in items]
    plain["article_norm_bboxes"] = [
        _reference_norm(b, sizes[p].width, sizes[p].height) for b, p in items
    ]
    plain["word_pages"] = [p for _, p in items]
    expected = pa.Table.from_pylist([plain], schema=FULL_SCHEMA)
    assert rows_table([row], FULL_SCHEMA).equals(expected)
    assert isinstance(row["article_bboxes"], np.ndarray)


def test_shards_from_batched_work_files_match_a_direct_write(tmp_path: Path) -> None:
    """Work files written in a batch and read back give the bytes of writing the rows at once,
    over several row groups and shards (Parquet's list item names included)."""
    settings = OutputSettings(shard_rows=5)
    work = WorkStore(tmp_path / "work", settings, FULL_SCHEMA)
    rows = [plain_row(i) for i in range(7)]
    work.put_many([(f"{i:064d}", row) for i, row in enumerate(rows)])
    keys = [f"{i:064d}" for i in range(7)]
    for start in (0, 5):
        batched, direct = tmp_path / f"batched{start}.parquet", tmp_path / f"direct{start}.parquet"
        read = work.read(keys[start : start + 5])
        write_shard(batched, FULL_SCHEMA, [[read.slice(at, 2)] for at in range(0, 5, 2)],
                    settings, {})
        table = pa.Table.from_pylist(rows[start : start + 5], schema=FULL_SCHEMA)
        write_shard(direct, FULL_SCHEMA, [[table.slice(at, 2)] for at in range(0, 5, 2)],
                    settings, {})
        assert pq.ParquetFile(batched).metadata.num_row_groups == (3 if start == 0 else 1)
        assert batched.read_bytes() == direct.read_bytes()


def test_rows_table_holds_each_row_as_its_own_batch() -> None:
    """Compact and plain rows mixed in one batch: every row of the table is that row alone."""
    rows: list[dict[str, Any]] = [
        compact_row(0), plain_row(1), compact_row(2), {"article_id": "local:3"}
    ]
    table = rows_table(rows, FULL_SCHEMA)
    assert table.num_rows == len(rows)
    for i, row in enumerate(rows):
        assert table.slice(i, 1).equals(rows_table([row], FULL_SCHEMA))


def test_view_rows_are_written_nfc(tmp_path: Path) -> None:
    """Derived views write their own rows: their texts are NFC like the layout rows'."""
    schema = pa.schema([pa.field("text", pa.string()),
                        pa.field("sentences", pa.list_(pa.string())),
                        pa.field("refs", pa.list_(pa.struct([("title", pa.string())])))])
    nfd = "Re\u0301sume\u0301 me\u0301moire"
    row = {"text": nfd, "sentences": [nfd, "plain"], "refs": [{"title": nfd}]}
    (written,) = dict_rows_table([row], schema).to_pylist()
    composed = "R\u00e9sum\u00e9 m\u00e9moire"
    assert written == {"text": composed, "sentences": [composed, "plain"],
                       "refs": [{"title": composed}]}


def test_a_column_the_source_does_not_declare_is_an_error_not_dropped() -> None:
    """A row filling a column outside its dataset's schema means a source fills a column it
    does not declare: the value must not vanish from the published data unnoticed."""
    core = dataset_schema(())
    assert rows_table([{"article_id": "local:a", "tldr": None, "doi": ""}], core).num_rows == 1
    with pytest.raises(ValueError, match="'tldr'"):
        rows_table([{"article_id": "local:a"}, {"article_id": "local:b", "tldr": "short"}], core)
    assert rows_table([{"article_id": "x:a", "tldr": "short"}],
                      dataset_schema(("tldr",))).column("tldr").to_pylist() == ["short"]


def test_every_source_declares_only_columns_beyond_the_core() -> None:
    """A source's declaration names columns of the catalogue that are not core ones, and
    every catalogue column outside the core is declared by some source."""
    for source in SOURCES.values():
        assert set(source.columns) <= SOURCE_COLUMNS, source.name
        assert len(dataset_schema(source.columns)) == len(FULL_SCHEMA) - len(
            SOURCE_COLUMNS - set(source.columns))
    assert set().union(*(s.columns for s in SOURCES.values())) == SOURCE_COLUMNS
