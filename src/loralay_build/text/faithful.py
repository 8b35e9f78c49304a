"""The original LoRaLay abstract search, kept to compare with the published datasets.

Only pages 1, 2, N-1 and N (counting pages that have words) are searched, one page at a
time, lower-cased and nothing else; the cascade is exact search, then fuzzysearch, then a
fuzzy regex, and the first (leftmost) match of a stage is taken, not the best. A match
covering a whole page counts as not found, as it did originally. Character spans are
mapped to words through an offset table, so the original off-by-one is not reproduced.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

import fuzzysearch
import regex

from loralay_build.text.match import Match
from loralay_build.text.settings import MatchSettings


def searched_pages(word_pages: Sequence[int]) -> list[int]:
    """Page indices the original searched: first, second, second-to-last and last page."""
    pages = sorted(set(word_pages))
    picked = [pages[i] for i in (0, 1, -2, -1) if -len(pages) <= i < len(pages)]
    return sorted(set(picked))


def locate_faithful(
    abstract: str, words: Sequence[str], word_pages: Sequence[int], settings: MatchSettings
) -> Match | None:
    """The first page (in page order) on which the cascade finds the abstract, else None."""
    query = abstract.replace("\n", "").lower()
    if not query:
        return None
    for page in searched_pages(word_pages):
        indices = [i for i, p in enumerate(word_pages) if p == page]
        page_words = [words[i].lower() for i in indices]
        text = " ".join(page_words)
        found = _cascade(query, text, settings)
        if found is None:
            continue
        start, end, distance, method = found
        if start == 0 and end >= len(text):
            continue
        first, last = _snap(page_words, start, end)
        return Match(indices[first], indices[last] + 1, distance, method)
    return None


def _cascade(query: str, text: str, s: MatchSettings) -> tuple[int, int, int, str] | None:
    """Character span [start, end), distance and stage of the first match on one page."""
    at = text.find(query)
    if at >= 0:
        return at, at + len(query), 0, "faithful-exact"
    if len(query) > s.faithful_max_l_dist:
        near = fuzzysearch.find_near_matches(query, text, max_l_dist=s.faithful_max_l_dist)
        if near:
            return near[0].start, near[0].end, near[0].dist, "faithful-fuzzysearch"
    pattern = f"(?:{regex.escape(query)}){{e<={s.faithful_regex_errors}}}"
    try:
        m = regex.search(pattern, text, timeout=s.faithful_regex_timeout)
    except TimeoutError:
        return None
    if m is None:
        return None
    return m.start(), m.end(), sum(m.fuzzy_counts), "faithful-regex"


def _snap(page_words: Sequence[str], start: int, end: int) -> tuple[int, int]:
    """First and last word (inclusive) touched by the character span [start, end)."""
    starts = [0, *accumulate(len(w) + 1 for w in page_words)][:-1]
    first = bisect_right(starts, start) - 1
    if start >= starts[first] + len(page_words[first]):
        first += 1
    last = bisect_right(starts, max(start, end - 1)) - 1
    return min(first, last), last
