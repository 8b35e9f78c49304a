#!/usr/bin/env python3
"""What the shard layout writes over many nights, at any corpus size, in minutes.

    python scripts/sim_layout.py --docs 131000 --nights 30 [--model uniform]
        [--new-rate 0.001] [--shard-rows 320] [--recent-days 365]

A real build of 131,000 documents for thirty nights is days of parsing here, but which
shards a night rewrites depends only on the ids, dates and contents' keys: the documents'
rows are stood in for by their ids alone. The splits are assigned by the build's own
`assign_splits` and published by the build's own `write_shards` and `switch`, with the
default `[output]` settings and the build's own `recent_marks`, so the plan's choices
(shards kept, repacked under the file rule, written) are the build's. The documents change
each night as in `bench_scale.py --model`. Rows written stand for local bytes written: a row
of ten real pages is about 88 KB of shard whichever shard it lands in.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

from bench_scale import GONE_RATE, NEW_RATE, SPAN_DAYS, day
from loralay_build.config import OutputSettings, SplitSettings
from loralay_build.corpus.folder import read_build
from loralay_build.corpus.publish import DictRows, Item, Selection, switch, write_shards
from loralay_build.corpus.split import SPLITS, SplitColumns, assign_splits
from loralay_build.run.publish_rows import published_day
from loralay_build.run.publish_write import recent_marks

SCHEMA = pa.schema([("id", pa.string())])


class Corpus:
    """The documents alive, each with its date, content version and split once published."""

    def __init__(self, n: int, rng: random.Random, settings: OutputSettings) -> None:
        self.settings = settings
        self.dates: dict[str, str] = {}
        self.version: dict[str, int] = {}
        self.split: dict[str, int] = {}
        self.rng = rng
        order = rng.sample(range(n), n)  # dates unrelated to ids, as bench_scale spreads them
        for rank, k in enumerate(order):
            self.dates[f"doc{k:07d}"] = day(rank * SPAN_DAYS // n)
            self.version[f"doc{k:07d}"] = 0
        self.next = n

    def night(self, model: str, gone_rate: float, new_rate: float) -> None:
        """One night's changes (bench_scale.change, on ids instead of files)."""
        ids = sorted(self.dates)
        n = len(ids)
        added = max(1, n // 100 if model == "uniform" else round(n * new_rate))
        newest = max(self.dates.values())
        if model == "uniform":
            revised = self.rng.sample(ids, max(1, n // 1000))
            gone = self.rng.sample(sorted(set(ids) - set(revised)), max(1, n // 1000))
            dates = [day(self.rng.randrange(SPAN_DAYS)) for _ in range(added)]
        else:
            cutoff = f"{int(newest[:4]) - 1}{newest[4:]}"
            recent = [cid for cid in ids if self.dates[cid] >= cutoff]
            revised = self.rng.sample(recent, min(max(1, n // 1000), len(recent)))
            gone = [cid for cid in sorted(set(ids) - set(revised))
                    if self.rng.random() < gone_rate]
            following = (np.datetime64(newest) + np.timedelta64(1, "D")).astype(str)
            dates = [str(following)] * added
        for cid in revised:
            self.version[cid] += 1
        for cid in gone:
            del self.dates[cid], self.version[cid]
            self.split.pop(cid, None)
        for date in dates:
            cid = f"doc{self.next:07d}"
            self.dates[cid], self.version[cid] = date, 0
            self.next += 1

    def publish(self, folder: Path, night: int) -> tuple[dict[str, int], dict[str, int]]:
        """Split and publish the corpus as a build does: rows written and files, per split."""
        before = {f["sha256"] for f in read_build(folder).get("files", [])}
        ids = sorted(self.dates)
        codes = assign_splits(SplitColumns(
            pa.array(ids), pa.array([self.dates[cid] for cid in ids]),
            np.array([self.split.get(cid, -1) for cid in ids], dtype=np.int8),
            np.full(len(ids), -1, dtype=np.int8)), SplitSettings())
        self.split = dict(zip(ids, codes.tolist(), strict=True))
        splits = {name: Selection(lambda at: Item(ids[at], f"{ids[at]}.{self.version[ids[at]]}"),
                                  np.flatnonzero(codes == code))
                  for code, name in enumerate(SPLITS)}
        rows = DictRows({cid: {"id": cid} for cid in ids}, SCHEMA)
        day = np.array([published_day(self.dates[cid]) for cid in ids], dtype=np.int32)
        shards = write_shards(folder, f"night {night}", splits, rows, SCHEMA, self.settings,
                              recent=recent_marks(day, splits, self.settings.recent_days))
        assert shards is not None, "every night changes the corpus"
        switch(shards, {"fingerprint": f"night {night}", "files": shards.files}, "card\n")
        return ({name: sum(f["rows"] for f in shards.files
                           if f["split"] == name and f["sha256"] not in before)
                 for name in SPLITS},
                {name: sum(f["split"] == name for f in shards.files) for name in SPLITS})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=131_000)
    parser.add_argument("--nights", type=int, default=30)
    parser.add_argument("--model", choices=("uniform", "realistic"), default="realistic")
    parser.add_argument("--gone-rate", type=float, default=GONE_RATE)
    parser.add_argument("--new-rate", type=float, default=NEW_RATE)
    parser.add_argument("--warm-nights", type=int, default=0,
                        help="realistic nights run first, not counted (a folder's history)")
    parser.add_argument("--warm-rate", type=float, default=0.01,
                        help="the new-document rate of those nights")
    parser.add_argument("--shard-rows", type=int, default=OutputSettings.shard_rows)
    parser.add_argument("--recent-days", type=int, default=OutputSettings.recent_days)
    args = parser.parse_args()
    corpus = Corpus(args.docs, random.Random(0), OutputSettings(shard_rows=args.shard_rows,
                                                               recent_days=args.recent_days))
    with tempfile.TemporaryDirectory(prefix="sim-layout-") as tmp:
        folder = Path(tmp)
        _, files = corpus.publish(folder, 0)
        print(f"full build: {len(corpus.dates)} rows, files {files}", flush=True)
        for night in range(-args.warm_nights, 0):
            corpus.night("realistic", args.gone_rate, args.warm_rate)
            corpus.publish(folder, night)
        written = 0
        for night in range(1, args.nights + 1):
            corpus.night(args.model, args.gone_rate, args.new_rate)
            rows, files = corpus.publish(folder, night)
            written += sum(rows.values())
            print(f"night {night}: {len(corpus.dates)} documents, rows written {rows} "
                  f"({100 * sum(rows.values()) / len(corpus.dates):.1f} %), files {files}",
                  flush=True)
    model = (args.model if args.model == "uniform"
             else f"realistic, new {args.new_rate}, gone {args.gone_rate}")
    print(f"{args.nights} nights ({model}, recent_days {args.recent_days}): "
          f"{written} rows written = {written / len(corpus.dates):.2f} x the final "
          f"{len(corpus.dates)} rows", flush=True)


if __name__ == "__main__":
    main()
