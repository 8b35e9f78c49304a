"""The views made from a layout dataset's own published rows (`cohan` for every source,
`scitldr` and `scitldr-full` for OpenReview), written after each publish of the dataset.

Unlike PubMed's views, which read each article's JATS, these need nothing but the rows: the
`sections` and `word_roles` columns tell sections and roles. Every record takes the split
of its layout row.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loralay_build.corpus.split import SPLITS
from loralay_build.sources.base import PublishedDataset
from loralay_build.sources.views import cohan, scitldr
from loralay_build.sources.views.rows import ViewInputError, published_rows
from loralay_build.sources.views.write import write_view
from loralay_build.views.schema import ViewLayout

log = logging.getLogger(__name__)

Record = dict[str, Any]


@dataclass(frozen=True)
class RowView:
    """A view made row by row: its layout and card summary, the layout columns it reads,
    the record of a row (None: the row has no record, counted as `left_out`), and what it
    counts of a record."""

    layout: ViewLayout
    summary: str
    reads: list[str]
    record: Callable[[Record], Record | None]
    left_out: str
    tally: Callable[[Record], dict[str, int]]


def _cohan_tally(record: Record) -> dict[str, int]:
    return {"sentences": len(record["article_text"]),
            "abstract_sentences": len(record["abstract_text"]),
            "sections": len(record["sections"]),
            "rows_without_headings": not any(record["section_names"]),
            "rows_without_abstract_sentences": not record["abstract_text"]}


def _scitldr_tally(record: Record) -> dict[str, int]:
    return {"sentences": len(record["source"]), "rows_ic": record["ic"],
            "rows_without_introduction": not record["introduction_found"],
            "rows_without_conclusion": not record["conclusion_found"],
            "rows_without_oracle": not any(record["source_labels"])}


ROW_VIEWS: dict[str, RowView] = {
    "cohan": RowView(cohan.LAYOUT, cohan.SUMMARY, cohan.INPUT_COLUMNS, cohan.cohan_record,
                     "rows_left_out", _cohan_tally),
    "scitldr": RowView(scitldr.AIC, scitldr.SUMMARIES["scitldr"], scitldr.INPUT_COLUMNS,
                       lambda row: scitldr.scitldr_record(row, full=False),
                       "rows_without_tldr", _scitldr_tally),
    "scitldr-full": RowView(scitldr.FULL, scitldr.SUMMARIES["scitldr-full"],
                            scitldr.INPUT_COLUMNS,
                            lambda row: scitldr.scitldr_record(row, full=True),
                            "rows_without_tldr", _scitldr_tally),
}


def publish_row_views(ctx: PublishedDataset, source: str) -> None:
    """Build and write every configured row view of the dataset just published."""
    wanted = [name for name in dict.fromkeys(ctx.settings.source.views)
              if name in ROW_VIEWS]
    folder = ctx.state.layout.dataset(ctx.dataset)
    for name in wanted:
        view = ROW_VIEWS[name]
        by_split: dict[str, list[Record]] = {split: [] for split in SPLITS}
        counts: Counter[str] = Counter()
        try:
            for split, row in published_rows(folder, view.reads):
                counts["layout_rows"] += 1
                record = view.record(row)
                if record is None:
                    counts[view.left_out] += 1
                    continue
                by_split[split].append(record)
                counts.update({k: int(v) for k, v in view.tally(record).items()})
        except ViewInputError as exc:
            log.error("view %s not written: %s (exit 3)", name, exc)
            ctx.counts["views_empty"] += 1
            continue
        counts["rows"] = sum(len(rows) for rows in by_split.values())
        write_view(name, view.summary, by_split, view.layout.columns, counts, {}, ctx, source)
        out_dir = ctx.state.layout.dataset(f"{ctx.dataset}-{name}")
        if name == "cohan" and counts["rows"]:
            cohan.write_release_files(out_dir, by_split)
        ctx.counts[f"view_{name}_rows"] += counts["rows"]
        if counts["layout_rows"] and not counts["rows"]:
            log.error("view %s has no rows although %s has %d (%d %s) (exit 3)", name,
                      ctx.dataset, counts["layout_rows"], counts[view.left_out], view.left_out)
            ctx.counts["views_empty"] += 1
