"""PDFium page text: characters PDFium leaves out of `FPDFText_GetText` are put back."""

from __future__ import annotations

import ctypes

import pytest

from loralay_build.parse import pdfium


@pytest.mark.parametrize(
    ("count", "missing"),
    [
        (10, [0]),
        (10, [9]),
        (10, [0, 1, 2]),
        (10, [3, 4, 8]),
        (50, [1, 2, 9, 30, 31, 32, 49]),
        (4096, [7, 1000, 1001, 4095]),
    ],
)
def test_missing_chars_found_by_bisection(
    monkeypatch: pytest.MonkeyPatch, count: int, missing: list[int]
) -> None:
    present = [i for i in range(count) if i not in set(missing)]
    calls: list[int] = []

    def char_index(_handle: object, text_index: int) -> int:
        calls.append(text_index)
        return present[text_index] if 0 <= text_index < len(present) else -1

    monkeypatch.setattr(pdfium, "_CHAR_INDEX", char_index)
    handle = ctypes.c_void_p(1)
    assert pdfium._missing_chars(handle, len(present), count) == missing
    assert len(calls) <= 2 + len(missing) * count.bit_length()


def test_inconsistent_char_indices_give_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdfium, "_CHAR_INDEX", lambda _handle, _t: -1)
    assert pdfium._missing_chars(ctypes.c_void_p(1), 5, 8) is None
