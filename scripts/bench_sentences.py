#!/usr/bin/env python3
"""Sentence splitters compared on gold sentence boundaries: quality and speed per language.

    python scripts/bench_sentences.py FILE.conllu... [--rounds 3]

Gold comes from Universal Dependencies treebanks (`# text =` lines; documents by
`# newdoc id` or, in the PUD treebanks, by the sentence id's first six characters), e.g.
UD_<Language>-PUD `*_pud-ud-test.conllu` (the same 1,000 sentences in every language) and
UD_English-GUM's academic documents. A file's language is the start of its name (`fr_…`).

Each document's sentences are joined with single spaces; every splitter that is installed
(sentencex, pysbd, syntok, blingfire) cuts the text again. Reported per language: boundary
precision, recall and F1 (a boundary is the character offset where a sentence ends, the
last one of a document not counted), and the splitter's speed in characters per CPU second
(best of the rounds). Gold sentences without a final stop (headings, list items) are left
out, since no splitter can tell them apart once joined.
"""

from __future__ import annotations

import argparse
import importlib
import re
import time
from collections.abc import Callable
from pathlib import Path

Splitter = Callable[[str, str], list[str]]
FINAL = re.compile(r"[.!?…。？！][\"'”’»)\]]*$")
# pysbd's languages (its `languages` module): Portuguese and Korean are not among them.
PYSBD_LANGS = {"en", "hi", "mr", "zh", "es", "am", "ar", "hy", "bg", "ur", "ru", "pl", "fa",
               "nl", "da", "fr", "my", "el", "it", "ja", "de", "kk", "sk"}


def documents(path: Path) -> list[list[str]]:
    """The file's documents, each a list of gold sentences."""
    docs: dict[str, list[str]] = {}
    current = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# newdoc id"):
            current = line.split("=", 1)[1].strip()
        elif line.startswith("# sent_id") and "newdoc" not in path.name:
            sent_id = line.split("=", 1)[1].strip()
            if sent_id[:1] in "nw" and sent_id[1:].isdigit():
                current = sent_id[:6]  # PUD: n01001011 -> document n01001
        elif line.startswith("# text ="):
            text = " ".join(line.split("=", 1)[1].split())
            if FINAL.search(text):
                docs.setdefault(current, []).append(text)
    return [d for d in docs.values() if len(d) > 1]


def boundaries(text: str, sentences: list[str]) -> set[int]:
    """End offsets of `sentences` located in order in `text` (the last one left out)."""
    ends: list[int] = []
    at = 0
    squeezed = re.sub(r"\s+", "", text)
    position = [i for i, ch in enumerate(text) if not ch.isspace()]
    for sentence in sentences:  # matched without whitespace: splitters may change spaces
        piece = re.sub(r"\s+", "", sentence)
        if not piece:
            continue
        found = squeezed.find(piece, at)
        if found < 0:
            continue
        at = found + len(piece)
        ends.append(position[at - 1] + 1)
    return set(ends[:-1])


def _sentencex() -> Splitter:
    sentencex = importlib.import_module("sentencex")
    return lambda text, lang: list(sentencex.segment(lang, text))


def _pysbd() -> Splitter:
    pysbd = importlib.import_module("pysbd")
    made: dict[str, object] = {}

    def split(text: str, lang: str) -> list[str]:
        key = lang if lang in PYSBD_LANGS else "en"
        if key not in made:
            made[key] = pysbd.Segmenter(language=key, clean=False)
        return list(made[key].segment(text))  # type: ignore[attr-defined]

    return split


def _syntok() -> Splitter:
    segmenter = importlib.import_module("syntok.segmenter")

    def split(text: str, lang: str) -> list[str]:
        return ["".join(t.spacing + t.value for t in sentence).strip()
                for paragraph in segmenter.process(text) for sentence in paragraph]

    return split


def _blingfire() -> Splitter:
    blingfire = importlib.import_module("blingfire")
    return lambda text, lang: str(blingfire.text_to_sentences(text)).split("\n")


CANDIDATES: dict[str, Callable[[], Splitter]] = {
    "sentencex": _sentencex, "pysbd": _pysbd, "syntok": _syntok, "blingfire": _blingfire}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    splitters: dict[str, Splitter] = {}
    for name, make in CANDIDATES.items():
        try:
            splitters[name] = make()
        except ImportError:
            print(f"{name}: not installed, skipped")
    print("| language | docs | sentences | splitter | P | R | F1 | chars/CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for path in args.files:
        lang = path.name.split("_")[0]
        docs = documents(path)
        texts = [" ".join(doc) for doc in docs]
        gold = [boundaries(text, doc) for text, doc in zip(texts, docs, strict=True)]
        chars = sum(len(t) for t in texts)
        for name, split in splitters.items():
            best = float("inf")
            found: list[list[str]] = []
            for _ in range(args.rounds):
                start = time.process_time()
                found = [split(text, lang) for text in texts]
                best = min(best, time.process_time() - start)
            hits = guessed = wanted = 0
            for text, want, got in zip(texts, gold, found, strict=True):
                mine = boundaries(text, got)
                hits += len(mine & want)
                guessed += len(mine)
                wanted += len(want)
            p, r = hits / max(1, guessed), hits / max(1, wanted)
            f1 = 2 * p * r / max(1e-9, p + r)
            label = path.name.removesuffix(".conllu")
            note = "" if name != "pysbd" or lang in PYSBD_LANGS else " (en rules)"
            print(f"| {label} | {len(docs)} | {sum(len(d) for d in docs)} | {name}{note} | "
                  f"{p:.3f} | {r:.3f} | {f1:.3f} | {chars / max(best, 1e-9):,.0f} |")


if __name__ == "__main__":
    main()
