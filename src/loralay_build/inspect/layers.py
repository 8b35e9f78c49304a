"""What to draw on each page of one document: kept words, removed abstracts, cleaned words.

The published row is the truth: its words are the kept ones, drawn with its boxes. What
the build took out is not in the row, so the PDF is parsed and cleaned again the way the
build did (its recorded settings, the row's OCR words standing for pages not drawn) and
lined up with the row: a word of the parse that the row does not hold was removed, as part
of the abstract its `matches` place it in. When the parse cannot be lined up with the row,
the picture says why instead of guessing.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from loralay_build.blobs import BlobStore
from loralay_build.errors import Reject
from loralay_build.inspect.align import Alignment, align_pages
from loralay_build.inspect.explain import why_different
from loralay_build.inspect.locate import Located, locate
from loralay_build.inspect.roles import RoleMark, role_marks
from loralay_build.layout import OutputLayout
from loralay_build.parse import parse_pdf
from loralay_build.parse.clean import CLEANERS
from loralay_build.records import Box, Document

KEPT, ABSTRACT, DROPPED, OCR = "kept", "abstract", "dropped", "ocr"  # OCR: kept, read by OCR
COPY = "copy"  # the label of removed words outside every match: a repeated abstract


@dataclass(frozen=True)
class Mark:
    """One word box to draw; `label` is the abstract's language or the cleaner's name."""

    box: Box
    kind: str
    label: str = ""
    text: str = ""


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
    drawn: list[int] = field(default_factory=list)  # the 0-based pages the layers cover


def _clean(doc: Document, cleaners: list[str]) -> tuple[Document, dict[int, str]]:
    """Apply the cleaners like `clean_document`, remembering who dropped which word: the
    cleaned document, and the dropped words' indices in `doc` mapped to the cleaner."""
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
    return doc, dropped


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


def ocr_pages_of(row: dict[str, Any] | None) -> set[int]:
    """The pages of a published row whose words OCR read."""
    origins = (row or {}).get("page_text_origin") or []
    return {page for page, origin in enumerate(origins) if origin == "ocr"}


def default_page(located: Located) -> int:
    """The page drawn unless one is asked for: where the first abstract was found, else
    the first page with kept words, else the first."""
    row = located.row
    if row is None:
        return 0
    found = [m["page"] for m in row["matches"] if m["found"]]
    if found:
        return int(min(found))
    return int(row["word_pages"][0]) if row["word_pages"] else 0


def _row_words(row: dict[str, Any], pages: Collection[int]) -> dict[int, list[tuple[str, Box]]]:
    """The row's words with their boxes on each of `pages`."""
    out: dict[int, list[tuple[str, Box]]] = {page: [] for page in pages}
    for word, box, page in zip(row["article_words"], row["article_bboxes"], row["word_pages"],
                               strict=True):
        if page in out:
            out[page].append((word, (box[0], box[1], box[2], box[3])))
    return out


def page_count(pdf_path: Path) -> int:
    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def _parse(pdf: Path, located: Located, drawn: Collection[int]) -> Document:
    """The PDF parsed as the build did, reading by OCR only the `drawn` pages: a page not
    drawn that needs OCR stands as the row's words there (none for a reject). Raises
    Reject when it cannot be parsed (`needs_ocr` when the build did not read by OCR)."""
    row = located.row
    if row is not None:
        stand_ins = _row_words(row, set(range(len(row["page_sizes"]))) - set(drawn))
        ocr = replace(located.settings.ocr, enabled=bool(ocr_pages_of(row)))
        languages = [row["language"], *(a["lang"] for a in row["abstracts"])]
    else:
        stand_ins = {page: [] for page in range(page_count(pdf)) if page not in drawn}
        ocr = located.settings.ocr
        cand = located.record.candidate if located.record else None
        languages = [cand.language, *sorted(cand.abstracts)] if cand else []
    return parse_pdf(pdf, settings=located.settings.parse, ocr=ocr, languages=languages,
                     already_read=stand_ins)


def _draw_published(located: Located, doc: Document, drawn: Collection[int],
                    layers: DocumentLayers) -> None:
    """Kept words from the row; removed and dropped words from the parse lined up with it."""
    row = located.row
    assert row is not None
    cleaned, dropped = _clean(doc, list(located.settings.source.cleaners))
    read = ocr_pages_of(row)
    kept = _row_words(row, drawn)
    for page in drawn:
        layers.pages[page].marks += [Mark(box, OCR if page in read else KEPT, text=word)
                                     for word, box in kept[page]]
    alignment = align_pages(cleaned, kept)
    _mark_removed(alignment, cleaned, row["matches"], read, layers)
    if alignment.failed:
        layers.notes.append(why_different(located, alignment.failed, read))
    for i, name in dropped.items():
        if doc.word_pages[i] in drawn:
            layers.pages[doc.word_pages[i]].marks.append(
                Mark(doc.boxes[i], DROPPED, name, doc.words[i]))
    recorded = (located.record.stats.get("removed") or {}) if located.record else {}
    counted = dict(Counter(dropped.values()))
    by_cleaner = {k: v for k, v in recorded.items() if k in CLEANERS}
    if located.record is not None and not (read - set(drawn)) and by_cleaner != counted:
        layers.notes.append(f"the cleaners drop {counted or 'nothing'} here, the build "
                            f"recorded {by_cleaner or 'nothing'}")


