#!/usr/bin/env python3
"""Benchmark a nightly-rebuild cycle at scale: full build, small increment, nothing new.

    python scripts/bench_scale.py DIR [--docs 10000] [--workers 2] [--keep WORKDIR]

DIR is realdocs-style (`manifest.jsonl` with gold abstracts, and the PDFs). N distinct
documents are made from its articles: copies with bytes appended after %%EOF, so each hashes
differently, each listed with its gold abstract. Then, on one output root:
1. a full build of the N documents;
2. an increment: +1 % new documents, 0.1 % changed (their PDF bytes change) and 0.1 % gone
   (their PDF is deleted: the run rejects them as unavailable and unpublishes them);
3. a re-run with nothing new;
4. the same documents read from another folder (a plain copy, so every file has a new time,
   and a renamed manifest): nothing is processed again, so it should cost what 3 costs, with
   the PDFs hashed once more.
For each step: wall time; CPU seconds of all processes (RUSAGE_CHILDREN); pages per CPU
second; peak RSS of the parent and of a worker (VmHWM sampled from /proc); bytes of the files
the step created or changed, per area; bytes on disk per area (shards, work, blobs, state);
`verify` wall time; `datasets.load_dataset` wall time (fresh cache) beside that of a copy with
one file per split; shard files per split; the card's and build.json's sizes. For the
increment it also reports the bytes a Hub upload of the new version would send
(scripts/hub_transfer.py: chunks cut as the Hub's storage cuts them, absent from the previous
version), and how many bytes of its new shards are shared with the previous version's shards.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from bench_e2e import timed_build
from hub_transfer import chunks, files_of, transfer
from loralay_build.config import OutputSettings
from loralay_build.corpus.split import SPLITS
from loralay_build.layout import OutputLayout
from loralay_build.state import State

AREAS = ("shards", "work", "blobs", "state")
FIRST_DAY = datetime.date(2005, 1, 1)
SPAN_DAYS = 20 * 365


FULL_RESULT = "full-build.json"  # the full build's measures, for --resume


def make_documents(folder: Path, pdfs: Path, start: int, count: int) -> list[dict[str, object]]:
    """Documents start..start+count-1: realdocs articles in turn, each copy distinct."""
    sources = []
    for raw in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        if record.get("doc_kind", "article") == "article" and record.get("abstracts"):
            sources.append(record)
    entries = []
    for n in range(start, start + count):
        record = sources[n % len(sources)]
        path = pdfs / f"doc{n:06d}.pdf"
        path.write_bytes((folder / record["file"]).read_bytes() + f"\n% copy {n}\n".encode())
        entries.append({
            "id": f"doc{n:06d}", "pdf": path.name, "language": record["language"],
            "abstracts": record["abstracts"], "published": record.get("date") or "",
            "title": record.get("title") or "",
        })
    return entries


def spread_dates(entries: list[dict[str, object]], rng: random.Random) -> None:
    """Dates spread evenly over 20 years, in an order unrelated to the ids, as in a corpus
    gathered from many sources. The realdocs dates would give all copies of one source
    article a single date: the last 12 months would be one article's copies, and a date
    ordering would set identical texts side by side, which compress as real ones never do."""
    order = rng.sample(range(len(entries)), len(entries))
    for rank, at in enumerate(order):
        entries[at]["published"] = day(rank * SPAN_DAYS // len(entries))


def day(offset: int) -> str:
    return (FIRST_DAY + datetime.timedelta(days=offset)).isoformat()


def write_manifest(path: Path, entries: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries))


def area_files(out: Path, dataset: str) -> dict[str, list[Path]]:
    layout = OutputLayout(out)
    return {
        "shards": sorted(layout.dataset(dataset).glob("*.parquet")),
        "work": sorted(p for p in layout.work.rglob("*") if p.is_file()),
        "blobs": sorted(p for p in layout.blobs.glob("??/*")),
        "state": sorted(layout.state_dir.glob("*.sqlite*")),
    }


def snapshot(out: Path, dataset: str) -> dict[str, dict[str, tuple[int, int, int]]]:
    """Per area: file -> (inode, size, mtime_ns), to tell what a step wrote. A link to a
    file of the input (a `local` PDF) counts 0 bytes: it takes no space of its own."""
    snap: dict[str, dict[str, tuple[int, int, int]]] = {}
    for area, files in area_files(out, dataset).items():
        snap[area] = {}
        for path in files:
            st = path.lstat()
            own = stat.S_ISREG(st.st_mode) and st.st_nlink == 1
            snap[area][str(path)] = (st.st_ino, st.st_size if own else 0, st.st_mtime_ns)
    return snap


def written(before: dict[str, dict[str, tuple[int, int, int]]],
            after: dict[str, dict[str, tuple[int, int, int]]]) -> dict[str, int]:
    """Bytes of the files a step created or changed: a file is the same one when its inode,
    size and time are, whatever its name (a kept shard is linked under a new name)."""
    return {area: sum(v[1] for v in after[area].values() if v not in set(before[area].values()))
            for area in AREAS}


def on_disk(snap: dict[str, dict[str, tuple[int, int, int]]]) -> dict[str, int]:
    return {area: sum(v[1] for v in snap[area].values()) for area in AREAS}


def run_build(manifest: Path, out: Path, workers: int, config: Path) -> dict[str, float]:
    return timed_build(["build-corpus", "local", "--input", str(manifest), "--out", str(out),
                        "--workers", str(workers), "--no-filter", "-q", "--config",
                        str(config)])


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env={**os.environ, **(env or {})})
    return time.perf_counter() - start


def pages(folder: Path) -> int:
    build = json.loads((folder / "build.json").read_text())
    return sum(sum(len(v) for v in pq.read_table(folder / f["name"], columns=["page_sizes"])
                   .column(0).to_pylist()) for f in build["files"])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shared_bytes(old: list[Path], new: list[Path]) -> tuple[int, int]:
    """Bytes of the `new` files found, chunk for chunk (cut as the Hub's storage cuts them),
    in the `old` ones; and their total."""
    known: set[bytes] = set()
    for path in old:
        known.update(chunks(path))
    shared = total = 0
    for path in new:
        for chunk, size in chunks(path).items():
            total += size
            shared += size if chunk in known else 0
    return shared, total


def rewrite_plain(paths: list[Path], folder: Path) -> list[Path]:
    """The same shards written again without content-defined chunking (the control)."""
    from loralay_build.config import OutputSettings
    from loralay_build.corpus.writer import write_shard

    folder.mkdir(exist_ok=True)
    settings = OutputSettings(content_defined_chunking=False)
    out = []
    for path in paths:
        table = pq.read_table(path)
        write_shard(folder / path.name, table.schema.remove_metadata(), [[table]], settings,
                    dict(table.schema.metadata or {}))
        out.append(folder / path.name)
    return out


def step(name: str, manifest: Path, out: Path, workers: int, config: Path, dataset: str,
         results: dict[str, dict[str, float]], cache: Path, light: bool = False) -> None:
    """One build and its measures; `light` leaves out verify and the reading times."""
    before = snapshot(out, dataset) if OutputLayout(out).has_state() else {a: {} for a in AREAS}
    result = run_build(manifest, out, workers, config)
    after = snapshot(out, dataset)
    folder = out / dataset
    result["pages"] = pages(folder)
    result["pages_per_cpu_s"] = result["pages"] / result["cpu"]
    result |= {f"written_{k}": v for k, v in written(before, after).items()}
    result |= {f"disk_{k}": v for k, v in on_disk(after).items()}
    build = json.loads((folder / "build.json").read_text())
    for split in SPLITS:
        result[f"files_{split}"] = sum(f["split"] == split for f in build["files"])
    result["card_bytes"] = (folder / "README.md").stat().st_size
    result["build_json_bytes"] = (folder / "build.json").stat().st_size
    result |= run_counts(out, dataset, ("processed", "changed", "moved"))
    if not light:
        result["verify_s"] = timed(["build-corpus", "verify", str(folder)])
        result["load_dataset_s"] = load_time(folder, cache / name)
        one = one_file_per_split(folder, cache / f"{name}-one-file")
        result["load_one_file_per_split_s"] = load_time(one, cache / f"{name}-one-file-cache")
        shutil.rmtree(cache)  # gigabytes at 10,000 documents
    results[name] = result
    print(f"{name}: {json.dumps({k: round(v, 2) for k, v in result.items()})}", flush=True)


def run_counts(out: Path, dataset: str, names: tuple[str, ...]) -> dict[str, float]:
    """Counts of the last run's record (documents processed, changed, moved)."""
    state = State(out)
    try:
        run = state.last_run(dataset) or {}
    finally:
        state.close()
    return {name: float(run.get("counts", {}).get(name, 0)) for name in names}


def load_time(folder: Path, cache: Path) -> float:
    """Wall seconds of `datasets.load_dataset(folder)` in a fresh process and cache."""
    code = f"import datasets; datasets.load_dataset({str(folder)!r})"
    return timed([sys.executable, "-c", code], {"HF_DATASETS_CACHE": str(cache)})


def one_file_per_split(folder: Path, copy: Path) -> Path:
    """The dataset's rows in one Parquet file per split, with a card naming them: what
    reading costs without the shard layout."""
    build = json.loads((folder / "build.json").read_text())
    copy.mkdir(parents=True, exist_ok=True)
    lines = ["---", "configs:", "- config_name: default", "  data_files:"]
    for split in SPLITS:
        names = [f["name"] for f in build["files"] if f["split"] == split]
        if names:
            table = pa.concat_tables(pq.read_table(folder / n) for n in names)
            pq.write_table(table, copy / f"{split}.parquet", compression="zstd")
            lines += [f"  - split: {split}", f"    path: {split}.parquet"]
    (copy / "README.md").write_text("\n".join([*lines, "---", ""]))
    return copy


# A corpus of papers grows by about 1 % a month (arXiv: some 20,000 submissions a month on
# about 2.4 million papers); 0.1 % a night is 3 % a month. (The uniform model adds 1 % a night,
# 37-fold a year: it measures a night's costs, not a month of them.)
NEW_RATE = 0.001
# A published document leaves its source when it is retracted or its file is withdrawn (arXiv
# replaces a withdrawn paper by a new version: a revision). About 4 in 10,000 papers are
# retracted over their lifetime (Brainard and You, Science 362, 2018); 0.002 % a night is
# 0.7 % of the corpus a year, well above that, to stand for vanished files too.
GONE_RATE = 0.00002


def dated(entry: dict[str, object]) -> str:
    return str(entry.get("published") or "")


def change(model: str, entries: list[dict[str, object]], alive: list[int], pdfs: Path,
           folder: Path, rng: random.Random, new_rate: float = NEW_RATE,
           gone_rate: float = GONE_RATE) -> list[dict[str, object]]:
    """One night's changes, applied to the PDFs; returns the new documents. `uniform`: +1 %
    new, 0.1 % changed and 0.1 % gone, scattered (the new ones over the whole span of dates).
    `realistic`: `new_rate` new (dated the day after the newest), 0.1 % revised among the
    documents of the last 12 months, and each document gone with probability `gone_rate`."""
    n = len(entries)
    small = max(1, n // 1000)
    added = max(1, n // 100 if model == "uniform" else round(n * new_rate))
    new = make_documents(folder, pdfs, n, added)
    if model == "uniform":
        for entry in new:
            entry["published"] = day(rng.randrange(SPAN_DAYS))
        revised = rng.sample(alive, small)
        gone = rng.sample([i for i in alive if i not in set(revised)], small)
    else:
        newest = max(dated(e) for e in entries)
        cutoff = f"{int(newest[:4]) - 1}{newest[4:]}"
        recent = [i for i in alive if dated(entries[i]) >= cutoff]
        revised = rng.sample(recent, min(small, len(recent)))
        gone = [i for i in alive if rng.random() < gone_rate and i not in set(revised)]
        for entry in new:
            entry["published"] = (datetime.date.fromisoformat(newest)
                                  + datetime.timedelta(days=1)).isoformat()
    for i in revised:  # other bytes, so another blob and work file
        path = pdfs / str(entries[i]["pdf"])
        path.write_bytes(path.read_bytes() + b"\n% revised\n")
    for i in gone:  # the file vanished after it was processed
        (pdfs / str(entries[i]["pdf"])).unlink()
        alive.remove(i)
    return new


def copy_folder(pdfs: Path, to: Path, name: str) -> Path:
    """The PDFs and their manifest copied as a plain copy does (each file gets a new time),
    the manifest renamed `name`: a nightly job reading a dated snapshot. Returns it."""
    shutil.copytree(pdfs, to, copy_function=shutil.copyfile)
    return (to / "docs.jsonl").rename(to / name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shard-rows", type=int, default=OutputSettings.shard_rows,
                        help="[output] shard_rows: smaller shards make increments cheaper")
    parser.add_argument("--row-group-rows", type=int, default=OutputSettings.row_group_rows,
                        help="[output] row_group_rows: the rows a run of row groups averages")
    parser.add_argument("--keep-work", action="store_true",
                        help="[store] keep_work = true: work files kept after publishing")
    parser.add_argument("--keep", type=Path, help="Work in this folder and keep it.")
    parser.add_argument("--model", choices=("uniform", "realistic"), default="uniform",
                        help="how the documents change each night (see `change`)")
    parser.add_argument("--new-rate", type=float, default=NEW_RATE,
                        help="realistic model: new documents a night, as a share of the corpus")
    parser.add_argument("--gone-rate", type=float, default=GONE_RATE,
                        help="realistic model: the chance that a document is gone on a night")
    parser.add_argument("--nights", type=int, default=1,
                        help="increments in a row; the first is measured in full")
    parser.add_argument("--resume", action="store_true",
                        help="with --keep: go on from the folder's last night, against the "
                             "full build it recorded (no new full build)")
    args = parser.parse_args()
    if args.resume and not (args.keep and (args.keep / FULL_RESULT).is_file()):
        parser.error("--resume needs --keep FOLDER of an earlier run")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    pdfs, out, cache = work / "pdf", work / "out", work / "cache"
    pdfs.mkdir(exist_ok=True)
    manifest = pdfs / "docs.jsonl"
    config = work / "bench.toml"
    config.write_text(f"[output]\nshard_rows = {args.shard_rows}\n"
                      f"row_group_rows = {args.row_group_rows}\n"
                      f"[store]\nkeep_work = {str(args.keep_work).lower()}\n")
    dataset = "local"
    try:
        results: dict[str, dict[str, float]] = {}
        if args.resume:
            entries = [json.loads(line) for line in manifest.read_text().splitlines()]
            alive = [i for i, entry in enumerate(entries) if (pdfs / str(entry["pdf"])).exists()]
            results["full"] = json.loads((work / FULL_RESULT).read_text())
            n = int(results["full"]["documents"])
        else:
            n = args.docs
            entries = make_documents(args.folder, pdfs, 0, n)
            spread_dates(entries, random.Random(0))
            write_manifest(manifest, entries)
            step("full", manifest, out, args.workers, config, dataset, results, cache)
            results["full"]["documents"] = n
            (work / FULL_RESULT).write_text(json.dumps(results["full"]))
            alive = list(range(n))
        old_shards = work / "previous-shards"
        shutil.rmtree(old_shards, ignore_errors=True)
        shutil.copytree(out / dataset, old_shards)
        rng = random.Random(len(entries) if args.resume else 1)
        nights: list[dict[str, float]] = []
        for night in range(1, args.nights + 1):
            previous_version = work / "previous-version"
            shutil.rmtree(previous_version, ignore_errors=True)
            shutil.copytree(out / dataset, previous_version)
            start = len(entries)
            entries += change(args.model, entries, alive, pdfs, args.folder, rng,
                              args.new_rate, args.gone_rate)
            alive += range(start, len(entries))
            write_manifest(manifest, entries)
            name = "increment" if night == 1 else f"night {night}"
            step(name, manifest, out, args.workers, config, dataset, results, cache,
                 light=night > 1)
            moved = transfer(files_of(previous_version), files_of(out / dataset))
            results[name]["hub_transfer_bytes"] = moved.sent
            results[name]["hub_transfer_pct"] = 100 * moved.sent / max(1, moved.total)
            nights.append(results.pop(name) if night > 1 else results[name])
        if args.nights > 1:
            written_total = sum(r["written_shards"] for r in nights)
            uploaded = sum(r["hub_transfer_bytes"] for r in nights)
            print(f"{args.nights} nights ({args.model}): shard bytes written by the increments "
                  f"{written_total / 1e6:.1f} MB = "
                  f"{written_total / nights[-1]['disk_shards']:.2f} x the final shards; Hub "
                  f"upload {uploaded / 1e6:.1f} MB in all, per night at most "
                  f"{max(r['hub_transfer_pct'] for r in nights):.2f} %; CPU per night at most "
                  f"{max(r['cpu'] for r in nights):.2f} s; files at most "
                  f"{'/'.join(str(max(r[f'files_{s}'] for r in nights)) for s in SPLITS)}",
                  flush=True)
        previous = sorted(old_shards.glob("*.parquet"))
        contents = {digest(p) for p in previous}
        added = [p for p in sorted((out / dataset).glob("*.parquet"))
                 if digest(p) not in contents]
        shared, total = shared_bytes(previous, added)
        results["increment"]["new_shard_bytes_shared_pct"] = 100 * shared / max(1, total)
        shared, total = shared_bytes(rewrite_plain(previous, work / "plain-old"),
                                     rewrite_plain(added, work / "plain-new"))
        results["increment"]["same_without_cdc_pct"] = 100 * shared / max(1, total)
        step("nothing new", manifest, out, args.workers, config, dataset, results, cache)
        elsewhere = copy_folder(pdfs, work / "pdf-moved", "snapshot.jsonl")
        step("moved folder", elsewhere, out, args.workers, config, dataset, results, cache,
             light=True)
        shutil.rmtree(elsewhere.parent)  # the state names it: a --resume night hashes again
        report(n, args.workers, args.shard_rows, args.row_group_rows, args.model, results)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def report(n: int, workers: int, shard_rows: int, group_rows: int, model: str,
           results: dict[str, dict[str, float]]) -> None:
    full = results["full"]
    print(f"\n{n} documents, --workers {workers}, shard_rows {shard_rows}, row_group_rows "
          f"{group_rows}; increment "
          f"({model}): +{max(1, n // 100)} new, {max(1, n // 1000)} changed, "
          f"{max(1, n // (1000 if model == 'uniform' else 5000))} gone")
    steps = list(results)
    print("| measure | " + " | ".join(steps) + " |")
    print("|---|" + "---|" * len(steps))
    keys = [k for k in results["increment"] if k != "pages"]
    for key in keys:
        cells = []
        for name in steps:
            value = results[name].get(key)
            if value is None:
                cells.append("")
            elif key.startswith(("written_", "disk_", "hub_transfer_bytes")):
                cells.append(f"{value / 1e6:.2f} MB")
            else:
                cells.append(f"{value:.2f}")
        print(f"| {key} | " + " | ".join(cells) + " |")
    inc = results["increment"]
    print(f"| increment CPU / full CPU | | {100 * inc['cpu'] / full['cpu']:.1f} % | |")
    print(f"| increment shard bytes / full | | "
          f"{100 * inc['written_shards'] / full['written_shards']:.1f} % | |")
    extra = full["disk_work"] + full["disk_state"]
    print(f"| (work + state) / shards | {extra / full['disk_shards']:.2f} | | |")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
