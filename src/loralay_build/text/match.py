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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import edlib

from loralay_build.native import native_module
from loralay_build.text.normalize import Tokens, normalise_text, normalise_words
from loralay_build.text.seeds import SeedFinder
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
# Headings of typed abstracts (JATS `abstract-type`, sub-articles) printed as several words;
# the heading word alone would leave "Author" of "Author Summary" in the body.
HEADING_PHRASES = frozenset(
    {
        ("author", "summary"),
        ("authors", "summary"),
        ("author's", "summary"),
        ("editor's", "summary"),
        ("editors", "summary"),
        ("editor's", "evaluation"),
        ("plain", "language", "summary"),
        ("lay", "summary"),
        ("lay", "abstract"),
        ("one", "sentence", "summary"),
        ("graphical", "abstract"),
        ("visual", "abstract"),
        ("elife", "digest"),
        ("significance", "statement"),
    }
    | {(word,) for word in HEADINGS}
)
_LONGEST_HEADING = max(len(phrase) for phrase in HEADING_PHRASES)
_CIGAR = re.compile(r"(\d+)([=XID])")
_EDLIB_ALPHABET = 256
# An edge of an alignment is unrelated text when it has more edits than this share of its
# abstract characters...
_EDGE_EDIT_RATE = 0.5
# ...by at least this many characters (isolated noise at an edge never adds up to it).
_EDGE_MIN_EXCESS = 12


class Edge(NamedTuple):
    """Abstract characters at one end of an alignment that were aligned to unrelated text.

    It happens when a block of other text (a footnote, a running header) interrupts the
    abstract near one end: the cheapest alignment then spends edits on the block instead
    of reaching the words before (or after) it, and those words stay in the body.
    """

    chars: int  # abstract characters of the edge
    body: int  # first (leading edge) or last (trailing edge) body character of the rest
    edits: int  # edits the alignment spent on the edge


class Aligned(NamedTuple):
    """An alignment of the abstract (or a piece of it) in body character coordinates."""

    distance: int
    first: int  # first matched body character
    last: int  # last matched body character
    lead: Edge | None = None
    trail: Edge | None = None



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


def _bare(token: str) -> str:
    """A normalised token without the punctuation a printed heading carries ("Résumé:")."""
    return token.strip(".:;,'\"()[]")


def is_heading(token: str) -> bool:
    """Whether the token alone is an abstract heading ("초록", "Abstract:")."""
    return (_bare(token),) in HEADING_PHRASES


def heading_before(tokens: Sequence[str], end: int) -> int:
    """How many tokens just before `end` form an abstract heading ("Abstract", "Author
    Summary"); 0 when they do not."""
    for n in range(min(_LONGEST_HEADING, end), 0, -1):
        if tuple(_bare(t) for t in tokens[end - n : end]) in HEADING_PHRASES:
            return n
    return 0


def _heading_at(tokens: Sequence[str], start: int) -> int:
    """How many tokens from `start` form an abstract heading; 0 when they do not."""
    for n in range(min(_LONGEST_HEADING, len(tokens) - start), 0, -1):
        if tuple(_bare(t) for t in tokens[start : start + n]) in HEADING_PHRASES:
            return n
    return 0


def query_tokens(abstract: str) -> list[str]:
    """Normalised tokens of a metadata abstract without its leading headings."""
    tokens = normalise_text(abstract)
    skip = 0
    while skip < 3 and (n := _heading_at(tokens, skip)) and skip + n < len(tokens):
        skip += n
    return tokens[skip:]


class Body:
    """The normalised text of a word stream, with the offsets that map it back to words."""

    def __init__(self, words: Sequence[str] | Tokens) -> None:
        """The body of PDF words, or of their tokens when already normalised."""
        self.tokens = words if isinstance(words, Tokens) else normalise_words(words)
        self.text = " ".join(self.tokens.texts)
        self.seeds = SeedFinder(self.text)

    def token_at(self, pos: int, *, leading: bool) -> int:
        """Token holding character `pos`; on a space, the token after (leading) or before it.

        Tokens hold no spaces, so the token index is the count of spaces before `pos`.
        """
        t = self.text.count(" ", 0, pos)
        if leading and self.text[pos] == " ":
            t += 1
        return t

    def span(self, first: int, last: int, distance: int, method: str) -> Match:
        """Snap the character span [first, last] to whole PDF words, with preceding headings."""
        t0 = self.token_at(first, leading=True)
        t1 = self.token_at(last, leading=False)
        while t0 > 0 and (n := heading_before(self.tokens.texts, t0)):
            t0 -= n
        return Match(self.tokens.first_word[t0], self.tokens.end_word[t1], distance, method)