def _mark_removed(alignment: Alignment, cleaned: Document, matches: Sequence[dict[str, Any]],
                  read: set[int], layers: DocumentLayers) -> None:
    """The words of the parse the row does not hold, each labelled with the abstract whose
    match spans it (`copy` outside every match). The match spans count the words of the
    whole parse: after a page stood for by the row's words (which lack its removed ones)
    they no longer line up, and the last abstract found on an earlier page is named."""
    found = [m for m in matches if m["found"]]
    skipped = sorted(read - set(alignment.pages))
    for i in alignment.removed:
        page = cleaned.word_pages[i]
        if any(p < page for p in skipped):
            before = [m for m in found if m["page"] <= page]
            label = max(before, key=lambda m: m["page"])["lang"] if before else ""
        else:
            label = next((m["lang"] for m in found
                          if m["word_start"] <= i < m["word_end"]), COPY)
        layers.pages[page].marks.append(Mark(cleaned.boxes[i], ABSTRACT, label,
                                             cleaned.words[i]))


def _draw_unpublished(doc: Document, cleaners: list[str], drawn: Collection[int],
                      layers: DocumentLayers) -> None:
    """A reject has no row: the parse's cleaned words are drawn as they were kept."""
    _, dropped = _clean(doc, cleaners)
    for i, page in enumerate(doc.word_pages):
        if page in drawn:
            name = dropped.get(i)
            layers.pages[page].marks.append(Mark(doc.boxes[i], DROPPED if name else KEPT,
                                                 name or "", doc.words[i]))


class NoSuchPage(ValueError):
    """`--page` names a page the PDF does not have."""


def pages_to_draw(count: int, page: int | None, all_pages: bool, default: int) -> list[int]:
    """The 0-based pages to draw of a PDF of `count` pages: `page` (1-based), every one,
    or `default`. Raises ValueError for a page the PDF does not have."""
    if page is not None and not 1 <= page <= count:
        raise NoSuchPage(f"--page {page}: the PDF has pages 1 to {count}")
    if all_pages:
        return list(range(count))
    return [page - 1 if page is not None else min(default, count - 1)]


def document_layers(dataset_dir: Path, article_id: str, page: int | None = None,
                    all_pages: bool = False) -> DocumentLayers:
    """Everything `inspect` draws for one document, published or rejected: on page `page`
    (1-based), on every page, or on the default one (`DocumentLayers.default_page`).
    `article_id` as published or the source's own.

    Raises `locate.UnknownDocument` when the dataset never saw the id, `UnknownDataset`
    for a folder that is no dataset, `ids.AmbiguousId` for an id naming two documents and
    NoSuchPage for a page the PDF does not have.
    """
    located = locate(dataset_dir, article_id)
    layout = OutputLayout.of_dataset(dataset_dir)
    layers = DocumentLayers(located.article_id, None, defaultdict(PageLayers),
                            default_page(located), located.rejected)
    sha = located.pdf_sha256
    layers.pdf_path = BlobStore(layout.blobs).path(sha) if sha else located.given_file()
    if layers.pdf_path is None:
        layers.notes.append("no PDF was stored for it")
        return layers
    if not layers.pdf_path.is_file():
        layers.notes.append(f"the PDF {sha[:12] if sha else ''}… is no longer in the blob store")
        layers.pdf_path = None
        return layers
    if not sha:
        layers.notes.append(f"drawn from {layers.pdf_path}, which the build did not read")
    layers.drawn = pages_to_draw(page_count(layers.pdf_path), page, all_pages,
                                 layers.default_page)
    drawn = set(layers.drawn)
    try:
        doc = _parse(layers.pdf_path, located, drawn)
    except Reject as reject:
        layers.notes.append(f"no words to draw: {reject.reason.value} ({reject.detail})")
        return layers
    for number, lines in _order(doc).items():
        if number in drawn:
            layers.pages[number].order = lines
    if located.row is not None:
        _draw_published(located, doc, drawn, layers)
        for page, marks in role_marks(located.row).items():
            if page in drawn:
                layers.pages[page].roles = marks
    else:
        _draw_unpublished(doc, list(located.settings.source.cleaners), drawn, layers)
    return layers
