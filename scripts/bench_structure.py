"""How well the rows' `sections` and `word_roles` match gold structure, and what they cost.

Runs every document of a development set (`scripts/structure_devset.py` builds it) through
the build's per-document steps (parse, abstracts removed when the realdocs manifest gives
them), then the structure detector, and reports per language, per layout and overall:

- section titles, the multiset of printed headings against the gold's (order and hierarchy
  ignored, as GROBID's benchmarks count them): precision, recall and F1, *strict* (the same
  string) and *soft* (numbering stripped, then the same tokens or a Ratcliff/Obershelp
  similarity of at least 0.8);
- level accuracy: the share of soft-matched headings whose level equals the gold's;
- section of the words: the share of words whose section is the gold's (gold headings
  located in the word stream, each word in the section of the last one before it);
- role precision and recall of caption, footnote and reference list words, on the
  documents whose gold lists such elements (gold texts located in the word stream);
- CPU: the detector's milliseconds per page, and its share of a build worker's CPU for the
  same documents (`run.process.process_document`, the whole per-document work: parse,
  abstract removal, language, structure, the row, MinHash), on the documents whose
  abstracts the realdocs manifest gives; the parent's share of a build (state, shards) is
  not counted, so the share is an upper bound. Each document's worker run and detector run
  alternate `--repeat` times and each counts by its median, so that load from other
  processes weighs on both alike; the detector gets the body's box array made, as the
  row builder has made it before it runs.

With `--build N`, it also runs a whole `local` build of the realdocs folder in this process
(serial executor, default settings, after one warm-up build that pays the imports) and
reports the build's CPU, the detector's part of it (timed around each call) and what the
detector adds to the build without it: the share of a build that users pay, the parent's
state, shards and card included.

    python3 scripts/structure_devset.py /work/shared/realdocs /work/shared/fixtures /tmp/devset
    python3 scripts/bench_structure.py /tmp/devset --realdocs /work/shared/realdocs [--build 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import loralay_build.run.process as worker
from loralay_build.cli import main as cli
from loralay_build.errors import Reject
from loralay_build.parse import ParseSettings, parse_pdf
from loralay_build.records import Candidate, Document
from loralay_build.run.isolation import set_worker_collector
from loralay_build.run.process import Task, process_document
from loralay_build.sandbox.realdocs import realdocs_manifest
from loralay_build.structure import Role, detect_structure
from loralay_build.structure.headings import numbering
from loralay_build.text import MatchSettings, strip_abstracts

ROLES = {"captions": Role.CAPTION, "footnotes": Role.FOOTNOTE, "references": Role.REFERENCE}


def norm_token(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if ch.isalnum())


def soft_title(title: str) -> str:
    """Numbering stripped, lower case, accents and punctuation dropped."""
    words = title.split()
    _, taken = numbering(words)
    words = words[taken:]
    if words and re.fullmatch(r"(제\s*)?\d+(\s*장)?|chapter|제\d+장", words[0].lower()):
        words = words[1:]
    return " ".join(t for t in (norm_token(w) for w in words) if t)


def soft_equal(a: str, b: str) -> bool:
    x, y = soft_title(a), soft_title(b)
    if not x or not y:
        return x == y
    return x == y or x.replace(" ", "") == y.replace(" ", "") or SequenceMatcher(
        None, x, y).ratio() >= 0.8


def strict_equal(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def match_titles(predicted: list[str], gold: list[str], equal: Any) -> list[tuple[int, int]]:
    """(predicted index, gold index) pairs, each used once, in the predicted order."""
    used: set[int] = set()
    pairs = []
    for i, title in enumerate(predicted):
        for j, other in enumerate(gold):
            if j not in used and equal(title, other):
                used.add(j)
                pairs.append((i, j))
                break
    return pairs


def locate(tokens: list[str], text: str, start: int = 0) -> int:
    """First position at or after `start` where the text's first tokens run in `tokens`."""
    wanted = [t for t in (norm_token(w) for w in text.split()) if t][:6]
    if not wanted:
        return -1
    k = len(wanted)
    for i in range(start, len(tokens) - k + 1):
        if tokens[i] == wanted[0] and tokens[i:i + k] == wanted:
            return i
    return -1


