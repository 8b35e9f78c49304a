"""Near-duplicate clusters: found from title + abstract or PDF hash, never split across splits."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.config import SplitSettings
from loralay_build.corpus.dedup import (
    DedupItem,
    cluster_splits,
    find_clusters,
    keep_published,
    similarity,
)
from tests.helpers.splits import SplitItem, named, split_columns

WORDS = ("model", "attention", "graph", "layout", "summary", "token", "corpus", "vision",
         "robust", "sparse", "policy", "reward", "kernel", "prior", "latent", "noise")
RATIOS = SplitSettings(train=0.6, validation=0.2, test=0.2)


def abstract(rng: random.Random, n: int = 60) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + "."


def test_reworded_sentence_is_similar_a_different_paper_is_not() -> None:
    rng = random.Random(1)
    text = abstract(rng)
    assert similarity(text, text.replace("model", "Model,", 1) + " Code is released.") >= 0.9
    assert similarity(text, abstract(rng)) < 0.9


def test_same_title_different_abstract_is_not_a_duplicate() -> None:
    rng = random.Random(2)
    items = [DedupItem("a", "Attention Is All You Need", abstract(rng), "s1", "2017"),
             DedupItem("b", "attention is all you need!", abstract(rng), "s2", "2018")]
    assert find_clusters(items) == []


def test_same_pdf_is_a_duplicate_whatever_the_metadata() -> None:
    rng = random.Random(3)
    items = [DedupItem("b", "One", abstract(rng), "same", "2019"),
             DedupItem("a", "Two", abstract(rng), "same", "2020")]
    (cluster,) = find_clusters(items)
    assert cluster.representative == "b" and cluster.members == ("b", "a")  # earliest first


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[DedupItem], list[set[str]], list[SplitItem]]:
    """Random works, each published one to four times (copies re-typed or re-uploaded)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=25))
    items, works, splits = [], [], []
    for w, size in enumerate(sizes):
        title, text, ids = f"Work number {w} on {rng.choice(WORDS)}", abstract(rng), set()
        for copy in range(size):
            cid = f"id{rng.randrange(10**9):09d}-{w}-{copy}"
            shown = title.upper() if copy % 2 else title + "."
            variant = text if copy < 2 else text.replace(".", " (extended).")
            sha = f"pdf-{w}" if copy == 1 else f"pdf-{w}-{copy}"
            year = f"{rng.randint(2017, 2024)}"
            items.append(DedupItem(cid, shown, variant, sha, year))
            stored = draw(st.sampled_from([None, "train", "validation", "test"]))
            splits.append(SplitItem(cid, year, stored, None))
            ids.add(cid)
        works.append(ids)
    return items, works, splits


@settings(max_examples=60, deadline=None)
@given(corpora())
def test_every_cluster_lands_in_one_split(corpus: tuple[list[DedupItem], list[set[str]],
                                                        list[SplitItem]]) -> None:
    items, works, split_items = corpus
    clusters = find_clusters(items)
    found = [set(c.members) for c in clusters]
    assert sorted(map(sorted, found)) == sorted(sorted(w) for w in works if len(w) > 1)
    by_id = {i.id: i for i in items}
    for cluster in clusters:
        keys = [(by_id[m].sort_key, m) for m in cluster.members]
        assert (by_id[cluster.representative].sort_key, cluster.representative) == min(keys)
    stored = {i.id: i.current for i in split_items if i.current}
    columns = split_columns(split_items)
    splits = named(columns,
                   cluster_splits(columns, keep_published(clusters, stored), RATIOS, stored))
    assert set(splits) == {i.id for i in split_items}
    rank = ("test", "validation", "train")
    for work in works:  # even when earlier builds stored different splits for the copies
        assert len({splits[m] for m in work}) == 1
        earlier = [stored[m] for m in work if m in stored]
        if earlier:  # nothing leaves validation or test
            assert splits[next(iter(work))] == min(earlier, key=rank.index)


def test_a_late_twin_never_displaces_the_published_copy() -> None:
    rng = random.Random(4)
    text = abstract(rng)
    late = DedupItem("late", "Same Work", text, "s1", "2018")  # earlier date, found later
    published = DedupItem("pub", "Same Work", text, "s2", "2024")
    (cluster,) = keep_published(find_clusters([late, published]), {"pub": "validation"})
    assert cluster.representative == "pub" and cluster.members == ("pub", "late")
    # The published copy filtered out since: the late twin takes the work's split, not train.
    columns = split_columns([SplitItem("late", "2018", None, None)])
    splits = named(columns, cluster_splits(columns, [cluster], RATIOS, {"pub": "validation"}))
    assert splits == {"late": "validation"}
