"""Remove every abstract of a document from its words, and decide when to reject it.

Each language is located on its own; overlapping spans are merged and all found spans
removed. The main-language abstract must be found. A secondary abstract may be absent
from the PDF (metadata often holds translations that were never printed), but one that
is only partly found means the text would leak into the body, so the document is dropped.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loralay_build.errors import Reason, Reject
from loralay_build.records import MatchRecord
from loralay_build.text.leakage import Leakage
from loralay_build.text.match import Body, Match, Search, is_heading, query_tokens, search
from loralay_build.text.normalize import Tokens, hangul_syllables, has_hangul, normalise_kept
from loralay_build.text.settings import MatchSettings


@dataclass(frozen=True)
class StripResult:
    """Indices of the body words that stay (ascending), and one record per abstract."""

    keep: list[int]
    matches: list[MatchRecord]


def strip_abstracts(
    words: Sequence[str],
    word_pages: Sequence[int],
    abstracts: Mapping[str, str],
    main_lang: str,
    settings: MatchSettings,
) -> StripResult:
    """Locate and remove all abstracts; raise Reject when the document cannot be kept.

    Records come main language first, then the other languages sorted.
    """
    if len(words) != len(word_pages):
        raise ValueError("words and word_pages differ in length")
    queries = {lang: query_tokens(text) for lang, text in abstracts.items()}
    if not queries.get(main_lang):
        raise Reject(
            Reason.ABSTRACT_MISSING_IN_METADATA, f"no {main_lang!r} abstract in the metadata"
        )
    order = [main_lang, *sorted(lang for lang in queries if lang != main_lang and queries[lang])]
    body = Body(words)
    if settings.mode == "faithful":
        found = _faithful(words, word_pages, abstracts, order, settings)
    else:
        results = {lang: search(queries[lang], body, settings) for lang in order}
        results = _resolve_overlaps(_by_syllable(results, queries, body, settings))
        found = {lang: _judge(lang, lang == main_lang, results[lang]) for lang in order}
    spans = _merge([(m.word_start, m.word_end) for pieces in found.values() for m in pieces])
    audit = Leakage(_kept_tokens(body, spans), settings.ngram, queries.values())
    copied = [(queries[lang], len(found[lang]) > 1) for lang in order if found[lang]]
    if settings.mode == "engine" and any(
            audit.share(q) > settings.copy_leakage for q, _ in copied):
        more = _remove_copies(words, body, spans, copied, settings)
        if more != spans:
            spans = more
            audit = Leakage(_kept_tokens(body, spans), settings.ngram, queries.values())
    records = [
        _record(lang, found[lang], word_pages, audit.share(queries[lang])) for lang in order
    ]
    return StripResult(_kept(len(words), spans), records)


Spans = list[tuple[int, int]]  # sorted, disjoint [start, end) word ranges


def _merge(ranges: Sequence[tuple[int, int]]) -> Spans:
    """Sorted union of word ranges; overlapping and touching ranges become one."""
    merged: Spans = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _kept(n: int, spans: Spans) -> list[int]:
    """Word indices outside the spans, ascending."""
    keep: list[int] = []
    at = 0
    for start, end in spans:
        keep += range(at, start)
        at = end
    keep += range(at, n)
    return keep


def _kept_tokens(body: Body, spans: Spans) -> list[str]:
    """Normalised tokens of the words that stay; a token cut by a removal goes too."""
    tokens = body.tokens
    kept: list[str] = []
    at = 0
    for start, end in spans:
        cut_from = bisect_right(tokens.end_word, start)  # first token ending after `start`
        kept += tokens.texts[at:cut_from]
        at = max(at, bisect_left(tokens.first_word, end))  # first token starting at `end`
    kept += tokens.texts[at:]
    return kept


def _faithful(
    words: Sequence[str],
    word_pages: Sequence[int],
    abstracts: Mapping[str, str],
    order: Sequence[str],
    settings: MatchSettings,
) -> dict[str, tuple[Match, ...]]:
    # Imported here: its fuzzy-matching libraries cost every worker ~30 ms to import, and
    # only the faithful mode uses them.
    from loralay_build.text.faithful import locate_faithful

    found: dict[str, tuple[Match, ...]] = {}
    for lang in order:
        match = locate_faithful(abstracts[lang], words, word_pages, settings)
        if match is None and (lang == order[0] or settings.faithful_require_all):
            raise Reject(Reason.ABSTRACT_NOT_FOUND, f"{lang} abstract not found (faithful mode)")
        found[lang] = (match,) if match is not None else ()
    return found


def _by_syllable(results: dict[str, Search], queries: Mapping[str, list[str]], body: Body,
                 settings: MatchSettings) -> dict[str, Search]:
    """Hangul abstracts not found word by word searched again syllable by syllable (OCR
    spaces Korean at random); the closer of the two searches is kept."""
    syllables: Body | None = None
    out = dict(results)
    for lang, result in results.items():
        if result.verdict == "found" or not has_hangul(queries[lang]):
            continue
        if syllables is None:
            syllables = Body(hangul_syllables(body.tokens, is_heading))
        query = queries[lang]
        cut = hangul_syllables(Tokens(query, list(range(len(query))),
                                      list(range(1, len(query) + 1))), is_heading)
        again = search(cut.texts, syllables, settings)
        if again.verdict == "found" or again.ratio < result.ratio:
            out[lang] = again
    return out


def _overlap(a: Search, b: Search) -> int:
    return sum(
        max(0, min(x.word_end, y.word_end) - max(x.word_start, y.word_start))
        for x in a.pieces
        for y in b.pieces
    )


def _resolve_overlaps(results: dict[str, Search]) -> dict[str, Search]:
    """One printed text is the abstract of one language only: the closer language keeps it.

    Translations between close languages (Spanish and Portuguese) can come within the
    edit budget of each other; the worse of two overlapping spans is taken as absent.
    """
    resolved = dict(results)
    for a in results:
        for b in results:
            ra, rb = resolved[a], resolved[b]
            if a == b or not ra.pieces or not rb.pieces or ra.ratio <= rb.ratio:
                continue
            smaller = min(
                sum(m.word_end - m.word_start for m in r.pieces) for r in (ra, rb)
            )
            if _overlap(ra, rb) * 2 > smaller:
                resolved[a] = Search("absent", None, ra.ratio)
    return resolved


def _judge(lang: str, main: bool, result: Search) -> tuple[Match, ...]:
    """The spans to remove, none for a secondary abstract clearly absent, or a Reject."""
    if result.verdict == "found":
        return result.pieces
    if main:
        raise Reject(
            Reason.ABSTRACT_NOT_FOUND,
            f"main abstract ({lang}) not found: best edit ratio {result.ratio:.2f}",
        )
    if result.verdict == "partial":
        raise Reject(
            Reason.ABSTRACT_NOT_FOUND,
            f"{lang} abstract only partly present (edit ratio {result.ratio:.2f}); "
            "removing it would leave part of it in the body",
        )
    return ()


def _remove_copies(
    words: Sequence[str],
    body: Body,
    spans: Spans,
    queries: Sequence[tuple[Sequence[str], bool]],
    s: MatchSettings,
) -> Spans:
    """Also remove further confident copies of found abstracts (a repeated first page).

    Only run when an abstract still leaks after the first removal, so it is rarely paid.
    The tokens of the kept words reuse those of the whole body away from the cuts, and serve
    every abstract until another copy is cut.
    A copy is printed like the abstract found: it is searched in pieces only when that
    abstract was found in pieces (each query comes with whether it was). A paraphrase in
    the conclusion leaks as much as a copy but matches no span, and the search in pieces
    was most of the cost of ruling it out.
    """
    rest: Tokens | None = None  # the tokens of the words outside `spans`, made when needed
    for query, in_pieces in queries:
        for _ in range(s.max_copies):
            if rest is None:
                rest = normalise_kept(words, body.tokens, spans)
            if Leakage(rest.texts, s.ngram).share(query) <= s.copy_leakage:
                break
            again = search(query, Body(rest), s, in_pieces=in_pieces)
            if again.verdict != "found":
                break
            keep = _kept(len(words), spans)
            extra = [(keep[m.word_start], keep[m.word_end - 1] + 1) for m in again.pieces]
            spans, rest = _merge([*spans, *extra]), None
    return spans


def _record(
    lang: str, pieces: Sequence[Match], word_pages: Sequence[int], leaked: float
) -> MatchRecord:
    if not pieces:
        return MatchRecord(lang, "none", -1, -1, -1, -1, False, leaked)
    start = min(m.word_start for m in pieces)
    return MatchRecord(
        lang=lang,
        method=pieces[0].method,
        distance=sum(m.distance for m in pieces),
        page=word_pages[start],
        word_start=start,
        word_end=max(m.word_end for m in pieces),
        found=True,
        leakage=leaked,
    )
