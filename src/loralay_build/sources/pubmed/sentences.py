"""Sentence splitting that survives the abbreviations of scientific prose.

A boundary is a `.`, `!` or `?` (optionally followed by closing quotes or brackets), then
whitespace, then something that can start a sentence (a capital, a digit, an opening bracket
or quote, or a citation marker). It is not a boundary when the word before the stop is a known
abbreviation ("et al.", "Fig.", "e.g.", "vs.") or a single capital initial ("J. Smith").
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset({
    "al", "fig", "figs", "e.g", "i.e", "eg", "ie", "vs", "cf", "ca", "approx", "eq", "eqs",
    "ref", "refs", "tab", "no", "nos", "vol", "suppl", "resp", "sp", "spp", "dr", "mr", "mrs",
    "ms", "prof", "st", "inc", "ltd", "co", "corp", "jr", "sr", "etc", "viz", "var", "subsp",
    "min", "max", "dept", "univ", "ed", "eds", "p", "pp", "ch", "sec", "sect",
    "chap", "mol", "wt", "conc", "temp", "u.s", "u.k", "ph.d", "m.d",
})
# Abbreviations after which a capital still does not start a new sentence.
NEVER_END = frozenset({"al", "fig", "figs", "e.g", "i.e", "eg", "ie", "vs", "cf", "ca", "eq",
                       "eqs", "ref", "refs", "tab", "no", "nos", "dr", "mr", "mrs", "ms",
                       "prof", "st", "sp", "spp", "p", "pp", "approx", "viz", "suppl"})
_CANDIDATE = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[A-Z0-9\ue000-\uf8ff])")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")


def _is_boundary(text: str, stop: int) -> bool:
    """True if the full stop at `stop` ends a sentence."""
    if text[stop] != ".":
        return True
    found = _WORD_BEFORE.search(text[:stop + 1])
    if not found:
        return True
    word = found.group(1).lower()
    if word in NEVER_END:
        return False
    if len(word) == 1 and found.group(1).isupper():
        return False  # an initial: "J. Smith"
    if "." in word and len(word.replace(".", "")) <= 3:
        return False  # "e.g", "U.S"-like dotted short forms not listed
    return word not in ABBREVIATIONS or word == "etc"


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph, in order, whitespace-trimmed; joining them with single
    spaces gives back the paragraph (with its whitespace collapsed)."""
    out: list[str] = []
    start = 0
    for found in _CANDIDATE.finditer(text):
        if _is_boundary(text, found.start()):
            end = found.end()
            piece = text[start:end].strip()
            if piece:
                out.append(piece)
            start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out
