#!/usr/bin/env python3
"""The build parent's peak memory at LoRaLay size, by simulation of the workers' parsing.

    python scripts/bench_parent_memory.py ../shared/realdocs --docs 2000,10000 [--workers 2]

A real build of 131,000 ten-page documents is 1.3 million pages, days of parsing here. The
parent's memory does not depend on how a worker reads a PDF, only on what it sends back and
on what the parent does with it, so only the parsing is simulated:

- Each document's input is a tiny distinct file (a `%PDF-` header and the document's
  number): discovery, the state database, the blob store (hashing and linking every file)
  and the processing stage's bookkeeping run as in any `local` build.
- The worker function is `simulated_process_document`, run by the real isolated pool. Each
  document is assigned one of the realdocs articles of 9 to 11 pages (`TEMPLATE_PAGES`),
  listed in the manifest with that article's gold abstract, language and title. Before the
  build, this script runs the real `run.process.process_document` once on each article's PDF
  and keeps the cleaned document `build_row` was given (`parse_templates`). For every
  document a worker then builds the row and statistics with the real `build_row` and MinHash
  from that document with its words shuffled within each page, with their boxes (seeded by
  the document's number, so no two rows repeat each other for the compressor): about 10
  pages and 5,000 words and boxes a row, with the document's own id, title, date, abstract
  and file hash.
- Everything else is the real parent: the outcomes' work files, statuses and statistics,
  the publisher's plan, the shards, the card, `build.json` and `rejects.jsonl`.

For each N: a full build, then an increment (+1 % new documents, 0.1 % whose file changed,
0.1 % whose file vanished), each measured as the parent's and the largest worker's peak RSS
(VmHWM sampled from /proc), wall and CPU seconds of all processes, and the shards' bytes.
Run with `--workers 2 --no-filter`, as scripts/bench_scale.py.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_scale import write_manifest

TEMPLATE_PAGES = range(9, 12)
TEMPLATES_ENV = "LORALAY_SIM_TEMPLATES"
SCRIPTS = Path(__file__).resolve().parent

_templates: list[tuple[Any, ...]] | None = None


def _number(task: Any) -> int:
    """The document's number, from its id (`sim000042`)."""
    return int(task.candidate.source_id.removeprefix("sim"))


def simulated_process_document(task: Any) -> Any:
    """A worker's outcome for `task`, made from its article's parse (module doc)."""
    import pickle

    import numpy as np

    from loralay_build.run.process import build_row
    from loralay_build.run.task import Outcome
    from loralay_build.text.minhash import text_signature, to_text

    global _templates
    if _templates is None:
        _templates = pickle.loads(Path(os.environ[TEMPLATES_ENV]).read_bytes())
    k = _number(task)
    (body, abstracts, matches, lang, reference), stats = _templates[k % len(_templates)]
    order = np.lexsort((np.random.default_rng(k).random(len(body.words)), body.word_pages))
    columns = {name: np.asarray(getattr(body, name), dtype=object)[order].tolist()
               for name in ("words", "boxes", "word_pages", "line_ids", "block_ids",
                            "font_sizes") if len(getattr(body, name))}
    shuffled = dataclasses.replace(body, **columns)
    row = build_row(task, shuffled, abstracts, matches, lang, reference, task.pdf_sha256)
    sig = text_signature(" ".join(shuffled.words))
    return Outcome(row=row, stats={**stats, "minhash": None if sig is None else to_text(sig)})


def parse_templates(chosen: list[dict[str, Any]], path: Path) -> None:
    """Run the real processing on each article once, keeping the document `build_row` was
    given and the outcome's statistics, pickled to `path` for the workers."""
    import pickle

    from loralay_build.parse.settings import ParseSettings
    from loralay_build.records import Candidate
    from loralay_build.run import process
    from loralay_build.run.task import Task
    from loralay_build.text.settings import MatchSettings

    made = []
    real = process.build_row
    for template in chosen:
        seen: list[tuple[Any, ...]] = []

        def keep(*args: Any, seen: list[tuple[Any, ...]] = seen) -> dict[str, Any]:
            seen.append(args)
            return real(*args)

        candidate = Candidate(id="local:template", source="local", source_id="template",
                              dataset="local", language=template["language"],
                              abstracts=template["abstracts"], title=template["title"])
        process.build_row = keep
        try:
            outcome = process.process_document(Task(candidate, template["pdf"],
                                                    template["sha256"], ParseSettings(),
                                                    MatchSettings()))
        finally:
            process.build_row = real
        if outcome.row is None:
            raise SystemExit(f"{template['pdf']}: {outcome.reason} {outcome.detail}")
        made.append((seen[0][1:6], outcome.stats))
    path.write_bytes(pickle.dumps(made))


def child(argv: list[str]) -> None:
    """The build, in this process, with the simulated worker function."""
    import loralay_build.run.executors as executors
    from loralay_build.cli import main

    executors.process_document = simulated_process_document
    sys.argv = ["build-corpus", *argv]
    main()


