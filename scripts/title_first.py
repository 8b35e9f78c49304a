"""How many documents of a realdocs-style folder start with their title in reading order.

Usage: python scripts/title_first.py DIR [-v]
DIR holds `manifest.jsonl` (`id`, `file`, `title`, `language`, `abstracts`). Each PDF is parsed
and cleaned with the `local` source's settings. Reports three counts: the word stream starts
with the title; the title comes before the main abstract; the title is found at all in the
first 300 words. With -v, one line per document that does not start with its title.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

from loralay_build.errors import Reject
from loralay_build.parse import clean_document, parse_pdf
from loralay_build.sources import load_settings

HEAD_WORDS = 300
PREFIX_CHARS = 30  # the title's first characters, once normalised, locate it
SLACK_CHARS = 0  # characters allowed before the title for it to count as "first"


def normalise(text: str) -> str:
    """Letters and digits only, casefolded, accents and ligatures decomposed."""
    text = unicodedata.normalize("NFKD", text).casefold()
    return "".join(c for c in text if c.isalnum())


def positions(words: list[str], title: str, abstract: str) -> tuple[int, int]:
    """Character offsets of the title and of the abstract in the normalised head; -1 if absent."""
    head = normalise(" ".join(words[:HEAD_WORDS]))
    title_at = head.find(normalise(title)[:PREFIX_CHARS]) if normalise(title) else -1
    abstract_at = head.find(normalise(abstract)[:PREFIX_CHARS]) if normalise(abstract) else -1
    return title_at, abstract_at


def main(folder: Path, verbose: bool) -> None:
    settings = load_settings("local")
    cleaners = list(settings.source.cleaners)
    first = before = found = total = 0
    for raw in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(raw)
        title = record.get("title") or ""
        if not title:
            continue
        total += 1
        try:
            doc = clean_document(parse_pdf(folder / record["file"], settings=settings.parse),
                                 cleaners)
        except Reject as reject:
            print(f"{record['id']}: {reject.reason.value}", file=sys.stderr)
            continue
        abstract = (record.get("abstracts") or {}).get(record.get("language"), "")
        title_at, abstract_at = positions(doc.words, title, abstract)
        found += title_at >= 0
        first += 0 <= title_at <= SLACK_CHARS
        before += title_at >= 0 and (abstract_at < 0 or title_at < abstract_at)
        if verbose and not 0 <= title_at <= SLACK_CHARS:
            print(f"{record['id']}: title at {title_at}, abstract at {abstract_at}: "
                  f"{' '.join(doc.words[:12])}")
    print(f"{total} documents with a title: starts with its title {first}, "
          f"title before the abstract {before}, title in the first {HEAD_WORDS} words {found}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "-v"]
    if len(args) != 1:
        sys.exit(__doc__)
    main(Path(args[0]), "-v" in sys.argv[1:])
