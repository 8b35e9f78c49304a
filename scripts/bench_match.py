#!/usr/bin/env python3
"""Benchmark abstract finding on a folder of PDFs with gold abstracts.

Usage: python scripts/bench_match.py DIR [--rounds N] [--cache DIR]

DIR holds `manifest.jsonl` (fields `file`, `abstracts` {lang: text}, `language`,
`doc_kind`, optional `abstracts_in_metadata_not_printed`) and the PDFs it names. Three
methods are compared: the engine (`strip_abstracts`), the faithful LoRaLay cascade, and
fuzzysearch alone (max_l_dist=20) on the whole document. Each (method, body scale) runs
in a fresh process, rounds are interleaved, and per-document CPU times
(`time.process_time`) are the median over rounds. Scales 2x and 4x append other
documents' words to every body.

A printed abstract counts as found when the method reports it and, after removing the
reported span(s), at most 10% of its word 5-grams remain in the 150 words on either side
of a removal, and no more than twice the abstracts' length was removed.

Leakage (share of an abstract's word 5-grams still in the kept words) is reported three
ways. "body" counts the whole body, including sentences authors legitimately reuse in the
introduction or conclusion; "local" counts the 150 words either side of a removal, which
still includes the title and a translated title; "edge" counts only abstract words left
at the edges of a removal: 5-grams in a run of consecutive abstract 5-grams that begins
or ends within 5 tokens of a removed span (a heading or a page number may sit between). Negative
documents are searched for three abstracts of other documents; any hit there is a false
positive.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fuzzysearch

from loralay_build.errors import Reject
from loralay_build.text import MatchSettings, leakage_summary, strip_abstracts
from loralay_build.text.faithful import locate_faithful
from loralay_build.text.leakage import Leakage, ngrams
from loralay_build.text.match import Body, Match, query_tokens, search
from loralay_build.text.normalize import normalise_words

METHODS = ("engine", "faithful", "fuzzysearch20")
SCALES = (1, 2, 4)
FOUND_MAX_LEAKAGE = 0.1  # local leakage allowed for "found"
NEAR = 150  # words each side of a removal that count as "local"
EDGE_SLACK = 5  # tokens between a removal and a run of abstract 5-grams that still count as "edge"
WORST = 10  # documents listed with their leakage
COPIES_ALLOWED = 2  # removed words may reach twice the abstracts' size (one repeated copy)
Words = tuple[list[str], list[int]]


def extractor(reading_order: bool) -> str:
    """The project's PDFium parser when it is available, else plain pdfplumber."""
    try:
        from loralay_build.parse import parse_pdf  # noqa: F401
    except ImportError:
        return "pdfplumber"
    return "pdfium-ordered" if reading_order else "pdfium"


def extract_words(pdf: Path, name: str) -> Words:
    """Words and page indices of a PDF; "pdfium" keeps the engine's order within a page."""
    if name == "pdfplumber":
        return _pdfplumber_words(pdf)
    from loralay_build.parse import ParseSettings, parse_pdf

    settings = ParseSettings(reading_order=name == "pdfium-ordered")
    doc = parse_pdf(pdf, backend="pdfium", settings=settings)
    return list(doc.words), list(doc.word_pages)


def _pdfplumber_words(pdf: Path) -> Words:
    import pdfplumber

    words: list[str] = []
    pages: list[int] = []
    with pdfplumber.open(pdf) as handle:
        for index, page in enumerate(handle.pages):
            for w in page.extract_words(x_tolerance_ratio=0.15):
                words.append(w["text"])
                pages.append(index)
    return words, pages


def load_corpus(folder: Path, cache: Path, reading_order: bool) -> list[dict[str, Any]]:
    """Manifest records with their words attached, extracting each PDF once per cache."""
    cache.mkdir(parents=True, exist_ok=True)
    name = extractor(reading_order)
    docs = []
    for line in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        pdf = folder / record["file"]
        key = hashlib.sha256(pdf.read_bytes()).hexdigest()[:24]
        cached = cache / f"{key}.{name}.json"
        if cached.exists():
            words, pages = json.loads(cached.read_text(encoding="utf-8"))
        else:
            words, pages = extract_words(pdf, name)
            cached.write_text(json.dumps([words, pages]), "utf-8")
        record["words"], record["word_pages"] = words, pages
        docs.append(record)
    return docs


