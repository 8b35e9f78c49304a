"""Locating one abstract: word-exact spans under PDF noise, and clear "absent" answers."""

from __future__ import annotations

import edlib
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.text import Match, locate, match
from loralay_build.text.match import _best
from tests.helpers.docgen import make_doc, other_abstract, sentence_words, vocabulary

NOISE = ["swap", "ligature", "space", "hyphen", "pdfium", "header", "pagebreak"]


def test_span_starting_inside_a_word_snaps_to_that_word() -> None:
    # PEERS bug 21: a span from inside "beta" to the end of "delta" removes beta..delta.
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    assert locate("eta gamma delta", words) == Match(1, 4, 0, "exact")


def test_exact_match_ignores_case_ligatures_quotes_and_hyphenation() -> None:
    words = [
        "Title",
        "Abstract",
        "WE",
        "study",
        "the",
        "eﬃcient",
        "associ-",
        "ated",
        "model’s",
        "cost.",
        "Intro",
    ]
    match = locate("We study the efficient associated model's cost.", words)
    assert match == Match(1, 10, 0, "exact")


def test_heading_in_metadata_and_pdf_is_tolerated() -> None:
    words = [
        "Header",
        "RÉSUMÉ",
        "–",
        "ABSTRACT",
        "Nous",
        "décrivons",
        "un",
        "outil.",
        "Introduction",
    ]
    match = locate("Résumé : Nous décrivons un outil.", words)
    assert match is not None and match.word_start == 1 and match.word_end == 8


def test_best_span_wins_not_leftmost() -> None:
    doc = make_doc(3, set())
    abstract = doc.abstract.split()
    noisy = list(abstract)
    noisy[10] = noisy[10][::-1]
    noisy[20] = noisy[20] + "x"
    words = [*doc.words[:50], *noisy, *doc.words[50:]]
    match = locate(doc.abstract, words)
    shift = len(noisy)
    assert match is not None
    assert (match.word_start, match.word_end) == (doc.start + shift, doc.end + shift)
    assert match.distance == 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), kinds=st.sets(st.sampled_from(NOISE)))
def test_noisy_abstract_is_found_at_its_exact_word_span(seed: int, kinds: set[str]) -> None:
    doc = make_doc(seed, kinds)
    match = locate(doc.abstract, doc.words)
    assert match is not None
    assert (match.word_start, match.word_end) == (doc.start, doc.end)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_absent_abstract_gives_none(seed: int) -> None:
    doc = make_doc(seed, {"hyphen", "space"})
    assert locate(other_abstract(seed), doc.words) is None


def test_abstract_of_another_paper_on_the_same_topic_is_absent() -> None:
    body = [
        "We",
        "present",
        "a",
        "parser",
        "for",
        "scanned",
        "invoices",
        "that",
        "reads",
        "totals",
        "and",
        "dates",
        "from",
        "noisy",
        "images.",
        "Our",
        "method",
        "combines",
        "layout",
        "cues",
        "with",
        "a",
        "small",
        "language",
        "model",
        "and",
        "reaches",
        "high",
        "accuracy",
        "on",
        "three",
        "public",
        "benchmarks",
        "while",
        "running",
        "on",
        "a",
        "laptop.",
    ]
    other = (
        "This paper studies summarisation of long scientific articles. We compare extractive "
        "and abstractive systems on four corpora and show that layout features help models "
        "select salient sentences, especially for documents longer than ten pages."
    )
    assert locate(other, body * 20) is None


def test_repeated_boilerplate_neither_matches_nor_hides_the_abstract() -> None:
    import random

    rng = random.Random(7)
    vocab = vocabulary(rng)
    boiler = [
        "This",
        "article",
        "is",
        "distributed",
        "under",
        "the",
        "terms",
        "of",
        "an",
        "open",
        "licence.",
    ]
    abstract = sentence_words(rng, vocab, 90)
    words: list[str] = []
    for _ in range(30):
        words += boiler + sentence_words(rng, vocab, 40)
    start = len(words)
    words += abstract + sentence_words(rng, vocab, 200)
    match = locate(" ".join(abstract), words)
    assert match is not None and (match.word_start, match.word_end) == (start, start + 90)
    absent = " ".join(boiler + sentence_words(rng, vocab, 80))
    assert locate(absent, words) is None


def test_empty_inputs_are_absent() -> None:
    assert locate("", ["a", "b"]) is None
    assert locate("some abstract text", []) is None


def test_best_window_keeps_the_first_of_equal_distances_and_a_strictly_better_later_one() -> None:
    query = "the quick brown fox jumps over the lazy dog"
    one_off = query.replace("quick", "quack")
    exact = query
    text = f"{one_off} filler filler filler {one_off} filler filler filler {exact}"
    second = text.index(one_off, 1)
    third = text.index(exact, second + 1)
    windows = [(0, second - 1), (second, third - 1), (third, len(text))]
    first_wins = _best(query, text, windows[:2], 20)
    assert first_wins is not None and (first_wins.first, first_wins.distance) == (0, 1)
    best = _best(query, text, windows, 20)
    assert best is not None and (best.first, best.distance) == (third, 0)


def test_a_heading_of_several_words_goes_with_its_abstract() -> None:
    """"Author Summary", "Plain Language Summary": the whole printed heading goes, not only
    its last word."""
    words = ["body.", "Author", "Summary", "We", "describe", "a", "method", "for", "maps.",
             "Plain", "language", "summary:", "Mosquitoes", "carry", "a", "disease.", "1",
             "Introduction"]
    assert locate("We describe a method for maps.", words) == Match(1, 9, 0, "exact")
    assert locate("Mosquitoes carry a disease.", words) == Match(9, 16, 0, "exact")
    assert locate("Author Summary We describe a method for maps.", words) == Match(1, 9, 0,
                                                                                      "exact")


SYMBOLS = st.sampled_from("ab e\u00e9\u00b0\u00ff\u0100\u03a9\uc694\U0001d400")


@settings(max_examples=300, deadline=None)
@given(st.lists(SYMBOLS, min_size=1, max_size=30).map("".join),
       st.lists(SYMBOLS, max_size=60).map("".join), st.integers(0, 30))
def test_texts_given_to_edlib_as_bytes_align_as_the_texts(query: str, window: str, k: int) -> None:
    """Latin-1 texts, texts beyond it (Hangul, astral characters) numbered: the same
    alignment, distance, locations and path as edlib's own mapping of the texts."""
    q, w = match._as_bytes(query, window)
    assert edlib.align(q, w, mode="HW", task="path", k=k) == edlib.align(
        query, window, mode="HW", task="path", k=k)
