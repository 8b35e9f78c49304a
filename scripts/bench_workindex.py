#!/usr/bin/env python3
"""What checking an increment against the rest of a folder costs, with the stored band index
and with a computation from scratch, on synthetic signatures.

    python scripts/bench_workindex.py --sizes 10000,100000 [--increment 0.01]

For each size N a state database holds N published documents in two datasets (half each,
random 128-value signatures, random titles; 1% of the second dataset copies a signature of
the first with a fifth of its values changed, so there are works to find), then an
increment of N * `increment` new documents of the first dataset (again 1% copies) is
checked as a publish checks it. Reported, in CPU seconds (this process, SQLite included):

- scratch: what the check cost before the index: every published document read from the
  state and every pair computed again (`published_docs` + `pairs_among`);
- indexed: `shared_works` with the index built (stored pairs read, the new documents'
  buckets and titles looked up), and the increment's addition to the index at commit;
- the one-time build of the index, the audit's read of the stored pairs, and the index's
  size on disk (SQLite's dbstat: its tables and indexes).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from loralay_build.config import DedupSettings
from loralay_build.corpus.contamination import index_published, join, shared_works
from loralay_build.corpus.workindex import WorkIndex, doc_of, pairs_among, published_docs
from loralay_build.records import Candidate
from loralay_build.state import PROCESSED, PUBLISHED, State
from loralay_build.text.minhash import NUM_PERM, Signature, to_text

T = TypeVar("T")
WORDS = [f"word{i}" for i in range(5000)]


def candidate(dataset: str, n: int, rng: np.random.Generator) -> Candidate:
    title = " ".join(rng.choice(WORDS, size=7))
    return Candidate(id=f"local:{dataset}{n}", source="local", source_id=f"{dataset}{n}",
                     dataset=dataset, title=title, language="en",
                     abstracts={"en": " ".join(rng.choice(WORDS, size=60))},
                     published=f"{2000 + n % 20}-01-01", file_url="", landing_url="",
                     licence="", extra={})


def copy_of(sig: Signature, rng: np.random.Generator) -> Signature:
    """A signature with a fifth of its values changed (estimated Jaccard about 0.8)."""
    out = sig.copy()
    changed = rng.choice(NUM_PERM, size=NUM_PERM // 5, replace=False)
    out[changed] = rng.integers(0, 2**32, size=len(changed), dtype=np.uint32)
    return out


def fill(state: State, dataset: str, start: int, count: int, status: str,
         rng: np.random.Generator, originals: list[Signature]) -> list[str]:
    """`count` documents of `dataset`, 1% of them copies of `originals`; returns their ids."""
    cands = [candidate(dataset, start + i, rng) for i in range(count)]
    state.upsert(cands)
    sigs = rng.integers(0, 2**32, size=(count, NUM_PERM), dtype=np.uint32)
    for i in range(0, count, 100):  # every hundredth a copy
        if originals:
            sigs[i] = copy_of(originals[int(rng.integers(len(originals)))], rng)
    with state.transaction():
        state.db.executemany(
            "UPDATE candidates SET status = ?, split = ?, stats = ? WHERE dataset = ? AND id = ?",
            ((status, "train", f'{{"minhash": "{to_text(sig)}"}}', dataset, c.id)
             for c, sig in zip(cands, sigs, strict=True)))
    originals.extend(sigs[:100])
    return [c.id for c in cands]


def cpu(step: Callable[[], T]) -> tuple[float, T]:
    start = time.process_time()
    result = step()
    return time.process_time() - start, result


def run(size: int, increment: float) -> None:
    rng = np.random.default_rng(size)
    settings = DedupSettings()
    with tempfile.TemporaryDirectory() as tmp:
        state = State(Path(tmp))
        pool: list[Signature] = []
        alpha = fill(state, "alpha", 0, size // 2, PUBLISHED, rng, pool)
        fill(state, "beta", 0, size - size // 2, PUBLISHED, rng, pool)
        new = fill(state, "alpha", size, int(size * increment), PROCESSED, rng, pool)
        splits = dict.fromkeys(alpha + new, "train")
        index = WorkIndex(state)
        build_s, _ = cpu(index.build)

        def scratch() -> int:  # every published document and the increment, from the rows
            docs = published_docs(state)
            docs += [doc_of("alpha", row) for row in state.iter_rows("alpha", [PROCESSED])]
            return len(join(pairs_among(docs, index.abstract), settings.threshold))

        scratch_s, scratch_clusters = cpu(scratch)
        check_s, verdict = cpu(lambda: shared_works(state, "alpha", splits, new, settings))

        def commit() -> None:
            with state.transaction():
                for cid in new:
                    state.set_status("alpha", cid, PUBLISHED, split="train")
                index_published(state, "alpha", new)

        commit_s, _ = cpu(commit)
        audit_s, clusters = cpu(lambda: join(index.pairs(), settings.threshold))
        size_bytes = sum(r[0] for r in state.db.execute(
            "SELECT pgsize FROM dbstat WHERE name LIKE 'work%'"))
        total_bytes = sum(r[0] for r in state.db.execute("SELECT pgsize FROM dbstat"))
        state.close()
    print(f"{size:,} documents + {len(new):,} new: scratch {scratch_s:.2f} CPU s "
          f"({scratch_clusters} works); indexed check {check_s:.3f} s "
          f"({len(verdict.clusters)} works of the dataset) + index update {commit_s:.3f} s; "
          f"index build {build_s:.2f} s; audit from stored pairs {audit_s:.3f} s "
          f"({len(clusters)} works); index {size_bytes / 2**20:.1f} MiB of a "
          f"{total_bytes / 2**20:.1f} MiB state")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--increment", type=float, default=0.01)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args.increment)


if __name__ == "__main__":
    main()
