"""One normalisation for both sides of a match: metadata abstracts and PDF words.

PDF text layers and metadata disagree on things that carry no meaning for locating an
abstract: ligatures, compatibility forms, curly quotes, dash variants, soft hyphens,
line-end hyphenation, accents written as separate glyphs, bidi marks and case. Every
difference left in costs edits, and the edit budget is then spent on noise instead of on
real differences. The normalised token keeps the index of the PDF words it came from, so
a match on the normalised stream maps back to exact word indices.

Words are normalised once per process: new words are joined with newlines and normalised
in a few whole-string passes (every step maps characters on their own, so the result is
the same as word by word), and a stream is then mapped through a dictionary. The compiled
core makes the key of an ASCII word itself, which costs less than the dictionary lookup.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress
from types import ModuleType

from loralay_build.native import native_module

# PDFium marks a hyphen it saw at the end of a line with U+0002.
PDFIUM_LINE_HYPHEN = "\x02"
# Marks that join a word to the next one when they end it.
_JOIN_MARKS = ("-", "\u2010", "\u2011", "\u00ad", PDFIUM_LINE_HYPHEN)
_CID = re.compile(r"\(cid:\d+\)")
# The combining diacritical mark blocks: accents, whether precomposed or not, are dropped.
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Spacing accents that old TeX PDFs emit as glyphs of their own next to the base letter.
_SPACING_ACCENT = re.compile(
    "[\u00b4\u02c6\u02dc\u00a8\u0060\u02dd\u02c7\u02d8\u02d9\u02da\u00b8\u02db\u00af]"
)
_TRANSLATE = {
    # quotes
    **dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4\u0060"), "'"),
    **dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u00ab\u00bb\u2033"), '"'),
    # dashes and hyphens are dropped: line-end and compound hyphens cannot be told apart
    **dict.fromkeys(map(ord, "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"), ""),
    # soft hyphen, zero-width and bidi controls, the PDFium line-end hyphen mark
    **dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff\x02"), ""),
    **dict.fromkeys(range(0x202A, 0x202F), ""),
    **dict.fromkeys(range(0x2066, 0x206A), ""),
    # ligatures NFKC leaves alone
    ord("\u00e6"): "ae",
    ord("\u0153"): "oe",
    ord("\u00df"): "ss",
}
# str.translate is fast on ASCII text only; other text is rewritten where a character matches.
_TRANSLATED = re.compile("[" + re.escape("".join(map(chr, _TRANSLATE))) + "]")
_CACHE_LIMIT = 262_144  # words kept normalised; the cache restarts empty beyond this


def _replacement(match: re.Match[str]) -> str:
    return _TRANSLATE[ord(match.group())]


def normalise_lines(text: str) -> str:
    """The matching key of each line of a text: NFKC, no accents, no hyphens, folded case.

    Accents are dropped because PDFs often emit them as separate glyphs; hyphens are
    dropped on both sides because a line-end hyphen and a compound hyphen look the same.
    Spaces and other unprintable characters go; newlines stay, one key per line.
    """
    if text.isascii():
        text = text.translate(_TRANSLATE).lower()
    else:
        text = unicodedata.normalize("NFKD", _SPACING_ACCENT.sub("", text))
        text = unicodedata.normalize("NFC", _COMBINING.sub("", text))
        text = _TRANSLATED.sub(_replacement, text).casefold()
    if "(cid:" in text:
        text = _CID.sub("\ufffd", text)
    if " " in text or not text.replace("\n", "").isprintable():
        drop = {c for c in set(text) if c == " " or not c.isprintable()} - {"\n"}
        text = text.translate(dict.fromkeys(map(ord, drop)))
    return text


class _Keys:
    """Normalised keys of the words seen so far in this process.

    Also remembers which of them end in a join mark, so that hyphenation candidates are
    found without a Python-level loop over every word.
    """

    def __init__(self) -> None:
        self.known: dict[str, str] = {}
        self.marked: set[str] = set()

    def of(self, words: Sequence[str]) -> list[str]:
        known = self.known
        new = set(words).difference(known)
        if new:
            if len(known) + len(new) > _CACHE_LIMIT:
                known = self.known = {}
                self.marked = set()
                new = set(words)
            # ASCII words take the fast path on their own, as one word alone would.
            plain = [w for w in new if w.isascii()]
            other = [w for w in new if not w.isascii()]
            for group in (plain, other):
                if group:
                    keys = normalise_lines("\n".join(w.replace("\n", "") for w in group))
                    known.update(zip(group, keys.split("\n"), strict=True))
            self.marked.update(w for w in new if w.endswith(_JOIN_MARKS))
        return list(map(known.__getitem__, words))

    def native_tokens(
        self, core: ModuleType, words: list[str]
    ) -> tuple[list[str], list[int], list[int]] | None:
        """The compiled core's normalise_words: it makes the keys of ASCII words itself,
        and is given those of the others, new ones normalised here first."""
        made = core.tokens(words, self.known)
        if isinstance(made, list):
            self.of(made)
            made = core.tokens(words, self.known)
        return made if isinstance(made, tuple) else None

    def join_candidates(self, words: Sequence[str]) -> list[int]:
        """Indices of the words ending in a join mark; the words must have been seen."""
        return list(compress(range(len(words)), map(self.marked.__contains__, words)))


_KEYS = _Keys()


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
    native = native_module()
    if native is not None and isinstance(words, list):
        made = _KEYS.native_tokens(native, words)
        if made is not None:
            return Tokens(*made)
    return normalise_words_python(words)


def normalise_words_python(words: Sequence[str]) -> Tokens:
    """normalise_words in Python alone (the compiled core's reference)."""
    texts = _KEYS.of(words)
    n = len(words)
    end = list(range(1, n + 1))
    for j, last in _join_runs(words):
        texts[j] = "".join(texts[j : last + 1])
        end[j] = last + 1
        texts[j + 1 : last + 1] = [""] * (last - j)  # absorbed, dropped with empty tokens
    if "" in texts:
        kept = list(map(bool, texts))
        return Tokens(
            list(compress(texts, kept)),
            list(compress(range(n), kept)),
            list(compress(end, kept)),
        )
    return Tokens(texts, list(range(n)), end)


def _join_runs(words: Sequence[str]) -> list[tuple[int, int]]:
    """Runs [first, last] of words hyphenated across lines, each joining the next word."""
    runs: list[tuple[int, int]] = []
    for i in _KEYS.join_candidates(words[:-1]):
        word, nxt = words[i], words[i + 1]
        if word[-1] == PDFIUM_LINE_HYPHEN or (len(word) > 1 and nxt[:1].islower()):
            if runs and runs[-1][1] == i:
                runs[-1] = (runs[-1][0], i + 1)
            else:
                runs.append((i, i + 1))
    return runs


def normalise_text(text: str) -> list[str]:
    """Normalised tokens of a free text (a metadata abstract), split on whitespace."""
    return normalise_words(text.split()).texts


def normalise_kept(words: Sequence[str], tokens: Tokens, cuts: Sequence[tuple[int, int]]) -> Tokens:
    """normalise_words of the words outside the cuts, reusing `tokens` (those of all words).

    The cuts are sorted, disjoint [start, end) word ranges. Removing words changes tokens
    only next to a cut, where a line-end hyphen may now join other words: the tokens that
    touch a kept stretch's edge are normalised again with the words between them, and the
    tokens inside a stretch are reused with their word indices shifted.
    """
    out = Tokens([], [], [])
    gap: list[str] = []  # kept words since the last reused token
    gap_at = at = 0  # kept index of the gap's first word; of the stretch's first word
    for start, end in _stretches(len(words), cuts):
        t0 = bisect_right(tokens.first_word, start)  # first token starting after `start`
        t1 = bisect_left(tokens.end_word, end)  # first token reaching the stretch's end
        if t0 < t1:
            first, last = tokens.first_word[t0], tokens.end_word[t1 - 1]
            gap += words[start:first]
            _extend(out, normalise_words(gap), gap_at)
            inner = Tokens(tokens.texts[t0:t1], tokens.first_word[t0:t1], tokens.end_word[t0:t1])
            _extend(out, inner, at - start)
            gap, gap_at = list(words[last:end]), at + last - start
        else:
            gap += words[start:end]
        at += end - start
    _extend(out, normalise_words(gap), gap_at)
    return out


def _stretches(n: int, cuts: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The non-empty [start, end) word ranges between the cuts."""
    stretches = []
    at = 0
    for start, end in [*cuts, (n, n)]:
        if at < start:
            stretches.append((at, start))
        at = max(at, end)
    return stretches


def _extend(out: Tokens, more: Tokens, shift: int) -> None:
    """Append tokens to `out`, their word indices shifted."""
    out.texts.extend(more.texts)
    out.first_word.extend(map(shift.__add__, more.first_word))
    out.end_word.extend(map(shift.__add__, more.end_word))


_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")


def has_hangul(texts: Sequence[str]) -> bool:
    """Whether any of the texts holds a Hangul syllable or jamo."""
    return any(_HANGUL.search(text) for text in texts)


def hangul_syllables(tokens: Tokens, whole: Callable[[str], bool]) -> Tokens:
    """The tokens with each one holding Hangul cut into its characters (syllables), each
    covering the token's words, but those `whole` keeps (headings): Korean read by OCR is
    spaced at random (a word cut at its syllables, two words joined), and spacing compares
    alike once every syllable stands alone."""
    out = Tokens([], [], [])
    for text, first, end in zip(tokens.texts, tokens.first_word, tokens.end_word, strict=True):
        parts = list(text) if _HANGUL.search(text) and not whole(text) else [text]
        out.texts.extend(parts)
        out.first_word.extend([first] * len(parts))
        out.end_word.extend([end] * len(parts))
    return out

