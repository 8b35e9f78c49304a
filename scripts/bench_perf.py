#!/usr/bin/env python3
"""Where a whole build's CPU goes, by process and by library, from `perf` samples.

    python scripts/bench_perf.py DIR [--copies 6] [--workers 2] [--top 25] [--keep FOLDER]
    python scripts/bench_perf.py DIR --floor [--rounds 3]

DIR is realdocs-style (`manifest.jsonl` + PDFs); its digital-born articles are copied as
bench_e2e.py copies them, and `python -m loralay_build.cli local --workers N` builds them under
`perf record` (Debian package `linux-perf`), which samples every process of the build at a
fixed rate of CPU time. Each sample is counted for its process's role (the parent, the
workers' fork server, the workers, other processes), found from the fork events perf records,
and for the library its instruction lies in, grouped (PDFium, the Python interpreter, the
allocators, the compiled core, CLD2, edlib, Arrow and Parquet, the kernel, the rest). The
shares are turned into CPU ms per page with the CPU every process of the build used
(RUSAGE_CHILDREN). The `--top` functions follow, by samples spent in them, over all processes.

Unlike Python-level profilers this sees inside PDFium and the other native libraries, and it
slows the build down little (the samples' own cost shows as kernel time). Python functions
show as the interpreter's own (Python 3.11 has no perf support for its frames):
bench_stages.py and bench_parent_cpu.py split those.

`--floor` samples PDFium's own floor instead (bench_parse.py's `floor`: open each PDF of
DIR/pdf, load each page and its text page, get the text) with call chains, and prints the
share of that CPU spent inside each of PDFium's steps, callees included: loading the page
(parsing its content), fonts, form XObjects, path objects, inline images, building the text
page. It bounds what a PDFium of our own could save, for instance by loading text alone.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pypdfium2 as pdfium

from bench_e2e import children_cpu, make_corpus

# library group -> patterns of the file names it covers (the first matching group wins)
GROUPS: dict[str, tuple[str, ...]] = {
    "PDFium": ("libpdfium",),
    "Python interpreter": ("libpython", "python3"),
    "allocators (mimalloc, C library malloc)": ("libmimalloc",),
    "compiled core": ("_native.",),
    "CLD2": ("_pycld2",),
    "edlib": ("edlib",),
    "Arrow, Parquet": ("libarrow", "libparquet", "pyarrow"),
    "numpy": ("_multiarray", "numpy"),
    "OpenSSL (sha256)": ("libcrypto",),
    "kernel": ("[kernel", "[vdso"),
    "C library (the rest)": ("libc.so", "libm.so", "ld-linux"),
}
# C library functions that are the allocator's, counted with mimalloc
MALLOC = re.compile(r"^(_int_malloc|_int_free|malloc|free|cfree|calloc|realloc|"
                    r"malloc_consolidate|unlink_chunk|_int_realloc|__libc_\w*alloc)\b")
FORK = re.compile(r"PERF_RECORD_FORK\((\d+):\d+\):\((\d+):\d+\)")
SAMPLE = re.compile(r"^\s*(\d+)\s+\S+\s+(.*?)\s+\((.*)\)\s*$")


def group_of(dso: str, symbol: str) -> str:
    if "libc.so" in dso and MALLOC.match(symbol):
        return "allocators (mimalloc, C library malloc)"
    name = Path(dso).name if dso.startswith("/") else dso
    for group, patterns in GROUPS.items():
        if any(p in name for p in patterns):
            return group
    return "other"


def roles(forks: dict[int, int], root: int) -> dict[int, str]:
    """Each process's role: the root is the parent; a child of the root with children of
    its own is the fork server, and those children are workers."""
    children: dict[int, list[int]] = {}
    for child, parent in forks.items():
        children.setdefault(parent, []).append(child)
    role = {root: "parent"}
    for child in children.get(root, []):
        if children.get(child):
            role[child] = "fork server"
            for worker in children[child]:
                role[worker] = "workers"
    return role


def perf_record(data: Path, command: list[str], call_chains: bool = False,
                accepted: tuple[int, ...] = (0,)) -> None:
    """Run `command` under `perf record` into `data`; a clear stop when perf or the command
    fails (an exit code outside `accepted`)."""
    chains = ["-g"] if call_chains else []
    done = subprocess.run(["perf", "record", "-q", *chains, "-F", "999", "-o", str(data), "--",
                           *command], check=False)
    if done.returncode not in accepted:
        raise SystemExit(f"perf record or {command[0]} failed (exit {done.returncode}); "
                         "perf needs /proc/sys/kernel/perf_event_paranoid <= 2 or root")


def record(manifest: Path, out: Path, workers: int, data: Path) -> float:
    """Build under `perf record`; the CPU seconds of every process of the build."""
    before = children_cpu()
    perf_record(data, [sys.executable, "-m", "loralay_build.cli", "local", "--input",
                       str(manifest), "--out", str(out), "--workers", str(workers),
                       "--no-filter", "-q"],
                accepted=(0, 3))  # 3: the build rejected some documents
    return children_cpu() - before


def samples(data: Path) -> tuple[Counter[tuple[str, str]], Counter[str]]:
    """Samples per (role, group), and per function over all processes."""
    text = subprocess.run(
        ["perf", "script", "-i", str(data), "--show-task-events", "-F", "pid,ip,sym,dso"],
        check=True, capture_output=True, text=True).stdout
    forks: dict[int, int] = {}
    root = 0
    counted: list[tuple[int, str, str]] = []
    for line in text.splitlines():
        if "PERF_RECORD_FORK" in line:
            found = FORK.search(line)
            if found and found.group(1) != found.group(2):  # a process, not a thread
                forks[int(found.group(1))] = int(found.group(2))
            continue
        if "PERF_RECORD" in line:
            continue
        match = SAMPLE.match(line)
        if match:
            pid = int(match.group(1))
            root = root or pid
            counted.append((pid, match.group(2), match.group(3)))
    role = roles(forks, root)
    by_group: Counter[tuple[str, str]] = Counter()
    by_symbol: Counter[str] = Counter()
    for pid, symbol, dso in counted:
        by_group[role.get(pid, "other processes"), group_of(dso, symbol)] += 1
        by_symbol[f"{symbol} ({Path(dso).name})"] += 1
    return by_group, by_symbol


# PDFium's steps in the floor: label -> functions whose inclusive samples are the step's
FLOOR_STEPS: dict[str, tuple[str, ...]] = {
    "load the page (FPDF_LoadPage)": ("FPDF_LoadPage",),
    "  parse its content": ("CPDF_StreamContentParser::Parse",),
    "  fonts (CPDF_Font::Create)": ("CPDF_Font::Create",),
    "  form XObjects (may hold text)": ("CPDF_StreamContentParser::AddForm",),
    "  path objects": ("CPDF_StreamContentParser::ParsePathObject",
                       "CPDF_StreamContentParser::AddPathObject",
                       "CPDF_StreamContentParser::Handle_MoveTo",
                       "CPDF_StreamContentParser::Handle_LineTo",
                       "CPDF_StreamContentParser::Handle_CurveTo_123",
                       "CPDF_StreamContentParser::Handle_Rectangle",
                       "CPDF_StreamContentParser::AddPathPoint"),
    "  inline images": ("CPDF_StreamContentParser::Handle_BeginImage",),
    "  text objects": ("CPDF_StreamContentParser::AddTextObject",),
    "build the text page (FPDFText_LoadPage)": ("FPDFText_LoadPage",),
    "close pages and text pages": ("FPDF_ClosePage", "FPDFText_ClosePage"),
}


def floor_profile(folder: Path, rounds: int, data: Path) -> None:
    """Sample PDFium's floor with call chains and print each step's inclusive share."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
            "from bench_parse import floor_pages; "
            "files = sorted(Path(sys.argv[2]).glob('*.pdf')); "
            "[floor_pages(files, 300) for _ in range(int(sys.argv[3]))]")
    perf_record(data, [sys.executable, "-c", code, str(Path(__file__).parent),
                       str(folder / "pdf"), str(rounds)], call_chains=True)
    text = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,sym"], check=True,
                          capture_output=True, text=True).stdout
    total = 0
    inside: Counter[str] = Counter()
    for stack in text.split("\n\n"):  # a sample's chain: one "address symbol" line a frame
        frames = {parts[1].split("(")[0] for line in stack.splitlines()
                  if len(parts := line.split(None, 1)) == 2}
        if not frames:
            continue
        total += 1
        for label, functions in FLOOR_STEPS.items():
            inside[label] += any(f in frames for f in functions)
    print(f"PDFium's floor on {folder / 'pdf'}, {rounds} rounds, {total} samples")
    print("| step (callees included) | share of the floor's CPU |")
    print("|---|---|")
    for label in FLOOR_STEPS:
        print(f"| {label} | {100 * inside[label] / max(total, 1):.1f} % |")
    steps = sum(n for label, n in inside.items() if not label.startswith(" "))  # disjoint
    print(f"| the rest (interpreter, ctypes, opening documents) | "
          f"{100 * (total - steps) / max(total, 1):.1f} % |")


