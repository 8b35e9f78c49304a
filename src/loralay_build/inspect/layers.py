"""What to draw on each page of one document: kept words, removed abstracts, cleaned words.

The published row holds only the words that were kept. To show what was taken out, the PDF
is parsed and cleaned again from the blob store, and the row's `matches` (word indices before
the abstracts were removed) are mapped back onto that re-computation.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from loralay_build.blobs import BlobStore
from loralay_build.corpus.folder import BUILD_FILE, SHARD_GLOB
from loralay_build.errors import Reject
from loralay_build.inspect.roles import RoleMark, role_marks
from loralay_build.layout import OutputLayout
from loralay_build.parse import parse_pdf
from loralay_build.parse.clean import CLEANERS
from loralay_build.records import Box, Document
from loralay_build.sources import load_settings
from loralay_build.state import FILTERED, REJECTED, State

KEPT, ABSTRACT, DROPPED, OCR = "kept", "abstract", "dropped", "ocr"  # OCR: kept, read by OCR


class UnknownDocument(LookupError):
    """The id is neither in the published shards nor among the dataset's rejects."""


@dataclass(frozen=True)
class Mark:
    """One word box to draw; `label` is the abstract's language or the cleaner's name."""

    box: Box
    kind: str
    label: str = ""


@dataclass
class PageLayers:
    marks: list[Mark] = field(default_factory=list)
    # Reading order: (block number on the page, line box), lines in the order they are read.
    order: list[tuple[int, Box]] = field(default_factory=list)
    roles: list[RoleMark] = field(default_factory=list)  # the row's headings, captions...


@dataclass
class DocumentLayers:
    article_id: str
    pdf_path: Path | None
    pages: dict[int, PageLayers]
    default_page: int  # 0-based true page index
    rejected: str = ""  # "reason: detail" for a document that is not published
    notes: list[str] = field(default_factory=list)


def _may_hold(shard: pq.ParquetFile, group: int, article_id: str) -> bool:
    """Whether a row group's id range (written at publish) can hold `article_id`; True
    when the shard has no statistics (written by an earlier version)."""
    column = shard.metadata.row_group(group).column(0)
    stats = column.statistics if column.path_in_schema == "article_id" else None
    if stats is None or not stats.has_min_max:
        return True
    return bool(stats.min <= article_id <= stats.max)


def find_row(dataset_dir: Path, article_id: str) -> dict[str, Any] | None:
    """The published row of `article_id`.

    Row groups whose id range excludes it are skipped; of the others only the id column is
    read, then the one row group holding the document, so memory follows one row group.
    """
    for path in sorted(dataset_dir.glob(SHARD_GLOB)):
        with pq.ParquetFile(path) as shard:
            for group in range(shard.num_row_groups):
                if not _may_hold(shard, group, article_id):
                    continue
                ids = shard.read_row_group(group, columns=["article_id"]).column("article_id")
                found = pc.index(ids, article_id).as_py()
                if found >= 0:
                    table = shard.read_row_group(group).slice(found, 1)
                    row: dict[str, Any] = table.to_pylist()[0]
                    return row
    return None


def _source_of(dataset_dir: Path, fallback: str) -> str:
    try:
        return str(json.loads((dataset_dir / BUILD_FILE).read_text())["source"])
    except (OSError, ValueError, KeyError):
        return fallback


def _clean(doc: Document, cleaners: list[str]) -> tuple[Document, list[int], dict[int, str]]:
    """Apply the cleaners like `clean_document`, remembering who dropped which word.

    Returns the cleaned document, the index in `doc` of each kept word, and the dropped
    words' indices in `doc` mapped to the cleaner's name.
    """
    origin = list(range(len(doc)))
    dropped: dict[int, str] = {}
    for name in cleaners:
        drop = CLEANERS[name](doc)
        if not drop:
            continue
        keep = [i for i in range(len(doc)) if i not in drop]
        dropped.update({origin[i]: name for i in drop})
        doc = doc.select(keep)
        origin = [origin[i] for i in keep]
    return doc, origin, dropped


def _order(doc: Document) -> dict[int, list[tuple[int, Box]]]:
    """Per page, each line's box in reading order, numbered by block (from 1 on each page)."""
    lines: dict[int, list[int]] = defaultdict(list)
    line_order: list[int] = []
    for i, line in enumerate(doc.line_ids):
        if line not in lines:
            line_order.append(line)
        lines[line].append(i)
    out: dict[int, list[tuple[int, Box]]] = defaultdict(list)
    blocks: dict[int, dict[int, int]] = defaultdict(dict)
    for line in line_order:
        members = lines[line]
        page = doc.word_pages[members[0]]
        numbers = blocks[page]
        number = numbers.setdefault(doc.block_ids[members[0]], len(numbers) + 1)
        boxes = [doc.boxes[i] for i in members]
        union = (min(b[0] for b in boxes), min(b[1] for b in boxes),
                 max(b[2] for b in boxes), max(b[3] for b in boxes))
        out[page].append((number, union))
    return out


