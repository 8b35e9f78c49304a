#!/usr/bin/env python3
"""Benchmark the PDF backends: CPU, pages/s/core, peak RSS, word agreement, reading order.

Every (backend, round) runs in a fresh child process; CPU is the child's RUSAGE_SELF plus
RUSAGE_CHILDREN, so `pdftotext` subprocesses count. "start s" is the part of a Python
child's CPU spent before its first file (interpreter start and imports), which a
long-running worker pays once: "warm" is the ratio to pdftotext without it (pdftotext is
a process per file, so its start stays counted). Rounds are interleaved and medians
reported. `pdftotext -bbox-layout` alone (output discarded) is timed as the reference.
`pdfium` runs the compiled core when it is built, `pdfium-python` the Python loop
(`LORALAY_NATIVE=0`), `floor` only what PDFium itself costs (load page, text page,
`FPDFText_GetText`); pdfplumber runs on the first `--subset` files only, so compare it in
pages/s.

With `--against SRC` (another checkout's `src` folder) its pdfium backend runs too, as
`pdfium@against`, interleaved with the others: a change is measured within one run.
`pdfium@workers` is the pdfium backend with the malloc a build's workers run with (`[run]
allocator`, preloaded as run/allocator.py does): parsing as a build pays for it. pdftotext
keeps the C library's malloc, as a user runs it.

    python scripts/bench_parse.py DIR [--backend pdfium --backend poppler] [--rounds 3]
        [--subset 8] [--manifest DIR/../manifest.jsonl] [--big FILE] [--against SRC]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

REFERENCE = "pdftotext"
FLOOR = "floor"
PYTHON_PATH = "pdfium-python"  # the pdfium backend with the compiled core disabled
AGAINST = "pdfium@against"  # the pdfium backend of the --against source tree
WORKERS = "pdfium@workers"  # the pdfium backend with the workers' allocator
SUBSET = {"pdfplumber"}  # backends run on the first --subset files only
DEFAULT_BACKENDS = ["pdfium", PYTHON_PATH, FLOOR, "poppler", "pdfplumber"]


def floor_pages(files: list[Path], max_pages: int) -> int:
    """PDFium's own cost: open, load each page and its text page, get the text, close."""
    import ctypes

    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pages = 0
    for path in files:
        try:
            pdf = pdfium.PdfDocument(str(path))
        except pdfium.PdfiumError:
            continue
        try:
            if len(pdf) > max_pages:
                continue
            for index in range(len(pdf)):
                page = raw.FPDF_LoadPage(pdf.raw, index)
                textpage = raw.FPDFText_LoadPage(page)
                count = raw.FPDFText_CountChars(textpage)
                buffer = ctypes.create_string_buffer(4 * max(count, 0) + 4)
                raw.FPDFText_GetText(textpage, 0, count,
                                     ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
                raw.FPDFText_ClosePage(textpage)
                raw.FPDF_ClosePage(page)
                pages += 1
        finally:
            pdf.close()
    return pages


def child(backend: str, folder: Path, out: Path | None, max_pages: int, limit: int) -> None:
    """Parse every PDF of `folder`; print CPU, pages and RSS as JSON; dump words if asked."""
    pages = 0
    words: dict[str, list[list[str]]] = {}
    failures: dict[str, str] = {}
    files = sorted(folder.glob("*.pdf"))[:limit]
    start = 0.0
    if backend == REFERENCE:
        for path in files:
            subprocess.run(["pdftotext", "-q", "-bbox-layout", str(path), "/dev/null"], check=False)
    elif backend == FLOOR:
        import pypdfium2  # noqa: F401  (imported before `start`, as the backends are)

        start = _cpu()
        pages = floor_pages(files, max_pages)
    else:
        from loralay_build.errors import Reject
        from loralay_build.parse import ParseSettings, parse_pdf
        from loralay_build.parse.backend import get_backend

        settings = ParseSettings(max_pages=max_pages)
        engine = "pdfium" if backend == PYTHON_PATH else backend
        get_backend(engine)  # its module imported before `start`
        start = _cpu()
        for path in files:
            try:
                doc = parse_pdf(path, engine, settings)
            except Reject as exc:
                failures[path.name] = str(exc)
                continue
            pages += len(doc.pages)
            if out is not None:
                per_page: list[list[str]] = [[] for _ in doc.pages]
                for word, page in zip(doc.words, doc.word_pages, strict=True):
                    per_page[page].append(word)
                words[path.name] = per_page
    cpu = _cpu()
    rss = max(_own_peak_mib(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    if out is not None:
        out.write_text(json.dumps(words))
    print(json.dumps({"cpu": cpu, "start": start, "pages": pages, "rss": rss,
                      "failures": failures}))


def _cpu() -> float:
    """CPU seconds of this process and of its finished children."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def _own_peak_mib() -> float:
    """Peak RSS of this process image (VmHWM); ru_maxrss would keep the forking parent's."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(
    backend: str, folder: Path, out: Path | None, max_pages: int = 300, limit: int = 10**9,
    against: Path | None = None,
) -> dict[str, object]:
    argv = [
        sys.executable,
        __file__,
        "--child",
        "pdfium" if backend in (AGAINST, WORKERS) else backend,
        str(folder),
        "--max-pages",
        str(max_pages),
        "--limit",
        str(limit),
    ]
    if out is not None:
        argv += ["--out", str(out)]
    env = {**os.environ, "LORALAY_NATIVE": "0"} if backend == PYTHON_PATH else None
    if backend == AGAINST:
        env = {**os.environ, "PYTHONPATH": str(against)}
    if backend == WORKERS:
        env = {**os.environ, "LD_PRELOAD": workers_allocator()}
    done = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def workers_allocator() -> str:
    """The file of the malloc library a build's workers preload; a clear stop without it."""
    from loralay_build.config import RunSettings
    from loralay_build.run.allocator import resolve

    library = resolve(RunSettings().allocator)
    if not library:
        raise SystemExit(f"{WORKERS}: the workers' allocator {RunSettings().allocator} is not "
                         "installed (Debian: libmimalloc2.0)")
    return library


def norm(word: str) -> str:
    return unicodedata.normalize("NFKC", word)


def agreement(a: dict[str, list[list[str]]], b: dict[str, list[list[str]]]) -> float:
    """Share of a's words (multiset per page, NFKC) that b also yields on the same page."""
    shared = total = 0
    for name, pages in a.items():
        other = b.get(name)
        if other is None:
            continue
        for k, words in enumerate(pages):
            mine = Counter(norm(w) for w in words)
            theirs = Counter(norm(w) for w in other[k]) if k < len(other) else Counter()
            total += sum(mine.values())
            shared += sum((mine & theirs).values())
    return shared / total if total else 0.0


_TOKEN = re.compile(r"\w+")


def tokens(words: list[str]) -> list[str]:
    """Normalised tokens, line-end hyphens joined to the next lowercase word."""
    joined: list[str] = []
    for word in words:
        if joined and joined[-1].endswith("-") and word[:1].islower():
            joined[-1] = joined[-1][:-1] + word
        else:
            joined.append(word)
    text = unicodedata.normalize("NFKC", " ".join(joined)).casefold()
    return _TOKEN.findall(text)


def abstract_contiguous(doc_words: list[str], abstract: str) -> float:
    """Share of the abstract's tokens in its longest contiguous run in the document."""
    doc, query = tokens(doc_words), tokens(abstract.split())
    if not query:
        return 0.0
    matcher = SequenceMatcher(a=doc, b=query, autojunk=False)
    match = matcher.find_longest_match(0, len(doc), 0, len(query))
    return match.size / len(query)


def order_check(folder: Path, manifest: Path) -> None:
    from loralay_build.parse import parse_pdf

    rows = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    two = [r for r in rows if r.get("layout") in ("two-column", "three-column") and r["abstracts"]]
    print(
        "\nReading order: main abstract contiguous (>= 0.9 of its tokens in one run),",
        len(two),
        "docs",
    )
    good = {True: 0, False: 0}
    for row in two:
        lang = (
            row["language"] if row["language"] in row["abstracts"] else next(iter(row["abstracts"]))
        )
        path = folder / Path(row["file"]).name
        results = {}
        for reading_order in (True, False):
            from loralay_build.parse import ParseSettings

            doc = parse_pdf(path, settings=ParseSettings(reading_order=reading_order))
            results[reading_order] = abstract_contiguous(doc.words, row["abstracts"][lang])
        for key in good:
            good[key] += results[key] >= 0.9
        print(
            f"  {row['id']:<40} {row['layout']:<13} ordered {results[True]:.2f}",
            f" engine order {results[False]:.2f}",
        )
    print(
        f"  contiguous: {good[True]}/{len(two)} with reading order,",
        f"{good[False]}/{len(two)} in engine order",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--backend", action="append")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--manifest", type=Path)
    parser.add_argument("--big", type=Path, help="a many-page PDF for the peak-RSS check")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--max-pages", type=int, default=300, help=argparse.SUPPRESS)
    parser.add_argument("--subset", type=int, default=8, help="files for pdfplumber")
    parser.add_argument("--limit", type=int, default=10**9, help=argparse.SUPPRESS)
    parser.add_argument("--against", type=Path, help="another checkout's src folder")
    args = parser.parse_args()
    if args.against and not (args.against / "loralay_build" / "parse").is_dir():
        parser.error(f"{args.against} holds no loralay_build package")
    if args.child:
        child(args.child, args.folder, args.out, args.max_pages, args.limit)
        return
    # pdftotext is always measured, as the reference.
    backends = [b for b in args.backend or DEFAULT_BACKENDS if b != REFERENCE]
    if args.against:
        backends.append(AGAINST)
    names = [REFERENCE, *backends]
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in names}
    words: dict[str, dict[str, list[list[str]]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name in names:
                dump = round_ == 0 and name not in (REFERENCE, FLOOR)
                out = Path(tmp) / f"{name}.json" if dump else None
                limit = args.subset if name in SUBSET else 10**9
                runs[name].append(run_child(name, args.folder, out, limit=limit,
                                            against=args.against))
                if out is not None:
                    words[name] = json.loads(out.read_text())
    full = [name for name in backends if name not in SUBSET]
    pages = max((int(r["pages"]) for name in full for r in runs[name]), default=0)  # type: ignore[call-overload]
    ref_rate = pages / statistics.median(float(r["cpu"]) for r in runs[REFERENCE])  # type: ignore[arg-type]
    print(
        f"{len(list(args.folder.glob('*.pdf')))} PDFs, {pages} pages, {args.rounds} rounds"
        f" (median, interleaved); {', '.join(sorted(SUBSET & set(backends))) or '-'}"
        f" on the first {args.subset} files"
    )
    print(
        f"{'backend':<14} {'CPU s':>7} {'min-max':>13} {'pages':>6} {'pages/s/core':>13} "
        f"{'vs pdftotext':>13} {'start s':>8} {'warm':>6} {'peak RSS MiB':>13} {'rejected':>9}"
    )
    for name in names:
        cpus = [float(r["cpu"]) for r in runs[name]]  # type: ignore[arg-type]
        cpu = statistics.median(cpus)
        own = int(runs[name][0]["pages"]) if name in SUBSET else pages  # type: ignore[call-overload]
        rss = statistics.median(float(r["rss"]) for r in runs[name])  # type: ignore[arg-type]
        rejected = len(runs[name][0]["failures"])  # type: ignore[arg-type]
        start = statistics.median(float(r["start"]) for r in runs[name])  # type: ignore[arg-type]
        rate = own / cpu if cpu else 0.0
        warm = own / (cpu - start) if cpu > start else 0.0
        print(
            f"{name:<14} {cpu:7.2f} {min(cpus):6.2f}-{max(cpus):<6.2f} {own:6d} {rate:13.1f} "
            f"{rate / ref_rate:12.2f}x {start:8.2f} {warm / ref_rate:5.2f}x {rss:13.0f} "
            f"{rejected:>9}"
        )
    for other, label in ((PYTHON_PATH, "compiled core and Python loop"),
                         (AGAINST, "this tree and --against"),
                         (WORKERS, "C library malloc and the workers'")):
        if "pdfium" in words and other in words:
            same = words["pdfium"] == words[other]
            print(f"\n{label}: {'identical' if same else 'DIFFERENT'} words")
    backends = [name for name in backends if name in words]
    print("\nWord agreement (share of row's words also yielded by column, per page, NFKC multiset)")
    print(f"{'':<14}" + "".join(f"{b:>15}" for b in backends))
    for a in backends:
        print(f"{a:<14}" + "".join(f"{agreement(words[a], words[b]):15.4f}" for b in backends))
    for name in backends:
        failures = runs[name][0]["failures"]
        if failures:
            print(f"{name} rejected: {failures}")
    if args.manifest and args.manifest.exists():
        order_check(args.folder, args.manifest)
    if args.big:
        print(f"\nPeak RSS on {args.big.name} (max_pages=5000), fresh child per backend:")
        with tempfile.TemporaryDirectory() as tmp:
            link = Path(tmp) / args.big.name
            link.symlink_to(args.big.resolve())
            for name in backends:
                r = run_child(name, Path(tmp), None, max_pages=5000)
                cpu, rss = float(r["cpu"]), float(r["rss"])  # type: ignore[arg-type]
                print(f"  {name:<12} pages {r['pages']}  CPU {cpu:.2f} s  peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
