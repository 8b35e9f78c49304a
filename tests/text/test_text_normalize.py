"""One normalisation for abstracts and PDF words, with a map back to word indices."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.text import normalise_words, normalize
from loralay_build.text.normalize import normalise_kept


def test_tokens_keep_the_words_they_come_from() -> None:
    tokens = normalise_words(["The", "associ-", "ated", "Franco-", "Italian", "x\x02", "y"])
    assert tokens.texts == ["the", "associated", "franco", "italian", "xy"]
    assert tokens.first_word == [0, 1, 3, 4, 5]
    assert tokens.end_word == [1, 3, 4, 5, 7]


def test_soft_hyphen_ligatures_cid_quotes_dashes_bidi() -> None:
    words = [
        "of\u00ad",
        "fice",
        "\ufb01ne",
        "(cid:12)x",
        "\u201cquote\u201d",
        "\u2014",
        "\u202aRTL\u202c",
    ]
    tokens = normalise_words(words)
    assert tokens.texts == ["office", "fine", "\ufffdx", '"quote"', "rtl"]
    assert tokens.first_word == [0, 2, 3, 4, 6]


def test_accents_case_and_compatibility_forms() -> None:
    assert normalise_words(["ÉLABORATION", "e\u0301te\u0301", "\u00b4ete", "ＡＢ"]).texts == [
        "elaboration",
        "ete",
        "ete",
        "ab",
    ]


def test_korean_is_kept_whole() -> None:
    assert normalise_words(["요약", "초록입니다"]).texts == ["요약", "초록입니다"]


def test_a_stream_is_normalised_as_its_words_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # New words are normalised in batches (ASCII and other words apart); no character may
    # change the key of its neighbours, and a newline inside a word is dropped.
    words = ["`quote`", "café", "ΟΔΟΣ", "e\u0301", "x\ny", "\u00a0", "Ａ", "ﬁ", "(cid:3)", "a b"]
    alone = []
    for word in words:
        monkeypatch.setattr(normalize, "_KEYS", normalize._Keys())
        alone += normalise_words([word]).texts
    monkeypatch.setattr(normalize, "_KEYS", normalize._Keys())
    assert normalise_words(words).texts == alone
    assert alone == ["'quote'", "cafe", "οδοσ", "e", "xy", "a", "fi", "\ufffd", "ab"]


# Words that join their neighbours or vanish: line-end hyphens (plain, soft, PDFium's mark),
# a hyphen alone, words without a key, and words starting in upper or lower case.
JOINING = ["associ-", "ated", "Franco-", "Italian", "re\x02", "form", "-", "\u00ad", "x\u00ad",
           "(cid:3)", "\u200b", "Model", "cost.", "e\u0301t\u00e9-", "été"]


Case = tuple[list[str], list[tuple[int, int]]]  # words, and sorted disjoint cuts


@st.composite
def cut_words(draw: st.DrawFn) -> Case:
    words = draw(st.lists(st.sampled_from(JOINING), max_size=30))
    bounds = sorted(draw(st.lists(st.integers(0, len(words)), max_size=8)))
    cuts = [(a, b) for a, b in zip(bounds[::2], bounds[1::2], strict=False) if a < b]
    return words, cuts


@settings(max_examples=400, deadline=None)
@given(cut_words())
def test_kept_tokens_are_those_of_the_kept_words(case: Case) -> None:
    words, cuts = case
    kept = [w for i, w in enumerate(words) if not any(a <= i < b for a, b in cuts)]
    assert normalise_kept(words, normalise_words(words), cuts) == normalise_words(kept)


def test_a_cut_between_hyphen_and_continuation_joins_the_new_neighbours() -> None:
    words = ["associ-", "REMOVED", "ated", "Franco-", "gone", "Italian", "x"]
    tokens = normalise_kept(words, normalise_words(words), [(1, 2), (4, 5)])
    assert tokens.texts == ["associated", "franco", "italian", "x"]
    assert (tokens.first_word, tokens.end_word) == ([0, 2, 3, 4], [2, 3, 4, 5])
