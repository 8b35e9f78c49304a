#!/usr/bin/env python3
"""The build state at scale: discovery diffing, publish planning and `status` on a synthetic
state of N candidates (default 250,000).

    python scripts/bench_state.py [--rows 250000] [--shard-rows 16]

Prints CPU seconds of each step, the peak RSS of this process after each step, the state
database size, and SQLite's query plan of every query a run makes per candidate or per
dataset, so an unindexed one (a SCAN of the candidates table) shows.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from loralay_build.config import OutputSettings
from loralay_build.corpus.publish import FORMAT_KEY, MEMBERS_KEY, Item, format_key, plan
from loralay_build.corpus.writer import write_shard
from loralay_build.layout import OutputLayout
from loralay_build.records import Candidate
from loralay_build.state import PUBLISHED, State

DATASET = "bench"
ABSTRACT = " ".join(["word"] * 200)  # about a real abstract's size


def candidates(n: int, changed: int = 0) -> Iterator[list[Candidate]]:
    batch = []
    for i in range(n):
        title = f"Title {i}" + (" (revised)" if i < changed else "")
        batch.append(Candidate(id=f"local:doc{i:07d}", source="local", source_id=f"doc{i:07d}",
                               dataset=DATASET, title=title, language="en",
                               abstracts={"en": ABSTRACT}, published=f"20{i % 25:02d}-01",
                               file_url=f"/data/pdf/doc{i:07d}.pdf", extra={"size": 1000 + i}))
        if len(batch) == 500:
            yield batch
            batch = []
    if batch:
        yield batch


def timed(label: str, step: Callable[[], Any]) -> Any:
    start = time.process_time()
    result = step()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"| {label:<46} | {time.process_time() - start:>8.2f} | {rss:>9.0f} |", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=250_000)
    parser.add_argument("--shard-rows", type=int, default=OutputSettings.shard_rows)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-state-"))
    state = State(work)
    state.claim(DATASET, "local")
    n = args.rows
    print(f"{n} candidates")
    print(f"| {'step':<46} | {'CPU s':>8} | {'peak MiB':>9} |")
    print(f"|{'-' * 48}|{'-' * 10}|{'-' * 11}|")
    timed("discovery, all new", lambda: [state.upsert(b) for b in candidates(n)])
    timed("discovery again, nothing changed", lambda: [state.upsert(b) for b in candidates(n)])
    timed("discovery, 1 % changed", lambda: [state.upsert(b) for b in candidates(n, n // 100)])

    def mark_published() -> None:
        with state.transaction():
            state.db.execute("UPDATE candidates SET status = ?, work_key = printf('%064d', "
                             "rowid), split = 'train', blob_sha = printf('%064x', rowid)",
                             (PUBLISHED,))

    timed("(setup: every candidate published)", mark_published)
    rows = timed("publish: read the published rows", lambda: state.rows(DATASET, [PUBLISHED]))
    items = [Item(r.candidate.id, r.work_key or "") for r in rows]
    del rows
    # The previous version: shards recording their items (one tiny row each, footers real).
    settings = OutputSettings(shard_rows=args.shard_rows)
    schema = pa.schema([pa.field("article_id", pa.string())])
    fmt = format_key(schema, settings)
    folder = work / DATASET
    folder.mkdir()
    files = []
    for index in range(0, n, args.shard_rows):
        group = items[index : index + args.shard_rows]
        name = f"train-x-{index:07d}.parquet"
        meta = {MEMBERS_KEY: json.dumps([[i.id, i.key] for i in group]).encode(),
                FORMAT_KEY: fmt.encode()}
        write_shard(folder / name, schema, [[pa.table({"article_id": ["x"]}, schema=schema)]],
                    settings, meta)
        files.append({"name": name, "split": "train", "rows": len(group)})
    grown = items + [Item(f"local:new{i:07d}", "f" * 64) for i in range(n // 100)]
    layout = timed("publish planning, +1 % new",
                   lambda: plan(folder, files, {"train": grown}, fmt, args.shard_rows))
    print(f"|   kept {len(layout.kept)} of {len(files)} shards, "
          f"{sum(len(g) for g in layout.new['train'])} rows to write |")
    timed("status: counts per status and reason", lambda: (
        state.status_counts(DATASET), state.reason_counts(DATASET), state.last_run(DATASET),
        state.datasets()))
    print(f"\nstate.sqlite: {OutputLayout(work).state_db.stat().st_size / 1e6:.1f} MB")
    print("\nquery plans:")
    for sql, params in [
        ("SELECT content_hash FROM candidates WHERE dataset = ? AND id = ?", (DATASET, "x")),
        ("SELECT * FROM candidates WHERE dataset = ? AND status IN (?, ?) ORDER BY id",
         (DATASET, PUBLISHED, "processed")),
        ("SELECT status, COUNT(*) FROM candidates WHERE dataset = ? GROUP BY 1", (DATASET,)),
        ("SELECT DISTINCT dataset FROM candidates ORDER BY 1", ()),
        ("UPDATE candidates SET status = ? WHERE dataset = ? AND id = ?", ("x", DATASET, "x")),
    ]:
        detail = "; ".join(r[3] for r in state.db.execute("EXPLAIN QUERY PLAN " + sql, params))
        print(f"- {sql}\n    {detail}")
    state.close()
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
