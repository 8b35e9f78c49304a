"""Generated documents for the matcher tests: pseudo-words, an abstract inside a body, PDF noise."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SYLLABLES = [
    "ka", "lo", "mi", "ter", "fi", "fl", "an", "dro", "sel", "vu", "pra", "ne", "tos",
    "ri", "gal", "be", "cor", "du", "xen", "pho", "lin", "ta", "que", "sim", "ol", "ex",
]
HEADER = ["Journal", "of", "Generated", "Studies", "12", "(2024)"]


def vocabulary(rng: random.Random, size: int = 1500) -> list[str]:
    """Pseudo-words of one to four syllables (some with "fi"/"fl", for ligatures)."""
    words = {"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 4))) for _ in range(size)}
    return sorted(words)


def sentence_words(rng: random.Random, vocab: list[str], n: int) -> list[str]:
    """n words with a capital at the start of each sentence and a full stop at its end."""
    out: list[str] = []
    while len(out) < n:
        length = min(rng.randint(8, 18), n - len(out))
        sentence = [rng.choice(vocab) for _ in range(length)]
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        out += sentence
    return out


@dataclass
class Doc:
    """PDF words with pages, and where the abstract really is."""

    words: list[str]
    pages: list[int]
    start: int
    end: int
    abstract: str
    noise: list[str] = field(default_factory=list)


def pdf_noise(rng: random.Random, words: list[str], kinds: set[str]) -> list[str]:
    """The abstract as a PDF text layer would give it; the first and last 3 words stay intact.

    Swapped lines stay 20 words from the edges: a swap at the very start or end of an
    abstract can leave its first or last words in the body (a known limit of the engine).
    """
    out = list(words)
    inner = range(3, max(3, len(out) - 3))
    if "swap" in kinds and len(out) > 60:
        i = rng.randrange(20, len(out) - 36)
        out[i : i + 16] = out[i + 8 : i + 16] + out[i : i + 8]
    if "ligature" in kinds:
        out = [w.replace("fi", "\ufb01").replace("fl", "\ufb02") for w in out]
    if "space" in kinds:
        for _ in range(3):
            i = rng.choice(inner[:-1])
            if i + 1 < len(out) - 3:
                out[i : i + 2] = [out[i] + out[i + 1]]
    if "hyphen" in kinds or "pdfium" in kinds:
        mark = "\x02" if "pdfium" in kinds else "-"
        for _ in range(4):
            i = rng.randrange(3, len(out) - 3)
            w = out[i]
            if len(w) >= 6 and w.isalpha() and w.islower():
                k = rng.randint(2, len(w) - 3)
                out[i : i + 1] = [w[:k] + mark, w[k:]]
    if "header" in kinds:
        i = rng.randrange(10, len(out) - 10)
        out[i:i] = HEADER
    return out


def make_doc(seed: int, kinds: set[str], *, body_words: int = 1500) -> Doc:
    """A generated document with one abstract at a random place and the given noise."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    clean = sentence_words(rng, vocab, rng.randint(60, 160))
    printed = pdf_noise(rng, clean, kinds)
    before = sentence_words(rng, vocab, rng.randint(20, body_words // 2))
    after = sentence_words(rng, vocab, body_words)
    words = [*before, *printed, *after]
    start, end = len(before), len(before) + len(printed)
    per_page = 350
    pages = [i // per_page for i in range(len(words))]
    if "pagebreak" in kinds:
        middle = start + len(printed) // 2
        pages = [p + (1 if i >= middle else 0) for i, p in enumerate(pages)]
    return Doc(words, pages, start, end, " ".join(clean), sorted(kinds))


def other_abstract(seed: int, n: int = 100) -> str:
    """An abstract drawn from the same vocabulary that is not in the document."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    rng2 = random.Random(seed + 10_000)
    return " ".join(sentence_words(rng2, vocab, n))
