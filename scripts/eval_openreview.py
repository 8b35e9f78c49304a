#!/usr/bin/env python3
"""Evaluate abstract removal on real OpenReview PDFs (ICLR template: small-caps "A BSTRACT").

Usage: python scripts/eval_openreview.py [REALDOCS_DIR] [--rounds N]

REALDOCS_DIR (default /work/shared/realdocs) holds `manifest.jsonl` and the PDFs; records
whose id contains "openreview" are run through the real per-document stage
(`process_document`, every parser backend) with the OpenReview source's settings. The
Markdown rendering of the gold abstract (as OpenReview would serve it) is used, so the
normaliser is exercised too. Prints, per document and backend: whether the abstract was
found, how, its leakage, whether the words "A BSTRACT" stayed in the body, and the median
CPU seconds. Also prints the computed estimate of a guest crawl of a venue at the PDF limit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from itertools import pairwise
from pathlib import Path

from loralay_build.records import Candidate
from loralay_build.run.process import Task, process_document
from loralay_build.sources import load_settings

GUEST_PDFS_PER_HOUR = 36  # OpenReview's guest limit on /pdf and /attachment (2026)
LISTING_REQUESTS_PER_MIN = 20  # guest search limit (2025)


def markdownish(text: str) -> str:
    """The abstract with Markdown emphasis on its first two words, as authors often type it."""
    words = text.split(" ")
    words[0], words[1] = f"**{words[0]}**", f"*{words[1]}*"
    return " ".join(words)


def evaluate(root: Path, rounds: int) -> None:
    settings = load_settings("openreview")
    for line in (root / "manifest.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "openreview" not in record["id"]:
            continue
        cand = Candidate(id=record["id"], source="openreview", source_id=record["id"],
                         dataset="eval", title=record["title"], language="en",
                         abstracts={"en": markdownish(record["abstracts"]["en"])})
        for backend in ("pdfium", "pdfplumber", "poppler"):
            parse = settings.parse.__class__(**{**settings.parse.__dict__, "backend": backend})
            task = Task(cand, str(root / record["file"]), record["sha256"], parse,
                        settings.match, settings.source.document_options())
            times, outcome = [], None
            for _ in range(rounds):
                start = time.process_time()
                outcome = process_document(task)
                times.append(time.process_time() - start)
            assert outcome is not None
            if outcome.row is None:
                print(f"{record['id']} {backend}: rejected {outcome.reason} {outcome.detail}")
                continue
            match = outcome.row["matches"][0]
            words = outcome.row["article_words"]
            heading = any(a == "A" and b.startswith("BSTRACT") for a, b in pairwise(words))
            print(f"{record['id']} {backend}: found={match['found']} method={match['method']} "
                  f"distance={match['distance']} leakage={match['leakage']:.3f} "
                  f"heading_kept={heading} words={len(words)} "
                  f"cpu={statistics.median(times):.3f}s")


def estimate(papers: int) -> None:
    """Computed estimate (not a measurement) of a guest crawl of one venue."""
    listing_pages = -(-papers // 1000) + 1
    hours = papers / GUEST_PDFS_PER_HOUR
    print(f"ESTIMATE (computed, not measured) for {papers} papers as a guest: "
          f"{listing_pages} listing requests (~{listing_pages * 60 / LISTING_REQUESTS_PER_MIN:.0f}"
          f" s), {papers} PDFs at {GUEST_PDFS_PER_HOUR}/h = {hours:.1f} h "
          f"(~{hours / 24:.1f} days) of waiting, i.e. about {int(hours) + 1} hourly runs "
          "(each exits 3 until the queue is empty).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default="/work/shared/realdocs", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--papers", type=int, default=2000)
    args = parser.parse_args()
    if (args.root / "manifest.jsonl").is_file():
        evaluate(args.root, args.rounds)
    else:
        print(f"{args.root}: no manifest.jsonl; skipping the PDF evaluation")
    estimate(args.papers)


if __name__ == "__main__":
    main()
