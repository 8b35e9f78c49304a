"""The per-document work: parse, clean, strip abstracts, identify the language, build the row.

A pure function of its task, so any executor (in-process or an isolated worker) can run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pypdfium2 as pdfium

from loralay_build.bundle import part_path, read_bundle
from loralay_build.columns import Strings
from loralay_build.errors import Reason, Reject
from loralay_build.images import ImagesSkipped, PageImage, page_images, removed_boxes
from loralay_build.native import native_module
from loralay_build.nfc import nfc_values, nfc_words
from loralay_build.parse import clean_document, parse_pdf
from loralay_build.records import Candidate, Document, MatchRecord
from loralay_build.run.task import ROW_FORMAT, Outcome, Task
from loralay_build.structure import detect_structure
from loralay_build.text import detect_language, prepare_abstract, strip_abstracts
from loralay_build.text.minhash import text_signature, to_text
from loralay_build.text.separate import separate_summaries

__all__ = ["ROW_FORMAT", "Outcome", "Task", "build_row", "process_document"]

LANGID_CHARS = 100_000
MIN_LANG_CONFIDENCE = 0.5  # below this a language check cannot call it a mismatch


def _box_columns(body: Document) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer boxes, boxes normalised to 0-1000 per page, and page indices, as arrays.

    The same arithmetic as per-word Python (round half to even, then 1000 * x / width
    truncated toward zero, clamped, corners ordered), by the compiled core in one pass when
    it is built: the numpy code makes a dozen whole-column arrays for it.
    """
    boxes = body.box_array()
    count = max((page.index for page in body.pages), default=-1) + 1
    width = np.ones(count)
    height = np.ones(count)
    for page in body.pages:
        width[page.index], height[page.index] = page.width, page.height
    native = native_module()
    if native is not None and isinstance(body.word_pages, list):
        made = native.box_columns(np.ascontiguousarray(boxes, dtype=np.float64),
                                  body.word_pages, width, height)
        if made is not None:
            ints, norm, pages = made
            return (np.frombuffer(ints, dtype=np.int32).reshape(-1, 4),
                    np.frombuffer(norm, dtype=np.int16).reshape(-1, 4),
                    np.frombuffer(pages, dtype=np.int16))
    return _box_columns_python(boxes, body.word_pages, width, height)


