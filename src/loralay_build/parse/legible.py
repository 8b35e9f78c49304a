"""Whether a page's text layer reads as language.

A font whose ToUnicode map is a substitution cipher over ASCII (letters mapped to punctuation
marks and digits) extracts as printable nonsense, `$.&)(2.)*3&1$`: every word holds a mark
or a digit, so the count of unmapped characters passes it, and the abstract is then not
found. Such a page has almost no letters. A page of figures (a table of results) has few
letters too, but its tokens are numbers; a page of a cipher has tokens that are neither
words nor numbers, and CLD2 finds no language in it.
"""

from __future__ import annotations

import re

# Below this share of ASCII digits and punctuation among its characters, a page reads as
# language: prose has 5-15 %, the born-digital realdocs pages at most 54 % (a table of
# contents of dot leaders aside), a page of a cipher nearly 100 %.
MAX_MARK_SHARE = 0.75
# Above it, the page is a cipher when over this share of its characters lie in tokens that
# are neither words (two letters in a row), numbers nor rules (one mark repeated), and CLD2
# names no language reliably.
MAX_ODD_SHARE = 0.5

_MARKS = bytes(c for c in range(0x21, 0x7F) if not chr(c).isalpha())
_WORD = re.compile(r"[^\W\d_]{2}")
# A number as papers print them: signs, brackets, separators, a percent or a footnote mark.
_NUMBER = re.compile(r"[(\[{]?[-+±−~≈<>]?\d+(?:[.,:/×x–-]\d+)*[%‰°*)\]}]*[.,;:]?")


def reads_as_language(words: list[str]) -> bool:
    """False for a page whose words are a substitution cipher of letters onto marks and
    digits; True for prose in any script, tables of figures and near-empty pages."""
    text = "".join(words)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) - len(data.translate(None, _MARKS)) < MAX_MARK_SHARE * len(text):
        return True  # the cheap test settles nearly every page
    return odd_share(words) <= MAX_ODD_SHARE or _cld2_reliable(" ".join(words))


def odd_share(words: list[str]) -> float:
    """Share of the characters of `words` in tokens that are neither words, numbers nor
    rules."""
    odd = sum(len(word) for word in words if not _WORD.search(word)
              and not _NUMBER.fullmatch(word) and len(set(word)) > 1)
    return odd / max(1, sum(map(len, words)))


def _cld2_reliable(text: str) -> bool:
    import pycld2

    try:
        reliable, _, details = pycld2.detect(text)
    except pycld2.error:
        return False
    return bool(reliable) and details[0][1] not in ("un", "xx")