def page_count(pdfs: Path) -> int:
    total = 0
    for path in sorted(pdfs.glob("*.pdf")):
        pdf = pdfium.PdfDocument(str(path))
        total += len(pdf)
        pdf.close()
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--copies", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--keep", type=Path, help="build here and keep it (with perf.data)")
    parser.add_argument("--floor", action="store_true", help="profile PDFium's floor instead")
    parser.add_argument("--rounds", type=int, default=3, help="passes over DIR/pdf (--floor)")
    args = parser.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("perf is not installed (Debian package linux-perf)")
    if args.floor:
        with tempfile.TemporaryDirectory(prefix="bench_perf-") as tmp:
            floor_profile(args.folder, args.rounds, Path(tmp) / "perf.data")
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench_perf-"))
    try:
        pdfs, manifest = make_corpus(args.folder, work, args.copies)
        cpu = record(manifest, work / "out", args.workers, work / "perf.data")
        by_group, by_symbol = samples(work / "perf.data")
        pages = page_count(pdfs)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    total = sum(by_group.values())
    per_page = 1000 * cpu / pages / total  # ms per page of one sample

    print(f"{pages} pages, {cpu:.2f} CPU s, {total} samples; CPU ms per page")
    print("| role | library | ms / page | share |")
    print("|---|---|---|---|")
    for role in ("parent", "fork server", "workers", "other processes"):
        rows = sorted(((n, g) for (r, g), n in by_group.items() if r == role), reverse=True)
        for n, group in rows:
            print(f"| {role} | {group} | {n * per_page:.3f} | {100 * n / total:.1f} % |")
        if rows:
            n = sum(n for n, _ in rows)
            print(f"| {role} | **all** | **{n * per_page:.3f}** | {100 * n / total:.1f} % |")
    print(f"\ntop {args.top} functions, all processes")
    for symbol, n in by_symbol.most_common(args.top):
        print(f"{n * per_page:7.3f} ms  {100 * n / total:5.1f} %  {symbol}")


if __name__ == "__main__":
    main()
