"""The views made from a layout dataset's own published rows (`cohan` for every source, and
those a source declares: OpenReview's `scitldr` and `scitldr-full`), written after each
publish of the dataset.

Unlike PubMed's views, which read each article's JATS, these need nothing but the rows: the
`sections` and `word_roles` columns tell sections and roles. Every record takes the split
of its layout row.
"""

from __future__ import annotations

import logging
from collections import Counter

from loralay_build.corpus.split import SPLITS
from loralay_build.sources.base import MakesRowViews, PublishedDataset, Source
from loralay_build.sources.views import cohan
from loralay_build.sources.views.row_view import Record, RowView
from loralay_build.sources.views.rows import ViewInputError, published_rows
from loralay_build.sources.views.write import write_view

log = logging.getLogger(__name__)


def _cohan_tally(record: Record) -> dict[str, int]:
    return {"sentences": len(record["article_text"]),
            "abstract_sentences": len(record["abstract_text"]),
            "sections": len(record["sections"]),
            "rows_without_headings": not any(record["section_names"]),
            "rows_without_abstract_sentences": not record["abstract_text"]}


COMMON_VIEWS: dict[str, RowView] = {
    "cohan": RowView(cohan.LAYOUT, cohan.SUMMARY, cohan.INPUT_COLUMNS, cohan.cohan_record,
                     "rows_left_out", _cohan_tally),
}


def publish_row_views(ctx: PublishedDataset, source: Source) -> None:
    """Build and write every configured row view of the dataset just published: the views
    of every source and those `source` makes (`MakesRowViews`)."""
    views = {**COMMON_VIEWS, **(source.row_views if isinstance(source, MakesRowViews) else {})}
    wanted = [name for name in dict.fromkeys(ctx.settings.source.views) if name in views]
    folder = ctx.state.layout.dataset(ctx.dataset)
    for name in wanted:
        view = views[name]
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
        write_view(name, view.summary, by_split, view.layout.columns, counts, {}, ctx,
                   source.name)
        out_dir = ctx.state.layout.dataset(f"{ctx.dataset}-{name}")
        if name == "cohan" and counts["rows"]:
            cohan.write_release_files(out_dir, by_split)
        ctx.counts[f"view_{name}_rows"] += counts["rows"]
        if counts["layout_rows"] and not counts["rows"]:
            log.error("view %s has no rows although %s has %d (%d %s) (exit 3)", name,
                      ctx.dataset, counts["layout_rows"], counts[view.left_out], view.left_out)
            ctx.counts["views_empty"] += 1
