"""Language identification never raises on PDF text and gives a confidence in [0, 1]."""

from __future__ import annotations

from loralay_build.text import detect_language

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