def scaled(docs: Sequence[dict[str, Any]], i: int, scale: int) -> Words:
    """Document i's words followed by other documents' words, to `scale` times its length."""
    words, pages = list(docs[i]["words"]), list(docs[i]["word_pages"])
    target = scale * len(words)
    j = i
    while len(words) < target:
        j = (j + 1) % len(docs)
        if j == i:
            break
        offset = pages[-1] + 1 if pages else 0
        take = target - len(words)
        words += docs[j]["words"][:take]
        pages += [p + offset for p in docs[j]["word_pages"][:take]]
    return words, pages


Found = dict[str, Match | None]
Outcome = tuple[Found, list[int]]  # per-language match, and the indices of the words kept


def kept_outside(n: int, found: Found) -> list[int]:
    removed = bytearray(n)
    for m in found.values():
        if m is not None:
            removed[m.word_start : m.word_end] = b"\x01" * (m.word_end - m.word_start)
    return [i for i in range(n) if not removed[i]]


def run_engine(words: Words, abstracts: dict[str, str], main: str) -> Outcome:
    settings = MatchSettings()
    try:
        result = strip_abstracts(words[0], words[1], abstracts, main, settings)
    except Reject:
        body = Body(words[0])
        found = {lang: search(query_tokens(text), body, settings).found()
                 for lang, text in abstracts.items()}
        return found, kept_outside(len(words[0]), found)
    return {
        r.lang: Match(r.word_start, r.word_end, r.distance, r.method) if r.found else None
        for r in result.matches
    }, result.keep


def run_faithful(words: Words, abstracts: dict[str, str], main: str) -> Outcome:
    settings = MatchSettings(mode="faithful")
    found = {lang: locate_faithful(text, words[0], words[1], settings)
             for lang, text in abstracts.items()}
    return found, kept_outside(len(words[0]), found)


def run_fuzzysearch(words: Words, abstracts: dict[str, str], main: str) -> Outcome:
    lowered = [w.lower() for w in words[0]]
    text = " ".join(lowered)
    starts, pos = [], 0
    for w in lowered:
        starts.append(pos)
        pos += len(w) + 1
    out: Found = {}
    for lang, abstract in abstracts.items():
        near = fuzzysearch.find_near_matches(abstract.lower(), text, max_l_dist=20)
        if not near:
            out[lang] = None
            continue
        first = next(i for i, s in enumerate(starts) if s + len(lowered[i]) > near[0].start)
        last = max(i for i, s in enumerate(starts) if s < near[0].end)
        out[lang] = Match(first, last + 1, near[0].dist, "fuzzysearch")
    return out, kept_outside(len(words[0]), out)


RUNNERS: dict[str, Callable[[Words, dict[str, str], str], Outcome]] = {
    "engine": run_engine,
    "faithful": run_faithful,
    "fuzzysearch20": run_fuzzysearch,
}


def main_language(doc: dict[str, Any]) -> str:
    abstracts = doc["abstracts"]
    return str(doc["language"]) if doc["language"] in abstracts else sorted(abstracts)[0]


@dataclass(frozen=True)
class Corpus:
    """Where the documents are, where their words are cached, and which word order is used."""

    folder: Path
    cache: Path
    reading_order: bool

    def load(self) -> list[dict[str, Any]]:
        return load_corpus(self.folder, self.cache, self.reading_order)


