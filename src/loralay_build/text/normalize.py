"""One normalisation for both sides of a match: metadata abstracts and PDF words.

PDF text layers and metadata disagree on things that carry no meaning for locating an
abstract: ligatures, compatibility forms, curly quotes, dash variants, soft hyphens,
line-end hyphenation, accents written as separate glyphs, bidi marks and case. Every
difference left in costs edits, and the edit budget is then spent on noise instead of on
real differences. The normalised token keeps the index of the PDF words it came from, so
a match on the normalised stream maps back to exact word indices.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

# PDFium marks a hyphen it saw at the end of a line with U+0002.
PDFIUM_LINE_HYPHEN = "\x02"
_HYPHENS = "-\u2010\u2011\u00ad"
_CID = re.compile(r"\(cid:\d+\)")
# Spacing accents that old TeX PDFs emit as glyphs of their own next to the base letter.
_SPACING_ACCENTS = dict.fromkeys(
    map(ord, "\u00b4\u02c6\u02dc\u00a8\u0060\u02dd\u02c7\u02d8\u02d9\u02da\u00b8\u02db\u00af")
)
_TRANSLATE = {
    # quotes
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4\u0060"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033"), '"'),
    # dashes and hyphens are dropped: line-end and compound hyphens cannot be told apart
    **dict.fromkeys(map(ord, "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")),
    # soft hyphen, zero-width and bidi controls, the PDFium line-end hyphen mark
    **dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff\x02")),
    **dict.fromkeys(range(0x202A, 0x202F)),
    **dict.fromkeys(range(0x2066, 0x206A)),
    # ligatures NFKC leaves alone
    ord("\u00e6"): "ae",
    ord("\u0153"): "oe",
    ord("\u00df"): "ss",
}


@lru_cache(maxsize=262_144)
def normalise_token(word: str) -> str:
    """The matching key of one word: NFKC, no accents, no hyphens, folded case.

    Accents are dropped because PDFs often emit them as separate glyphs; hyphens are
    dropped on both sides because a line-end hyphen and a compound hyphen look the same.
    """
    if word.isascii():
        if word.isalnum():
            return word.lower()
        text = _CID.sub("\ufffd", word) if "(cid:" in word else word
        text = text.translate(_TRANSLATE).lower()
        return "".join(ch for ch in text if ch.isprintable() or ch == "\ufffd")
    text = word.translate(_SPACING_ACCENTS)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = unicodedata.normalize("NFC", text).translate(_TRANSLATE).casefold()
    if "(cid:" in text:
        text = _CID.sub("\ufffd", text)
    return "".join(ch for ch in text if ch.isprintable() and not ch.isspace())


def _ends_with_line_hyphen(word: str) -> bool:
    return len(word) > 1 and word[-1] in _HYPHENS


def _continues_word(word: str) -> bool:
    """A plausible second half of a hyphenated word starts with a lower-case letter."""
    return bool(word) and word[0].islower()


@dataclass(frozen=True)
class Tokens:
    """Normalised tokens of a word stream and, for each, the PDF words it covers."""

    texts: list[str]
    first_word: list[int]  # index of the first PDF word of each token
    end_word: list[int]  # index one past the last PDF word of each token


def normalise_words(words: Sequence[str]) -> Tokens:
    """Normalise a word stream, joining line-end hyphenation and dropping empty tokens.

    A word marked with PDFium's U+0002 always joins the next word. A word ending in a
    plain or soft hyphen joins it only when the next word starts in lower case, so that
    "associ-" + "ated" joins while "Franco-" + "Italian" stays two tokens.
    """
    texts: list[str] = []
    first: list[int] = []
    end: list[int] = []
    pending = ""
    pending_start = -1
    for i, word in enumerate(words):
        if "\n" in word or "\t" in word or " " in word:
            parts = word.split()
            word = "".join(parts)
        key = normalise_token(word)
        if pending_start >= 0:
            key = pending + key
            start = pending_start
            pending, pending_start = "", -1
        else:
            start = i
        nxt = words[i + 1] if i + 1 < len(words) else ""
        certain = word.endswith(PDFIUM_LINE_HYPHEN)
        if nxt and (certain or (_ends_with_line_hyphen(word) and _continues_word(nxt))):
            pending, pending_start = key, start
            continue
        if key:
            texts.append(key)
            first.append(start)
            end.append(i + 1)
    return Tokens(texts, first, end)


def normalise_text(text: str) -> list[str]:
    """Normalised tokens of a free text (a metadata abstract), split on whitespace."""
    return normalise_words(text.split()).texts
