"""Locate one abstract in a document's word stream: exact search, then seeds and edlib.

The whole document is searched, page and column breaks included, on the normalised view
of both texts. Exact search settles most documents. Otherwise exact character seeds of
the abstract vote for a diagonal (body offset minus abstract offset), and edlib aligns the
abstract in a window around each of the best diagonals with an edit budget proportional to
the abstract's length. The work per call is bounded by the number of seeds, the number of
candidate windows and the window size, never by how noisy the body is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Literal

import edlib

from loralay_build.text.normalize import Tokens, normalise_text, normalise_words
from loralay_build.text.settings import MatchSettings

Verdict = Literal["found", "partial", "absent"]

# Headings printed before an abstract or stored at the start of a metadata abstract,
# in their normalised form (no accents, folded case).
HEADINGS = frozenset(
    {
        "abstract",
        "resume",
        "resumo",
        "resumen",
        "sumario",
        "summary",
        "synopsis",
        "riassunto",
        "zusammenfassung",
        "요약",
        "초록",
        "국문초록",
        "영문초록",
    }
)
Aligned = tuple[int, int, int]  # edit distance, first and last matched body character
_CIGAR = re.compile(r"(\d+)([=XID])")
_EDLIB_ALPHABET = 256


@dataclass(frozen=True)
class Match:
    """A located abstract: words [word_start, word_end) of the stream, and how it was found."""

    word_start: int
    word_end: int
    distance: int
    method: str  # "exact" | "approx"


@dataclass(frozen=True)
class Search:
    """The outcome of one search: the best span and whether it is a confident hit."""

    verdict: Verdict
    match: Match | None  # the best span seen (first to last word), also when partial
    ratio: float  # edit distance per abstract character of the best span; 1.0 when none
    pieces: tuple[Match, ...] = ()  # the spans to remove; one unless the abstract was split

    def found(self) -> Match | None:
        """The span when it is a confident hit, else None."""
        return self.match if self.verdict == "found" else None


def is_heading(token: str) -> bool:
    """Whether a normalised token is an abstract heading such as "Résumé:" or "ABSTRACT"."""
    return token.strip(".:;,'\"()[]") in HEADINGS


def query_tokens(abstract: str) -> list[str]:
    """Normalised tokens of a metadata abstract without its leading heading words."""
    tokens = normalise_text(abstract)
    skip = 0
    while skip < min(3, len(tokens) - 1) and is_heading(tokens[skip]):
        skip += 1
    return tokens[skip:]


class Body:
    """The normalised text of a word stream, with the offsets that map it back to words."""

    def __init__(self, words: Sequence[str]) -> None:
        self.tokens: Tokens = normalise_words(words)
        self.text = " ".join(self.tokens.texts)
        lengths = [len(t) + 1 for t in self.tokens.texts]
        self.starts = [0, *accumulate(lengths)][:-1] if lengths else []

    def token_at(self, pos: int, *, leading: bool) -> int:
        """Token holding character `pos`; on a space, the token after (leading) or before it."""
        t = bisect_right(self.starts, pos) - 1
        if leading and pos >= self.starts[t] + len(self.tokens.texts[t]):
            t += 1
        return t

    def span(self, first: int, last: int, distance: int, method: str) -> Match:
        """Snap the character span [first, last] to whole PDF words, with preceding headings."""
        t0 = self.token_at(first, leading=True)
        t1 = self.token_at(last, leading=False)
        while t0 > 0 and is_heading(self.tokens.texts[t0 - 1]):
            t0 -= 1
        return Match(self.tokens.first_word[t0], self.tokens.end_word[t1], distance, method)


def locate(abstract: str, words: list[str]) -> Match | None:
    """Where the abstract is in the words, or None when it is not confidently there."""
    return search(query_tokens(abstract), Body(words), MatchSettings()).found()


def search(tokens: Sequence[str], body: Body, settings: MatchSettings) -> Search:
    """Search one abstract (normalised tokens) in a body; the lowest distance wins.

    When no single span is close enough but many seeds occur in the body, the abstract
    may have been cut by the reading order (a column of body text inside it), so its
    halves are searched on their own, recursively, and the pieces near each other kept.
    A sizeable piece without the rest makes the abstract "partial", not "absent".
    """
    query = " ".join(tokens)
    if not query or not body.text:
        return Search("absent", None, 1.0)
    hit = body.text.find(query)
    if hit >= 0:
        match = body.span(hit, hit + len(query) - 1, 0, "exact")
        return Search("found", match, 0.0, (match,))
    windows, seed_share = _candidate_windows(query, body.text, settings)
    best = _best(query, body.text, windows, int(settings.absent_ratio * len(query)))
    if best is not None and best[0] <= settings.accept_ratio * len(query):
        match = body.span(best[1], best[2], best[0], "approx")
        return Search("found", match, best[0] / len(query), (match,))
    split = None
    if seed_share >= settings.split_seed_share and len(tokens) > 1:
        split = _split_search(tokens, body, settings)
        if split is not None and split.verdict == "found":
            return split
    if best is not None:  # within the absent budget, not within the accept budget
        match = body.span(best[1], best[2], best[0], "approx")
        return Search("partial", match, best[0] / len(query), (match,))
    if split is not None and split.verdict == "partial":
        return split
    return Search("absent", None, 1.0)


def _best(query: str, text: str, windows: Sequence[tuple[int, int]], budget: int) -> Aligned | None:
    """The lowest-distance alignment of the query over the windows, in body coordinates."""
    best: Aligned | None = None
    for lo, hi in windows:
        aligned = _align(query, text[lo:hi], budget)
        if aligned is not None and (best is None or aligned[0] < best[0]):
            best = (aligned[0], lo + aligned[1], lo + aligned[2])
    return best


def _split_search(tokens: Sequence[str], body: Body, s: MatchSettings) -> Search | None:
    """Search halves of the abstract recursively and keep the pieces found near the largest.

    A second pass looks for the segments still missing (those cut by a moved line) with
    smaller pieces, only between the first and last piece found, where short pieces cannot
    match body text before or after the abstract. Unfound characters count as edits,
    so the ratio stays comparable with a single span.
    """
    pieces: list[tuple[Aligned, int]] = []  # alignment, piece length
    missed: list[Sequence[str]] = []
    _pieces(tokens, body, s, pieces, missed, None, s.piece_chars)
    if not pieces:
        return None
    total = len(" ".join(tokens))
    anchor = max(pieces, key=lambda p: p[1])[0]
    reach = s.split_spread * total
    near = [p for p in pieces if abs(p[0][1] - anchor[1]) <= reach]
    region = (min(a[1] for a, _ in near), max(a[2] for a, _ in near) + 1)
    for segment in missed:
        _pieces(segment, body, s, near, [], region, s.seed_len)
    near.sort(key=lambda p: p[0][1])
    found_chars = sum(length for _, length in near)
    distance = sum(a[0] for a, _ in near) + max(0, total - found_chars - len(near) + 1)
    spans = tuple(body.span(a[1], a[2], a[0], "approx") for a, _ in near)
    match = Match(spans[0].word_start, max(m.word_end for m in spans), distance, "approx")
    ratio = distance / total
    verdict: Verdict = "found" if ratio <= s.accept_ratio else (
        "partial" if found_chars >= s.partial_share * total else "absent"
    )
    return Search(verdict, match, ratio, spans)


def _pieces(
    tokens: Sequence[str],
    body: Body,
    s: MatchSettings,
    out: list[tuple[Aligned, int]],
    missed: list[Sequence[str]],
    region: tuple[int, int] | None,
    min_chars: int,
) -> None:
    """Append confident alignments of this run of tokens, or of its halves, to `out`.

    Runs too short to halve again go to `missed`. With a region, only that part of the
    body is searched, which keeps short pieces from matching elsewhere.
    """
    query = " ".join(tokens)
    lo, hi = region if region is not None else (0, len(body.text))
    hit = body.text.find(query, lo, hi)
    if hit >= 0:
        out.append(((0, hit, hit + len(query) - 1), len(query)))
        return
    windows = [region] if region is not None else _candidate_windows(query, body.text, s)[0]
    best = _best(query, body.text, windows, int(s.accept_ratio * len(query)))
    if best is not None:
        out.append((best, len(query)))
        return
    if len(query) < 2 * min_chars or len(tokens) < 2:
        missed.append(tokens)
        return
    half, chars = 0, 0
    while chars < len(query) // 2:
        chars += len(tokens[half]) + 1
        half += 1
    half = min(max(half, 1), len(tokens) - 1)
    _pieces(tokens[:half], body, s, out, missed, region, min_chars)
    _pieces(tokens[half:], body, s, out, missed, region, min_chars)


def _candidate_windows(
    query: str, text: str, s: MatchSettings
) -> tuple[list[tuple[int, int]], float]:
    """Body windows around the diagonals with the most seed hits, and the share of seeds seen."""
    n = len(query)
    seed_len = min(s.seed_len, max(4, n // 2))
    last = n - seed_len
    if last < 0:
        return [], 0.0
    count = min(s.max_seeds, last // max(1, seed_len // 2) + 1)
    positions = sorted({round(i * last / max(1, count - 1)) for i in range(count)})
    votes: Counter[int] = Counter()
    seen = 0
    for p in positions:
        seed = query[p : p + seed_len]
        at = text.find(seed)
        seen += at >= 0
        hits = 0
        while at >= 0 and hits < s.seed_hits:
            votes[(at - p) // s.bin_chars] += 1
            hits += 1
            at = text.find(seed, at + 1)
    scored = sorted(
        ((votes[b - 1] + votes[b] + votes[b + 1], -b) for b in votes),
        reverse=True,
    )
    slack = max(s.min_slack, int(s.slack_ratio * n))
    radius = slack // s.bin_chars + 1
    chosen: list[int] = []
    for score, neg_bin in scored:
        if score < s.min_votes or len(chosen) == s.candidates:
            break
        b = -neg_bin
        if all(abs(b - c) > radius for c in chosen):
            chosen.append(b)
    windows = []
    for b in chosen:
        diagonal = b * s.bin_chars
        end = diagonal + n + slack + s.bin_chars
        windows.append((max(0, diagonal - slack), min(len(text), end)))
    return windows, seen / len(positions)


def _align(query: str, window: str, budget: int) -> tuple[int, int, int] | None:
    """Best infix alignment of the query in the window: distance, first and last matched chars.

    Leading and trailing mismatches are trimmed so that a span never starts or ends on a
    character that does not match the abstract.
    """
    q: str | bytes = query
    w: str | bytes = window
    if len(set(query).union(window)) > _EDLIB_ALPHABET:
        q, w = _compact(query, window)
    result = edlib.align(q, w, mode="HW", task="path", k=budget)
    distance = int(result["editDistance"])
    if distance < 0:
        return None
    start = int(result["locations"][0][0])
    ops = [(int(n), op) for n, op in _CIGAR.findall(result["cigar"])]
    first = last = -1
    pos = start
    for n, op in ops:
        if op == "=":
            if first < 0:
                first = pos
            last = pos + n - 1
        if op != "I":
            pos += n
    if first < 0:
        return None
    return distance, first, last


def _compact(query: str, window: str) -> tuple[bytes, bytes]:
    """Byte strings for edlib when the texts use more than 256 symbols (Hangul, CJK).

    The query's most frequent characters keep their own code; the rest share one, which
    can only make a distance smaller, never hide a true match.
    """
    ranked = [c for c, _ in Counter(query).most_common(_EDLIB_ALPHABET - 1)]
    codes = {c: i for i, c in enumerate(ranked)}
    other = _EDLIB_ALPHABET - 1
    return (
        bytes(codes.get(c, other) for c in query),
        bytes(codes.get(c, other) for c in window),
    )