def locate(abstract: str, words: list[str]) -> Match | None:
    """Where the abstract is in the words, or None when it is not confidently there."""
    return search(query_tokens(abstract), Body(words), MatchSettings()).found()


def search(tokens: Sequence[str], body: Body, settings: MatchSettings, *,
           in_pieces: bool = True) -> Search:
    """Search one abstract (normalised tokens) in a body; the lowest distance wins.

    When no single span is close enough but many seeds occur in the body, the abstract
    may have been cut by the reading order (a column of body text inside it), so its
    halves are searched on their own, recursively, and the pieces near each other kept
    (unless `in_pieces` is false). A sizeable piece without the rest makes the abstract
    "partial", not "absent".
    Words at the edges of a hit that were aligned to unrelated text are looked for nearby
    (see `_refine`).
    """
    query = " ".join(tokens)
    if not query or not body.text:
        return Search("absent", None, 1.0)
    hit = body.text.find(query)
    if hit >= 0:
        match = body.span(hit, hit + len(query) - 1, 0, "exact")
        return Search("found", match, 0.0, (match,))
    windows, seed_share = _candidate_windows(query, body, settings)
    best = _best(query, body.text, windows, int(settings.absent_ratio * len(query)))
    if best is not None and best.distance <= settings.accept_ratio * len(query):
        return _joined(_refine(tokens, best, body, settings, (0, len(body.text))), body)
    split = None
    if in_pieces and seed_share >= settings.split_seed_share and len(tokens) > 1:
        split = _split_search(tokens, body, settings)
        if split is not None and split.verdict == "found":
            return split
    if best is not None:  # within the absent budget, not within the accept budget
        match = body.span(best.first, best.last, best.distance, "approx")
        return Search("partial", match, best.distance / len(query), (match,))
    if split is not None and split.verdict == "partial":
        return split
    return Search("absent", None, 1.0)


def _best(query: str, text: str, windows: Sequence[tuple[int, int]], budget: int) -> Aligned | None:
    """The lowest-distance alignment of the query over the windows, in body coordinates.

    Once a window is aligned, only a strictly lower distance can win, so later windows are
    aligned with that smaller budget: edlib gives up on them sooner, and any alignment it
    finds within the budget is the one it would find with a larger budget.
    """
    best: Aligned | None = None
    for lo, hi in windows:
        if best is not None:
            budget = min(budget, best.distance - 1)
            if budget < 0:
                break
        aligned = _align(query, text, lo, hi, budget)
        if aligned is not None:
            best = aligned
    return best


Piece = tuple[Aligned, int]  # an alignment and the abstract characters it stands for


def _refine(
    tokens: Sequence[str], aligned: Aligned, body: Body, s: MatchSettings, limits: tuple[int, int]
) -> list[Piece]:
    """The alignment, and the words of its edges found elsewhere nearby if it has edges.

    An edge (abstract words aligned to unrelated text) is searched on its own before
    (leading) or after (trailing) the rest of the alignment, within `split_spread`
    abstract lengths and the limits. When found, the alignment is cut where the edge
    ends, so that neither the unrelated text is removed nor the edge words kept; when
    not, the alignment stays whole.
    """
    query_chars = sum(map(len, tokens)) + len(tokens) - 1
    reach = int(s.split_spread * query_chars)
    first, last, distance, chars = aligned.first, aligned.last, aligned.distance, query_chars
    found: list[Piece] = []
    if aligned.lead is not None:
        edge = _edge_tokens(tokens, aligned.lead.chars, leading=True)
        region = (max(limits[0], aligned.lead.body - reach), aligned.lead.body)
        pieces = _edge_pieces(edge, body, s, region)
        if pieces:
            found += pieces
            first, distance = aligned.lead.body, distance - aligned.lead.edits
            chars -= aligned.lead.chars
    if aligned.trail is not None and aligned.trail.body > first:  # the edges do not overlap
        edge = _edge_tokens(tokens, aligned.trail.chars, leading=False)
        region = (aligned.trail.body + 1, min(limits[1], aligned.trail.body + 1 + reach))
        pieces = _edge_pieces(edge, body, s, region)
        if pieces:
            found += pieces
            last, distance = aligned.trail.body, distance - aligned.trail.edits
            chars -= aligned.trail.chars
    return [(Aligned(distance, first, last), chars), *found]


def _edge_tokens(tokens: Sequence[str], chars: int, *, leading: bool) -> Sequence[str]:
    """The tokens in the first (leading) or last `chars` characters of the query, and one more.

    The extra token is the first of the rest: the alignment may have matched it by chance
    in the unrelated text, while the edge searched with it finds where it really is.
    """
    taken, used = 0, -1
    ordered = tokens if leading else tokens[::-1]
    while taken < len(ordered) and used + len(ordered[taken]) + 1 <= chars:
        used += len(ordered[taken]) + 1
        taken += 1
    taken = min(taken + 1, len(tokens))
    return tokens[:taken] if leading else tokens[len(tokens) - taken :]


