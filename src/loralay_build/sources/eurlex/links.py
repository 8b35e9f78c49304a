"""The EUR-Lex-Sum link graph: SPARQL rows (one summary summarising one act), the acts they
describe, the groups of acts joined by a shared summary, the pairing rule and the eurlex-sum
split preset. Pure functions: no HTTP, no state.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from loralay_build.sources.eurlex.cellar import LANGUAGES

BY_CODE = {v: k for k, v in LANGUAGES.items()}
CELEX = re.compile(r"^[0-9CE][0-9]{4}[A-Z]{1,2}[0-9]{4}(\([0-9]+\))?(-[0-9]{8})?$")


def normalise_celex(value: str) -> str:
    """`CELEX:32021R0847`, `CELEX%3A32021R0847` and the HF card's `3A32021R0847` -> `32021R0847`."""
    text = value.strip().rsplit("/", 1)[-1]
    for prefix in ("CELEX%3A", "celex%3a", "CELEX:", "celex:"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text.startswith("3A") and CELEX.match(text[2:]):
        text = text[2:]
    return text.upper()


@dataclass
class Link:
    """One SPARQL row: a summary summarising an act."""

    legissum: str
    summary_uri: str
    celex: str
    date: str
    act_type: str
    obsolete: bool
    modified: str
    act_languages: set[str]
    summary_languages: set[str]


@dataclass
class Act:
    celex: str
    date: str = ""
    act_type: str = ""
    languages: set[str] = field(default_factory=set)
    links: list[Link] = field(default_factory=list)


def _value(binding: dict[str, Any], name: str) -> str:
    return str((binding.get(name) or {}).get("value", "")).strip()


def _langs(text: str) -> set[str]:
    out = set()
    for item in text.split(","):
        code = item.strip().rsplit("/", 1)[-1].lower()
        if code in BY_CODE:
            out.add(BY_CODE[code])
    return out


def to_link(binding: dict[str, Any]) -> Link | None:
    celex = normalise_celex(_value(binding, "celex"))
    legissum = _value(binding, "legissum")
    if not celex or not legissum:
        return None
    return Link(
        legissum=legissum,
        summary_uri=_value(binding, "summary"),
        celex=celex,
        date=_value(binding, "date")[:10],
        act_type=_value(binding, "type").rsplit("/", 1)[-1],
        obsolete=_value(binding, "obsolete").lower() in ("true", "1"),
        modified=_value(binding, "modified")[:10],
        act_languages=_langs(_value(binding, "act_languages")),
        summary_languages=_langs(_value(binding, "summary_languages")),
    )


def sparql_filter(act_date: str | None, modified: str | None) -> str:
    """Acts dated after the watermark, or whose summary changed after it."""
    clauses = []
    if act_date:
        clauses.append(f'?date > "{act_date}"^^xsd:date')
    if modified:
        clauses.append(f'?modified > "{modified}"^^xsd:date')
    return f"FILTER({' || '.join(clauses)})" if clauses else ""


def fingerprints(links: list[Link]) -> dict[str, str]:
    """LEGISSUM id -> what the listing says of it (obsolete flag, languages, acts covered):
    a summary whose fingerprint changed, or a new one, has to be read again."""
    langs: dict[str, set[str]] = {}
    acts: dict[str, set[str]] = {}
    obsolete: dict[str, bool] = {}
    for link in links:
        langs.setdefault(link.legissum, set()).update(link.summary_languages)
        acts.setdefault(link.legissum, set()).add(link.celex)
        obsolete[link.legissum] = link.obsolete
    return {k: f"{int(obsolete[k])}|{','.join(sorted(langs[k]))}|{','.join(sorted(acts[k]))}"
            for k in langs}


def changed_links(links: list[Link], act_date: str, known: dict[str, str]) -> list[Link]:
    """The links of every act dated after `act_date` or touched by a new or changed summary,
    all of that act's links included (its pairing may change)."""
    now = fingerprints(links)
    touched = {link.celex for link in links
               if link.date > act_date or known.get(link.legissum) != now[link.legissum]}
    return [link for link in links if link.celex in touched]


class Groups:
    """Union-find over acts linked by a shared summary: one group, one split."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)  # the smallest id names the group


def preset_split(group: str, eligible: bool) -> str:
    """eurlex-sum: groups present in every requested language go to validation or test by a
    hash of their smallest CELEX (the same answer in every language and every run)."""
    if not eligible:
        return "train"
    return "validation" if hashlib.sha256(group.encode()).digest()[0] % 2 == 0 else "test"


def collect_acts(links: list[Link], include_obsolete: bool,
                 ) -> tuple[dict[str, Act], dict[str, list[str]]]:
    """Acts with all their links, and the acts each pairable summary covers (sorted).

    Obsolete links stay in the act's links (metadata) but are neither paired nor grouped
    unless `include_obsolete`.
    """
    acts: dict[str, Act] = {}
    covered: dict[str, list[str]] = {}
    skipped = [link for link in links if link.obsolete and not include_obsolete]
    for link in links:
        if link.obsolete and not include_obsolete:
            continue
        act = acts.setdefault(link.celex, Act(link.celex))
        act.date = act.date or link.date
        act.act_type = act.act_type or link.act_type
        act.languages |= link.act_languages
        act.links.append(link)
        members = covered.setdefault(link.legissum, [])
        if link.celex not in members:
            members.append(link.celex)
    for link in skipped:
        if link.celex in acts:
            acts[link.celex].links.append(link)
    for members in covered.values():
        members.sort()
    return acts, covered


def link_groups(acts: dict[str, Act], covered: dict[str, list[str]]) -> Groups:
    """Acts joined through every summary they share."""
    groups = Groups()
    for celex in acts:
        groups.find(celex)
    for members in covered.values():
        for celex in members:
            groups.union(members[0], celex)
    return groups


def preset_splits(acts: dict[str, Act], groups: Groups, languages: list[str],
                  stored: dict[str, str]) -> dict[str, str]:
    """CELEX -> split under eurlex-sum; a group keeps a split an earlier pass stored.

    A group is eligible for validation/test when every act in it exists, with a summary, in
    every requested language. The answer depends on neither the language being built nor the
    order of the listing.
    """
    members: dict[str, list[str]] = {}
    for celex in acts:
        members.setdefault(groups.find(celex), []).append(celex)
    wanted = set(languages)
    out: dict[str, str] = {}
    for root, group in sorted(members.items()):
        kept = sorted({stored[c] for c in group if c in stored})
        eligible = all(
            wanted <= acts[c].languages
            and any(wanted <= link.summary_languages for link in acts[c].links)
            for c in group
        )
        split = kept[0] if kept else preset_split(root, eligible)
        for celex in group:
            out[celex] = split
    return out


def choose_summary(links: list[Link], lang: str, covered: dict[str, list[str]],
                   include_obsolete: bool = False) -> Link | None:
    """The pairing rule: current before obsolete, fewest acts covered, then LEGISSUM id."""
    usable = [link for link in links if lang in link.summary_languages
              and (include_obsolete or not link.obsolete)]
    if not usable:
        return None
    return min(usable, key=lambda link: (link.obsolete, len(covered.get(link.legissum, [])),
                                          link.legissum))
