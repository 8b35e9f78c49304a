from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from loralay_build.config import FilterSettings, SplitSettings
from loralay_build.corpus.filters import compute_thresholds, percentile
from loralay_build.corpus.split import assign_splits
from loralay_build.errors import Reason
from tests.helpers.cli import run_cli_in_process
from tests.helpers.local import make_corpus, write_manifest
from tests.helpers.splits import SplitItem, named, split_columns

RATIOS = SplitSettings(0.8, 0.1, 0.1)


def items(n: int, start: int = 0) -> list[SplitItem]:
    return [SplitItem(f"d{i:04d}", f"{2000 + i // 12}-{i % 12 + 1:02d}", None, None)
            for i in range(start, start + n)]


def assign(corpus: list[SplitItem]) -> dict[str, str]:
    columns = split_columns(corpus)
    return named(columns, assign_splits(columns, RATIOS))


def test_first_build_is_chronological() -> None:
    splits = assign(items(20))
    assert [splits[f"d{i:04d}"] for i in range(20)] == ["train"] * 16 + ["validation"] * 2 + [
        "test"] * 2


@settings(max_examples=40, deadline=None)
@given(st.integers(5, 80), st.lists(st.integers(0, 40), min_size=1, max_size=4))
def test_incremental_builds_never_move_a_document(first: int, additions: list[int]) -> None:
    corpus = items(first)
    stored = assign(corpus)
    start = first
    for added in additions:
        corpus = [SplitItem(i.id, i.published, stored.get(i.id), None) for i in corpus]
        corpus += items(added, start)
        start += added
        new = assign(corpus)
        assert all(new[k] == v for k, v in stored.items())
        stored = new
    test_share = sum(v == "test" for v in stored.values()) / len(stored)
    assert abs(test_share - 0.1) <= 0.1  # topped up as the corpus grows


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 80), st.randoms(use_true_random=False))
def test_waiting_documents_hold_their_place(n: int, rng: random.Random) -> None:
    """Documents published over several partial builds, the others waiting each time (ranked,
    not stored), end with the splits one complete build gives, and never get an evaluation
    split the complete build does not give them."""
    corpus = items(n)
    rng.shuffle(corpus)
    complete = assign(corpus)
    stored: dict[str, str] = {}
    while len(stored) < n:
        waiting = [i for i in corpus if i.id not in stored]
        ready = set(rng.sample([i.id for i in waiting], rng.randint(1, len(waiting))))
        placed = assign([SplitItem(i.id, i.published, stored.get(i.id), None)
                         for i in corpus])
        stored.update((k, placed[k]) for k in ready)
        assert all(complete[k] == v for k, v in stored.items())
    assert stored == complete


def test_preset_split_wins_and_undated_documents_count_as_oldest() -> None:
    corpus = [*items(9), SplitItem("undated", "", None, None),
              SplitItem("pinned", "1990", None, "test")]
    splits = assign(corpus)
    assert splits["pinned"] == "test"
    assert splits["undated"] == "train"
    assert splits["d0008"] == "test" or splits["d0008"] == "validation"


def test_percentile_interpolates_like_numpy() -> None:
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10], 95) == 10
    assert percentile(list(range(101)), 95) == 95.0


def test_thresholds_drop_long_documents_and_short_summaries() -> None:
    pages = list(range(1, 101))
    words = list(range(10, 110))
    th = compute_thresholds(pages, words, FilterSettings())
    long_doc, short_summary = th.verdict(100, 50), th.verdict(5, 10)
    assert long_doc is not None and long_doc[0] is Reason.TOO_MANY_PAGES
    assert short_summary is not None and short_summary[0] is Reason.SUMMARY_TOO_SHORT
    assert th.verdict(5, 50) is None
    off = compute_thresholds(pages, words, FilterSettings(enabled=False))
    assert off.verdict(1000, 0) is None


def test_percentiles_need_the_minimum_number_of_documents() -> None:
    """Two documents would each fall on one percentile bound: below the minimum, no filter."""
    settings = FilterSettings()
    few = compute_thresholds([13, 12], [203, 250], settings)
    assert few.verdict(13, 203) is None and few.verdict(12, 250) is None
    assert not few.percentiles_applied
    n = settings.min_documents
    enough = compute_thresholds([12] * (n - 1) + [40], [250] * (n - 1) + [3], settings)
    assert enough.percentiles_applied
    assert enough.verdict(40, 250) is not None and enough.verdict(12, 3) is not None


def test_two_valid_pdfs_with_filters_on_publish_two(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    manifest = write_manifest(docs / "m.jsonl", make_corpus(docs, 2))
    out = tmp_path / "out"
    result = run_cli_in_process("local", "--input", str(manifest), "--out", str(out), "--workers",
                                "1")
    assert result.returncode == 0, result.stderr
    build = json.loads((out / "local" / "build.json").read_text())
    assert sum(build["counts"]["splits"].values()) == 2
    assert build["thresholds"]["percentiles_applied"] is False
    assert "percentile filters were not applied" in (out / "local" / "README.md").read_text()
