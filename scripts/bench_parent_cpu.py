#!/usr/bin/env python3
"""Where a build's parent spends its CPU, per page: a full build, then a nightly increment.

    python scripts/bench_parent_cpu.py DIR [--docs 300] [--workers 2] [--profile]

DIR is realdocs-style (`manifest.jsonl` + PDFs). N documents are made as bench_scale makes
them; `build-corpus local --workers N` runs in this process, so only the parent is measured
(the workers are forked from the pool's fork server, never from this process). Then the
uniform increment of bench_scale (+1 % new, 0.1 % changed, 0.1 % gone, scattered) is built
the same way. For each build the parent's CPU is split into the steps below, each the CPU
(the process's clock) spent inside the functions named, in ms per published page: every
function is wrapped by a timer for the build, a generator's time counted step by step, so
the sum is the real cost. `--profile` runs the builds under cProfile instead (timed by the
same clock) and keeps `full.prof` and `increment.prof` beside the build for reading what a
step calls: cProfile inflates per-call Python work two to ten times, so its steps show
shares, not costs. Start-up is measured apart: the CPU of importing the command, in a fresh
process.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import inspect
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
from collections.abc import Callable, Generator
from pathlib import Path
from types import ModuleType
from typing import Any

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
    "process (all of it)": [("run/process_stage.py", "process")],
    "the build (all its stages)": [("run/pipeline.py", "run")],
    "the command (its settings, lock, state and report too)": [("run/lifecycle.py", "run_build")],
}


def _module(suffix: str) -> ModuleType:
    """The loaded module whose file ends with `suffix`."""
    for module in list(sys.modules.values()):
        if (getattr(module, "__file__", None) or "").endswith(suffix):
            return module
    raise LookupError(f"no loaded module ends with {suffix}")


def _timed(function: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    """`function`, adding the CPU spent inside it to `spent[0]`; a generator's time is taken
    between its steps only, not while its consumer works."""
    clock = time.process_time
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def steps(*args: Any, **kwargs: Any) -> Generator[Any, None, Any]:
            inner = function(*args, **kwargs)
            try:
                while True:
                    start = clock()
                    try:
                        item = next(inner)
                    except StopIteration as stop:
                        return stop.value
                    finally:
                        spent[0] += clock() - start
                    yield item
            finally:
                inner.close()
        return steps

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return function(*args, **kwargs)
        finally:
            spent[0] += clock() - start
    return call


def _wrap_steps() -> tuple[dict[str, list[float]], Callable[[], None]]:
    """Wrap every function of STEPS where it is looked up (its module, the modules that
    imported it by name, its class); returns the steps' counters and an undo."""
    counters: dict[str, list[float]] = {}
    undo: list[tuple[Any, str, Any]] = []
    loaded = [m for m in list(sys.modules.values())
              if m is not None and m.__name__.startswith(("loralay_build", "pyarrow"))]
    for step, functions in STEPS.items():
        spent = counters[step] = [0.0]
        for suffix, name in functions:
            module = _module(suffix)
            owners: list[Any] = [module, *(value for value in vars(module).values()
                                           if inspect.isclass(value)
                                           and value.__module__ == module.__name__)]
            for owner in owners:
                original = vars(owner).get(name)
                if not inspect.isfunction(original):
                    continue
                holders = [owner] if inspect.isclass(owner) else [
                    m for m in loaded if vars(m).get(name) is original]
                wrapped = _timed(original, spent)
                for holder in holders:
                    undo.append((holder, name, original))
                    setattr(holder, name, wrapped)

    def restore() -> None:
        for holder, name, original in reversed(undo):
            setattr(holder, name, original)
    return counters, restore


def _run(argv: list[str]) -> None:
    from loralay_build.cli import main

    sys.argv = ["build-corpus", *argv]
    try:
        main()
    except SystemExit as done:
        if done.code not in (0, 3, None):
            raise


def measured_build(argv: list[str], profile_to: Path | None) -> dict[str, float]:
    """The parent's CPU of one in-process build: in all, and per step (seconds); under
    cProfile, dumped to `profile_to`, when given. The command is imported first: start-up is
    measured apart."""
    import loralay_build.cli  # noqa: F401  (loads every module a build runs)

    before = resource.getrusage(resource.RUSAGE_SELF)
    if profile_to is None:
        counters, restore = _wrap_steps()
        try:
            _run(argv)
        finally:
            restore()
        steps = {step: spent[0] for step, spent in counters.items()}
    else:
        profile = cProfile.Profile(time.process_time)
        profile.enable()
        try:
            _run(argv)
        finally:
            profile.disable()
        profile.dump_stats(profile_to)
        stats = pstats.Stats(str(profile_to)).stats  # type: ignore[attr-defined]
        steps = {step: sum(row[3] for suffix, function in functions
                           for (path, _, name), row in stats.items()
                           if path.endswith(suffix) and name == function)
                 for step, functions in STEPS.items()}
    after = resource.getrusage(resource.RUSAGE_SELF)
    total = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"parent CPU (in all)": total, **steps}


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
    parser.add_argument("--profile", action="store_true",
                        help="Under cProfile (shares, not costs); its stats kept with --keep.")
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
        full = measured_build(argv, work / "full.prof" if args.profile else None)
        page_count = pages(out / "local")
        report("full build", full, page_count)
        alive = list(range(args.docs))
        entries += change("uniform", entries, alive, pdfs, args.folder, random.Random(1))
        write_manifest(manifest, entries)
        increment = measured_build(argv, work / "increment.prof" if args.profile else None)
        report("increment", increment, page_count, full)
        print(json.dumps({"full": full, "increment": increment}))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
