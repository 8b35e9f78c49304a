"""Document ids as a user writes them: the source's own (`2206.10883`, `PMC1234567`, a
manifest's `fr-taln-2000-long-015`) or as published (`arxiv:2206.10883`).

Why: a row's `article_id` is `<source>:<id>`, but users copy ids from the source's site or
their manifest. Every command taking an id accepts both forms, as long as only one
document answers to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


class UnknownId(LookupError):
    """No document of the dataset answers to the id."""


class AmbiguousId(LookupError):
    """Several documents answer to the id (one published as `x`, another as `<source>:x`)."""

    def __init__(self, given: str, matches: list[str]) -> None:
        super().__init__(f"{given!r} names {len(matches)} documents: {', '.join(matches)}; "
                         "give the one meant as written there")
        self.given = given
        self.matches = matches


def forms(given: str, sources: Iterable[str]) -> list[str]:
    """The published ids `given` may stand for: itself, and itself under each source's
    prefix."""
    text = given.strip()
    return list(dict.fromkeys([text, *(f"{source}:{text}" for source in sources)]))


def resolve_id(given: str, sources: Iterable[str], exists: Callable[[str], bool]) -> str:
    """The one published id `given` stands for among those `exists` knows.

    Raises UnknownId when none does and AmbiguousId when several do."""
    matches = [form for form in forms(given, sources) if exists(form)]
    if not matches:
        raise UnknownId(given)
    if len(matches) > 1:
        raise AmbiguousId(given, matches)
    return matches[0]


def read_id_lines(text: str) -> list[str]:
    """Ids one per line, `#` comments and blank lines skipped, each once."""
    ids = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return list(dict.fromkeys(i for i in ids if i))


@dataclass
class Resolved:
    """Ids of a list resolved against the documents of a dataset."""

    ids: list[str] = field(default_factory=list)  # the published ids, each once
    unknown: list[str] = field(default_factory=list)  # as given
    ambiguous: list[AmbiguousId] = field(default_factory=list)


def resolve_ids(given: Iterable[str], sources: Iterable[str],
                exists: Callable[[str], bool]) -> Resolved:
    """Every id of `given` resolved against the published ids `exists` knows, the failures
    kept apart."""
    names = list(sources)
    out = Resolved()
    for text in given:
        try:
            found = resolve_id(text, names, exists)
        except UnknownId:
            out.unknown.append(text)
        except AmbiguousId as exc:
            out.ambiguous.append(exc)
        else:
            if found not in out.ids:
                out.ids.append(found)
    return out
