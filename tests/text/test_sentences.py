"""Sentences in the corpora's languages: abbreviations of scientific prose do not end one,
a stop followed by a capital does, and Korean and Portuguese get rules of their own."""

from __future__ import annotations

import pytest

from loralay_build.text.sentences import split_sentences


@pytest.mark.parametrize(("language", "text", "expected"), [
    ("en", "As shown in Fig. 2, the model of Smith et al. converges. It is fast, e.g. here.",
     ["As shown in Fig. 2, the model of Smith et al. converges.", "It is fast, e.g. here."]),
    ("fr", "Voir p. 12 du rapport. Les résultats sont nets !",
     ["Voir p. 12 du rapport.", "Les résultats sont nets !"]),
    ("pt", "O Sr. Silva chegou cedo. Depois saiu.", ["O Sr. Silva chegou cedo.", "Depois saiu."]),
    ("es", "¿Qué hicimos? Medimos el suelo.", ["¿Qué hicimos?", "Medimos el suelo."]),
    ("ko", "이것은 첫 문장이다. 두 번째 문장이다.", ["이것은 첫 문장이다.", "두 번째 문장이다."]),
    (None, "No language given. English rules apply.",
     ["No language given.", "English rules apply."]),
])
def test_sentences(language: str | None, text: str, expected: list[str]) -> None:
    assert split_sentences(text, language) == expected


def test_nothing_to_split() -> None:
    assert split_sentences("  \n ", "en") == []