def _published(row: dict[str, Any], doc: Document, cleaners: list[str],
               layers: DocumentLayers) -> None:
    cleaned, _, dropped = _clean(doc, cleaners)
    pages = layers.pages
    read = _ocr_pages(row)
    for box, page in zip(row["article_bboxes"], row["word_pages"], strict=True):
        pages[page].marks.append(Mark((box[0], box[1], box[2], box[3]),
                                      OCR if page in read else KEPT))
    removed = 0
    found = [m for m in row["matches"] if m["found"]]
    for match in found:
        for i in range(match["word_start"], min(match["word_end"], len(cleaned))):
            removed += 1
            pages[cleaned.word_pages[i]].marks.append(Mark(cleaned.boxes[i], ABSTRACT,
                                                           match["lang"]))
    for i, name in dropped.items():
        pages[doc.word_pages[i]].marks.append(Mark(doc.boxes[i], DROPPED, name))
    if len(cleaned) - removed != len(row["article_words"]):
        layers.notes.append(
            f"parsing the PDF again gives {len(cleaned) - removed} body words, the published "
            f"row has {len(row['article_words'])}: the dataset was built with other settings"
        )
    if found:
        layers.default_page = min(m["page"] for m in found)
    elif row["word_pages"]:
        layers.default_page = row["word_pages"][0]


def _ocr_pages(row: dict[str, Any] | None) -> set[int]:
    """The pages of a published row whose words OCR read."""
    origins = (row or {}).get("page_text_origin") or []
    return {page for page, origin in enumerate(origins) if origin == "ocr"}


def _unpublished(doc: Document, cleaners: list[str], layers: DocumentLayers) -> None:
    cleaned, origin, dropped = _clean(doc, cleaners)
    for i in origin:
        layers.pages[doc.word_pages[i]].marks.append(Mark(doc.boxes[i], KEPT))
    for i, name in dropped.items():
        layers.pages[doc.word_pages[i]].marks.append(Mark(doc.boxes[i], DROPPED, name))
    if cleaned.word_pages:
        layers.default_page = cleaned.word_pages[0]


def document_layers(dataset_dir: Path, article_id: str) -> DocumentLayers:
    """Everything `inspect` draws for one document, published or rejected.

    Raises `UnknownDocument` when the dataset never saw the id.
    """
    row = find_row(dataset_dir, article_id)
    layout = OutputLayout.of_dataset(dataset_dir)
    rejected = ""
    sha = row["pdf_sha256"] if row else None
    source = row["source"] if row else ""
    if row is None:
        state = State(layout.root) if layout.has_state() else None
        if state is None:
            raise UnknownDocument(article_id)
        try:
            record = state.row(dataset_dir.name, article_id)  # by key, not a scan
        finally:
            state.close()
        if record is None or record.status not in (REJECTED, FILTERED):
            raise UnknownDocument(article_id)
        rejected = f"{record.status} as {record.reason}: {record.detail or ''}".rstrip(": ")
        sha, source = record.blob_sha, record.candidate.source
    layers = DocumentLayers(article_id, None, defaultdict(PageLayers), 0, rejected)
    if not sha:
        layers.notes.append("no PDF was stored for it")
        return layers
    layers.pdf_path = BlobStore(layout.blobs).path(sha)
    if not layers.pdf_path.is_file():
        layers.notes.append(f"the PDF {sha[:12]}… is no longer in the blob store")
        layers.pdf_path = None
        return layers
    settings = load_settings(_source_of(dataset_dir, source))
    cleaners = list(settings.source.cleaners)
    # pages the build read by OCR are read again the same way
    ocr = replace(settings.ocr, enabled=bool(_ocr_pages(row)))
    languages = [row["language"], *(a["lang"] for a in row["abstracts"])] if row else []
    try:
        doc = parse_pdf(layers.pdf_path, settings=settings.parse, ocr=ocr, languages=languages)
    except Reject as reject:
        layers.notes.append(f"no words to draw: {reject.reason.value} ({reject.detail})")
        return layers
    for page, lines in _order(doc).items():
        layers.pages[page].order = lines
    if row is not None:
        _published(row, doc, cleaners, layers)
        for page, marks in role_marks(row).items():
            layers.pages[page].roles = marks
    else:
        _unpublished(doc, cleaners, layers)
    return layers
