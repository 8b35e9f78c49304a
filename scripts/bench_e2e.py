#!/usr/bin/env python3
"""Benchmark a whole build against parsing alone over the same PDFs.

    python scripts/bench_e2e.py DIR [--copies 6] [--executor local] [--rounds 1]
        [--against-poppler [--against SRC] [--against-env NAME=VALUE ...]]

DIR is realdocs-style (`manifest.jsonl` + PDFs). Each digital-born document (an article with a
text layer) is copied `--copies` times with bytes appended after %%EOF, so every copy hashes
differently and is processed as a new document. Reported, in one run so they compare:
- CPU pages/s (user+sys of every process, workers included, via RUSAGE_CHILDREN) of
  `build-corpus local --no-filter --workers 2`, of `parse_pdf` alone in one process over the
  same files, and their ratio; and the same ratio against `parse_pdf` split over two
  concurrent processes, as the two workers run (on two vCPUs sharing a core, each process
  then spends more CPU-seconds per page);
- wall time of the build with --workers 1 and 2;
- peak RSS of the parent and of each worker (VmHWM sampled from /proc during the build);
- wall time of an immediate re-run with nothing new;
- CPU of starting and stopping the pool of two workers, and of each worker replacement;
- the same parse-only and --workers 2 build with the compiled core disabled
  (`LORALAY_NATIVE=0`), `pdftotext -bbox-layout` alone on the same files (poppler, the
  reference the whole build is held to: in one sequence of runs against either build, and
  in two concurrent ones against the build with --workers 2), the PDFium floor (load page +
  text page + GetText) and pdfplumber on the first `--subset` files (via
  scripts/bench_parse.py children).
Rounds are interleaved; medians are reported. `--against-poppler` runs only the builds and
poppler, next to each other; with `--against SRC` (another checkout's `src` folder, its
compiled core built) that checkout's build with --workers 2 runs beside this one's in every
round, so a change is measured within one run; `--against-env NAME=VALUE` sets a variable for
that build (of this checkout without `--against`), e.g. `LORALAY_RUN__ALLOCATOR='""'` for
workers on the C library's malloc.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from loralay_build.sandbox.peak_rss import process_tree


def make_corpus(folder: Path, work: Path, copies: int) -> tuple[Path, Path]:
    """Copies of every digital-born PDF, and the `local` manifest listing them."""
    pdfs = work / "pdf"
    pdfs.mkdir(parents=True)
    entries = []
    for raw in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        if record.get("doc_kind", "article") != "article" or not record.get("pdftotext_words", 1):
            continue
        data = (folder / record["file"]).read_bytes()
        abstracts = dict(record.get("abstracts") or {})
        for k in range(copies):
            name = f"{record['id']}-copy{k}.pdf"
            (pdfs / name).write_bytes(data + f"\n% bench copy {k}\n".encode())
            entries.append({
                "id": f"{record['id']}-copy{k}", "pdf": str(pdfs / name),
                "language": record["language"], "abstracts": abstracts,
                "published": record.get("date") or "", "title": record.get("title") or "",
            })
    manifest = work / "docs.jsonl"
    manifest.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))
    return pdfs, manifest


def parse_child(folder: str, part: int = 0, parts: int = 1) -> None:
    """Parse every `parts`-th PDF of the folder from `part` on in this process; print pages
    and CPU as JSON."""
    from loralay_build.errors import Reject
    from loralay_build.parse import parse_pdf

    pages = docs = 0
    for path in sorted(Path(folder).glob("*.pdf"))[part::parts]:
        try:
            pages += len(parse_pdf(path).pages)
            docs += 1
        except Reject:
            continue
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"cpu": usage.ru_utime + usage.ru_stime, "pages": pages, "docs": docs}))


def ipc_child(manifest: str, limit: int = 50) -> None:
    """Time pickling the outcomes of real documents as the worker pipe does: compact columns
    against the same rows as lists of Python values. Prints JSON."""
    import copy
    import pickle
    from multiprocessing.reduction import ForkingPickler

    from loralay_build.columns import Strings
    from loralay_build.parse.settings import ParseSettings
    from loralay_build.records import Candidate
    from loralay_build.run.process import Task, process_document
    from loralay_build.text import MatchSettings

    outcomes = []
    for raw in Path(manifest).read_text(encoding="utf-8").splitlines()[:limit]:
        entry = json.loads(raw)
        cand = Candidate(id=entry["id"], source="local", source_id=entry["id"], dataset="bench",
                         language=entry["language"], abstracts=entry["abstracts"])
        task = Task(cand, entry["pdf"], "0" * 64, ParseSettings(), MatchSettings())
        outcome = process_document(task)
        if outcome.row is not None:
            outcomes.append(outcome)
    plain = []
    for outcome in outcomes:
        row = dict(outcome.row or {})
        words = row["article_words"]
        row["article_words"] = words.unpack() if isinstance(words, Strings) else words
        for key in ("article_bboxes", "article_norm_bboxes", "word_pages"):
            row[key] = row[key].tolist()
        copied = copy.copy(outcome)
        copied.row = row
        plain.append(copied)
    words = sum(len(o.row["article_words"]) for o in outcomes if o.row is not None)
    result: dict[str, float] = {"docs": len(outcomes), "words": words}
    for name, items in (("lists", plain), ("compact", outcomes)):
        start, size = time.process_time(), 0
        for item in items:
            data = bytes(ForkingPickler.dumps(item))
            size += len(data)
            pickle.loads(data)
        result[f"{name}_ms"] = 1000 * (time.process_time() - start)
        result[f"{name}_mb"] = size / 1e6
    print(json.dumps(result))


def pool_child(tasks: int) -> None:
    """CPU (this process and its children) of starting and stopping a pool of 2 workers as
    the build does, fork server included, that runs `tasks` tasks with one worker per task
    (recycled after each: the cost of a replacement). Prints JSON."""
    from loralay_build.parse.backend import backend_module
    from loralay_build.parse.settings import ParseSettings
    from loralay_build.records import Candidate
    from loralay_build.run.isolation import IsolatedPool, Limits
    from loralay_build.run.process import Outcome, Task, process_document
    from loralay_build.text import MatchSettings

    # A candidate without its abstract: rejected at once, before any parsing.
    cand = Candidate(id="x", source="local", source_id="x", dataset="bench", language="en")
    task = Task(cand, "/nonexistent.pdf", "0" * 64, ParseSettings(), MatchSettings())
    before = _own_cpu()
    pool: IsolatedPool[Task, Outcome] = IsolatedPool(
        process_document, 2, Limits(60.0, 2 << 30, 1), [backend_module("pdfium")]
    )
    with pool:
        for _, outcome in pool.imap_unordered([task] * tasks):
            assert isinstance(outcome, Outcome) and outcome.reason is not None
    print(json.dumps({"cpu": _own_cpu() - before}))


def _own_cpu() -> float:
    own, children = (resource.getrusage(who)
                     for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pool_cpu(tasks: int, rounds: int = 5) -> float:
    """Median CPU of `pool_child(tasks)` over fresh processes."""
    values: list[float] = []
    for _ in range(rounds):
        done = subprocess.run([sys.executable, __file__, "--pool-child", str(tasks)],
                              capture_output=True, text=True, check=True)
        values.append(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])
    return statistics.median(values)


def children_cpu() -> float:
    """User and system CPU seconds of the children this process has waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


