"""Near-duplicate clusters, found before splitting so that one work never spans two splits.

The same paper appears under several ids (a workshop and a conference version, a
resubmission). Two documents are one work when their PDFs are byte-identical, or when their
normalised titles are equal and their normalised abstracts are at least `threshold` similar
(difflib ratio over word sequences; 0.9 by default tolerates a reworded sentence in a
150-word abstract, not a different paper under a reused title). Clusters are transitive.
The representative is the earliest member by (split key, id): the work's first appearance,
unless a member is already published: then that member stays the representative and a twin
found later is the duplicate, so a published work never changes id or split.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from difflib import SequenceMatcher

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from loralay_build.config import SplitSettings
from loralay_build.corpus.arrays import to_arrow
from loralay_build.corpus.split import Codes, SplitColumns, assign_splits, split_code
from loralay_build.records import Candidate

DEFAULT_THRESHOLD = 0.9
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class DedupItem:
    id: str
    title: str
    abstract: str
    pdf_sha256: str
    sort_key: str  # chronological key; the earliest member represents the cluster


@dataclass(frozen=True)
class Cluster:
    representative: str
    members: tuple[str, ...]  # every member, the representative first


def normalise(text: str) -> list[str]:
    """Lower-cased words without accents or punctuation: what survives a re-typesetting."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    return _WORD.findall("".join(c for c in folded if not unicodedata.combining(c)))


def similarity(a: str, b: str) -> float:
    return SequenceMatcher(None, normalise(a), normalise(b), autojunk=False).ratio()


def split_key(candidate: Candidate) -> str:
    """Chronological sort key: the venue year first when the source gives one, then the date."""
    year = candidate.extra.get("columns", {}).get("year")
    return f"{year:04d}|{candidate.published}" if isinstance(year, int) else candidate.published


def find_clusters(items: list[DedupItem], threshold: float = DEFAULT_THRESHOLD) -> list[Cluster]:
    """Clusters of two or more items, sorted by representative."""
    parent = {item.id: item.id for item in items}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        parent[root(a)] = root(b)

    by_sha: dict[str, str] = {}
    by_title: dict[str, list[DedupItem]] = defaultdict(list)
    for item in items:
        if item.pdf_sha256:
            if item.pdf_sha256 in by_sha:
                union(item.id, by_sha[item.pdf_sha256])
            else:
                by_sha[item.pdf_sha256] = item.id
        title = " ".join(normalise(item.title))
        if title:
            for other in by_title[title]:
                if similarity(item.abstract, other.abstract) >= threshold:
                    union(item.id, other.id)
            by_title[title].append(item)
    groups: dict[str, list[DedupItem]] = defaultdict(list)
    for item in items:
        groups[root(item.id)].append(item)
    clusters = []
    for members in groups.values():
        if len(members) > 1:
            members.sort(key=lambda m: (m.sort_key, m.id))
            clusters.append(Cluster(members[0].id, tuple(m.id for m in members)))
    return sorted(clusters, key=lambda c: c.representative)


def keep_published(clusters: list[Cluster], stored: Mapping[str, str]) -> list[Cluster]:
    """Clusters whose representative is a member an earlier build already published, if any.

    `stored` maps ids to the split an earlier build gave them. When copies were published
    apart (before they were recognised as one work), the one in the evaluation splits wins:
    nothing leaves validation or test.
    """
    rank = {"test": 0, "validation": 1, "train": 2}
    out = []
    for cluster in clusters:
        published = [m for m in cluster.members if m in stored]
        if published:
            lead = min(published, key=lambda m: rank.get(stored[m], 3))
            cluster = Cluster(lead, (lead, *(m for m in cluster.members if m != lead)))
        out.append(cluster)
    return out


def cluster_splits(items: SplitColumns, clusters: list[Cluster], ratios: SplitSettings,
                   stored: Mapping[str, str] | None = None) -> Codes:
    """Splits of every item, a whole cluster in one split.

    Only cluster leaders and unclustered items take part in the chronological assignment;
    every other member then follows its leader. A cluster keeps the split `stored` holds for
    any of its members (its representative's first), even when that member is no longer
    among `items`: a late twin joins the split its work was first published under.
    """
    if not clusters:
        return assign_splits(items, ratios)
    stored = stored or {}
    members = [m for cluster in clusters for m in cluster.members]
    found = pc.index_in(to_arrow(members, pa.string()), value_set=items.ids).to_pylist()
    position = {m: p for m, p in zip(members, found, strict=True) if p is not None}
    current = items.current.copy()
    follows: list[tuple[int, int]] = []  # (member, its leader) of the members that follow
    for cluster in clusters:  # the first member present leads (the representative if kept)
        lead = next((m for m in cluster.members if m in position), None)
        if lead is None:
            continue
        first = next((stored[m] for m in cluster.members if m in stored), None)
        if first:
            current[position[lead]] = split_code(first)
        follows += [(position[m], position[lead]) for m in cluster.members
                    if m in position and m != lead]
    leading = np.ones(len(items), dtype=bool)
    leading[[member for member, _ in follows]] = False
    leaders = np.flatnonzero(leading)
    out = np.full(len(items), -1, dtype=np.int8)
    out[leaders] = assign_splits(replace(items.subset(leaders), current=current[leaders]),
                                 ratios)
    for member, leader in follows:
        out[member] = out[leader]
    return out
