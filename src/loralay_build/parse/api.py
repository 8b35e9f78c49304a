"""`parse_pdf`: run a backend, order each page, check the text layer, build the Document."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from loralay_build.errors import Reason, Reject
from loralay_build.native import native_module
from loralay_build.nfc import nfc_words
from loralay_build.parse.backend import Line, PageText, get_backend
from loralay_build.parse.ocr import SCAN_CHARS, OcrSettings, ocr_pages, scanned
from loralay_build.parse.order import order_page
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Document

_ALNUM = re.compile(r"[^\W_]")
# A page needs this many characters before its own garbage share is judged: a caption-only
# or near-empty page is too small to say anything.
GARBAGE_PAGE_CHARS = 200

# Counters stored in `Document.removed` by the parser itself (not by a cleaner).
BAD_BOXES = "bad_boxes"


def parse_pdf(
    path: str | Path, backend: str | None = None, settings: ParseSettings | None = None,
    ocr: OcrSettings | None = None, languages: Sequence[str] = (),
) -> Document:
    """Words of the PDF in reading order, or `Reject` with the reason it cannot be used.

    `backend` defaults to `settings.backend` ("pdfium"). Every exception an engine raises
    becomes a `Reject`: engines let undocumented types escape on hostile files. Pages
    without a usable text layer are read by OCR in `languages` when `ocr` is enabled, and
    reject the document as `needs_ocr` otherwise.
    """
    settings = settings or ParseSettings()
    engine = get_backend(backend or settings.backend)
    with _collector_paused():
        try:
            pages = list(engine.pages(Path(path), settings))
        except Reject:
            raise
        except MemoryError as exc:
            raise Reject(Reason.TOO_LARGE, f"MemoryError: {exc}") from exc
        except Exception as exc:
            if _out_of_memory(exc):
                raise Reject(Reason.TOO_LARGE, f"{type(exc).__name__}: {exc}") from exc
            raise Reject(Reason.CORRUPTED, f"{type(exc).__name__}: {exc}") from exc
        junk = [_junk(page) for page in pages]
        unreadable = pages_to_read(path, pages, junk, settings)
        if unreadable:
            pages = ocr_pages(path, pages, unreadable, ocr or OcrSettings(), languages)
            junk = [_junk(page) for page in pages]
        _check_text_layer(pages, junk, settings)
        doc = _assemble(pages, settings.reading_order)
        # Freed before the collector resumes: its first pass then finds few young objects.
        del pages
    return doc


def _out_of_memory(exc: BaseException) -> bool:
    """True if a MemoryError hides inside: pdfminer wraps the one a bomb raises at RLIMIT_AS."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, MemoryError):
            return True
        nested = [arg for arg in seen.args if isinstance(arg, BaseException)]
        seen = nested[0] if nested else (seen.__cause__ or seen.__context__)
    return False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector, if it runs, for the duration of one parse.

    A parse allocates hundreds of thousands of lists and tuples that hold no cycles; the
    collections their allocation triggers cost about 3 % of the parse CPU on real papers.
    What survives the parse is scanned by the first collection after it: the compiled core
    leaves its box tuples (floats only) untracked, and the lines are freed before.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _check_text_layer(pages: list[PageText], junk: list[int], settings: ParseSettings) -> None:
    """Reject scans (no or too little text) and garbage text layers.

    Garbage is counted per page as well as over the document: one page of unmapped glyphs
    (a font without a usable encoding) hides that page's text, often the abstract's, and
    would otherwise be reported as an abstract not found.
    """
    if not pages:
        raise Reject(Reason.CORRUPTED, "no pages")
    if not any(line.words for page in pages for line in page.lines):  # stops at the first one
        raise Reject(Reason.NO_TEXT_LAYER, "no words")
    chars = sum(page.chars for page in pages)
    if chars < settings.min_chars_per_page * len(pages):
        raise Reject(
            Reason.NO_TEXT_LAYER,
            f"{chars / len(pages):.1f} chars per page < min_chars_per_page",
        )
    for number, (page, bad) in enumerate(zip(pages, junk, strict=True), start=1):
        if page.chars >= GARBAGE_PAGE_CHARS and bad > settings.max_garbage_page_ratio * page.chars:
            raise Reject(
                Reason.NO_TEXT_LAYER,
                f"garbage text layer on page {number}: {bad}/{page.chars} chars unmapped "
                "(U+FFFD, (cid:N), controls, or words without a letter or digit)",
            )
    if sum(junk) > settings.max_garbage_ratio * chars:
        raise Reject(
            Reason.NO_TEXT_LAYER,
            f"garbage text layer: {sum(junk)}/{chars} chars unmapped ((cid:N), U+FFFD, controls)",
        )


