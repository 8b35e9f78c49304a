"""The k-gram index answers seed lookups exactly as repeated str.find does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.native import native_module
from loralay_build.text.seeds import (
    CoreIndex,
    KgramIndex,
    SeedFinder,
    kgram_hashes,
    kgram_index,
    seed_hashes,
)


def find_first(text: str, seed: str, limit: int) -> list[int]:
    """The reference: the first `limit` occurrences by repeated str.find."""
    found: list[int] = []
    at = text.find(seed)
    while at >= 0 and len(found) < limit:
        found.append(at)
        at = text.find(seed, at + 1)
    return found


def test_overlapping_occurrences_ascending_up_to_the_limit() -> None:
    index = KgramIndex("xaaaaaay aaa", 3)
    assert index.first(["aaa"], 5) == [[1, 2, 3, 4, 9]]
    assert index.first(["aaa"], 2) == [[1, 2]]


def test_a_frequent_seed_among_colliding_kgrams() -> None:
    # Base 1: every anagram of "abc" shares the group; the wanted ones are found in order.
    text = "cab abc bca abc " * 50
    index = KgramIndex(text, 3, base=1)
    assert index.first(["abc", "cba"], 4) == [[4, 12, 20, 28], []]


def test_absent_seed_and_text_shorter_than_a_seed() -> None:
    assert KgramIndex("the cat sat", 4).first(["dogs", "cat ", " sat"], 5) == [[], [4], [7]]
    assert KgramIndex("abc", 4).first(["abcd"], 5) == [[]]
    assert KgramIndex("", 2).first(["ab"], 5) == [[]]


def test_hangul_and_astral_characters() -> None:
    text = "요약 본 논문은 요약 방법을 제안한다 𝐀𝐁 요약"
    index = KgramIndex(text, 2)
    seeds = ["요약", "𝐀𝐁", "방법", "없음"]
    assert index.first(seeds, 5) == [find_first(text, s, 5) for s in seeds]
    assert index.first(["요약"], 5) == [[0, 9, 24]]


def test_lone_surrogates_from_a_broken_text_layer() -> None:
    text = "ab\ud800cd\ud800c"
    assert KgramIndex(text, 2).first(["\ud800c", "cd"], 5) == [[2, 5], [3]]


def test_seed_of_another_length_is_refused() -> None:
    with pytest.raises(ValueError):
        KgramIndex("abcdef", 3).first(["abcd"], 5)


def test_finder_keeps_one_index_per_seed_length() -> None:
    text = "seed seeds seeded"
    finder = SeedFinder(text)
    assert finder.first(["seed"], 5) == [[0, 5, 11]]
    assert finder.first(["seeds"], 5) == [[5]]
    assert finder.first(["ded", "see"], 5) == [[14], [0, 5, 11]]
    assert finder.first([], 5) == []
    assert sorted(finder.indexes) == [3, 4, 5]


texts = st.text(alphabet="ab ca요약", max_size=80)


@settings(max_examples=300, deadline=None)
@given(texts, st.lists(st.text(alphabet="ab ca요약", min_size=3, max_size=3), max_size=8),
       st.integers(1, 6), st.sampled_from([1, 2, 0x100000001B3]))
def test_same_answers_as_str_find_even_when_hashes_collide(
    text: str, seeds: list[str], limit: int, base: int
) -> None:
    # Base 1 hashes a k-gram to the sum of its code points: anagrams ("abc", "cab") collide.
    seeds += [text[i : i + 3] for i in range(0, max(0, len(text) - 2), 7)]
    index = KgramIndex(text, 3, base)
    assert index.first(seeds, limit) == [find_first(text, s, limit) for s in seeds]


@given(st.lists(st.integers(0, 0x10FFFF), max_size=40), st.integers(1, 20),
       st.sampled_from([1, 31, 0x100000001B3]))
def test_kgram_hashes_are_the_polynomial_hash_of_each_kgram(
    codes: list[int], k: int, base: int
) -> None:
    expected = [
        sum(c * pow(base, k - 1 - j, 1 << 64) for j, c in enumerate(codes[i : i + k])) % (1 << 64)
        for i in range(len(codes) - k + 1)
    ]
    assert kgram_hashes(np.array(codes, dtype=np.uint32), k, base).tolist() == expected
    seeds = ["".join(map(chr, codes[i : i + k])) for i in range(len(codes) - k + 1)]
    if seeds:
        assert seed_hashes(seeds, k, base).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(texts | st.text(max_size=60), st.integers(1, 4), st.integers(1, 6), st.data())
def test_the_compiled_index_answers_as_str_find(
    text: str, k: int, limit: int, data: st.DataObject
) -> None:
    """Any text (astral characters and lone surrogates included), seeds of the text and others."""
    seeds = data.draw(st.lists(st.text(alphabet="ab ca요약\ud800𝐀", min_size=k, max_size=k),
                               max_size=6))
    seeds += [text[i : i + k] for i in range(0, max(0, len(text) - k + 1), 5)]
    index = kgram_index(text, k)
    if native_module() is not None:
        assert isinstance(index, CoreIndex)
    assert index.first(seeds, limit) == [find_first(text, s, limit) for s in seeds]


def test_the_compiled_index_refuses_a_seed_of_another_length_and_another_text() -> None:
    core = native_module()
    if core is None:
        pytest.skip("the compiled core is not built")
    index = core.kgram_index("abcdef", 3)
    with pytest.raises(ValueError):
        core.seed_hits("abcdef", index, ["abcd"], 5)
    with pytest.raises(ValueError):
        core.seed_hits("abcdefg", index, ["abc"], 5)
    assert core.seed_hits("abcdef", core.kgram_index("abcdef", 7), [], 5) == []
