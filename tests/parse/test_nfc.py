"""Every published word is NFC on every backend, whatever form the text layer holds.

The comparisons are exact: nothing is normalised before comparing, so a decomposed
"e" + U+0301 coming out of an engine fails them.
"""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loralay_build.errors import Reject
from loralay_build.nfc import nfc_words
from loralay_build.parse import parse_pdf
from tests.helpers.pdfgen import ACCENT_FONT, text_layer_pdf

BACKENDS = ["pdfium", "pdfplumber", "poppler"]
REALDOCS = Path("/work/shared/realdocs/pdf")
# Realdocs whose text layers hold decomposed letters or spacing accents (author names,
# French): the slow pdfplumber backend reads these; the fast ones read every realdoc.
ACCENTED = ["en-acl-2020.acl-main.447", "en-acl-2023.eacl-main.121", "en-arxiv-1111.2011v2",
            "en-openreview-iclr2017w-ailon", "en-osdi04-mapreduce", "fr-taln-2002-poster-007"]
MARKS = "\u0300\u0301\u0302\u0303\u0308\u030a\u030c\u0327"
FILLER = [f"filler line {i} keeps the page above the minimum amount of text" for i in range(8)]

needs_font = pytest.mark.skipif(not ACCENT_FONT.is_file(), reason="DejaVu Sans is absent")


def _not_nfc(words: list[str]) -> list[str]:
    return [w for w in words if not unicodedata.is_normalized("NFC", w)]


@needs_font
@pytest.mark.parametrize("backend", BACKENDS)
def test_decomposed_text_layer_is_published_composed(tmp_path: Path, backend: str) -> None:
    path = tmp_path / "nfd.pdf"
    text_layer_pdf(path, ["Re\u0301sume\u0301 de la me\u0301moire nai\u0308ve",
                          "A\u030angstro\u0308m \u212b caf\u00e9", *FILLER])
    words = parse_pdf(path, backend).words
    assert words[:8] == ["R\u00e9sum\u00e9", "de", "la", "m\u00e9moire", "na\u00efve",
                         "\u00c5ngstr\u00f6m", "\u00c5", "caf\u00e9"]


letter = st.sampled_from("aeiounczAEIOUNCZ")
word = st.lists(st.tuples(letter, st.sampled_from(["", *MARKS])), min_size=1, max_size=8).map(
    lambda pieces: "".join(base + mark for base, mark in pieces))


@needs_font
@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(word, min_size=1, max_size=8))
def test_generated_words_come_out_nfc(backend: str, words: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "words.pdf"
        text_layer_pdf(path, [" ".join(words), *FILLER])
        found = parse_pdf(path, backend).words
    filler = {w for line in FILLER for w in line.split()}  # no word the strategy can draw
    ours = sorted(w for w in found if w not in filler)
    assert ours == sorted(unicodedata.normalize("NFC", w) for w in words)
    assert not _not_nfc(found)


@pytest.mark.skipif(not REALDOCS.is_dir(), reason="realdocs folder absent")
@pytest.mark.parametrize("backend", BACKENDS)
def test_realdocs_words_are_nfc(backend: str) -> None:
    names = ACCENTED if backend == "pdfplumber" else sorted(p.stem for p in
                                                            REALDOCS.glob("*.pdf"))
    parsed = 0
    for name in names:
        try:
            words = parse_pdf(REALDOCS / f"{name}.pdf", backend).words
        except Reject:
            continue
        assert not _not_nfc(words), (name, _not_nfc(words)[:5])
        parsed += 1
    assert parsed >= min(len(names), 30)


# Pieces whose NFC depends on what precedes or follows them: marks (in and out of canonical
# order), Hangul jamo, singletons and excluded compositions.
_PIECES = st.sampled_from(["e", "a", "\u0301", "\u0327", "\u0300\u0323", "\u1100",
                           "\u1161", "\u11a8", "\u212b", "\u0958", "\u00e9", " ", "x"])


@given(words=st.lists(st.lists(_PIECES, max_size=4).map("".join), max_size=6))
def test_nfc_words_is_nfc_of_each_word(words: list[str]) -> None:
    """The one check over the joined words never skips a word that needs normalising."""
    assert nfc_words(words) == [unicodedata.normalize("NFC", w) for w in words]
