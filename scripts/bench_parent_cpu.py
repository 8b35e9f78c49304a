#!/usr/bin/env python3
"""Where a build's parent spends its CPU, per page: a full build, then a nightly increment.

    python scripts/bench_parent_cpu.py DIR [--docs 300] [--workers 2]

DIR is realdocs-style (`manifest.jsonl` + PDFs). N documents are made as bench_scale makes
them; `build-corpus local --workers N` runs in this process under cProfile timed by the
process's CPU clock, so only the parent is measured (the workers are forked from the pool's
fork server, never from this process). Then the uniform increment of bench_scale (+1 % new,
0.1 % changed, 0.1 % gone, scattered) is built the same way. For each build the parent's CPU
is split into the steps below, each the cumulative CPU of the functions named, in ms per
published page; the profiler inflates per-call Python work, so the shares matter more than
the sum. Start-up is measured apart: the CPU of importing the command, in a fresh process.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import change, make_documents, pages, spread_dates, write_manifest

# step -> (path suffix, function name) of the functions whose cumulative CPU it is
STEPS: dict[str, list[tuple[str, str]]] = {
    "checks (manifest read, lock, state open)": [("run/lifecycle.py", "check_build")],
    "discovery": [("run/discover.py", "discover")],
    "fetch (local: hash and link the PDFs)": [("run/download.py", "fetch")],
    "process: sending tasks, receiving outcomes": [("run/isolation.py", "imap_unordered")],
    "process: work store write (_record)": [("run/process_stage.py", "_record")],
    "publish: plan and decisions (state reads)": [("run/publish_stage.py", "_plan"),
                                                   ("run/publish_stage.py", "_decide")],
    "publish: work files read back": [("corpus/writer.py", "_read_row")],
    "publish: published rows read back": [("corpus/publish.py", "read")],
    "publish: Parquet encoding (write_table)": [("pyarrow/parquet/core.py", "write_table")],
    "publish: write_shard (all of it)": [("corpus/writer.py", "write_shard")],
    "publish: card, build.json, stats": [("run/publish_write.py", "_build")],
    "publish: statuses and band index": [("run/publish_stage.py", "_set_statuses")],
    "publish: work files deleted": [("corpus/writer.py", "discard")],
    "publish (all of it)": [("run/publish_stage.py", "publish")],
}


def profiled_build(argv: list[str], out: Path) -> dict[str, float]:
    """The parent's CPU of one in-process build: in all, and per step (seconds)."""
    from loralay_build.cli import main

    profile = cProfile.Profile(time.process_time)
    before = resource.getrusage(resource.RUSAGE_SELF)
    sys.argv = ["build-corpus", *argv]
    profile.enable()
    try:
        main()
    except SystemExit as done:
        if done.code not in (0, 3, None):
            raise
    finally:
        profile.disable()
    after = resource.getrusage(resource.RUSAGE_SELF)
    profile.dump_stats(out)
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    result = {"parent CPU (in all, profiled)": after.ru_utime + after.ru_stime
              - before.ru_utime - before.ru_stime}
    for step, functions in STEPS.items():
        result[step] = sum(row[3] for suffix, function in functions
                           for (path, _, name), row in stats.items()
                           if path.endswith(suffix) and name == function)
    return result


def startup_cpu() -> float:
    """CPU of importing the command in a fresh interpreter."""
    code = ("import resource; import loralay_build.cli; u = resource.getrusage("
            "resource.RUSAGE_SELF); print(u.ru_utime + u.ru_stime)")
    bare = ("import resource; u = resource.getrusage(resource.RUSAGE_SELF); "
            "print(u.ru_utime + u.ru_stime)")
    cpu = [float(subprocess.run([sys.executable, "-c", c], check=True, capture_output=True,
                                text=True).stdout) for c in (code, bare)]
    return cpu[0] - cpu[1]


def report(name: str, result: dict[str, float], page_count: int,
           full: dict[str, float] | None = None) -> None:
    """The steps in ms per page of the full build; an increment's also as % of the full's."""
    print(f"\n{name}: ms per page of the full build's {page_count} pages")
    print("| step | CPU s | ms / page |" + (" % of the full build's |" if full else ""))
    print("|---|---|---|" + ("---|" if full else ""))
    for step, seconds in result.items():
        share = f" {100 * seconds / full[step]:.0f} % |" if full and full[step] else " - |"
        print(f"| {step} | {seconds:.2f} | {1000 * seconds / max(1, page_count):.3f} |"
              + (share if full else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-parent-"))
    pdfs, out = work / "pdf", work / "out"
    pdfs.mkdir(parents=True, exist_ok=True)
    manifest = pdfs / "docs.jsonl"
    argv = ["local", "--input", str(manifest), "--out", str(out), "--workers",
            str(args.workers), "--no-filter", "-q"]
    try:
        entries = make_documents(args.folder, pdfs, 0, args.docs)
        spread_dates(entries, random.Random(0))
        write_manifest(manifest, entries)
        print(f"start-up (importing the command): {startup_cpu():.2f} s CPU")
        full = profiled_build(argv, work / "full.prof")
        page_count = pages(out / "local")
        report("full build", full, page_count)
        alive = list(range(args.docs))
        entries += change("uniform", entries, alive, pdfs, args.folder, random.Random(1))
        write_manifest(manifest, entries)
        increment = profiled_build(argv, work / "increment.prof")
        report("increment", increment, page_count, full)
        print(json.dumps({"full": full, "increment": increment}))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
