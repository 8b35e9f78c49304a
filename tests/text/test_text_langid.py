"""Language identification never raises on PDF text and gives a confidence in [0, 1]."""

from __future__ import annotations

import pycld2
from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.text import detect_language, langid

FRENCH = (
    "Nous proposons une méthode de résumé automatique pour les articles scientifiques longs, "
    "qui tient compte de la mise en page et de la structure des documents."
)


def test_detects_french_with_high_confidence() -> None:
    lang, confidence = detect_language(FRENCH)
    assert lang == "fr" and 0.5 < confidence <= 1.0


def test_control_characters_and_lone_surrogates_do_not_raise() -> None:
    lang, confidence = detect_language("\x00\x01" + FRENCH + "\ud800\x7f\x85\udfff")
    assert lang == "fr" and 0.0 < confidence <= 1.0


def test_empty_and_garbage_text_is_unknown() -> None:
    assert detect_language("") == ("un", 0.0)
    assert detect_language("\x00\x02\ud800") == ("un", 0.0)


def test_only_the_first_hundred_thousand_characters_count() -> None:
    text = FRENCH * 800 + " This English tail is never read by the detector." * 10_000
    assert detect_language(text)[0] == "fr"


def _always_cleaned(text: str) -> tuple[str, float]:
    """detect_language with the cleaning applied to every text, printable or not."""
    sample = langid._SURROGATE.sub("", langid._CONTROL.sub(" ", text[: langid.MAX_CHARS]))
    if not sample.strip():
        return langid.UNKNOWN
    try:
        reliable, _, details = pycld2.detect(sample)
    except pycld2.error:
        return langid.UNKNOWN
    _name, code, percent, _score = details[0]
    if code in ("un", "xx") or percent <= 0:
        return langid.UNKNOWN
    return str(code), min(1.0, percent / 100.0) * (1.0 if reliable else 0.5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([FRENCH, "the model", " ", "\x00", "\x85", "\ud800", "\xa0",
                                 "\uf8f0", "\xad", "<b>", "&amp;", "요약"])
                | st.text(max_size=5), max_size=12).map("".join))
def test_only_texts_with_unprintable_characters_need_cleaning(text: str) -> None:
    assert detect_language(text) == _always_cleaned(text)
