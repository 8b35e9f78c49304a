"""`Lines.opening` tries a pattern only on the lines whose first two characters its pair
table holds: a table missing a pair its pattern can open with would lose those lines."""

from __future__ import annotations

import re

import numpy as np
import pytest

from loralay_build.structure.elements import _LABEL, _LABEL_PAIRS
from loralay_build.structure.headings import _NUMBER_PAIRS, _NUMBER_START
from loralay_build.structure.lines import opening_pairs

# What may follow a word's first two characters: nothing, any one ASCII character, the
# letters a Unicode case-insensitive match takes for ASCII ones, and the rest of every name
# the two patterns list.
TAILS = ["", *map(chr, range(32, 127)), *"ſİıKáÁâÂ", "rt", "nn", "pp", "ex", "ha", "ap",
         "ec", "it", "ar", "ig", "ab", "ua", "bb", "ch", "la", "âm", "1", ".1", "2.", ")"]


def _missed(pattern: re.Pattern[str], table: np.ndarray) -> list[str]:
    """Words the pattern matches whose first two ASCII characters the table lacks."""
    missed = []
    for first in range(128):
        for second in range(128):
            if table[first * 128 + second]:
                continue
            a, b = chr(first), chr(second)
            words = [a] if b == "\n" else [a + b + tail for tail in TAILS]
            missed += [word for word in words if pattern.match(f"\n{word}\n")]
    return missed


@pytest.mark.parametrize(("pattern", "table"), [(_NUMBER_START, _NUMBER_PAIRS),
                                                (_LABEL, _LABEL_PAIRS)],
                         ids=["numbering", "caption label"])
def test_pair_tables_hold_every_opening_of_their_pattern(
        pattern: re.Pattern[str], table: np.ndarray) -> None:
    assert _missed(pattern, table) == []


def test_a_pair_left_out_is_seen() -> None:
    """The check above can fail: without "ti", a title ("Title II") is missed."""
    pairs = [chr(a) + chr(b) for a in range(128) for b in range(128)
             if _NUMBER_PAIRS[a * 128 + b] and chr(a) + chr(b) not in ("ti", "Ti", "tI", "TI")]
    missed = _missed(_NUMBER_START, opening_pairs(pairs))
    assert missed
    assert {word[:2].lower() for word in missed} == {"ti"}
