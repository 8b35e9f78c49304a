"""The long-summarization records of Cohan et al. (2018) (`scientific_papers`,
`ccdv/*-summarization`) made from a layout dataset's rows: the body's sentences by section,
from the `sections` and `word_roles` columns.

What a record keeps: the words of running text (and displayed formulas, which are part of
its sentences). What it drops: headings (their text is the section's name), captions,
footnotes, table cells, the reference list and page furniture. Case is kept, and no sentence
is dropped for its length.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from loralay_build.blobs import atomic_write_bytes
from loralay_build.corpus.split import SPLITS
from loralay_build.structure.roles import Role
from loralay_build.text.sentences import split_sentences
from loralay_build.views.schema import ViewColumns, ViewLayout

KEPT_ROLES = frozenset({Role.BODY, Role.FORMULA})
DROPPED_ROLES = tuple(sorted(role.name.lower() for role in Role if role not in KEPT_ROLES))
# The files of the original release, one JSON record a line, that its loaders open.
RELEASE_FOLDER = "jsonl"
RELEASE_FILES = {"train": "train.txt", "validation": "val.txt", "test": "test.txt"}
INPUT_COLUMNS = ["article_id", "article_words", "word_roles", "sections", "abstract",
                 "language", "lang_detected", "title", "licence"]

COLUMNS: ViewColumns = [
    ("article_id", pa.string(), "id of the document, as in the layout dataset"),
    ("article_text", pa.list_(pa.string()), "the body's sentences in reading order: running "
     "text and displayed formulas; headings, captions, footnotes, tables, the reference "
     "list and page furniture left out"),
    ("abstract_text", pa.list_(pa.string()), "the sentences of the abstract in the document's "
     "main language (the layout dataset's `abstract`)"),
    ("section_names", pa.list_(pa.string()), "the layout dataset's section titles, one per "
     "section in order, as printed (numbering kept); \"\" for the text before the first "
     "heading"),
    ("sections", pa.list_(pa.list_(pa.string())), "the sentences of each section (same order "
     "as `section_names`; a section with nothing but dropped words, such as the reference "
     "list, has none)"),
    ("title", pa.string(), "title"),
    ("language", pa.string(), "the language whose sentence rules were used (ISO 639-1)"),
    ("licence", pa.string(), "SPDX licence id, as in the layout dataset"),
]
LAYOUT = ViewLayout("cohan", COLUMNS, "article_id")
SUMMARY = ("Long-summarization records in the format of Cohan et al. (2018), made from the "
           "layout dataset's sections and word roles: the body and the abstract as sentence "
           "lists, the section names and each section's sentences. Sentences by sentencex in "
           "each document's language; case kept; no sentence dropped for its length. Words "
           f"dropped by role: {', '.join(DROPPED_ROLES)} (a heading's text is its section's "
           f"name). `{RELEASE_FOLDER}/` holds the same records as the original release's "
           "files (train.txt, val.txt, test.txt: one JSON object a line), which its loaders "
           "read as they are.")


def cohan_record(row: dict[str, Any]) -> dict[str, Any]:
    """The record of one layout row (the `INPUT_COLUMNS` of it)."""
    words: list[str] = row["article_words"]
    roles: list[int] = row["word_roles"]
    language = row["language"] or row["lang_detected"] or None
    names: list[str] = []
    sections: list[list[str]] = []
    for section in row["sections"]:
        kept = [words[i] for i in range(section["word_start"], section["word_end"])
                if roles[i] in KEPT_ROLES]
        names.append(section["title"] or "")
        sections.append(split_sentences(" ".join(kept), language))
    return {
        "article_id": row["article_id"],
        "article_text": [sentence for section in sections for sentence in section],
        "abstract_text": split_sentences(row["abstract"] or "", language),
        "section_names": names,
        "sections": sections,
        "title": row["title"],
        "language": language or "",
        "licence": row["licence"],
    }


def write_release_files(folder: Path, by_split: dict[str, list[dict[str, Any]]]) -> None:
    """The records as the original release's files, in `folder/jsonl/` (each replaced
    atomically; a split without rows gets an empty file, as loaders open all three)."""
    out = folder / RELEASE_FOLDER
    out.mkdir(exist_ok=True)
    for split in SPLITS:
        lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in by_split[split]]
        atomic_write_bytes(out / RELEASE_FILES[split], "".join(lines).encode())