def articles(realdocs: Path) -> list[dict[str, Any]]:
    """The realdocs articles of TEMPLATE_PAGES pages with a gold abstract."""
    import hashlib

    chosen = []
    for raw in (realdocs / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(raw)
        if (r.get("doc_kind", "article") == "article" and r.get("abstracts")
                and r.get("pages") in TEMPLATE_PAGES and r.get("pdftotext_words")):
            pdf = realdocs / r["file"]
            chosen.append({"pdf": str(pdf), "sha256": hashlib.sha256(pdf.read_bytes()).hexdigest(),
                           "language": r["language"], "title": r.get("title") or "",
                           "abstracts": r["abstracts"], "pages": r["pages"],
                           "words": r["pdftotext_words"]})
    return chosen


def add_documents(entries: list[dict[str, object]], chosen: list[dict[str, Any]], pdfs: Path,
                  count: int, rng: random.Random) -> None:
    """`count` more documents: tiny distinct files, each listed with its article's metadata
    and a date spread over 20 years."""
    for k in range(len(entries), len(entries) + count):
        template = chosen[k % len(chosen)]
        name = f"sim{k:06d}"
        (pdfs / f"{name}.pdf").write_bytes(f"%PDF-1.4\n% document {k}\n%%EOF\n".encode())
        entries.append({"id": name, "pdf": f"{name}.pdf", "language": template["language"],
                        "abstracts": template["abstracts"], "title": template["title"],
                        "published": f"{2005 + rng.randrange(20)}-{1 + rng.randrange(12):02d}"
                                     f"-{1 + rng.randrange(28):02d}"})


def run_build(manifest: Path, out: Path, workers: int, template_file: Path) -> dict[str, float]:
    from bench_memory import measure

    argv = ["local", "--input", str(manifest), "--out", str(out), "--workers", str(workers),
            "--no-filter", "-q"]
    path = os.pathsep.join([str(SCRIPTS), os.environ.get("PYTHONPATH", "")])
    child = f"import bench_parent_memory; bench_parent_memory.child({argv!r})"
    m = measure([sys.executable, "-c", child],
                env={"PYTHONPATH": path, TEMPLATES_ENV: str(template_file)})
    if m.returncode not in (0, 3):
        raise SystemExit(f"build exit {m.returncode}: {m.stderr[-3000:]}")
    shards = sum(p.stat().st_size for p in (out / "local").glob("*.parquet"))
    files = len(list((out / "local").glob("*.parquet")))
    return {"parent_mib": m.parent_mib, "worker_mib": m.child_mib, "wall_s": m.wall,
            "cpu_s": m.cpu, "shard_mb": shards / 1e6, "shards": files}


def rows_and_pages(dataset: Path) -> tuple[int, int]:
    """Rows and pages of the published shards."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rows = pages = 0
    for path in dataset.glob("*.parquet"):
        table = pq.read_table(path, columns=["page_sizes"])
        rows += table.num_rows
        pages += pc.sum(pc.list_value_length(table["page_sizes"])).as_py() or 0
    return rows, pages


def bench(realdocs: Path, work: Path, n: int, workers: int) -> None:
    pdfs, out = work / f"pdf-{n}", work / f"out-{n}"
    pdfs.mkdir(parents=True)
    chosen = articles(realdocs)
    template_file = work / "templates.pickle"
    if not template_file.exists():
        parse_templates(chosen, template_file)
    rng = random.Random(0)
    entries: list[dict[str, object]] = []
    add_documents(entries, chosen, pdfs, n, rng)
    manifest = pdfs / "docs.jsonl"
    write_manifest(manifest, entries)
    full = run_build(manifest, out, workers, template_file)
    rows, pages = rows_and_pages(out / "local")
    print(f"N={n} full: {json.dumps({k: round(v, 1) for k, v in full.items()})}; "
          f"{rows} rows, {pages} pages", flush=True)
    small = max(1, n // 1000)
    alive = rng.sample(range(n), 2 * small)
    for k in alive[:small]:  # changed: other bytes, so another blob and work file
        path = pdfs / f"sim{k:06d}.pdf"
        path.write_bytes(path.read_bytes() + b"% revised\n")
    for k in alive[small:]:  # gone
        (pdfs / f"sim{k:06d}.pdf").unlink()
    add_documents(entries, chosen, pdfs, max(1, n // 100), rng)
    write_manifest(manifest, entries)
    inc = run_build(manifest, out, workers, template_file)
    print(f"N={n} increment (+{max(1, n // 100)}, {small} changed, {small} gone): "
          f"{json.dumps({k: round(v, 1) for k, v in inc.items()})}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("realdocs", type=Path)
    parser.add_argument("--docs", default="2000", help="comma-separated document counts")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-parent-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        for n in (int(s) for s in args.docs.split(",") if s.strip()):
            bench(args.realdocs.resolve(), work, n, args.workers)
            if args.keep is None:
                shutil.rmtree(work / f"out-{n}")
                shutil.rmtree(work / f"pdf-{n}")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
