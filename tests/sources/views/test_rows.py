"""A dataset built before rows had `sections` and `word_roles` is named with what to do, not
read into empty records."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loralay_build.sources.views.cohan import INPUT_COLUMNS
from loralay_build.sources.views.rows import ViewInputError, published_rows


def _dataset(folder: Path, columns: dict[str, pa.Array]) -> Path:
    folder.mkdir()
    pq.write_table(pa.table(columns), folder / "train-0-00000-of-00001.parquet")
    (folder / "build.json").write_text(json.dumps(
        {"files": [{"name": "train-0-00000-of-00001.parquet", "split": "train"}]}))
    return folder


def test_old_rows_are_refused_with_the_fix(tmp_path: Path) -> None:
    old = _dataset(tmp_path / "old", {"article_id": pa.array(["local:a"]),
                                      "article_words": pa.array([["Some", "words."]])})
    with pytest.raises(ViewInputError, match=r"no word_roles, sections.*build it again"):
        list(published_rows(old, ["article_id", "word_roles", "sections"]))


def test_rows_come_with_their_split_and_only_the_columns_asked(tmp_path: Path) -> None:
    columns = {name: pa.array([None], pa.string()) for name in INPUT_COLUMNS}
    columns["article_id"] = pa.array(["local:a"])
    columns["extra"] = pa.array(["not read"])
    found = list(published_rows(_dataset(tmp_path / "new", columns), ["article_id"]))
    assert found == [("train", {"article_id": "local:a"})]
