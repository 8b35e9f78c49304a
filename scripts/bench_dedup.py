"""Near-duplicate detection on a realdocs-style folder: signing cost, recall and false pairs.

    python scripts/bench_dedup.py ../shared/realdocs [--rounds 3] [--generated 200]

- Signing: CPU milliseconds per document of `text.minhash.signature`, and of datasketch's
  MinHash over the same shingles when datasketch is importable (medians of interleaved rounds).
- Recall: each real PDF is typeset again (its body words set as new paragraphs, two columns,
  another font size) and parsed again; a pair counts as found when the banded index proposes
  it and its estimated Jaccard reaches the threshold.
- False pairs: pairs found among the distinct originals, and among generated papers that
  share one template and vocabulary (the sandbox's prose), over all their pairs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loralay_build.config import DedupSettings
from loralay_build.parse import parse_pdf
from loralay_build.sandbox.koreascience import KOREAN_FONT
from loralay_build.sandbox.pdfgen import ArticleSpec, render_article
from loralay_build.sandbox.textgen import ProseGenerator
from loralay_build.text.minhash import (
    NUM_PERM,
    SHINGLE,
    Signature,
    _words,
    signature,
    similar_pairs,
)


def retypeset(words: list[str], title: str, folder: Path, name: str) -> list[str]:
    """The same text set again: new paragraphs, two columns, parsed back."""
    chunks = [" ".join(words[i:i + 150]) for i in range(0, len(words), 150)]
    hangul = any("\uac00" <= c <= "\ud7a3" for w in words[:200] for c in w)
    spec = ArticleSpec(title=title, authors=["A. Author"], abstracts=[],
                       sections=[("", chunks)], columns=2, font=KOREAN_FONT if hangul else "")
    path = folder / f"{name}.pdf"
    path.write_bytes(render_article(spec))
    return parse_pdf(str(path)).words


def datasketch_signer() -> Any:
    try:
        from datasketch import MinHash
    except ImportError:
        return None

    def sign(words: list[str]) -> Any:
        tokens = _words(words)
        shingles = {" ".join(tokens[i:i + SHINGLE]).encode()
                    for i in range(len(tokens) - SHINGLE + 1)}
        minhash = MinHash(num_perm=NUM_PERM)
        minhash.update_batch(list(shingles))
        return minhash

    return sign


def cpu_ms(sign: Any, docs: list[list[str]]) -> float:
    start = time.process_time()
    for words in docs:
        sign(words)
    return 1000 * (time.process_time() - start) / len(docs)


def found_share(pairs: list[tuple[str, str]], sigs: dict[str, Signature],
                threshold: float) -> float:
    found = {(a, b) for a, b, _ in similar_pairs(sigs, threshold)}
    return sum(1 for pair in pairs if pair in found) / max(1, len(pairs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--generated", type=int, default=200)
    parser.add_argument("--threshold", type=float, default=DedupSettings.threshold)
    args = parser.parse_args()
    manifest = [json.loads(line) for line in
                (args.folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    originals = {m["id"]: parse_pdf(str(args.folder / m["file"])).words for m in manifest}
    with tempfile.TemporaryDirectory() as tmp:
        again = {k: retypeset(words, "Another setting", Path(tmp), k)
                 for k, words in originals.items() if len(words) > 50}
    docs = list(originals.values())
    signers: dict[str, Any] = {"numpy (project)": signature}
    other = datasketch_signer()
    if other is not None:
        signers["datasketch 2.x"] = other
    timings: dict[str, list[float]] = {name: [] for name in signers}
    for _ in range(args.rounds):  # interleaved rounds
        for name, sign in signers.items():
            timings[name].append(cpu_ms(sign, docs))
    sigs: dict[str, Signature] = {}
    for key, words in originals.items():
        sig = signature(words)
        if sig is not None:
            sigs[f"o/{key}"] = sig
    for key, words in again.items():
        sig = signature(words)
        if sig is not None:
            sigs[f"r/{key}"] = sig
    true_pairs = [(f"o/{k}", f"r/{k}") for k in again if f"r/{k}" in sigs and f"o/{k}" in sigs]
    recall = found_share(true_pairs, sigs, args.threshold)
    all_found = {(a, b) for a, b, _ in similar_pairs(sigs, args.threshold)}
    distinct = [(a, b) for a, b in itertools.combinations(sorted(sigs), 2)
                if a.split("/", 1)[1] != b.split("/", 1)[1]]
    false_real = sum(1 for pair in distinct if pair in all_found)
    generated: dict[str, Signature] = {}
    for i in range(args.generated):
        gen = ProseGenerator(10_000 + i)
        words = " ".join(gen.paragraph("en", 7) for _ in range(12)).split()
        sig = signature(words)
        if sig is not None:
            generated[f"g{i}"] = sig
    start = time.process_time()
    false_generated = len(similar_pairs(generated, args.threshold))
    index_ms = 1000 * (time.process_time() - start)
    n_gen_pairs = len(generated) * (len(generated) - 1) // 2
    words_per_doc = statistics.fmean(len(d) for d in docs)
    print(f"documents: {len(docs)} real ({words_per_doc:.0f} words each), "
          f"{len(generated)} generated; threshold {args.threshold}")
    for name, values in timings.items():
        print(f"signing, {name}: {statistics.median(values):.2f} ms/doc "
              f"[{min(values):.2f}-{max(values):.2f}]")
    print(f"recall (re-typeset real PDFs): {recall:.3f} of {len(true_pairs)} pairs")
    print(f"false pairs, real distinct: {false_real} of {len(distinct)}")
    print(f"false pairs, generated from one template: {false_generated} of {n_gen_pairs} "
          f"({100 * false_generated / max(1, n_gen_pairs):.2f}%); index {index_ms:.0f} ms")


if __name__ == "__main__":
    main()