def _box_columns_python(boxes: np.ndarray, word_pages: list[int], width: np.ndarray,
                        height: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_box_columns in numpy alone (the compiled core's reference)."""
    pages = np.asarray(word_pages, dtype=np.int64)
    scale = np.stack([width[pages], height[pages], width[pages], height[pages]], axis=1)
    norm = np.clip(np.trunc(1000.0 * boxes / scale), 0, 1000)
    norm = np.concatenate(
        [np.minimum(norm[:, :2], norm[:, 2:]), np.maximum(norm[:, :2], norm[:, 2:])], axis=1
    )
    return np.rint(boxes).astype(np.int32), norm.astype(np.int16), pages.astype(np.int16)


def _pdf_url(cand: Candidate) -> str:
    """Where the PDF was downloaded from; for a file read from disk (a path, no URL scheme)
    the page the record names instead, since the path means nothing to a reader."""
    return cand.landing_url if cand.file_url and "://" not in cand.file_url else cand.file_url


def build_row(
    task: Task,
    body: Document,
    abstracts: dict[str, str],
    matches: list[MatchRecord],
    lang: tuple[str, float],
    reference_text: str | None = None,
    pdf_sha256: str | None = None,
) -> dict[str, Any]:
    """Assemble the published columns from a cleaned, stripped document.

    Words, boxes and pages are compact columns (`Strings`, numpy arrays) for the trip to the
    parent; the work store turns them into Arrow arrays.
    """
    cand = task.candidate
    sizes = {page.index: page for page in body.pages}
    n_pages = max(sizes) + 1 if sizes else 0
    page_sizes = [
        {"width": sizes[i].width, "height": sizes[i].height} if i in sizes
        else {"width": 0.0, "height": 0.0}
        for i in range(n_pages)
    ]
    confidences = [sizes[i].ocr_confidence if i in sizes else None for i in range(n_pages)]
    int_boxes, norm, pages = _box_columns(body)
    structure = detect_structure(body)
    main = cand.language
    row = {
        "article_id": cand.id,
        "article_words": Strings.pack(nfc_words(body.words)),
        "article_bboxes": int_boxes,
        "article_norm_bboxes": norm,
        "abstract": abstracts[main],
        "abstracts": [{"lang": k, "text": abstracts[k]} for k in sorted(abstracts)],
        "word_pages": pages,
        "sections": structure.sections,
        "word_roles": structure.roles,
        "page_sizes": page_sizes,
        "page_text_origin": ["pdf" if c is None else "ocr" for c in confidences],
        "page_ocr_confidence": confidences,
        "source": cand.source,
        "language": main,
        "lang_detected": lang[0],
        "lang_confidence": lang[1],
        "title": cand.title,
        "published": cand.published,
        "doi": cand.doi,
        "licence": task.licence,
        "licence_source": cand.licence or None,
        "article_pdf_url": _pdf_url(cand),
        "pdf_sha256": task.pdf_sha256 if pdf_sha256 is None else pdf_sha256,
        "matches": [
            {
                "lang": m.lang, "method": m.method, "distance": m.distance, "page": m.page,
                "word_start": m.word_start, "word_end": m.word_end, "found": m.found,
                "leakage": m.leakage,
            }
            for m in matches
        ],
        "reference_text": reference_text,
        **cand.extra.get("columns", {}),  # source-specific typed columns (corpus.schema)
    }
    return {name: nfc_values(value) for name, value in row.items()}  # every text in NFC


def _check_boxes(doc: Document) -> None:
    """A non-finite word box rejects the document."""
    if not np.isfinite(doc.box_array()).all():
        raise Reject(Reason.CORRUPTED, "non-finite word box")


def process_document(task: Task) -> Outcome:
    """Run one document through every per-document stage; rejects become outcomes."""
    try:
        return _process(task)
    except Reject as reject:
        return Outcome(reason=reject.reason, detail=reject.detail, stats=dict(reject.stats))
    except MemoryError:
        return Outcome(reason=Reason.TOO_LARGE, detail="out of memory")
    except RecursionError:
        return Outcome(reason=Reason.CORRUPTED, detail="recursion limit reached")


@dataclass(frozen=True)
class _Files:
    """What a task's blob holds: a PDF, or a bundle of a PDF and/or a reference text."""

    pdf_path: str
    pdf_sha256: str
    reference: str | None = None
    formats: str = "pdf"


def _files(task: Task) -> _Files:
    bundle = read_bundle(task.pdf_path)
    if bundle is None:
        return _Files(task.pdf_path, task.pdf_sha256)
    pdf = str(part_path(task.pdf_path, bundle.pdf)) if bundle.pdf else ""
    reference = None
    if bundle.reference:
        reference = part_path(task.pdf_path, bundle.reference).read_text(encoding="utf-8")
    return _Files(pdf, bundle.pdf or "", reference, bundle.info.get("formats", ""))


def _check_reference_ratio(task: Task, words: list[str], reference: str | None,
                           summary: str) -> None:
    """EUR-Lex-Sum's filter: the act must be longer (in words) than its summary."""
    if task.options.min_reference_ratio <= 0:
        return
    act = len(reference.split()) if reference else len(words)
    needed = task.options.min_reference_ratio * len(summary.split())
    if act <= needed:
        raise Reject(Reason.REFERENCE_TOO_SHORT,
                     f"act has {act} words, summary {len(summary.split())}")


def _process(task: Task) -> Outcome:
    cand = task.candidate
    abstracts = {
        lang: cleaned
        for lang, text in cand.abstracts.items()
        if (cleaned := prepare_abstract(text, task.options.abstract_format))
    }
    main = cand.language
    if main not in abstracts:
        raise Reject(Reason.ABSTRACT_MISSING_IN_METADATA, f"no {main or 'main-language'} abstract")
    if task.options.language_check == "abstract":
        detected, confidence = detect_language(abstracts[main])
        if detected not in (main, "un") and confidence >= MIN_LANG_CONFIDENCE:
            raise Reject(
                Reason.LANGUAGE_MISMATCH, f"{main} abstract reads as {detected} ({confidence:.2f})"
            )
    files = _files(task)
    doc = Document(pages=[])
    parsed = doc
    if files.pdf_path:
        parsed = parse_pdf(files.pdf_path, backend=task.parse.backend, settings=task.parse,
                           ocr=task.ocr, languages=[main, *sorted(abstracts)])
        doc = clean_document(parsed, task.options.cleaners, task.cleaners)
    _check_boxes(doc)
    if task.options.summary == "separate":
        body = doc
        matches = separate_summaries(doc.words, files.reference, abstracts, main, task.match)
    else:
        stripped = strip_abstracts(doc.words, doc.word_pages, abstracts, main, task.match)
        body, matches = doc.select(stripped.keep), stripped.matches
    if not body.words and not files.reference:
        raise Reject(Reason.NO_TEXT_LAYER, "no body words left after removing the abstracts")
    _check_reference_ratio(task, body.words, files.reference, abstracts[main])
    text = " ".join(body.words)
    sample = (text or files.reference or "")[:LANGID_CHARS]
    lang = detect_language(sample)
    mismatch = lang[0] not in (main, "un") and lang[1] >= MIN_LANG_CONFIDENCE
    if task.options.language_check == "body" and mismatch:
        raise Reject(Reason.LANGUAGE_MISMATCH, f"body reads as {lang[0]} ({lang[1]:.2f})")
    row = build_row(task, body, abstracts, matches, lang, files.reference, files.pdf_sha256)
    sig = text_signature(text)
    stats = {
        "minhash": None if sig is None else to_text(sig),
        "n_pages": len(doc.pages),
        "summary_words": len(abstracts[main].split()),
        "removed": dict(doc.removed),
        "composed_accents": doc.composed,
        "ocr_pages": sum(page.ocr_confidence is not None for page in doc.pages),
        "leakage": [m.leakage for m in matches if m.found or m.method == "separate"],
        "methods": [m.method for m in matches],
        "formats": files.formats,
    }
    pages: list[PageImage] = []
    if task.images is not None and task.images.enabled and files.pdf_path:
        removed = removed_boxes(zip(parsed.word_pages, parsed.boxes, strict=True),
                                zip(body.word_pages, body.boxes, strict=True))
        try:
            pages = page_images(files.pdf_path, [p.index for p in doc.pages], removed,
                                task.images)
        except (ImagesSkipped, pdfium.PdfiumError) as exc:  # the text row stays
            stats["images_skipped"] = str(exc)[:300]
    return Outcome(row=row, stats=stats, pages=pages)
