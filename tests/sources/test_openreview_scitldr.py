"""`build-corpus openreview --view scitldr --view scitldr-full` against the OpenReview
sandbox: SciTLDR's records made from the published rows' sections, read back by `datasets`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest
from click.testing import CliRunner

from loralay_build.cli import main
from loralay_build.corpus.verify import verify_dataset
from loralay_build.sandbox.openreview import OpenReviewSandbox
from loralay_build.sandbox.server import SandboxServer
from loralay_build.sources.openreview.notes import STATUSES
from loralay_build.sources.openreview.scitldr import AIC, FULL, oracle
from tests.helpers.cli_runner import FAST, rows, write_config


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A build of 8 sandbox papers and two more: one without an introduction, one without
    a conclusion; the papers' TL;DRs by forum id."""
    tmp = tmp_path_factory.mktemp("scitldr")
    with SandboxServer() as server:
        box = OpenReviewSandbox(server, n_docs=8, seed=3)
        no_intro = box.add_paper(["B ACKGROUND", "M ETHOD", "C ONCLUSION"])
        no_conclusion = box.add_paper(["I NTRODUCTION", "M ETHOD", "R ESULTS"])
        cfg = write_config(tmp / "openreview.toml", box.client_config(STATUSES), FAST)
        result = CliRunner().invoke(main, ["openreview", "--out", str(tmp / "data"), "--config",
                                           str(cfg), "--view", "scitldr", "--view",
                                           "scitldr-full"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        yield tmp / "data", {"tldrs": {s.note_id: s.tldr for s in box.subs.values()},
                             "no_intro": no_intro.note_id,
                             "no_conclusion": no_conclusion.note_id}


def _load(folder: Path) -> dict[str, dict[str, Any]]:
    loaded = datasets.load_dataset(str(folder))
    return {row["paper_id"]: row for split in loaded.values() for row in split}


@pytest.mark.parametrize("layout", [AIC, FULL], ids=lambda v: v.name)
def test_views_load_with_their_declared_columns(built: tuple[Path, dict[str, Any]],
                                                layout: Any) -> None:
    data, _ = built
    folder = data / f"openreview-{layout.name}"
    assert verify_dataset(folder) == []
    loaded = datasets.load_dataset(str(folder))
    for split in loaded.values():
        assert split.column_names == [name for name, _, _ in layout.columns]
    layout_ids = set(rows(data / "openreview"))
    assert {r["article_id"] for r in _load(folder).values()} == layout_ids


def test_rows_without_introduction_or_conclusion_are_flagged_not_dropped(
        built: tuple[Path, dict[str, Any]]) -> None:
    data, papers = built
    aic = _load(data / "openreview-scitldr")
    missing_intro, missing_conclusion = aic[papers["no_intro"]], aic[papers["no_conclusion"]]
    assert not missing_intro["introduction_found"] and missing_intro["conclusion_found"]
    assert missing_conclusion["introduction_found"]
    assert not missing_conclusion["conclusion_found"]
    assert not missing_intro["ic"] and not missing_conclusion["ic"]
    assert missing_intro["source"] and missing_conclusion["source"]
    found = [row for row in aic.values() if row["ic"]]
    assert found  # the sandbox's papers with both sections


def test_aic_is_abstract_introduction_and_conclusion(built: tuple[Path, dict[str, Any]]) -> None:
    data, papers = built
    aic, full = _load(data / "openreview-scitldr"), _load(data / "openreview-scitldr-full")
    layout = {row["article_id"]: row for row in rows(data / "openreview").values()}
    for paper_id, row in aic.items():
        assert row["target"] == [papers["tldrs"][paper_id]]
        body = full[paper_id]["source"]
        abstract = layout[row["article_id"]]["abstract"]
        # The AIC sentences are the full text's with sections left out, in the same order,
        # and the full text holds more (the sandbox's Related work and Method sections).
        rest = iter(body)
        assert all(sentence in rest for sentence in row["source"])
        assert len(body) > len(row["source"])
        assert " ".join(row["source"]).startswith(abstract.split(".")[0])
        for record in (row, full[paper_id]):
            labels = record["source_labels"]
            assert len(labels) == len(record["source"]) == len(record["rouge_scores"])
            assert sum(labels) == 1
            best = labels.index(1)
            assert record["rouge_scores"][best] == max(record["rouge_scores"])


def test_oracle_picks_the_sentence_closest_to_the_tldr() -> None:
    sentences = ["We study birds.", "A new optimiser trains transformers twice as fast.",
                 "Results follow."]
    labels, scores = oracle(sentences, ["An optimiser that trains transformers fast."])
    assert labels == [0, 1, 0]
    assert scores[1] > scores[0] and scores[1] > scores[2]
    assert oracle(["Nothing here."], ["Completely unrelated words."])[0] == [0]
