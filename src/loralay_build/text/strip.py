"""Remove every abstract of a document from its words, and decide when to reject it.

Each language is located on its own; overlapping spans are merged and all found spans
removed. The main-language abstract must be found. A secondary abstract may be absent
from the PDF (metadata often holds translations that were never printed), but one that
is only partly found means the text would leak into the body, so the document is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loralay_build.errors import Reason, Reject
from loralay_build.records import MatchRecord
from loralay_build.text.faithful import locate_faithful
from loralay_build.text.leakage import leakage
from loralay_build.text.match import Body, Match, Search, query_tokens, search
from loralay_build.text.normalize import normalise_words
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
    """Locate and remove all abstracts; raise Reject when the document cannot be kept."""
    if len(words) != len(word_pages):
        raise ValueError("words and word_pages differ in length")
    queries = {lang: query_tokens(text) for lang, text in abstracts.items()}
    if not queries.get(main_lang):
        raise Reject(
            Reason.ABSTRACT_MISSING_IN_METADATA, f"no {main_lang!r} abstract in the metadata"
        )
    order = [main_lang, *sorted(lang for lang in queries if lang != main_lang and queries[lang])]
    body = Body(words) if settings.mode == "engine" else None
    found: dict[str, Match | None] = {}
    for lang in order:
        if body is None:
            found[lang] = locate_faithful(abstracts[lang], words, word_pages, settings)
            if found[lang] is None and (lang == main_lang or settings.faithful_require_all):
                raise Reject(Reason.ABSTRACT_NOT_FOUND, f"{lang} abstract not found (faithful)")
        else:
            found[lang] = _judge(lang, lang == main_lang, search(queries[lang], body, settings))
    keep = _kept(len(words), [m for m in found.values() if m is not None])
    kept_tokens = normalise_words([words[i] for i in keep]).texts
    records = [_record(lang, found[lang], word_pages, queries[lang], kept_tokens, settings)
               for lang in order]
    return StripResult(keep, records)


def _judge(lang: str, main: bool, result: Search) -> Match | None:
    """The span to remove, None for a secondary abstract clearly absent, or a Reject."""
    if result.verdict == "found":
        return result.match
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
    return None


def _kept(n: int, spans: Sequence[Match]) -> list[int]:
    """Indices outside every span; overlapping spans merge naturally."""
    removed = bytearray(n)
    for m in spans:
        removed[m.word_start : m.word_end] = b"\x01" * (m.word_end - m.word_start)
    return [i for i in range(n) if not removed[i]]


def _record(
    lang: str,
    match: Match | None,
    word_pages: Sequence[int],
    query: Sequence[str],
    kept_tokens: Sequence[str],
    settings: MatchSettings,
) -> MatchRecord:
    leaked = leakage(query, kept_tokens, settings.ngram)
    if match is None:
        return MatchRecord(lang, "none", -1, -1, -1, -1, False, leaked)
    return MatchRecord(
        lang=lang,
        method=match.method,
        distance=match.distance,
        page=word_pages[match.word_start],
        word_start=match.word_start,
        word_end=match.word_end,
        found=True,
        leakage=leaked,
    )
