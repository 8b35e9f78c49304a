#!/usr/bin/env python3
"""CPU cost of publishing NFC, against parsing the same PDFs.

    python scripts/bench_nfc.py DIR [--backend pdfium] [--rounds 5]

DIR holds PDFs (realdocs/pdf). Each PDF is parsed once with NFC off, then the NFC step of
publishing (`nfc_words` over the words) is timed on those words, `--rounds` times
interleaved with re-parses, and the medians of CPU seconds are reported with their ratio.
Only this process's CPU is counted: poppler's pdftotext child is not, so its ratio is an
upper bound.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import loralay_build.parse.api as api
from loralay_build.errors import Reject
from loralay_build.nfc import nfc_words
from loralay_build.parse import parse_pdf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--backend", default="pdfium")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    api.nfc_words = lambda words: words  # parse without the step, to time it apart
    pdfs = sorted(args.folder.glob("*.pdf"))
    parse_cpu: list[float] = []
    nfc_cpu: list[float] = []
    words: list[list[str]] = []
    for _ in range(args.rounds):
        start = time.process_time()
        words = []
        for pdf in pdfs:
            try:
                words.append(parse_pdf(pdf, args.backend).words)
            except Reject:
                continue
        parse_cpu.append(time.process_time() - start)
        start = time.process_time()
        for doc in words:
            nfc_words(doc)
        nfc_cpu.append(time.process_time() - start)
    n = sum(map(len, words))
    changed = sum(w != v for doc in words for w, v in zip(doc, nfc_words(doc), strict=True))
    parse_s, nfc_s = statistics.median(parse_cpu), statistics.median(nfc_cpu)
    print(f"{len(words)} documents, {n} words ({changed} not NFC), backend {args.backend}")
    print(f"parse CPU s (median of {args.rounds}): {parse_s:.3f}")
    print(f"NFC CPU s   (median of {args.rounds}): {nfc_s:.4f}  ratio {nfc_s / parse_s:.2%}")


if __name__ == "__main__":
    main()
