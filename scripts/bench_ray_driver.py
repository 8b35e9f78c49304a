#!/usr/bin/env python3
"""How many documents per second the Ray driver can hand out and commit: the ceiling of
`--executor ray` however many nodes join.

    python scripts/bench_ray_driver.py [DIR] [--copies 10] [--rounds 2] [--nodes 2]
                                       [--cpus-per-node 2]

DIR is realdocs-style (`manifest.jsonl` + PDFs, default ../shared/realdocs). Each article is
copied `--copies` times (bytes appended after %%EOF), as scripts/bench_e2e.py does. The
originals are first processed for real in this process, which gives the workers' pages per
CPU-second in this same run. Then a local Ray cluster of `--nodes` nodes is started and
`build-corpus local --executor ray` runs in this process, its per-document function replaced
by scripts/ray_stub.py (the original's real outcome, no parsing), so the workers cost almost
nothing and the driver is the only real work: reading and shipping the PDF, submitting, waiting,
unpickling the row, writing the work file and committing the state. Reported per variant
(median of interleaved rounds): the driver's CPU seconds during processing (user+sys of this
process, Ray's threads in it included), per document and per page, and the resulting ceiling in
pages per driver CPU-second; then how many nodes that ceiling feeds.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

from bench_e2e import make_corpus
from loralay_build.config import RunSettings
from loralay_build.layout import OutputLayout
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Candidate
from loralay_build.run import lifecycle, pipeline, process_stage
from loralay_build.run.executors import Executor
from loralay_build.run.process import Outcome, Task, process_document
from loralay_build.text import MatchSettings
from ray_stub import cached_outcome

TOTAL_PAGES = 4_000_000  # LoRaLay's size
VARIANTS: dict[str, dict[str, Any]] = {
    "bytes shipped, in_flight 2/CPU": {"shared_blobs": False},
    "paths only (shared --out)": {"shared_blobs": True},
    "bytes shipped, in_flight 512": {"shared_blobs": False, "in_flight": 512},
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def originals(folder: Path, manifest: Path) -> tuple[dict[str, Outcome], float, int]:
    """The real outcome of every original (copy 0), with the CPU seconds and pages it took."""
    outcomes: dict[str, Outcome] = {}
    start, pages = time.process_time(), 0
    for raw in manifest.read_text(encoding="utf-8").splitlines():
        entry = json.loads(raw)
        if not entry["id"].endswith("-copy0"):
            continue
        cand = Candidate(id=entry["id"], source="local", source_id=entry["id"], dataset="bench",
                         language=entry["language"], abstracts=entry["abstracts"])
        outcome = process_document(Task(cand, entry["pdf"], "0" * 64, ParseSettings(),
                                        MatchSettings()))
        outcomes[entry["id"].rsplit("-copy", 1)[0]] = outcome
        pages += int(outcome.stats.get("n_pages", 0))
    return outcomes, time.process_time() - start, pages


@contextmanager
def stubbed_ray(measured: list[dict[str, float]]) -> Iterator[None]:
    """The pipeline's executor is the Ray executor with the stub function, and each
    processing stage appends its driver CPU, wall time and document count to `measured`."""
    from loralay_build.run.ray_executor import RayExecutor

    process = pipeline.Pipeline.process

    def make_stub(settings: RunSettings, preload: Sequence[str] = ()) -> Executor:
        return RayExecutor(settings, func=cached_outcome)

    def timed(self: pipeline.Pipeline) -> None:
        before = dict(self.stats.counts())
        cpu, wall = _cpu(), time.monotonic()
        process(self)
        done = sum(n - before.get(k, 0) for k, n in self.stats.counts().items()
                   if k == "processed" or k.startswith("rejected_"))
        measured.append({"cpu": _cpu() - cpu, "wall": time.monotonic() - wall, "docs": done})

    with (patch.object(process_stage, "make_executor", make_stub),
          patch.object(pipeline.Pipeline, "process", timed)):
        yield


def run_variant(manifest: Path, out: Path, run: dict[str, Any]) -> dict[str, float]:
    measured: list[dict[str, float]] = []
    overrides = {"source": {"input": str(manifest)},
                 "run": {"executor": "ray", "recycle_after": 1_000_000, **run}}
    with stubbed_ray(measured):
        code = lifecycle.run_build("local", OutputLayout(out), None, None, overrides,
                                   notify=lambda line: print(line, file=sys.stderr)).code
    if code not in (0, 3) or len(measured) != 1:
        rejects = out / "local" / "rejects.jsonl"
        first = rejects.read_text().splitlines()[0] if rejects.is_file() else ""
        raise SystemExit(f"the build failed (exit {code}) {first}")
    shutil.rmtree(out)
    return measured[0]


def start_cluster(nodes: int, cpus: int) -> Callable[[], None]:
    """A local Ray cluster of `nodes` nodes; this process joins it as the driver."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": cpus, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=cpus)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)

    def stop() -> None:
        ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]

    return stop


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?",
                        default=Path(__file__).resolve().parents[2] / "shared" / "realdocs")
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpus-per-node", type=int, default=2)
    args = parser.parse_args()
    if not (args.folder / "manifest.jsonl").is_file():
        raise SystemExit(f"no manifest.jsonl in {args.folder}")

    work = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        _, manifest = make_corpus(args.folder, work, args.copies)
        outcomes, parse_cpu, pages = originals(args.folder, manifest)
        kept = sum(1 for o in outcomes.values() if o.row is not None)
        print(f"{len(outcomes)} originals ({kept} processed, {pages} pages) x {args.copies} "
              f"copies; real processing in one process: {pages / parse_cpu:.1f} pages per "
              f"CPU-second ({parse_cpu:.1f} s)")
        (work / "outcomes.pickle").write_bytes(pickle.dumps(outcomes))
        os.environ["LORALAY_BENCH_OUTCOMES"] = str(work / "outcomes.pickle")  # the workers'
        stop = start_cluster(args.nodes, args.cpus_per_node)
        try:
            run_variant(manifest, work / "warm-up", {})  # start every Ray worker and child
            results: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
            for k in range(args.rounds):
                for name, run in VARIANTS.items():
                    results[name].append(run_variant(manifest, work / f"out-{k}", run))
                    print(f"  round {k + 1}: {name}: {results[name][-1]}", file=sys.stderr)
        finally:
            stop()
        report(results, pages * args.copies, pages / parse_cpu)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(results: dict[str, list[dict[str, float]]], pages: int, worker_rate: float) -> None:
    print("\n| variant | docs | driver CPU s | ms/doc | docs/s | pages/s | wall s |")
    print("|---|---|---|---|---|---|---|")
    ceilings = {}
    for name, runs in results.items():
        cpu = statistics.median(r["cpu"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        docs = int(runs[0]["docs"])
        ceilings[name] = pages / cpu
        print(f"| {name} | {docs} | {cpu:.2f} | {1000 * cpu / docs:.1f} | {docs / cpu:.0f} "
              f"| {pages / cpu:.0f} | {wall:.1f} |")
    print(f"\nworkers: {worker_rate:.1f} pages per CPU-second (this run)")
    for name, ceiling in ceilings.items():
        cores = ceiling / worker_rate
        print(f"{name}: the driver feeds {cores:.0f} worker cores "
              f"({cores / 16:.1f} nodes of 16 cores); 4M pages take at least "
              f"{TOTAL_PAGES / ceiling / 3600:.1f} h")


if __name__ == "__main__":
    main()
