"""Removing every abstract of a document, the multi-language policy, and the leakage audit."""

from __future__ import annotations

import random

import pytest

from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.text import MatchSettings, leakage_summary, strip_abstracts
from tests.helpers.docgen import make_doc, other_abstract, sentence_words, vocabulary

ENGINE = MatchSettings()


def two_language_doc(seed: int) -> tuple[list[str], list[int], str, str, int, int, int]:
    """Words with a French abstract then an English one, both printed back to back."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    fr = sentence_words(rng, vocab, 80)
    en = sentence_words(rng, vocab, 70)
    before = sentence_words(rng, vocab, 30)
    after = sentence_words(rng, vocab, 900)
    words = [*before, "Résumé", *fr, "Abstract", *en, *after]
    pages = [i // 300 for i in range(len(words))]
    a = len(before)
    return words, pages, " ".join(fr), " ".join(en), a, a + 1 + len(fr), a + 2 + len(fr) + len(en)


def test_both_abstracts_and_their_headings_are_removed() -> None:
    words, pages, fr, en, a, b, c = two_language_doc(1)
    result = strip_abstracts(words, pages, {"en": en, "fr": fr}, "fr", ENGINE)
    assert [r.lang for r in result.matches] == ["fr", "en"]
    assert result.keep == [*range(a), *range(c, len(words))]
    fr_rec, en_rec = result.matches
    assert (fr_rec.word_start, fr_rec.word_end, fr_rec.found) == (a, b, True)
    assert (en_rec.word_start, en_rec.word_end) == (b, c)
    assert fr_rec.page == pages[a] and fr_rec.method == "exact"
    assert fr_rec.leakage == 0.0 and en_rec.leakage == 0.0


def test_records_come_main_language_first_then_sorted() -> None:
    words, pages, fr, en, *_ = two_language_doc(2)
    abstracts = {"pt": other_abstract(5), "en": en, "fr": fr, "de": other_abstract(6)}
    result = strip_abstracts(words, pages, abstracts, "fr", ENGINE)
    assert [r.lang for r in result.matches] == ["fr", "de", "en", "pt"]


def test_secondary_abstract_absent_from_the_pdf_is_recorded_not_found() -> None:
    doc = make_doc(4, {"hyphen"})
    result = strip_abstracts(
        doc.words, doc.pages, {"en": doc.abstract, "es": other_abstract(9)}, "en", ENGINE
    )
    missing = result.matches[1]
    assert (missing.lang, missing.found, missing.method) == ("es", False, "none")
    assert (missing.distance, missing.page, missing.word_start, missing.word_end) == (-1,) * 4
    assert result.keep == [*range(doc.start), *range(doc.end, len(doc.words))]


@pytest.mark.parametrize("value", [None, "", "   \n "])
def test_main_abstract_missing_in_metadata_rejects(value: str | None) -> None:
    doc = make_doc(5, set())
    abstracts = {"en": doc.abstract} if value is None else {"fr": value, "en": doc.abstract}
    with pytest.raises(Reject) as err:
        strip_abstracts(doc.words, doc.pages, abstracts, "fr", ENGINE)
    assert err.value.reason is Reason.ABSTRACT_MISSING_IN_METADATA


def test_main_abstract_not_in_the_words_rejects_naming_the_language() -> None:
    doc = make_doc(6, set())
    with pytest.raises(Reject) as err:
        strip_abstracts(doc.words, doc.pages, {"pt": other_abstract(11)}, "pt", ENGINE)
    assert err.value.reason is Reason.ABSTRACT_NOT_FOUND
    assert "pt" in err.value.detail


def test_partly_printed_secondary_abstract_rejects() -> None:
    words, pages, fr, en, *_ = two_language_doc(7)
    half = " ".join(en.split()[:40])
    rest = " ".join(sentence_words(random.Random(99), vocabulary(random.Random(98)), 40))
    with pytest.raises(Reject) as err:
        strip_abstracts(words, pages, {"fr": fr, "en": f"{half} {rest}"}, "fr", ENGINE)
    assert err.value.reason is Reason.ABSTRACT_NOT_FOUND
    assert "en" in err.value.detail and "partly" in err.value.detail


def test_overlapping_spans_are_merged() -> None:
    doc = make_doc(8, set())
    words = doc.abstract.split()
    first = " ".join(words[: len(words) * 2 // 3])
    last = " ".join(words[len(words) // 3 :])
    result = strip_abstracts(doc.words, doc.pages, {"en": first, "de": last}, "en", ENGINE)
    assert result.keep == [*range(doc.start), *range(doc.end, len(doc.words))]


def test_second_copy_of_an_abstract_is_removed_and_leakage_is_zero() -> None:
    doc = make_doc(10, set())
    copy = doc.abstract.split()
    words = [*doc.words, *copy]
    pages = [*doc.pages, *([doc.pages[-1] + 1] * len(copy))]
    result = strip_abstracts(words, pages, {"en": doc.abstract}, "en", ENGINE)
    assert result.keep == [*range(doc.start), *range(doc.end, len(doc.words))]
    assert result.matches[0].leakage == 0.0


def test_leakage_counts_abstract_five_grams_left_in_the_body() -> None:
    doc = make_doc(12, set())
    words = doc.abstract.split()
    quoted = words[:20]
    body = [*doc.words, "As", "stated", *quoted]
    pages = [*doc.pages, *([0] * (len(quoted) + 2))]
    result = strip_abstracts(body, pages, {"en": doc.abstract}, "en", ENGINE)
    grams = len(words) - 4
    assert result.matches[0].leakage == pytest.approx((len(quoted) - 4) / grams)


def test_leakage_summary() -> None:
    summary = leakage_summary([0.0, 0.0, 0.1, 0.5])
    assert summary["count"] == 4 and summary["max"] == 0.5
    assert summary["mean"] == pytest.approx(0.15)
    assert summary["median"] == pytest.approx(0.05)
    assert summary["share_above_0"] == 0.5
    assert leakage_summary([])["count"] == 0


def test_settings_from_mapping() -> None:
    loaded = MatchSettings.from_mapping({"mode": "faithful", "accept_ratio": 0.2, "max_seeds": 50})
    assert (loaded.mode, loaded.accept_ratio, loaded.max_seeds) == ("faithful", 0.2, 50)
    assert MatchSettings.from_mapping({"faithful_regex_timeout": 1}).faithful_regex_timeout == 1.0
    for bad in (
        {"nope": 1},
        {"max_seeds": "5"},
        {"max_seeds": True},
        {"mode": "fast"},
        {"accept_ratio": 0.9},
    ):
        with pytest.raises(ConfigError):
            MatchSettings.from_mapping(bad)


def interrupted_doc(seed: int, cut: int) -> tuple[list[str], list[int], str, list[int], int]:
    """An abstract split `cut` words from its start (or end, when negative) by a block of
    other text, as a footnote or running header lands inside it in the reading order.

    Returns the words, pages, abstract, the indices of the abstract words and the block size.
    """
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    abstract = sentence_words(rng, vocab, 180)
    block = sentence_words(random.Random(seed + 1), vocabulary(random.Random(seed + 2)), 70)
    before = sentence_words(rng, vocab, 60)
    after = sentence_words(rng, vocab, 900)
    at = cut if cut >= 0 else len(abstract) + cut
    words = [*before, *abstract[:at], *block, *abstract[at:], *after]
    start = len(before)
    indices = [*range(start, start + at), *range(start + at + len(block), start + 180 + len(block))]
    return words, [i // 300 for i in range(len(words))], " ".join(abstract), indices, len(block)


@pytest.mark.parametrize(("seed", "cut"), [(1, 25), (2, 30), (3, -30), (4, -25)])
def test_abstract_words_cut_off_by_a_block_near_an_edge_are_removed(seed: int, cut: int) -> None:
    # A single alignment reaches the far side of the block cheaper by spending edits on
    # the block; the abstract words beyond it used to stay in the body.
    words, pages, abstract, indices, _ = interrupted_doc(seed, cut)
    result = strip_abstracts(words, pages, {"en": abstract}, "en", ENGINE)
    assert not set(result.keep).intersection(indices)
    assert result.matches[0].leakage == 0.0
    assert result.matches[0].word_start == indices[0]
    assert result.matches[0].word_end == indices[-1] + 1


@pytest.mark.parametrize("cut", [45, -45])
def test_a_block_further_in_leaves_no_abstract_five_gram(cut: int) -> None:
    # Through the split search, a piece may still claim a word of the block for the
    # abstract word next to it, which then stays alone in the body (at most a few words).
    for seed in range(6):
        words, pages, abstract, indices, _ = interrupted_doc(seed, cut)
        result = strip_abstracts(words, pages, {"en": abstract}, "en", ENGINE)
        assert result.matches[0].leakage == 0.0
        assert len(set(result.keep).intersection(indices)) <= 4


def test_the_block_inside_an_abstract_near_its_edge_stays_in_the_body() -> None:
    words, pages, abstract, indices, block = interrupted_doc(5, 30)
    result = strip_abstracts(words, pages, {"en": abstract}, "en", ENGINE)
    block_words = range(indices[29] + 1, indices[30])
    assert len(block_words) == block
    assert set(block_words) <= set(result.keep)


def test_a_copy_of_an_abstract_found_in_pieces_is_removed_in_pieces() -> None:
    # A repeated first page repeats the reading order that cut the abstract: its copy is
    # cut the same way, and is searched in pieces like the abstract was.
    words, pages, abstract, indices, _ = interrupted_doc(7, 90)
    first = strip_abstracts(words, pages, {"en": abstract}, "en", ENGINE)
    assert first.matches[0].leakage == 0.0
    copy_at = len(words)
    copy = words[indices[0] : indices[-1] + 1]
    doubled = [*words, *copy]
    result = strip_abstracts(doubled, [*pages, *[pages[-1] + 1] * len(copy)],
                             {"en": abstract}, "en", ENGINE)
    assert result.matches[0].leakage == 0.0
    kept_copy = [i - copy_at for i in result.keep if i >= copy_at]
    in_copy = {i - indices[0] for i in indices}
    assert len(in_copy.intersection(kept_copy)) <= 8
