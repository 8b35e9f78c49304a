"""Document.select copies runs of words by slices: it must equal picking word by word."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from loralay_build.native import native_module
from loralay_build.records import (
    Document,
    Page,
    _pick,
    _pick_python,
    _runs,
    _runs_python,
    box_array,
    int_array,
)


def _doc(n: int) -> Document:
    return Document(
        pages=[Page(0, 600.0, 800.0)],
        words=[f"w{i}" for i in range(n)],
        boxes=[(float(i), 1.0, float(i) + 2.0, 3.0) for i in range(n)],
        word_pages=[i % 3 for i in range(n)],
        line_ids=[i // 4 for i in range(n)],
        block_ids=[i // 9 for i in range(n)],
        font_sizes=[10.0 + i for i in range(n)],
        removed={"x": 1},
        composed=2,
    )


@given(st.integers(0, 40).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.integers(0, max(n - 1, 0)), max_size=60)
                        if n else st.just([]))))
def test_select_equals_picking_each_word(case: tuple[int, list[int]]) -> None:
    n, keep = case
    doc = _doc(n)
    doc.box_array()  # a selection carries the array over instead of converting again
    got = doc.select(keep)
    assert got.box_array().tolist() == [list(doc.boxes[i]) for i in keep]
    assert got.words == [doc.words[i] for i in keep]
    assert got.boxes == [doc.boxes[i] for i in keep]
    assert got.word_pages == [doc.word_pages[i] for i in keep]
    assert got.line_ids == [doc.line_ids[i] for i in keep]
    assert got.block_ids == [doc.block_ids[i] for i in keep]
    assert got.font_sizes == [doc.font_sizes[i] for i in keep]
    assert (got.removed, got.composed, got.pages) == (doc.removed, doc.composed, doc.pages)


def test_select_sorted_runs_and_bounds() -> None:
    doc = _doc(10)
    assert doc.select([0, 1, 2, 5, 6, 9]).words == ["w0", "w1", "w2", "w5", "w6", "w9"]
    assert doc.select([3, 3, 2]).words == ["w3", "w3", "w2"]
    with pytest.raises(IndexError):
        doc.select([10])
    with pytest.raises(IndexError):
        doc.select([-1])


def test_box_array_follows_boxes_added_after_it_was_made() -> None:
    doc = _doc(3)
    assert doc.box_array().shape == (3, 4)
    doc.boxes.append((1.0, 2.0, 3.0, 4.0))
    assert (doc.box_array() == box_array(doc.boxes)).all()


@given(st.lists(st.integers(-3, 30) | st.booleans(), max_size=40), st.integers(0, 31))
def test_runs_of_the_compiled_core_equal_numpy(keep: list[int], size: int) -> None:
    """Repeats, descending and negative indices, bools; out of range raises on both paths."""
    try:
        expected: list[tuple[int, int]] | type[IndexError] = _runs_python(keep, size)
    except IndexError:
        expected = IndexError
    core = native_module()
    if core is not None:
        assert core.runs(keep, size) == (None if expected is IndexError else expected)
    if expected is IndexError:
        with pytest.raises(IndexError):
            _runs(keep, size)
    else:
        assert _runs(keep, size) == expected


RUN = st.tuples(st.integers(0, 45), st.integers(0, 45))
ODD_RUN = st.tuples(st.integers(-3, 5), st.booleans())


@given(st.lists(st.integers(), max_size=40), st.lists(RUN | ODD_RUN, max_size=12))
def test_pick_of_the_compiled_core_equals_slicing(values: list[int],
                                                  runs: list[tuple[int, int]]) -> None:
    """Runs past the end, backwards or empty clamp as slices do; a negative bound or a bool is
    left to the Python code, which slices it as Python does."""
    expected = _pick_python(values, runs)
    assert _pick(values, runs) == expected
    core = native_module()
    if core is not None:
        clean = all(type(a) is int and type(b) is int and a >= 0 and b >= 0 for a, b in runs)
        assert core.pick(values, runs) == (expected if clean else None)


@given(st.lists(st.integers(-2**64, 2**64) | st.booleans(), max_size=30))
def test_int_array_of_the_compiled_core_equals_numpy(values: list[int]) -> None:
    """Ints beyond int64 fail on both paths, as numpy refuses them; bools are numpy's."""
    try:
        expected = np.asarray(values, dtype=np.int64)
    except OverflowError:
        with pytest.raises(OverflowError):
            int_array(values)
        return
    got = int_array(values)
    assert got.dtype == np.int64 and got.tolist() == expected.tolist()
    core = native_module()
    if core is not None:
        plain = all(type(v) is int for v in values)
        assert (core.int_array(values) is None) == (not plain)