def pages_to_read(path: str | Path, pages: list[PageText], junk: list[int],
                  settings: ParseSettings) -> list[int]:
    """Positions of the pages whose text must come from OCR: scans (nearly no text, mostly
    covered by images) and pages of garbage (by the same tests `_check_text_layer` applies).
    A blank or figure-only born-digital page has no image the size of the page and keeps
    its (empty) text layer."""
    chars = sum(page.chars for page in pages)
    garbage = chars > 0 and sum(junk) > settings.max_garbage_ratio * chars
    found, bare = [], []
    for position, (page, bad) in enumerate(zip(pages, junk, strict=True)):
        if page.chars < SCAN_CHARS:
            bare.append(position)
        elif (page.chars >= GARBAGE_PAGE_CHARS and bad > settings.max_garbage_page_ratio
              * page.chars) or (garbage and bad > settings.max_garbage_ratio * page.chars):
            found.append(position)
    if bare:
        found += scanned(path, bare, pages)
    return sorted(found)


def _junk(page: PageText) -> int:
    """Characters of a page that carry no text: the engine's garbage count, or the words
    mixing symbols without any letter or digit (what an engine keeps of unmapped glyphs:
    `!#$%(`); a run of one mark (a dot leader, a rule of dashes) is layout, not garbage."""
    letterless = page.letterless
    if letterless < 0:  # the engine did not count them
        letterless = sum(len(word) for line in page.lines for word in line.words
                         if not _ALNUM.search(word) and len(set(word)) > 1)  # cheap test first
    return max(page.garbage, letterless)


def _page_blocks(page: PageText, reading_order: bool) -> list[list[Line]]:
    """Blocks of the page in reading order, or the engine's lines as they came."""
    if reading_order:
        return order_page(page.lines, page.page.width, page.page.height, page.line_infos)
    blocks: list[list[Line]] = []
    last_group = None
    for line in page.lines:
        if blocks and line.group >= 0 and line.group == last_group:
            blocks[-1].append(line)
        else:
            blocks.append([line])
        last_group = line.group
    return blocks


def _assemble(pages: list[PageText], reading_order: bool) -> Document:
    """The pages' blocks one after the other as a Document, lines and blocks numbered."""
    doc = Document(pages=[page.page for page in pages], composed=sum(p.composed for p in pages))
    bad = sum(page.bad_boxes for page in pages)
    if bad:
        doc.removed[BAD_BOXES] = bad
    native = native_module()
    columns = (doc.words, doc.boxes, doc.font_sizes, doc.word_pages, doc.line_ids,
               doc.block_ids)
    line_id = block_id = 0
    for page in pages:
        index, blocks = page.page.index, _page_blocks(page, reading_order)
        doc.bold_lines.update(bold_line_ids(blocks, line_id))
        ids = (None if native is None
               else native.extend_document(blocks, index, line_id, block_id, columns))
        line_id, block_id = ids or _extend(doc, blocks, index, line_id, block_id)
    doc.words = nfc_words(doc.words)
    return doc


def bold_line_ids(blocks: list[list[Line]], first: int) -> list[int]:
    """The ids of the bold lines among `blocks`, numbered from `first` in order."""
    lines = [line for block in blocks for line in block]
    return [first + k for k, line in enumerate(lines) if line.bold]


def _extend(
    doc: Document, blocks: list[list[Line]], index: int, line_id: int, block_id: int
) -> tuple[int, int]:
    """Append the page's blocks to the document; the next line and block ids."""
    for block in blocks:
        for line in block:
            n = len(line.words)
            doc.words.extend(line.words)
            doc.boxes.extend(line.boxes)
            doc.font_sizes.extend(line.sizes)
            doc.word_pages.extend([index] * n)
            doc.line_ids.extend([line_id] * n)
            doc.block_ids.extend([block_id] * n)
            line_id += 1
        block_id += 1
    return line_id, block_id
