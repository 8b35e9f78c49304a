"""The faithful LoRaLay cascade, and the blind spots the engine does not share."""

from __future__ import annotations

import pytest

from loralay_build.errors import Reason, Reject
from loralay_build.text import MatchSettings, locate, strip_abstracts
from loralay_build.text.faithful import locate_faithful, searched_pages
from tests.helpers.docgen import make_doc

FAITHFUL = MatchSettings(mode="faithful")


def test_searched_pages_are_first_two_and_last_two() -> None:
    assert searched_pages([0, 0, 1, 2, 3, 4, 5, 5]) == [0, 1, 4, 5]
    assert searched_pages([0, 1]) == [0, 1]


def test_finds_an_abstract_on_page_one() -> None:
    doc = make_doc(21, set())
    pages = [0 if doc.start - 5 <= i < doc.end + 5 else 1 + i // 400 for i in range(len(doc.words))]
    match = locate_faithful(doc.abstract, doc.words, pages, FAITHFUL)
    assert match is not None and match.method == "faithful-exact"
    assert (match.word_start, match.word_end) == (doc.start, doc.end)


def test_blind_spot_abstract_across_page_two_three_boundary() -> None:
    doc = make_doc(22, set())
    middle = (doc.start + doc.end) // 2
    pages = [1 if i < middle else 2 + (i - middle) // 300 for i in range(len(doc.words))]
    pages = [p if i >= 10 else 0 for i, p in enumerate(pages)]
    assert locate_faithful(doc.abstract, doc.words, pages, FAITHFUL) is None
    with pytest.raises(Reject) as err:
        strip_abstracts(doc.words, pages, {"en": doc.abstract}, "en", FAITHFUL)
    assert err.value.reason is Reason.ABSTRACT_NOT_FOUND
    engine = strip_abstracts(doc.words, pages, {"en": doc.abstract}, "en", MatchSettings())
    assert (engine.matches[0].word_start, engine.matches[0].word_end) == (doc.start, doc.end)


def test_blind_spot_leftmost_match_not_best() -> None:
    doc = make_doc(23, set())
    abstract = doc.abstract.split()
    worse, better = list(abstract), list(abstract)
    worse[5] += "zz"
    better[5] += "z"
    words = [*worse, *better]
    pages = [0] * len(words)
    faithful = locate_faithful(doc.abstract, words, pages, FAITHFUL)
    assert faithful is not None and faithful.method == "faithful-fuzzysearch"
    assert faithful.word_start == 0  # the copy two edits away, although one at one edit follows
    best = locate(doc.abstract, words)
    assert best is not None and best.word_start == len(worse) and best.distance == 1


def test_blind_spot_fixed_edit_budget() -> None:
    doc = make_doc(24, {"hyphen", "space", "ligature", "header"})
    pages = [0] * len(doc.words)
    assert locate_faithful(doc.abstract, doc.words, pages, FAITHFUL) is None
    assert locate(doc.abstract, doc.words) is not None


def test_regex_stage_is_bounded_by_its_timeout() -> None:
    settings = MatchSettings(mode="faithful", faithful_regex_errors=8, faithful_regex_timeout=0.05)
    doc = make_doc(25, set())
    pages = [0] * len(doc.words)
    assert locate_faithful("zq" * 400, doc.words, pages, settings) is None