@dataclass
class Counts:
    docs: int = 0
    pages: int = 0
    pred: int = 0
    gold: int = 0
    soft: int = 0
    strict: int = 0
    level_ok: int = 0
    words: int = 0
    words_ok: int = 0
    role: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    cpu_structure: float = 0.0
    cpu_pages: int = 0  # pages of the documents whose worker CPU was measured
    cpu_worker_structure: float = 0.0
    cpu_worker: float = 0.0

    def add(self, other: Counts) -> None:
        for name in ("docs", "pages", "pred", "gold", "soft", "strict", "level_ok", "words",
                     "words_ok", "cpu_structure", "cpu_pages", "cpu_worker_structure",
                     "cpu_worker"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for key, (tp, pred, gold) in other.role.items():
            mine = self.role[key]
            mine[0] += tp
            mine[1] += pred
            mine[2] += gold


def _prf(hit: int, pred: int, gold: int) -> tuple[float, float, float]:
    p = hit / pred if pred else 0.0
    r = hit / gold if gold else 0.0
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


def body_of(entry: dict[str, Any], manifest: dict[str, Any]) -> Document:
    doc = parse_pdf(entry["pdf"], settings=ParseSettings())
    record = manifest.get(entry["id"]) or {}
    abstracts = record.get("abstracts") or {}
    if abstracts:
        main = record["language"] if record["language"] in abstracts else next(iter(abstracts))
        try:
            stripped = strip_abstracts(doc.words, doc.word_pages, abstracts, main,
                                       MatchSettings())
            doc = doc.select(stripped.keep)
        except Reject:
            pass
    return doc


def worker_task(entry: dict[str, Any], manifest: dict[str, Any]) -> Task | None:
    """The build worker's task for the document; None without abstracts (the worker would
    reject it)."""
    record = manifest.get(entry["id"]) or {}
    abstracts = record.get("abstracts") or {}
    if not abstracts:
        return None
    main = record["language"] if record["language"] in abstracts else next(iter(abstracts))
    cand = Candidate(id=f"local:{entry['id']}", source="local", source_id=entry["id"],
                     dataset="local", title=record.get("title", ""), language=main,
                     abstracts=abstracts, file_url=entry["pdf"])
    digest = hashlib.sha256(Path(entry["pdf"]).read_bytes()).hexdigest()
    return Task(cand, entry["pdf"], digest, ParseSettings(), MatchSettings())


def cpu_medians(doc: Document, task: Task | None, repeat: int) -> tuple[float, float | None]:
    """Median CPU seconds of the detector on `doc` and of the worker's whole work on `task`
    (None without a task or when the worker rejects it), their runs alternating."""
    doc.box_array()
    structure: list[float] = []
    worker: list[float] = []
    for _ in range(repeat):
        if task is not None:
            start = time.process_time()
            outcome = process_document(task)
            worker.append(time.process_time() - start)
            if outcome.row is None:
                task = None
        start = time.process_time()
        detect_structure(doc)
        structure.append(time.process_time() - start)
    return statistics.median(structure), (statistics.median(worker) if task else None)


def evaluate(entry: dict[str, Any], manifest: dict[str, Any], verbose: bool,
             repeat: int = 5) -> Counts:
    counts = Counts(docs=1)
    doc = body_of(entry, manifest)
    words_before = list(doc.words)
    structure = detect_structure(doc)
    if doc.words != words_before:
        raise AssertionError(f"{entry['id']}: the detector changed the words")
    counts.pages = len(doc.pages)
    counts.cpu_structure, worker = cpu_medians(doc, worker_task(entry, manifest), repeat)
    if worker is not None:
        counts.cpu_pages = counts.pages
        counts.cpu_worker = worker
        counts.cpu_worker_structure = counts.cpu_structure
    titled = [s for s in structure.sections if s["title"] is not None]
    predicted = [s["title"] for s in titled]
    gold = [s["title"] for s in entry["sections"]]
    counts.pred, counts.gold = len(predicted), len(gold)
    soft = match_titles(predicted, gold, soft_equal)
    counts.soft = len(soft)
    counts.strict = len(match_titles(predicted, gold, strict_equal))
    counts.level_ok = sum(titled[i]["level"] == entry["sections"][j]["level"] for i, j in soft)
    tokens = [norm_token(w) for w in doc.words]
    # Gold section starts: a matched heading's own position, else the title found in the words.
    starts: list[tuple[int, str]] = []
    matched = {j: titled[i]["word_start"] for i, j in soft}
    position = 0
    for j, title in enumerate(gold):
        at = matched.get(j, -1)
        if at < 0:
            at = locate(tokens, soft_title(title) or title, position)
        if at >= 0:
            starts.append((at, title))
            position = at + 1
    starts.sort()
    sections = structure.sections
    k = g = 0
    current: str | None = None
    for i in range(len(doc.words)):
        while k + 1 < len(sections) and sections[k + 1]["word_start"] <= i:
            k += 1
        while g < len(starts) and starts[g][0] <= i:
            current = starts[g][1]
            g += 1
        mine = sections[k]["title"] if sections else None
        counts.words += 1
        counts.words_ok += (mine is None and current is None) or (
            mine is not None and current is not None and soft_equal(mine, current))
    roles = structure.roles
    for key, role in ROLES.items():
        texts = entry.get(key) or []
        if not texts:
            continue
        gold_words: set[int] = set()
        cursor = 0
        for text in texts:
            at = locate(tokens, text, cursor if key == "references" else 0)
            if at < 0:
                continue
            size = len(text.split())
            gold_words.update(range(at, min(at + size, len(tokens))))
            if key == "references":
                cursor = at + 1
        if not gold_words:
            continue
        pred_words = {i for i in range(len(roles)) if roles[i] == role}
        stats = counts.role[key]
        stats[0] += len(pred_words & gold_words)
        stats[1] += len(pred_words)
        stats[2] += len(gold_words)
    if verbose:
        p, r, f = _prf(counts.soft, counts.pred, counts.gold)
        print(f"# {entry['id']}: soft P {p:.2f} R {r:.2f} F1 {f:.2f}")
        hit = {i for i, _ in soft}
        for i, s in enumerate(titled):
            print(f"   {'+' if i in hit else '-'} L{s['level']} {s['title'][:70]}")
        found = {j for _, j in soft}
        for j, s in enumerate(entry["sections"]):
            if j not in found:
                print(f"   missed L{s['level']} {s['title'][:70]}")
    return counts


def report(groups: dict[str, Counts]) -> str:
    head = ("| group | docs | pages | soft P | soft R | soft F1 | strict F1 | level acc | "
            "words in right section | caption P/R | footnote P/R | reference P/R | "
            "structure ms/page | structure share of worker CPU |")
    lines = [head, "|" + "---|" * 14]
    for name, c in groups.items():
        _, _, soft_f = _prf(c.soft, c.pred, c.gold)
        sp, sr, _ = _prf(c.soft, c.pred, c.gold)
        _, _, strict_f = _prf(c.strict, c.pred, c.gold)
        level = c.level_ok / c.soft if c.soft else 0.0
        words = c.words_ok / c.words if c.words else 0.0
        roles = []
        for key in ROLES:
            tp, pred, gold = c.role.get(key, (0, 0, 0))
            roles.append(f"{tp / pred:.2f}/{tp / gold:.2f}" if gold and pred else
                         ("-/0.00" if gold else "n/a"))
        ms = 1000 * c.cpu_structure / c.pages if c.pages else 0.0
        share = c.cpu_worker_structure / c.cpu_worker if c.cpu_worker else 0.0
        lines.append(f"| {name} | {c.docs} | {c.pages} | {sp:.3f} | {sr:.3f} | {soft_f:.3f} | "
                     f"{strict_f:.3f} | {level:.3f} | {words:.3f} | {' | '.join(roles)} | "
                     f"{ms:.2f} | {100 * share:.1f}% |")
    return "\n".join(lines)


def _cpu() -> float:
    """CPU seconds of this process and its children, every thread."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def build_share(realdocs: Path, rounds: int) -> str:
    """A whole `local` build's CPU and the detector's part of it, medians of `rounds`
    builds after a warm-up one."""
    detect = worker.detect_structure
    spent = [0.0]

    def timed(doc: Document) -> Any:
        start = time.process_time()
        try:
            return detect(doc)
        finally:
            spent[0] += time.process_time() - start

    worker.detect_structure = timed  # type: ignore[assignment]
    set_worker_collector()  # the collector as a build's worker runs it
    totals, parts = [], []
    with tempfile.TemporaryDirectory() as work:
        manifest = Path(work) / "manifest.jsonl"
        docs = realdocs_manifest(realdocs, manifest)
        for round_ in range(rounds + 1):
            spent[0] = 0.0
            start = _cpu()
            try:
                cli.main(["local", "--input", str(manifest), "--out", f"{work}/out{round_}",
                          "--executor", "serial", "--allow-outside", "-q"],
                         standalone_mode=False)
            except SystemExit as exc:
                if exc.code not in (0, None):
                    raise
            if round_:
                totals.append(_cpu() - start)
                parts.append(spent[0])
    worker.detect_structure = detect
    total, part = statistics.median(totals), statistics.median(parts)
    return (f"whole build of {docs} realdocs (serial, medians of {rounds}): {total:.2f} CPU-s, "
            f"structure {part:.3f} CPU-s = {100 * part / total:.1f}% of the build, "
            f"adding {100 * part / (total - part):.1f}% to it")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("devset", type=Path, help="folder written by structure_devset.py")
    parser.add_argument("--realdocs", type=Path, help="realdocs folder (its abstracts)")
    parser.add_argument("--only", default="", help="run only the ids holding this text")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every heading")
    parser.add_argument("--repeat", type=int, default=5,
                        help="alternating worker and detector runs per document (medians)")
    parser.add_argument("--build", type=int, default=0, metavar="ROUNDS",
                        help="also time ROUNDS whole builds of --realdocs (see above)")
    args = parser.parse_args(argv)
    if args.build and not args.realdocs:
        parser.error("--build needs --realdocs")
    manifest: dict[str, Any] = {}
    if args.realdocs:
        for line in (args.realdocs / "manifest.jsonl").open():
            record = json.loads(line)
            manifest[record["id"]] = record
    entries = [json.loads(p.read_text()) for p in sorted(args.devset.glob("*.json"))]
    entries = [e for e in entries if args.only in e["id"]]
    if not entries:
        print(f"no document in {args.devset}", file=sys.stderr)
        return 1
    groups: dict[str, Counts] = defaultdict(Counts)
    for entry in entries:
        counts = evaluate(entry, manifest, args.verbose, max(1, args.repeat))
        for name in ("all", f"lang {entry['language']}", f"layout {entry['layout']}",
                     f"gold {entry['origin']}"):
            groups[name].add(counts)
        if entry["origin"] != "rendered":
            groups["all real PDFs"].add(counts)
    print(report(dict(sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])))))
    if args.build:
        print(build_share(args.realdocs, args.build))
    return 0


if __name__ == "__main__":
    sys.exit(main())