def _edge_pieces(
    edge: Sequence[str], body: Body, s: MatchSettings, region: tuple[int, int]
) -> list[Piece]:
    """Confident pieces of the edge tokens within the region (none for a tiny edge)."""
    search = _Pieces(body, s, region, s.piece_chars)
    if edge and region[0] < region[1]:
        search.add(edge)
    return search.found


def _joined(pieces: Sequence[Piece], body: Body) -> Search:
    """A confident hit made of one or more pieces, ordered along the body."""
    ordered = sorted(pieces, key=lambda p: p[0].first)
    spans = tuple(body.span(a.first, a.last, a.distance, "approx") for a, _ in ordered)
    distance = sum(a.distance for a, _ in ordered)
    total = sum(chars for _, chars in ordered)
    match = Match(spans[0].word_start, max(m.word_end for m in spans), distance, "approx")
    return Search("found", match, distance / max(1, total), spans)


def _split_search(tokens: Sequence[str], body: Body, s: MatchSettings) -> Search | None:
    """Search halves of the abstract recursively and keep the pieces found near the largest.

    A second pass looks for the segments still missing (those cut by a moved line) with
    smaller pieces, only between the first and last piece found, where short pieces cannot
    match body text before or after the abstract. Unfound characters count as edits,
    so the ratio stays comparable with a single span.
    """
    first = _Pieces(body, s, None, s.piece_chars)
    # `search` has just failed to find the whole abstract within the accept budget (its
    # budget was larger, the windows the same), so the search starts with the halves.
    first.halves(tokens)
    if not first.found:
        return None
    total = len(" ".join(tokens))
    anchor = max(first.found, key=lambda p: p[1])[0]
    reach = s.split_spread * total
    near = [p for p in first.found if abs(p[0].first - anchor.first) <= reach]
    region = (min(a.first for a, _ in near), max(a.last for a, _ in near) + 1)
    again = _Pieces(body, s, region, s.seed_len, near)
    for segment in first.missed:
        again.add(segment)
    near.sort(key=lambda p: p[0].first)
    found_chars = sum(length for _, length in near)
    distance = sum(a.distance for a, _ in near) + max(0, total - found_chars - len(near) + 1)
    spans = tuple(body.span(a.first, a.last, a.distance, "approx") for a, _ in near)
    match = Match(spans[0].word_start, max(m.word_end for m in spans), distance, "approx")
    ratio = distance / total
    verdict: Verdict = "found" if ratio <= s.accept_ratio else (
        "partial" if found_chars >= s.partial_share * total else "absent"
    )
    return Search(verdict, match, ratio, spans)


@dataclass
class _Pieces:
    """Confident alignments of runs of abstract tokens, a run not found being halved.

    Runs too short to halve again go to `missed`. With a region, only that part of the
    body is searched, which keeps short pieces from matching elsewhere.
    """

    body: Body
    s: MatchSettings
    region: tuple[int, int] | None
    min_chars: int
    found: list[Piece] = field(default_factory=list)
    missed: list[Sequence[str]] = field(default_factory=list)

    def add(self, tokens: Sequence[str]) -> None:
        """The alignments of this run of tokens, or of its halves."""
        body, s, region = self.body, self.s, self.region
        query = " ".join(tokens)
        lo, hi = region if region is not None else (0, len(body.text))
        hit = body.text.find(query, lo, hi)
        if hit >= 0:
            self.found.append((Aligned(0, hit, hit + len(query) - 1), len(query)))
            return
        windows = [region] if region is not None else _candidate_windows(query, body, s)[0]
        best = _best(query, body.text, windows, int(s.accept_ratio * len(query)))
        if best is not None:
            self.found += _refine(tokens, best, body, s, (lo, hi))
            return
        self.halves(tokens)

    def halves(self, tokens: Sequence[str]) -> None:
        """The alignments of each half of the tokens, or the tokens to `missed` when too
        short to halve."""
        query = " ".join(tokens)
        if len(query) < 2 * self.min_chars or len(tokens) < 2:
            self.missed.append(tokens)
            return
        half, chars = 0, 0
        while chars < len(query) // 2:
            chars += len(tokens[half]) + 1
            half += 1
        half = min(max(half, 1), len(tokens) - 1)
        self.add(tokens[:half])
        self.add(tokens[half:])


