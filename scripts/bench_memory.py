#!/usr/bin/env python3
"""Peak memory of a build and of every read command, at several corpus sizes.

    python scripts/bench_memory.py --sizes 200,800,2000 [--realdocs DIR] [--workers 2]

For each size N a `local` corpus of N distinct documents is built, then `verify`, `inspect`
(one document), `stats` and `report` are run on it. Each command runs as its own process;
its peak RSS (VmHWM) and that of each of its descendants are sampled from /proc, so Arrow's
allocations count as much as Python's. Reported: the build's parent and its largest worker,
and each read command (the largest process of its tree), with wall and CPU seconds.

Documents: with `--realdocs DIR` (realdocs-style `manifest.jsonl` + PDFs with gold
abstracts) every digital-born PDF is copied with bytes appended after %%EOF until there are
N, so each copy is a new document; without it, small one-page generated articles (a few
templates, made distinct the same way), so large N stays cheap.

The helpers (`measure`, `realdocs_corpus`) are importable; the corpus generator and the RSS
sampler live in `loralay_build.sandbox` (`local_corpus`, `peak_rss`), shared with the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from loralay_build.sandbox.local_corpus import distinct_copy, synthetic_corpus
from loralay_build.sandbox.peak_rss import PeakRss

MiB = 1024 * 1024


@dataclass
class Measured:
    returncode: int
    parent_mib: float
    child_mib: float
    wall: float
    cpu: float
    stderr: str = field(repr=False, default="")


def measure(argv: list[str], env: dict[str, str] | None = None) -> Measured:
    """Run a command to its end, sampling the peak RSS of it and its descendants."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    sampler = PeakRss(proc.pid)
    # The last sample is taken before the process is reaped, while /proc still has it.
    while proc.poll() is None:
        time.sleep(0.02)
    _, errors = proc.communicate()
    parent, child = sampler.stop()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Measured(proc.returncode, parent, child, time.perf_counter() - start,
                    usage.ru_utime + usage.ru_stime - before, errors)


def realdocs_corpus(source: Path, folder: Path, n: int) -> Path:
    """N distinct copies of the digital-born realdocs PDFs, with their gold abstracts."""
    records = [r for r in map(json.loads, (source / "manifest.jsonl").read_text().splitlines())
               if r.get("doc_kind", "article") == "article" and r.get("pdftotext_words", 1)]
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for k in range(n):
        record = records[k % len(records)]
        name = f"r{k}.pdf"
        (folder / name).write_bytes(distinct_copy((source / record["file"]).read_bytes(), k))
        entries.append({"id": f"{record['id']}-{k}", "pdf": name,
                        "language": record["language"],
                        "abstracts": dict(record.get("abstracts") or {}),
                        "published": record.get("date") or "", "title": record.get("title") or ""})
    return _manifest(folder, entries)


def _manifest(folder: Path, entries: list[dict[str, object]]) -> Path:
    path = folder / "docs.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    return path


CLI = [sys.executable, "-m", "loralay_build.cli"]


def build_argv(manifest: Path, out: Path, workers: int) -> list[str]:
    return [*CLI, "local", "--input", str(manifest), "--out", str(out), "--workers",
            str(workers), "--no-filter", "-q"]


def first_id(dataset: Path) -> str:
    """An id of the dataset's last shard, for `inspect` (the one a scan would reach last)."""
    import pyarrow.parquet as pq

    build = json.loads((dataset / "build.json").read_text())
    last = build["files"][-1]["name"]
    return str(pq.read_table(dataset / last, columns=["article_id"])["article_id"][-1])


def bench_size(work: Path, n: int, realdocs: Path | None, workers: int) -> dict[str, Measured]:
    docs = work / f"docs-{n}"
    manifest = (realdocs_corpus(realdocs, docs, n) if realdocs
                else synthetic_corpus(docs, n))
    out = work / f"out-{n}"
    dataset = out / "local"
    results = {"build": measure(build_argv(manifest, out, workers))}
    if results["build"].returncode not in (0, 3):
        raise SystemExit(f"build exit {results['build'].returncode}: "
                         f"{results['build'].stderr[-2000:]}")
    results["verify"] = measure([*CLI, "verify", str(dataset)])
    results["inspect"] = measure([*CLI, "inspect", str(dataset), first_id(dataset),
                                  "--out", str(work / "inspect.png")])
    results["stats"] = measure([*CLI, "stats", str(dataset)])
    results["report"] = measure([*CLI, "report", str(out), "--out", str(work / f"rep-{n}")])
    for name, m in results.items():
        if m.returncode not in (0, 3):
            raise SystemExit(f"{name} exit {m.returncode}: {m.stderr[-2000:]}")
    shutil.rmtree(docs)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,800", help="comma-separated document counts")
    parser.add_argument("--realdocs", type=Path, help="realdocs-style folder (default: "
                        "generated one-page documents)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    kind = "realdocs copies" if args.realdocs else "generated one-page documents"
    print(f"{kind}, --workers {args.workers}; peak RSS in MiB (wall s / CPU s)")
    print("| documents | build parent | build worker | verify | inspect | stats | report |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for n in sizes:
            r = bench_size(work, n, args.realdocs, args.workers)

            def cell(name: str, r: dict[str, Measured] = r) -> str:
                m = r[name]
                return f"{max(m.parent_mib, m.child_mib):.0f} ({m.wall:.1f} / {m.cpu:.1f})"

            b = r["build"]
            print(f"| {n} | {b.parent_mib:.0f} ({b.wall:.1f} / {b.cpu:.1f}) "
                  f"| {b.child_mib:.0f} | {cell('verify')} | {cell('inspect')} "
                  f"| {cell('stats')} | {cell('report')} |", flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
