#!/usr/bin/env python3
"""Benchmark the PubMed view builders (no network) on a folder of JATS files.

Usage: python scripts/bench_views.py DIR [--rounds N] [--glob "*.nxml"]

For every JATS file in DIR: parse with the safe parser, read the body, build the
clean-text view and the sentence-level citation records (every reference counted as
resolved, so the record count is the number of citing sentences). Reports per-article CPU
time (median over rounds, `time.process_time`) for each stage and the totals.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from loralay_build.safexml import parse_xml
from loralay_build.sources.pubmed.body import read_body
from loralay_build.sources.pubmed.citations import CitationOptions, citation_records
from loralay_build.sources.pubmed.cleantext import TextOptions, clean_view
from loralay_build.sources.pubmed.resolve import Found


def _resolved(_: str) -> Found:
    return Found("", "abstract", "state")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--glob", default="*.nxml")
    args = parser.parse_args()
    files = sorted(args.folder.glob(args.glob))
    stages: dict[str, list[float]] = {"parse": [], "body": [], "clean": [], "citations": []}
    records = sentences = 0
    for path in files:
        data = path.read_bytes()
        times: dict[str, list[float]] = {k: [] for k in stages}
        for _ in range(args.rounds):
            t0 = time.process_time()
            article = parse_xml(data)
            t1 = time.process_time()
            body = read_body(article)
            t2 = time.process_time()
            view = clean_view(article, body, TextOptions())
            t3 = time.process_time()
            found = list(citation_records(body, CitationOptions(), _resolved))
            t4 = time.process_time()
            for key, value in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                times[key].append(value)
        if not body.sections:
            continue
        records += len(found)
        sentences += sum(len(p) for s in view["sections"] for p in s["paragraphs"])
        for key in stages:
            stages[key].append(statistics.median(times[key]))
    n = len(stages["parse"])
    total = sum(sum(v) for v in stages.values())
    print(f"articles {n}, body sentences {sentences}, citation records {records}")
    for key, values in stages.items():
        print(f"{key:10s} median {1000 * statistics.median(values):7.2f} ms/article")
    print(f"all stages {1000 * total / max(1, n):7.2f} ms/article "
          f"({n / total if total else 0:.0f} articles/s per core)")


if __name__ == "__main__":
    main()