def _candidate_windows(
    query: str, body: Body, s: MatchSettings
) -> tuple[list[tuple[int, int]], float]:
    """Body windows around the diagonals with the most seed hits, and the share of seeds seen."""
    n = len(query)
    seed_len = min(s.seed_len, max(4, n // 2))
    last = n - seed_len
    if last < 0:
        return [], 0.0
    count = min(s.max_seeds, last // max(1, seed_len // 2) + 1)
    positions = sorted({round(i * last / max(1, count - 1)) for i in range(count)})
    hits = body.seeds.first([query[p : p + seed_len] for p in positions], s.seed_hits)
    votes: dict[int, int] = {}  # a plain dict: Counter's lookups of absent bins are slow
    seen = 0
    for p, found in zip(positions, hits, strict=True):
        seen += bool(found)
        for at in found:
            b = (at - p) // s.bin_chars
            votes[b] = votes.get(b, 0) + 1
    scored = sorted(
        ((votes.get(b - 1, 0) + votes[b] + votes.get(b + 1, 0), -b) for b in votes),
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
        windows.append((max(0, diagonal - slack), min(len(body.text), end)))
    return windows, seen / len(positions)


def _align(query: str, text: str, lo: int, hi: int, budget: int) -> Aligned | None:
    """Best infix alignment of the query in text[lo:hi], in body character coordinates.

    Leading and trailing mismatches are trimmed so that a span never starts or ends on a
    character that does not match the abstract, and edges aligned to unrelated text are
    reported.
    """
    window = text[lo:hi]
    q: str | bytes = query
    w: str | bytes = window
    if not (query.isascii() and window.isascii()):
        q, w = _as_bytes(query, window)
    result = edlib.align(q, w, mode="HW", task="path", k=budget)
    distance = int(result["editDistance"])
    if distance < 0:
        return None
    ops = [(int(n), op) for n, op in _CIGAR.findall(result["cigar"])]
    start = lo + int(result["locations"][0][0])
    positions = _body_positions(ops, start)
    matched = [(at, n) for at, (n, op) in zip(positions, ops, strict=True) if op == "="]
    if not matched:
        return None
    first, last = matched[0][0], matched[-1][0] + matched[-1][1] - 1
    lead = _edge(query, ops, start)
    tail = _edge(query[::-1], ops[::-1], -(start + _body_length(ops) - 1))
    trail = tail._replace(body=-tail.body) if tail is not None else None
    return Aligned(distance, first, last, lead, trail)


def _body_length(ops: Sequence[tuple[int, str]]) -> int:
    return sum(n for n, op in ops if op != "I")


def _body_positions(ops: Sequence[tuple[int, str]], start: int) -> list[int]:
    """Body position at which each operation starts ("I" consumes no body character)."""
    positions = []
    pos = start
    for n, op in ops:
        positions.append(pos)
        if op != "I":
            pos += n
    return positions


def _edge(query: str, ops: Sequence[tuple[int, str]], start: int) -> Edge | None:
    """The leading edge of an alignment path, if it looks aligned to unrelated text.

    The edge ends at a word start inside a match run, where the edits so far most exceed
    `_EDGE_EDIT_RATE` of the abstract characters so far. For a trailing edge, pass the
    reversed query and path and a negated end position (positions then grow along it).
    """
    best: Edge | None = None
    best_excess = _EDGE_MIN_EXCESS - 1e-9
    chars = edits = 0
    pos = start
    for n, op in ops:
        if op == "=" and edits - _EDGE_EDIT_RATE * chars > best_excess:
            space = query.find(" ", max(0, chars - 1), chars + n - 1)
            if space >= 0:  # the rest starts with the word after this space
                cut = space + 1
                best = Edge(cut, pos + cut - chars, edits)
                best_excess = edits - _EDGE_EDIT_RATE * cut
        if op != "=":
            edits += n
        if op != "D":
            chars += n
        if op != "I":
            pos += n
    return best


def _as_bytes(query: str, window: str) -> tuple[bytes, bytes]:
    """Byte strings for edlib of texts outside ASCII, one byte per character.

    edlib maps such a str to bytes itself, character by character, at several times the
    cost of the alignment. Only the equality of characters counts in an alignment, so any
    one-to-one mapping gives the same one: Latin-1 when it holds every character, else the
    characters numbered (by the compiled core when built), or `_compact` beyond 256 of them.
    """
    try:
        return query.encode("latin-1"), window.encode("latin-1")
    except UnicodeEncodeError:
        pass
    native = native_module()
    if native is not None:
        coded: tuple[bytes, bytes] | None = native.symbol_bytes(query, window)
        if coded is not None:
            return coded
    symbols = set(query).union(window)
    if len(symbols) > _EDLIB_ALPHABET:
        return _compact(query, window)
    codes = {ord(c): i for i, c in enumerate(symbols)}
    return query.translate(codes).encode("latin-1"), window.translate(codes).encode("latin-1")


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