def worker(corpus: Corpus, method: str, scale: int) -> None:
    """Run one method at one scale over the corpus and print per-document results as JSON."""
    docs = corpus.load()
    runner = RUNNERS[method]
    out = []
    for i, doc in enumerate(docs):
        words = scaled(docs, i, scale)
        printed = dict(doc["abstracts"])
        if doc.get("doc_kind") == "negative" or not printed:
            others = [d for d in docs if d["abstracts"]]
            foreign = {f"x{k}": next(iter(others[(i * 7 + k) % len(others)]["abstracts"].values()))
                       for k in range(3)}
            t0 = time.process_time()
            found, _ = runner(words, foreign, sorted(foreign)[0])
            ms = 1000 * (time.process_time() - t0)
            out.append({"id": doc["id"], "negative": True, "ms": ms,
                        "false_positives": sum(m is not None for m in found.values())})
            continue
        abstracts = {**doc.get("abstracts_in_metadata_not_printed", {}), **printed}
        t0 = time.process_time()
        found, keep = runner(words, abstracts, main_language(doc))
        ms = 1000 * (time.process_time() - t0)
        out.append({"id": doc["id"], "negative": False, "ms": ms,
                    **judge(words[0], doc, found, keep)})
    json.dump(out, sys.stdout)


def judge(words: list[str], doc: dict[str, Any], found: Found, keep: list[int]) -> dict[str, Any]:
    """Whether every printed abstract was found and removed, and the residual leakage.

    Authors often reuse abstract sentences in the introduction or conclusion, so leakage
    over the whole body is reported as is, while "found" uses the local leakage: abstract
    n-grams in the kept words next to a removed span, where a partial removal would leave
    them.
    """
    kept = normalise_words([words[i] for i in keep]).texts
    audit = Leakage(kept, 5)
    queries = {lang: query_tokens(text) for lang, text in doc["abstracts"].items()}
    leaks = [audit.share(q) for q in queries.values()]
    local = Leakage(normalise_words([words[i] for i in near_removed(keep)]).texts, 5)
    local_leaks = [local.share(q) for q in queries.values()]
    budget = sum(1.3 * len(q) + 10 for q in queries.values())
    size_ok = len(words) - len(keep) <= COPIES_ALLOWED * budget
    ok = size_ok and all(found.get(lang) is not None for lang in queries)
    ok = ok and max(local_leaks) <= FOUND_MAX_LEAKAGE
    not_printed = doc.get("abstracts_in_metadata_not_printed", {})
    hits = sum(found.get(lang) is not None for lang in not_printed)
    edge = [edge_leakage(words, keep, q) for q in queries.values()]
    return {"all_found": ok, "leakage": leaks, "local_leakage": local_leaks,
            "edge_leakage": edge, "not_printed_hits": hits}


def edge_leakage(words: list[str], keep: list[int], query: list[str], n: int = 5) -> float:
    """Share of the abstract's n-grams left at the edges of a removal.

    Leaked n-grams are grouped into runs of consecutive positions in the kept tokens; a
    run counts when it begins or ends within EDGE_SLACK tokens of a removed span, i.e.
    when abstract words continue right where the removal stopped.
    """
    grams = ngrams(query, n)
    if not grams or not keep:
        return 0.0
    kept = normalise_words([words[i] for i in keep])
    toks = kept.texts
    cuts = {j + 1 for j in range(len(keep) - 1) if keep[j + 1] > keep[j] + 1}
    if keep[0] > 0:
        cuts.add(0)
    if keep[-1] < len(words) - 1:
        cuts.add(len(keep))
    gaps = sorted({t for t, w in enumerate(kept.first_word) if w in cuts}
                  | ({len(toks)} if len(keep) in cuts else set()))
    hits = [t for t in range(len(toks) - n + 1) if tuple(toks[t : t + n]) in grams]
    leaked: set[tuple[str, ...]] = set()
    run_start = 0
    for k, t in enumerate(hits):
        if k + 1 < len(hits) and hits[k + 1] == t + 1:
            continue  # the run goes on
        a, b = hits[run_start], t + n  # tokens [a, b) of the run
        if any(a - EDGE_SLACK <= g <= b + EDGE_SLACK for g in gaps):
            leaked.update(tuple(toks[i : i + n]) for i in range(a, t + 1))
        run_start = k + 1
    return len(leaked) / len(grams)


def near_removed(keep: list[int]) -> list[int]:
    """Kept word indices within NEAR words of a gap left by a removal."""
    near: set[int] = set()
    for j in range(len(keep) - 1):
        if keep[j + 1] > keep[j] + 1:
            near.update(keep[max(0, j + 1 - NEAR) : j + 1 + NEAR])
    return sorted(near)


