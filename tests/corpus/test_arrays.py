"""The buffer-built Arrow arrays equal pyarrow's own conversion, for every column type of the
published schemas, and a build never imports pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.corpus.arrays import to_arrow
from loralay_build.corpus.pages import PAGES_SCHEMA
from loralay_build.corpus.schema import FULL_SCHEMA
from loralay_build.sources.pubmed.view_schema import CITATIONS, SUMPUBMED
from loralay_build.views.schema import arrow_schema
from tests.helpers.local import make_corpus, write_manifest

FIELDS = [*FULL_SCHEMA, *arrow_schema(SUMPUBMED), *arrow_schema(CITATIONS), *PAGES_SCHEMA]
TYPES = {str(f.type): f.type for f in FIELDS}  # every distinct column type


def _values(type_: pa.DataType) -> st.SearchStrategy[Any]:
    """Python values of an Arrow type, None included."""
    value: st.SearchStrategy[Any]
    if pa.types.is_string(type_):
        value = st.text()
    elif pa.types.is_binary(type_):
        value = st.binary(max_size=8)
    elif pa.types.is_boolean(type_):
        value = st.booleans()
    elif pa.types.is_integer(type_):
        info = np.iinfo(type_.to_pandas_dtype())
        value = st.integers(int(info.min), int(info.max))
    elif pa.types.is_floating(type_):
        value = st.floats(width=32, allow_nan=False) | st.floats(allow_nan=False)
    elif pa.types.is_fixed_size_list(type_):
        value = st.lists(_values(type_.value_type), min_size=type_.list_size,
                         max_size=type_.list_size)
    elif pa.types.is_list(type_):
        value = st.lists(_values(type_.value_type), max_size=4)
    else:
        value = st.fixed_dictionaries({f.name: _values(f.type) for f in type_})
    return st.none() | value


@pytest.mark.parametrize("name", sorted(TYPES))
def test_equals_pyarrow_conversion(name: str) -> None:
    type_ = TYPES[name]

    @settings(max_examples=60, deadline=None)
    @given(st.lists(_values(type_), max_size=6))
    def check(values: list[Any]) -> None:
        built = to_arrow(values, type_)
        built.validate(full=True)
        expected = pa.array(values, type=type_)
        assert built.equals(expected)
        assert built.to_pylist() == expected.to_pylist()

    check()


def test_numpy_scalars_are_numbers() -> None:
    values = [np.int64(3), np.float32(0.5), None, np.bool_(True)]
    assert to_arrow(values[:3], pa.float32()).to_pylist() == [3.0, 0.5, None]
    assert to_arrow([np.int16(-2), np.int64(7)], pa.int16()).to_pylist() == [-2, 7]
    assert to_arrow(values[3:], pa.bool_()).to_pylist() == [True]


@pytest.mark.parametrize(("values", "type_", "error"), [
    (["a", 1], pa.string(), TypeError),
    (["text"], pa.binary(), TypeError),
    ([1.5], pa.int32(), TypeError),
    ([True], pa.int16(), TypeError),
    ([np.bool_(False)], pa.int32(), TypeError),
    ([70000], pa.int16(), OverflowError),
    (["x"], pa.float32(), TypeError),
    ([1], pa.bool_(), TypeError),
    (["ab"], pa.list_(pa.string()), TypeError),
    ([[1, 2, 3]], pa.list_(pa.int32(), 4), ValueError),
    ([[1]], pa.struct([("a", pa.int32())]), TypeError),
])
def test_wrong_values_are_refused(values: list[Any], type_: pa.DataType,
                                  error: type[Exception]) -> None:
    with pytest.raises(error):
        to_arrow(values, type_)


@pytest.mark.parametrize("images", [[], ["--page-images"]])
def test_a_build_never_imports_pandas_or_numpy_ma(tmp_path: Path, images: list[str]) -> None:
    """pyarrow's Python converter would import pandas (~0.25 s, ~47 MiB in the parent), and
    numpy 2's np.unique imports numpy.ma (~40 ms)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "docs.jsonl", make_corpus(docs, 3))
    script = (
        "import sys\n"
        "from loralay_build.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exc:\n"
        "    print(exc.code, 'pandas' in sys.modules, 'numpy.ma' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "local", "--input", str(manifest), "--out",
         str(tmp_path / "out"), "--no-filter", "--workers", "1", "-q", *images],
        capture_output=True, text=True, timeout=300, check=True,
    )
    assert done.stdout.split()[-3:] == ["0", "False", "False"], done.stderr[-2000:]
    assert list((tmp_path / "out" / "local").glob("*.parquet"))
    assert bool(images) == bool(list((tmp_path / "out" / "local").glob("pages/*.parquet")))
