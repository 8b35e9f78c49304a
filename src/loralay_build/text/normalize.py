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
_JOIN_MARKS = frozenset("-\u2010\u2011\u00ad\x02")
_CID = re.compile(r"\(cid:\d+\)")
# The combining diacritical mark blocks: accents, whether precomposed or not, are dropped.
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
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
        text = word.translate(_TRANSLATE).lower()
    else:
        text = unicodedata.normalize("NFKD", word.translate(_SPACING_ACCENTS))
        text = _COMBINING.sub("", text)
        text = unicodedata.normalize("NFC", text).translate(_TRANSLATE).casefold()
    if "(cid:" in text:
        text = _CID.sub("\ufffd", text)
    if " " in text or not text.isprintable():
        text = "".join(ch for ch in text if ch.isprintable() and ch != " ")
    return text


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
    keys = list(map(normalise_token, words))
    joins = _join_points(words)
    n = len(words)
    texts: list[str] = []
    first: list[int] = []
    end: list[int] = []
    start = 0
    for j in sorted(joins):
        if j < start:
            continue  # already part of a chain of joins
        last = j
        while last in joins:
            last += 1
        texts += keys[start:j]
        first += range(start, j)
        end += range(start + 1, j + 1)
        texts.append("".join(keys[j : last + 1]))
        first.append(j)
        end.append(last + 1)
        start = last + 1
    texts += keys[start:]
    first += range(start, n)
    end += range(start + 1, n + 1)
    if "" in texts:
        kept = [i for i, t in enumerate(texts) if t]
        return Tokens([texts[i] for i in kept], [first[i] for i in kept], [end[i] for i in kept])
    return Tokens(texts, first, end)


def _join_points(words: Sequence[str]) -> set[int]:
    """Indices of the words that are the first half of a word hyphenated across lines."""
    points = set()
    for i in [i for i, w in enumerate(words) if w[-1:] in _JOIN_MARKS]:
        if i + 1 < len(words):
            word, nxt = words[i], words[i + 1]
            if word[-1] == PDFIUM_LINE_HYPHEN or (len(word) > 1 and nxt[:1].islower()):
                points.add(i)
    return points


def normalise_text(text: str) -> list[str]:
    """Normalised tokens of a free text (a metadata abstract), split on whitespace."""
    return normalise_words(text.split()).texts