def spawn(corpus: Corpus, method: str, scale: int) -> list[dict[str, Any]]:
    cmd = [sys.executable, __file__, str(corpus.folder), "--cache", str(corpus.cache),
           "--worker", method, "--scale", str(scale)]
    if corpus.reading_order:
        cmd.append("--reading-order")
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: list[dict[str, Any]] = json.loads(done.stdout)
    return result


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(corpus: Corpus, rounds: int) -> None:
    corpus.load()  # extract once, outside the timed workers
    runs: dict[tuple[str, int], list[list[dict[str, Any]]]] = {}
    for r in range(rounds):
        for scale in SCALES:
            for method in METHODS:
                print(f"round {r + 1}/{rounds} scale {scale}x {method}", file=sys.stderr)
                runs.setdefault((method, scale), []).append(spawn(corpus, method, scale))
    header = ("| method | docs with all printed abstracts found | false positives (negatives) "
              "| median ms/doc | p90 ms | max ms | 2x / 1x | 4x / 1x | mean leakage (body) "
              "| mean leakage (local) | mean leakage (edge) |")
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    speed: dict[str, float] = {}
    for method in METHODS:
        medians = {}
        for scale in SCALES:
            per_doc = list(zip(*runs[(method, scale)], strict=True))
            medians[scale] = [statistics.median(d["ms"] for d in doc_runs) for doc_runs in per_doc]
        first = runs[(method, 1)][0]
        positives = [d for d in first if not d["negative"]]
        found = sum(d["all_found"] for d in positives)
        fps = sum(d["false_positives"] for d in first if d["negative"])
        leaks = [x for d in positives for x in d["leakage"]]
        local = [x for d in positives for x in d["local_leakage"]]
        edge = [x for d in positives for x in d["edge_leakage"]]
        all_ms = [d["ms"] for run in runs[(method, 1)] for d in run]
        m1 = statistics.median(medians[1])
        speed[method] = m1
        print(f"| {method} | {found}/{len(positives)} ({100 * found / len(positives):.1f}%) "
              f"| {fps} | {m1:.2f} | {pct(medians[1], 0.9):.2f} | {max(all_ms):.1f} "
              f"| {statistics.median(medians[2]) / m1:.2f} "
              f"| {statistics.median(medians[4]) / m1:.2f} "
              f"| {100 * leakage_summary(leaks)['mean']:.2f}% "
              f"| {100 * leakage_summary(local)['mean']:.2f}% "
              f"| {100 * leakage_summary(edge)['mean']:.2f}% |")
    print(f"\nengine speed-up vs fuzzysearch20: {speed['fuzzysearch20'] / speed['engine']:.1f}x; "
          f"vs faithful: {speed['faithful'] / speed['engine']:.1f}x")
    first = runs[("engine", 1)][0]
    missed = [d["id"] for d in first if not d["negative"] and not d["all_found"]]
    print(f"engine misses: {missed}")
    stray = sum(d.get("not_printed_hits", 0) for d in first)
    print(f"engine hits on not-printed abstracts: {stray}")
    worst = sorted((d for d in first if not d["negative"]),
                   key=lambda d: -max(d["edge_leakage"] + d["local_leakage"]))[:WORST]
    print("\nengine, worst documents (leakage per abstract, %: edge / local / body):")
    for d in worst:
        cells = zip(d["edge_leakage"], d["local_leakage"], d["leakage"], strict=True)
        print(f"  {d['id']}: " + ", ".join(f"{100 * e:.2f} / {100 * lo:.2f} / {100 * b:.2f}"
                                          for e, lo, b in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "loralay_bench_words")
    parser.add_argument("--reading-order", action="store_true",
                        help="use the parser's column-aware order instead of the engine's")
    parser.add_argument("--worker", choices=METHODS)
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args()
    corpus = Corpus(args.folder, args.cache, args.reading_order)
    if args.worker:
        worker(corpus, args.worker, args.scale)
    else:
        report(corpus, args.rounds)


if __name__ == "__main__":
    main()
