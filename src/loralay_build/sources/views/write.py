"""Writing a view's rows as a dataset folder beside its layout dataset: its own shards, card
and build record, so `datasets`, `verify`, `stats` and `report` read it like any dataset."""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path
from typing import Any

from loralay_build.corpus.card import render_view_card
from loralay_build.corpus.publish import DictRows, Item, switch, write_shards
from loralay_build.corpus.schema import COLUMNS_KEY
from loralay_build.corpus.split import SPLITS
from loralay_build.corpus.writer import digest
from loralay_build.licences import licence_counts
from loralay_build.sources.base import PublishedDataset
from loralay_build.views.schema import ViewColumns, arrow_schema, card_columns

log = logging.getLogger(__name__)


def write_view(view: str, summary: str, by_split: dict[str, list[dict[str, Any]]],
               columns: ViewColumns, counts: Counter[str], options: dict[str, Any],
               ctx: PublishedDataset, source: str) -> Path | None:
    """Publish the view's rows to `<dataset>-<view>` beside the layout dataset; returns the
    folder, or None when there is no row to write (`datasets` cannot load a folder without
    rows) or nothing changed since the last publication."""
    name = f"{ctx.dataset}-{view}"
    out_dir = ctx.state.layout.dataset(name)
    present = [s for s in SPLITS if by_split[s]]
    if not present:
        log.warning("view %s has no rows; %s not written", view, out_dir)
        return None
    schema = arrow_schema(columns)
    fingerprint = digest([by_split, str(schema), ctx.settings.raw.get("output", {}), options,
                          sorted(counts.items())])
    id_column = columns[0][0]
    by_id = {str(row[id_column]): row for rows in by_split.values() for row in rows}
    items = {split: [Item(str(row[id_column]), digest(row)) for row in by_split[split]]
             for split in SPLITS}
    shards = write_shards(out_dir, fingerprint, items, DictRows(by_id, schema), schema,
                          ctx.settings.output)
    if shards is None:
        return None
    build = {
        "dataset": name, "view": view, "layout_dataset": ctx.dataset,
        "fingerprint": fingerprint, "source": source, COLUMNS_KEY: schema.names,
        "config_hash": ctx.settings.config_hash(), "options": options,
        "counts": {"splits": {s: len(by_split[s]) for s in SPLITS},
                   **dict(sorted(counts.items()))},
        "files": shards.files,
        "licences": licence_counts((r["licence"], s) for s in present for r in by_split[s]),
    }
    languages = {str(r["language"]) for rows in by_split.values() for r in rows
                 if r.get("language")}
    if languages:  # views with a language column (cohan): the card's languages
        build["languages"] = sorted(languages)
    switch(shards, build, render_view_card(name, summary, card_columns(columns), build))
    log.info("published view %s: %d rows to %s", view, counts["rows"], out_dir)
    return out_dir
