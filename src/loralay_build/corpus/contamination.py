"""One work, one split, across every dataset of an output folder.

Why: the same paper reaches users through several sources (HAL mirrors arXiv, PMC carries
SciELO journals, ICLR papers are on arXiv) and under new ids within one source. A model
trained on one dataset and evaluated on another then meets its test papers in training.
Works are found from each processed document's MinHash signature (text.minhash) and from
equal normalised titles with similar abstracts, kept in the folder's band index
(corpus.workindex) so that a publish looks up its new documents only, then joined into
transitive clusters; a policy decides what a publish does about them (`[dedup] across`):

- report: nothing changes; the card, build.json and `audit` list the shared works;
- guard: a document whose work is in validation or test of any dataset leaves train;
- drop: one copy per work: a copy already published stays, else the earliest by date.

Whatever the policy, a document published in validation or test is never dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loralay_build.config import DedupSettings
from loralay_build.corpus.dedup import split_key
from loralay_build.corpus.workindex import (
    TITLE,
    Doc,
    Pair,
    WorkIndex,
    doc_of,
    pairs_among,
    published_docs,
)
from loralay_build.errors import Reason
from loralay_build.layout import OutputLayout
from loralay_build.state import PUBLISHED, REJECTED, SETTINGS_MARK, State

EVALUATION = ("validation", "test")


@dataclass(frozen=True)
class Member:
    """A document of a shared work, as the policies see it."""

    key: str  # "<dataset>/<article id>"
    dataset: str  # its name, or "<folder>:<name>" for a dataset of another output folder
    id: str
    split: str | None  # its split when published, or the one it is being published under
    published: bool  # already in the dataset's shards
    date_key: str  # chronological key (corpus.dedup.split_key)


@dataclass
class Cluster:
    members: list[str]
    similarity: float  # the lowest confirmed similarity inside the cluster


@dataclass
class Verdict:
    """What a publish drops, and the shared works it involves."""

    dropped: dict[str, tuple[Reason, str]] = field(default_factory=dict)
    clusters: list[Cluster] = field(default_factory=list)


def join(pairs: Iterable[Pair], threshold: float) -> list[Cluster]:
    """Transitive clusters of the pairs that make one work: equal titles with similar
    abstracts, or an estimated Jaccard reaching `threshold`."""
    confirmed = [p for p in pairs if p[2] == TITLE or p[3] >= threshold]
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, _, _ in confirmed:
        parent[root(a)] = root(b)
    lowest: dict[str, float] = {}
    for a, _, _, score in confirmed:
        lowest[root(a)] = min(score, lowest.get(root(a), 1.0))
    groups: dict[str, list[str]] = {}
    for key in list(parent):
        groups.setdefault(root(key), []).append(key)
    return sorted((Cluster(sorted(keys), round(lowest.get(r, 1.0), 4))
                   for r, keys in groups.items() if len(keys) > 1),
                  key=lambda c: c.members)


class Folders:
    """The band indexes a check reads: the folder's own, and those of the output folders of
    `[dedup] also` (read only: their index is used when built, never built or changed)."""

    def __init__(self, state: State, also: Iterable[str]) -> None:
        self.local = WorkIndex(state)
        layouts = [OutputLayout(Path(f)) for f in also]
        self.others = [WorkIndex(State(layout.root), f"{layout.root}:") for layout in layouts
                       if layout.state_db.is_file()]

    def close(self) -> None:
        for index in self.others:
            index.state.close()

    def _index(self, key: str) -> WorkIndex:
        for index in sorted(self.others, key=lambda i: -len(i.prefix)):
            if key.startswith(index.prefix):
                return index
        return self.local

    def abstract(self, doc: Doc) -> str:
        return self._index(doc.key).abstract(doc)

    def member(self, key: str, splits: Mapping[str, str] | None = None) -> Member:
        """A document of a cluster; `splits` gives those being published (of the local
        dataset they name) their coming split."""
        index = self._index(key)
        dataset, cid = key.removeprefix(index.prefix).split("/", 1)
        row = index.state.row(dataset, cid)
        assert row is not None  # indexed or being published: in the state
        if splits is not None and index is self.local and cid in splits:
            return Member(key, dataset, cid, splits[cid], row.status == PUBLISHED,
                          split_key(row.candidate))
        return Member(key, f"{index.prefix}{dataset}", cid, row.split, True,
                      split_key(row.candidate))

    def also_pairs(self, local: list[Doc]) -> list[Pair]:
        """Pairs involving the other folders: their own pairs (from their index when built,
        else computed), and the pairs across folders, computed from every signature."""
        if not self.others:
            return []
        pairs: list[Pair] = []
        groups = [local]
        for index in self.others:
            if index.present():
                groups.append(list(index.docs()))
                pairs += index.pairs()
            else:
                groups.append(published_docs(index.state, index.prefix))
                pairs += pairs_among(groups[-1], index.abstract)
        group_of = {d.key: i for i, group in enumerate(groups) for d in group}
        return pairs + [p for p in pairs_among([d for g in groups for d in g], self.abstract)
                        if group_of[p[0]] != group_of[p[1]]]


def shared_works(state: State, dataset: str, splits: Mapping[str, str], new: Iterable[str],
                 settings: DedupSettings) -> Verdict:
    """Works the documents being published (`splits`: id -> split; `new`: those not yet
    published) share with the other datasets of the folder and of `[dedup] also`, and the
    drops the policy asks for. Only the new documents' buckets and titles are looked up;
    nothing is read when there is no other dataset."""
    if not settings.also and not any(state.count(d, [PUBLISHED]) for d in state.datasets()
                                     if d != dataset):
        return Verdict()
    folders = Folders(state, settings.also)
    try:
        if not folders.local.present():
            folders.local.build()
        docs = _docs(state, dataset, new)
        prefix = f"{dataset}/"

        def taking_part(key: str) -> bool:  # a document of this dataset leaving it does not
            return not key.startswith(prefix) or key[len(prefix):] in splits

        pairs = [p for p in folders.local.pairs() + folders.local.probe(docs)
                 if taking_part(p[0]) and taking_part(p[1])]
        if folders.others:
            pairs += folders.also_pairs(
                [d for d in folders.local.docs() if taking_part(d.key)] + docs)

        def own_key(key: str) -> bool:
            return key.startswith(prefix) and key[len(prefix):] in splits

        clusters = [c for c in join(pairs, settings.threshold)
                    if any(own_key(k) for k in c.members)]
        own = {k for c in clusters for k in c.members if own_key(k)}
        members = {k: folders.member(k, splits) for c in clusters for k in c.members}
    finally:
        folders.close()
    return judge(clusters, members, own, settings)


def index_published(state: State, dataset: str, ids: Iterable[str]) -> None:
    """Add documents just marked published to the folder's band index, when it has one
    (inside the transaction that marks them)."""
    index = WorkIndex(state)
    if index.present():
        index.add(_docs(state, dataset, ids))


def _docs(state: State, dataset: str, ids: Iterable[str]) -> list[Doc]:
    return [doc_of(dataset, row) for row in (state.row(dataset, cid) for cid in ids)
            if row is not None]


def judge(clusters: list[Cluster], members: dict[str, Member], own: set[str],
          settings: DedupSettings) -> Verdict:
    """The drops the policy asks for among the documents being published (`own`)."""
    verdict = Verdict(clusters=clusters)
    if settings.across == "report":
        return verdict
    for cluster in clusters:
        group = [members[k] for k in cluster.members]
        if settings.across == "guard":
            evaluation = [m for m in group if m.split in EVALUATION]
            for m in group:
                if m.key in own and m.split == "train" and any(e.key != m.key
                                                               for e in evaluation):
                    first = next(e for e in evaluation if e.key != m.key)
                    verdict.dropped[m.id] = (Reason.DUPLICATE,
                                             f"same work as {first.key} ({first.split})")
        else:  # drop: keep the copy published first, else the earliest
            keeper = min(group, key=lambda m: (not m.published, m.date_key, m.key))
            for m in group:
                if m.key in own and m is not keeper and not (m.published
                                                             and m.split in EVALUATION):
                    verdict.dropped[m.id] = (Reason.DUPLICATE, f"same work as {keeper.key}")
    return verdict


# -- published test sets ------------------------------------------------------------------------

_VERSION = re.compile(r"v\d+$")  # `2101.00001v2`, `hal-01234567v3`
_PREFIXED_NUMBER = re.compile(r"^[a-z]+(\d+)$")  # `pmc123456`


def id_keys(*ids: str) -> set[str]:
    """The forms under which an id may be listed: as published (`arxiv:2101.00001`), bare,
    without a version suffix, a number with or without its letter prefix, a DOI in any
    case. Both an id and a listed entry give their keys, so either may carry the prefix."""
    keys: set[str] = set()
    for raw in ids:
        text = raw.strip().lower()
        if not text:
            continue
        text = re.sub(r"^https?://(dx\.)?doi\.org/", "", text)
        bare = text.split(":", 1)[1] if re.match(r"^[a-z]+:", text) else text
        keys |= {text, bare, _VERSION.sub("", bare)}
        if number := _PREFIXED_NUMBER.match(bare):
            keys.add(number.group(1))
    return keys


def excluded_ids(lines: Iterable[str]) -> frozenset[str]:
    """Keys of an exclusion list (ids and DOIs, one per entry, `#` comments allowed)."""
    keys: set[str] = set()
    for line in lines:
        keys |= id_keys(line.split("#", 1)[0])
    return frozenset(keys)


# -- the audit ----------------------------------------------------------------------------------

def audit(root: Path, settings: DedupSettings, rebuild: bool = False,
          check: bool = False) -> dict[str, Any]:
    """Clusters across every dataset under `root` (and `also`), split conflicts, and the
    documents kept out as published test sets, from the stored band index (built first when
    absent, or with `rebuild`). `check` also computes every pair from scratch and says
    whether the stored ones are the same."""
    state = State(root)
    folders = Folders(state, settings.also)
    try:
        index = folders.local
        if rebuild or not index.present():
            index.build()
        pairs = index.pairs()
        consistency = {}
        if check:
            stored, fresh = set(pairs), set(pairs_among(published_docs(state), index.abstract))
            consistency = {"index": {"consistent": stored == fresh,
                                     "missing": [list(p) for p in sorted(fresh - stored)],
                                     "extra": [list(p) for p in sorted(stored - fresh)]}}
        pairs += folders.also_pairs(list(index.docs()))
        clusters = join(pairs, settings.threshold)
        by_key = {k: folders.member(k) for c in clusters for k in c.members}
        excluded = sorted(f"{dataset}/{row.candidate.id}" for dataset in state.datasets()
                          for row in state.rows(dataset, [REJECTED])
                          if row.reason == Reason.EXCLUDED.value)
        guarded = {dataset for dataset in state.datasets()
                   if json.loads(state.get_mark(dataset, SETTINGS_MARK) or "{}")
                   .get("dedup", {}).get("across") == "guard"}
    finally:
        folders.close()
        state.close()
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
        **consistency,
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
    if "index" in result:
        check = result["index"]
        lines += ["stored pairs: the same as computed from scratch" if check["consistent"]
                  else f"stored pairs differ from scratch: {len(check['missing'])} missing, "
                  f"{len(check['extra'])} extra (`audit --rebuild` rebuilds the index)"]
    return "\n".join(lines)