PYTHON_LOOP = {**os.environ, "LORALAY_NATIVE": "0"}
BENCH_PARSE = Path(__file__).with_name("bench_parse.py")


def poppler_cpu(pdfs: Path, parts: int = 1) -> float:
    """CPU of `pdftotext -bbox-layout` alone over the files, output discarded, the files
    shared among `parts` concurrent sequences of runs (as `parse_only` shares them)."""
    paths = sorted(pdfs.glob("*.pdf"))

    def run(part: int) -> None:
        for path in paths[part::parts]:
            subprocess.run(["pdftotext", "-q", "-bbox-layout", str(path), "/dev/null"],
                           check=False)

    before = children_cpu()
    threads = [threading.Thread(target=run, args=(k,)) for k in range(parts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return children_cpu() - before


def parse_bench_child(name: str, pdfs: Path, limit: int) -> dict[str, float]:
    """CPU and pages of one scripts/bench_parse.py child (the PDFium floor, pdfplumber)."""
    done = subprocess.run([sys.executable, str(BENCH_PARSE), "--child", name, str(pdfs),
                           "--limit", str(limit)], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def parse_only(pdfs: Path, parts: int = 1, env: dict[str, str] | None = None) -> dict[str, float]:
    """Parse-only CPU and pages, the files shared among `parts` concurrent processes.

    Two processes on this host's two vCPUs each use more CPU-seconds than one alone (they
    share a core), so the build with --workers 2 compares like for like with `parts=2`.
    """
    procs = [subprocess.Popen([sys.executable, __file__, "--parse-child", str(pdfs),
                               "--part", str(k), "--parts", str(parts)],
                              stdout=subprocess.PIPE, text=True, env=env) for k in range(parts)]
    total = {"cpu": 0.0, "pages": 0.0, "docs": 0.0}
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"parse child exit {proc.returncode}")
        for key, value in json.loads(out.strip().splitlines()[-1]).items():
            total[key] += value
    return total


class RssSampler:
    """Peak RSS (VmHWM) of a process and of each of its descendants, sampled from /proc."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peaks: dict[int, float] = {}
        self.names: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            for pid in process_tree(self.pid):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                for line in status.splitlines():
                    if line.startswith("Name:"):
                        self.names[pid] = line.split()[1]
                    if line.startswith("VmHWM:"):
                        peak = int(line.split()[1]) / 1024
                        self.peaks[pid] = max(self.peaks.get(pid, 0.0), peak)

    def stop(self) -> tuple[float, float]:
        """Peak MiB of the parent and the largest peak of a Python worker."""
        self._stop.set()
        self._thread.join()
        workers = [v for pid, v in self.peaks.items()
                   if pid != self.pid and self.names.get(pid, "").startswith("python")]
        return self.peaks.get(self.pid, 0.0), max(workers, default=0.0)


def build(manifest: Path, out: Path, workers: int, executor: str,
          env: dict[str, str] | None = None) -> dict[str, float]:
    return timed_build(["build-corpus", "local", "--input", str(manifest), "--out", str(out),
                        "--workers", str(workers), "--executor", executor, "--no-filter", "-q"],
                       env)


def timed_build(argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall, CPU of the command and its children, and peak RSS of parent and worker."""
    before, start = children_cpu(), time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=env)
    sampler = RssSampler(proc.pid)
    _, errors = proc.communicate()
    wall = time.perf_counter() - start
    parent, worker = sampler.stop()
    if proc.returncode not in (0, 3):
        raise SystemExit(f"build-corpus exit {proc.returncode}: {errors[-2000:]}")
    return {"cpu": children_cpu() - before, "wall": wall, "parent_rss": parent,
            "worker_rss": worker}


def ipc_and_pool(manifest: Path, add: Callable[[str, float], None]) -> None:
    """What a document costs on the pipe, and what starting and replacing workers costs."""
    done = subprocess.run([sys.executable, __file__, "--ipc-child", str(manifest)],
                          capture_output=True, text=True, check=True)
    ipc = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("lists", "compact"):
        add(f"IPC {name}: pickle ms / 1k words", 1000 * ipc[f"{name}_ms"] / ipc["words"])
        add(f"IPC {name}: pickled bytes / word", 1e6 * ipc[f"{name}_mb"] / ipc["words"])
    started = pool_cpu(0)
    add("worker pool of 2, start + stop CPU s", started)
    # 20 tasks, one worker each: the 2 first workers, then 18 replacements.
    add("worker replacement CPU ms each", 1000 * (pool_cpu(20) - started) / 18)


def against_poppler(pdfs: Path, manifest: Path, work: Path, rounds: int, executor: str,
                    pages: float, add: Callable[[str, float], None],
                    against: dict[str, str] | None = None) -> None:
    """Only the whole build against poppler, each ratio from runs next to each other: on a
    host whose speed drifts between runs, a ratio of runs minutes apart is mostly drift.
    Each build is compared with poppler run just before and just after it at the same
    concurrency (the mean of the two). With `against` (the environment of another checkout),
    its build with --workers 2 runs next to this one's, first on every other round."""
    for round_ in range(rounds):
        one_before = poppler_cpu(pdfs)
        two_before = poppler_cpu(pdfs, parts=2)
        if against is not None and round_ % 2:
            other = build(manifest, work / f"outA-{round_}", 2, executor, against)
        two = build(manifest, work / f"out2-{round_}", 2, executor)
        if against is not None and not round_ % 2:
            other = build(manifest, work / f"outA-{round_}", 2, executor, against)
        if against is not None:
            add("e2e CPU pages/s (--workers 2), --against", pages / other["cpu"])
            add("ratio e2e (--workers 2) / --against", other["cpu"] / two["cpu"])
        two_after = poppler_cpu(pdfs, parts=2)
        one = build(manifest, work / f"out1-{round_}", 1, executor)
        one_after = poppler_cpu(pdfs)
        single = (one_before + one_after) / 2
        add("e2e CPU pages/s (--workers 2)", pages / two["cpu"])
        add("e2e CPU pages/s (--workers 1)", pages / one["cpu"])
        add("poppler pdftotext CPU pages/s", pages / single)
        add("ratio e2e (--workers 2) / poppler", single / two["cpu"])
        add("ratio e2e (--workers 2) / poppler, 2 procs", (two_before + two_after) / 2 / two["cpu"])
        add("ratio e2e --workers 1 / poppler", single / one["cpu"])


def full_rounds(pdfs: Path, manifest: Path, work: Path, rounds: int, executor: str,
                subset: int, add: Callable[[str, float], None]) -> dict[str, float]:
    """Every measure, `rounds` times interleaved; returns the last parse-only run."""
    parsed: dict[str, float] = {}
    for round_ in range(rounds):
        parsed = parse_only(pdfs)
        pages = parsed["pages"]
        add("parse-only CPU pages/s", pages / parsed["cpu"])
        two = build(manifest, work / f"out2-{round_}", 2, executor)
        add("e2e CPU pages/s (--workers 2)", pages / two["cpu"])
        add("ratio e2e / parse-only", (pages / two["cpu"]) / (pages / parsed["cpu"]))
        pair = parse_only(pdfs, parts=2)
        add("parse-only CPU pages/s, 2 procs", pages / pair["cpu"])
        add("ratio e2e / parse-only, 2 procs", pair["cpu"] / two["cpu"])
        add("wall s --workers 2", two["wall"])
        add("peak RSS MiB parent", two["parent_rss"])
        add("peak RSS MiB worker", two["worker_rss"])
        again = build(manifest, work / f"out2-{round_}", 2, executor)
        add("re-run wall s (nothing new)", again["wall"])
        add("re-run CPU s (nothing new)", again["cpu"])
        python_parse = parse_only(pdfs, env=PYTHON_LOOP)
        add("parse-only CPU pages/s, Python loop", pages / python_parse["cpu"])
        python_two = build(manifest, work / f"outpy-{round_}", 2, executor, PYTHON_LOOP)
        add("e2e CPU pages/s, Python loop", pages / python_two["cpu"])
        poppler = poppler_cpu(pdfs)
        add("poppler pdftotext CPU pages/s", pages / poppler)
        add("ratio parse-only / poppler", poppler / parsed["cpu"])
        add("ratio e2e (--workers 2) / poppler", poppler / two["cpu"])
        add("ratio Python loop e2e / poppler", poppler / python_two["cpu"])
        poppler_pair = poppler_cpu(pdfs, parts=2)
        add("poppler CPU pages/s, 2 procs", pages / poppler_pair)
        add("ratio e2e (--workers 2) / poppler, 2 procs", poppler_pair / two["cpu"])
        floor = parse_bench_child("floor", pdfs, 10**9)
        add("PDFium floor CPU pages/s", floor["pages"] / floor["cpu"])
        plumber = parse_bench_child("pdfplumber", pdfs, subset)
        add(f"pdfplumber CPU pages/s ({subset} files)", plumber["pages"] / plumber["cpu"])
        one = build(manifest, work / f"out1-{round_}", 1, executor)
        add("wall s --workers 1", one["wall"])
        add("e2e CPU pages/s (--workers 1)", pages / one["cpu"])
        add("ratio e2e --workers 1 / parse-only", parsed["cpu"] / one["cpu"])
        add("ratio e2e --workers 1 / poppler", poppler / one["cpu"])
    return parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--executor", default="local")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--subset", type=int, default=12, help="files for pdfplumber")
    parser.add_argument("--against-poppler", action="store_true",
                        help="only the whole build against poppler, in adjacent runs")
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="with --against-poppler: also another checkout's src folder")
    parser.add_argument("--against-env", action="append", default=[], metavar="NAME=VALUE",
                        help="with --against-poppler: a variable of the compared build")
    parser.add_argument("--parse-child", help=argparse.SUPPRESS)
    parser.add_argument("--part", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--parts", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--ipc-child", help=argparse.SUPPRESS)
    parser.add_argument("--pool-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parse_child:
        parse_child(args.parse_child, args.part, args.parts)
        return
    if args.ipc_child:
        ipc_child(args.ipc_child)
        return
    if args.pool_child is not None:
        pool_child(args.pool_child)
        return
    if args.folder is None:
        parser.error("DIR is required")
    if any("=" not in pair for pair in args.against_env):
        parser.error("--against-env takes NAME=VALUE")
    # Measure the tool as installed: a wheel install compiles bytecode, while an editable
    # checkout under PYTHONDONTWRITEBYTECODE would compile every module in every process.
    import loralay_build

    compileall.compile_dir(Path(loralay_build.__file__).parent, quiet=1)
    work = Path(tempfile.mkdtemp(prefix="bench-e2e-"))
    try:
        pdfs, manifest = make_corpus(args.folder, work, args.copies)
        rows: dict[str, list[float]] = {}

        def add(key: str, value: float) -> None:
            rows.setdefault(key, []).append(value)

        if args.against_poppler:
            against = None
            if args.against is not None or args.against_env:
                against = dict(os.environ)
                if args.against is not None:
                    compileall.compile_dir(args.against / "loralay_build", quiet=1)
                    against["PYTHONPATH"] = str(args.against.resolve())
                against.update(pair.split("=", 1) for pair in args.against_env)
            parsed = parse_only(pdfs)
            against_poppler(pdfs, manifest, work, args.rounds, args.executor, parsed["pages"],
                            add, against)
        else:
            parsed = full_rounds(pdfs, manifest, work, args.rounds, args.executor, args.subset,
                                 add)
            ipc_and_pool(manifest, add)
        docs, pages = int(parsed["docs"]), parsed["pages"]
        print(f"{docs} documents, {int(pages)} pages, executor {args.executor}, "
              f"{args.rounds} round(s), median [min-max]")
        print(f"| {'measure':<42} | {'value':>22} |")
        print(f"|{'-' * 44}|{'-' * 24}|")
        for key, values in rows.items():
            spread = f"[{min(values):.2f}-{max(values):.2f}]" if len(values) > 1 else ""
            print(f"| {key:<42} | {statistics.median(values):>8.2f} {spread:>13} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
