"""Targets that are separate documents (EUR-Lex summaries): nothing to remove, still audited.

The summary is published apart from the act, so abstract removal has nothing to find. Each
summary still gets a match record (method `separate`, not found) whose leakage is the share of
its word n-grams present in the act's text: a high value means the act quotes its summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loralay_build.records import MatchRecord
from loralay_build.text.leakage import Leakage
from loralay_build.text.match import query_tokens
from loralay_build.text.normalize import normalise_words
from loralay_build.text.settings import MatchSettings

METHOD = "separate"


def separate_summaries(
    words: Sequence[str],
    reference: str | None,
    summaries: Mapping[str, str],
    main_lang: str,
    settings: MatchSettings,
) -> list[MatchRecord]:
    """One record per summary, main language first; leakage measured on every text we have."""
    bodies = [normalise_words(words).texts]
    if reference:
        bodies.append(normalise_words(reference.split()).texts)
    order = [main_lang, *sorted(lang for lang in summaries if lang != main_lang)]
    queries = {lang: query_tokens(summaries[lang]) for lang in order}
    audits = [Leakage(body, settings.ngram, queries.values()) for body in bodies if body]
    records = []
    for lang in order:
        leaked = max((audit.share(queries[lang]) for audit in audits), default=0.0)
        records.append(MatchRecord(lang, METHOD, -1, -1, -1, -1, False, leaked))
    return records
