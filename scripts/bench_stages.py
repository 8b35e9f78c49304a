#!/usr/bin/env python3
"""CPU per page of each stage of a worker, in the worker's order, over realdocs-style PDFs.

    python scripts/bench_stages.py DIR [--rounds 3]

DIR holds `manifest.jsonl` and the PDFs. Each digital-born article with its main abstract
goes through the steps of run/process.py's `_process` one after the other, with the settings
`local` ships: abstract preparation, parsing, cleaning, abstract removal (with the selection
of the kept words), language identification, the row and the MinHash signature; each step's
CPU time (time.process_time) is summed per round and divided by the pages. The medians over
the rounds are printed, with the total after parsing: the worker's cost beyond the PDF
itself.
The garbage collector is set as in a worker (run/isolation.py). Set LORALAY_NATIVE=0 to
measure the pure-Python path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from loralay_build.errors import Reject
from loralay_build.parse import clean_document, parse_pdf
from loralay_build.records import Candidate
from loralay_build.run import process
from loralay_build.run.isolation import set_worker_collector
from loralay_build.run.task import Task
from loralay_build.sources import load_settings
from loralay_build.text import detect_language, prepare_abstract, strip_abstracts
from loralay_build.text.minhash import text_signature

STAGES = ("abstract_prep", "parse", "clean", "strip", "langid", "build_row", "minhash")


def one_round(folder: Path, records: list[dict[str, Any]]) -> tuple[dict[str, float], int]:
    """CPU seconds per stage over all documents, and the pages of those kept."""
    settings = load_settings("local")
    parse, match, options = settings.parse, settings.match, settings.source.document_options()
    spent = dict.fromkeys(STAGES, 0.0)
    pages = 0
    clock = time.process_time
    for record in records:
        path = str(folder / record["file"])
        given: dict[str, str] = dict(record.get("abstracts") or {})
        lang = str(record.get("language") or "en")
        t0 = clock()
        abstracts = {k: a for k, v in given.items()
                     if (a := prepare_abstract(v, options.abstract_format))}
        t1 = clock()
        if lang not in abstracts:
            continue
        parsed = parse_pdf(path, settings=parse, languages=[lang])
        t2 = clock()
        doc = clean_document(parsed, options.cleaners)
        t3 = clock()
        try:
            stripped = strip_abstracts(doc.words, doc.word_pages, abstracts, lang, match)
        except Reject:
            continue
        body = doc.select(stripped.keep)
        t4 = clock()
        text = " ".join(body.words)
        detected = detect_language(text[:process.LANGID_CHARS])
        t5 = clock()
        candidate = Candidate(id=f"local:{record['id']}", source="local",
                              source_id=str(record["id"]), dataset="bench", language=lang,
                              abstracts=given)
        task = Task(candidate=candidate, pdf_path=path, pdf_sha256="0", parse=parse,
                    match=match)
        process.build_row(task, body, abstracts, stripped.matches, detected)
        t6 = clock()
        text_signature(text)
        t7 = clock()
        for stage, seconds in zip(STAGES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4,
                                           t6 - t5, t7 - t6), strict=True):
            spent[stage] += seconds
        pages += len(doc.pages)
    return spent, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    records = [json.loads(line) for line in
               (args.folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    records = [r for r in records
               if r.get("doc_kind", "article") == "article" and r.get("pdftotext_words", 1)]
    per_page: dict[str, list[float]] = {stage: [] for stage in (*STAGES, "after parse")}
    set_worker_collector()
    for _ in range(args.rounds):
        spent, pages = one_round(args.folder, records)
        for stage in STAGES:
            per_page[stage].append(1000 * spent[stage] / pages)
        after = sum(spent.values()) - spent["parse"]
        per_page["after parse"].append(1000 * after / pages)
    print(f"{pages} pages, median of {args.rounds} rounds, CPU ms per page")
    for stage, values in per_page.items():
        print(f"{stage:14s} {statistics.median(values):.3f}")


if __name__ == "__main__":
    main()
