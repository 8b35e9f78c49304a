"""One work, one split, across every dataset of an output folder.

Why: the same paper reaches users through several sources (HAL mirrors arXiv, PMC carries
SciELO journals, ICLR papers are on arXiv) and under new ids within one source. A model
trained on one dataset and evaluated on another then meets its test papers in training.
Works are found from each processed document's MinHash signature (text.minhash) and from
equal normalised titles with similar abstracts, then joined into transitive clusters; a
policy decides what a publish does about them (`[dedup] across`):

- report: nothing changes; the card, build.json and `audit` list the shared works;
- guard: a document whose work is in validation or test of any dataset leaves train;
- drop: one copy per work: a copy already published stays, else the earliest by date.

Whatever the policy, a document published in validation or test is never dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loralay_build.config import DedupSettings
from loralay_build.corpus.dedup import normalise, similarity, split_key
from loralay_build.errors import Reason
from loralay_build.state import PUBLISHED, REJECTED, SETTINGS_MARK, Row, State
from loralay_build.text.minhash import Signature, from_text, similar_pairs

EVALUATION = ("validation", "test")
TITLE_ABSTRACT_SIMILARITY = 0.9  # normalised abstracts of one work, titles being equal
MIN_TITLE_WORDS = 4  # shorter titles ("Introduction") say nothing about the work


@dataclass(frozen=True)
class Member:
    """A document of some dataset, as the contamination check sees it."""

    key: str  # "<dataset>/<article id>"
    dataset: str  # its name, or "<folder>:<name>" for a dataset of another output folder
    id: str
    split: str | None  # its split when published, or the one it is being published under
    published: bool  # already in the dataset's shards
    date_key: str  # chronological key (corpus.dedup.split_key)
    title: str
    abstract: str
    signature: Signature | None


@dataclass
class Cluster:
    members: list[str]
    similarity: float  # the lowest confirmed similarity inside the cluster


@dataclass
class Verdict:
    """What a publish drops, and the shared works it involves."""

    dropped: dict[str, tuple[Reason, str]] = field(default_factory=dict)
    clusters: list[Cluster] = field(default_factory=list)


def member(dataset: str, row: Row, split: str | None, published: bool) -> Member:
    cand = row.candidate
    sig = row.stats.get("minhash")
    return Member(f"{dataset}/{cand.id}", dataset, cand.id, split, published,
                  split_key(cand), cand.title, cand.abstracts.get(cand.language, ""),
                  from_text(sig) if isinstance(sig, str) else None)


def published_members(state: State, skip: str | None = None, prefix: str = "") -> list[Member]:
    """Every published document of every dataset in a state database but `skip`."""
    return [member(f"{prefix}{dataset}", row, row.split, True)
            for dataset in state.datasets() if dataset != skip
            for row in state.iter_rows(dataset, [PUBLISHED])]


def other_folders(settings: DedupSettings) -> list[Member]:
    """Published documents of the output folders named in `[dedup] also` (read only)."""
    out: list[Member] = []
    for folder in settings.also:
        root = Path(folder)
        if not (root / ".loralay" / "state.sqlite").is_file():
            continue
        state = State(root)
        try:
            out += published_members(state, prefix=f"{root}:")
        finally:
            state.close()
    return out


def find_clusters(members: list[Member], threshold: float) -> list[Cluster]:
    """Transitive clusters of two or more members that are one work."""
    by_key = {m.key: m for m in members}
    pairs = similar_pairs({m.key: m.signature for m in members if m.signature is not None},
                          threshold)
    by_title: dict[str, list[Member]] = {}
    for m in members:
        words = normalise(m.title)
        if len(words) >= MIN_TITLE_WORDS:
            by_title.setdefault(" ".join(words), []).append(m)
    for group in by_title.values():
        for i, first in enumerate(group):
            for second in group[i + 1:]:
                score = similarity(first.abstract, second.abstract)
                if score >= TITLE_ABSTRACT_SIMILARITY:
                    low, high = sorted((first.key, second.key))
                    pairs.append((low, high, score))
    parent = {k: k for k in by_key}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, _ in pairs:
        parent[root(a)] = root(b)
    lowest: dict[str, float] = {}
    for a, _, score in pairs:
        lowest[root(a)] = min(score, lowest.get(root(a), 1.0))
    groups: dict[str, list[str]] = {}
    for key in by_key:
        groups.setdefault(root(key), []).append(key)
    return sorted((Cluster(sorted(keys), round(lowest.get(r, 1.0), 4))
                   for r, keys in groups.items() if len(keys) > 1),
                  key=lambda c: c.members)


def judge(current: list[Member], others: list[Member], settings: DedupSettings) -> Verdict:
    """Clusters involving the dataset being published, and the drops its policy asks for."""
    clusters = [c for c in find_clusters(current + others, settings.threshold)
                if any(k in {m.key for m in current} for k in c.members)]
    verdict = Verdict(clusters=clusters)
    if settings.across == "report":
        return verdict
    by_key = {m.key: m for m in current + others}
    own = {m.key for m in current}
    for cluster in clusters:
        members = [by_key[k] for k in cluster.members]
        if settings.across == "guard":
            evaluation = [m for m in members if m.split in EVALUATION]
            for m in members:
                if m.key in own and m.split == "train" and any(e.key != m.key
                                                               for e in evaluation):
                    first = next(e for e in evaluation if e.key != m.key)
                    verdict.dropped[m.id] = (Reason.DUPLICATE,
                                             f"same work as {first.key} ({first.split})")
        else:  # drop: keep the copy published first, else the earliest
            keeper = min(members, key=lambda m: (not m.published, m.date_key, m.key))
            for m in members:
                if m.key in own and m is not keeper and not (m.published
                                                             and m.split in EVALUATION):
                    verdict.dropped[m.id] = (Reason.DUPLICATE, f"same work as {keeper.key}")
    return verdict


# -- published test sets ------------------------------------------------------------------------

_ARXIV_VERSION = re.compile(r"v\d+$")


def id_keys(*ids: str) -> set[str]:
    """The forms under which an id may be listed: as published (`arxiv:2101.00001`), bare,
    without an arXiv version, a PMC id with or without its prefix, a DOI in any case."""
    keys: set[str] = set()
    for raw in ids:
        text = raw.strip().lower()
        if not text:
            continue
        text = re.sub(r"^https?://(dx\.)?doi\.org/", "", text)
        bare = text.split(":", 1)[1] if re.match(r"^[a-z]+:", text) else text
        keys |= {text, bare, _ARXIV_VERSION.sub("", bare)}
        if bare.startswith("pmc") and bare[3:].isdigit():
            keys.add(bare[3:])
        elif bare.isdigit():
            keys.add(f"pmc{bare}")
    return keys


def excluded_ids(lines: Iterable[str]) -> frozenset[str]:
    """Keys of an exclusion list (ids and DOIs, one per entry, `#` comments allowed)."""
    keys: set[str] = set()
    for line in lines:
        keys |= id_keys(line.split("#", 1)[0])
    return frozenset(keys)


# -- the audit ----------------------------------------------------------------------------------

def audit(root: Path, settings: DedupSettings) -> dict[str, Any]:
    """Clusters across every dataset under `root` (and `also`), split conflicts, and the
    documents kept out as published test sets."""
    state = State(root)
    try:
        members = published_members(state)
        excluded = sorted(f"{dataset}/{row.candidate.id}" for dataset in state.datasets()
                          for row in state.rows(dataset, [REJECTED])
                          if row.reason == Reason.EXCLUDED.value)
        guarded = {dataset for dataset in state.datasets()
                   if json.loads(state.get_mark(dataset, SETTINGS_MARK) or "{}")
                   .get("dedup", {}).get("across") == "guard"}
    finally:
        state.close()
    members += other_folders(settings)
    by_key = {m.key: m for m in members}
    clusters = find_clusters(members, settings.threshold)
    conflicts = []
    for cluster in clusters:
        splits = {by_key[k].split for k in cluster.members}
        if "train" in splits and splits & set(EVALUATION):
            conflicts.append({"members": {k: by_key[k].split for k in cluster.members},
                              "guarded": any(by_key[k].dataset in guarded
                                             for k in cluster.members)})
    return {
        "clusters": [{"members": c.members, "similarity": c.similarity} for c in clusters],
        "conflicts": conflicts,
        "guarded_conflicts": sum(1 for c in conflicts if c["guarded"]),
        "excluded": excluded,
    }


def format_audit(result: dict[str, Any]) -> str:
    """The audit for a terminal: clusters, conflicts, excluded documents."""
    lines = [f"{len(result['clusters'])} shared work(s):"]
    lines += [f"  {', '.join(c['members'])} (similarity {c['similarity']})"
              for c in result["clusters"]]
    lines += [f"{len(result['conflicts'])} split conflict(s) (train in one place, validation "
              "or test in another):"]
    lines += ["  " + ", ".join(f"{k} [{v}]" for k, v in c["members"].items())
              + (" (guard policy)" if c["guarded"] else "") for c in result["conflicts"]]
    lines += [f"{len(result['excluded'])} excluded document(s)"]
    lines += [f"  {key}" for key in result["excluded"]]
    return "\n".join(lines)
