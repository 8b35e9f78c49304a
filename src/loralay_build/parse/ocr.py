"""OCR of the pages whose text layer is missing or garbage: PDFium renders, Tesseract reads.

Why in-process (tesserocr, which carries its own libtesseract and reads Debian's language
data): on a 300 dpi page it took 2.5-3.1 CPU s against 3.9-4.2 s for the `tesseract`
command, which starts a process, loads its models and decodes an image file for every page
(`scripts/bench_ocr.py`). The worker keeps the engine of the last language set.

Words follow the PDF words' conventions: points, top-left origin, the page as displayed
(rotation and crop box applied, the frame PDFium renders), pixels converted by the dpi of the
render exactly. A PDF word's box spans its font's ascent to descent while Tesseract's hugs
the ink, so a word takes its horizontal extent from its own box and its vertical one from its
line's: the geometry a model sees is then the same whichever path made the page.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
import re
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loralay_build import deadline
from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.estimates import cpu_time
from loralay_build.parse.backend import Line, PageText
from loralay_build.records import Page

# Folders Debian's `tesseract-ocr-LANG` packages fill, newest layout first.
TESSDATA_DIRS = ("/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata",
                 "/usr/share/tessdata")
ENGLISH = "eng"
# ISO 639-1 -> Tesseract model name where it is not the ISO 639-2/T code Tesseract uses for
# the others (its `tessdata` names; Chinese has two scripts, simplified first).
_TESSERACT_NAMES = {
    "zh": "chi_sim", "no": "nor", "nb": "nor", "ms": "msa", "sr": "srp", "az": "aze",
    "uz": "uzb", "fa": "fas", "he": "heb", "yi": "yid", "sq": "sqi", "hy": "hye", "ka": "kat",
    "mk": "mkd", "eu": "eus", "is": "isl", "my": "mya", "cy": "cym", "bo": "bod",
}
# The other 639-1 codes the corpora carry, by their 639-2/T code.
_ISO_639_2T = {
    "en": "eng", "fr": "fra", "pt": "por", "es": "spa", "ko": "kor", "de": "deu", "nl": "nld",
    "it": "ita", "pl": "pol", "cs": "ces", "hu": "hun", "ro": "ron", "bg": "bul", "el": "ell",
    "hr": "hrv", "sl": "slv", "sk": "slk", "lv": "lav", "lt": "lit", "et": "est", "fi": "fin",
    "sv": "swe", "da": "dan", "mt": "mlt", "ga": "gle", "ja": "jpn", "ru": "rus", "uk": "ukr",
    "ar": "ara", "tr": "tur", "ca": "cat", "gl": "glg", "vi": "vie", "id": "ind", "th": "tha",
    "hi": "hin", "bn": "ben", "ta": "tam", "la": "lat", "af": "afr", "be": "bel", "bs": "bos",
    "eo": "epo", "lb": "ltz", "oc": "oci", "sw": "swa", "tl": "tgl", "ur": "urd",
}
# Below this many characters a page may be a scan: it is one if images cover most of it.
SCAN_CHARS = 50
SCAN_IMAGE_COVER = 0.5  # share of the page's area covered by images on a scanned page
MIN_DPI = 72  # a page too large to render at this dpi within `max_pixels` is not OCRed
RENDER_SECONDS = 5.0  # a page's allowance for rendering, beyond its reading time
# CPU seconds a page costs at 300 dpi (`scripts/bench_ocr.py`): what `status` quotes for the
# documents waiting for `--ocr`.
SECONDS_PER_PAGE = 2.5
# With OCR off, a document whose pages needing it are at most this share of its pages (a
# cover, a figure plate, a scanned signature page of a digital thesis) is published from its
# other pages, those pages left without words, when its abstract is among the digital pages.
# Half: a one-page abstract or short paper behind a cover picture is two pages.
MAX_TEXTLESS_SHARE = 1 / 2


@dataclass(frozen=True)
class OcrSettings:
    """How pages without a usable text layer are read (`[ocr]`, `--ocr`).

    Defaults: off (a page costs 2-3 CPU s against ~5 ms for a digital one); 300 dpi, where
    Tesseract's models are at their best on body text; at most 50 pages OCRed a document
    (a longer scan is rejected as too large); 60 s a page (`ocr_timeout` beyond); pages
    rendered beyond 16 million pixels at a lower dpi.
    """

    enabled: bool = False  # --ocr: read pages without a usable text layer
    dpi: int = 300  # rendering resolution of a page read by Tesseract
    max_pages: int = 50  # pages OCRed a document; a longer scan is rejected as `too_large`
    page_seconds: float = 60.0  # a page that takes longer is an `ocr_timeout` reject
    languages: tuple[str, ...] = ()  # ISO 639-1 codes read besides each document's own
    max_pixels: int = 16_000_000  # a larger page is read at a lower dpi (`too_large` below 72)
    tessdata: str = ""  # folder of the *.traineddata files; default: TESSDATA_PREFIX or Debian's

    def __post_init__(self) -> None:
        if not MIN_DPI <= self.dpi <= 1200:
            raise ConfigError(f"[ocr] dpi must lie in [{MIN_DPI}, 1200], got {self.dpi}")
        if self.max_pages < 1 or self.page_seconds <= 0 or self.max_pixels < 1:
            raise ConfigError("[ocr] max_pages, page_seconds and max_pixels must be positive")


_WAITING = "pages have no usable text layer (run with --ocr)"  # a `needs_ocr` reject's detail


def pages_waiting(detail: str) -> int:
    """The pages a `needs_ocr` reject's detail says need OCR."""
    found = re.match(rf"(\d+) of \d+ {re.escape(_WAITING)}", detail)
    return int(found.group(1)) if found else 0


def ocr_hint(documents: int, pages: int, command: str | None = None) -> str:
    """What the documents waiting for OCR would cost, and the command that reads them:
    `command`, the build's own arguments as recorded (`local --input m.jsonl`), with
    `--ocr` added; without it, the dataset's build command is named in words."""
    run = (f"`{ocr_command(command)}`" if command
           else "the dataset's build command again with --ocr")
    return (f"{documents} document(s) need OCR ({pages} pages, "
            f"{cpu_time(pages * SECONDS_PER_PAGE)}): run {run}")


def ocr_command(command: str) -> str:
    """The build command (its recorded arguments) that reads pages by OCR."""
    try:
        words = shlex.split(command)
    except ValueError:  # recorded unquoted by an earlier version
        words = command.split()
    return shlex.join(["build-corpus", *words, *([] if "--ocr" in words else ["--ocr"])])


def needs_ocr(pages: int, total: int) -> Reject:
    """The `needs_ocr` reject of a document `pages` of whose `total` pages need OCR."""
    return Reject(Reason.NEEDS_OCR, f"{pages} of {total} {_WAITING}", stats={"ocr_pages": pages})


def textless_hint(documents: int, pages: int, command: str | None = None) -> str:
    """What reading the pages published without text would cost, and the command that reads
    them (as `ocr_hint` names it)."""
    run = (f"`{ocr_command(command)}`" if command
           else "the dataset's build command again with --ocr")
    return (f"{documents} documents have {pages} pages without text "
            f"({cpu_time(pages * SECONDS_PER_PAGE)} to read them): run {run}")


def tesseract_code(language: str) -> str:
    """Tesseract's model name for an ISO 639-1 code (the code itself if unknown)."""
    return _TESSERACT_NAMES.get(language) or _ISO_639_2T.get(language) or language


def models_for(languages: Iterable[str], settings: OcrSettings) -> list[str]:
    """The models to read a document with: its languages, the configured ones, then English."""
    codes: list[str] = []
    for lang in [*languages, *settings.languages]:
        code = tesseract_code(lang)
        if lang and code not in codes and code != ENGLISH:
            codes.append(code)
    return [*codes, ENGLISH]


def tessdata_dir(settings: OcrSettings) -> Path | None:
    """The folder holding the language models, or None when there is none: the configured
    one alone when `tessdata` is set."""
    candidates = ([settings.tessdata] if settings.tessdata
                  else [os.environ.get("TESSDATA_PREFIX", ""), *TESSDATA_DIRS])
    for folder in candidates:
        if folder and Path(folder, f"{ENGLISH}.traineddata").is_file():
            return Path(folder)
    return None


def apt_line(codes: Iterable[str]) -> str:
    """The install line of Tesseract's language packs (Debian names them by model)."""
    packs = " ".join(f"tesseract-ocr-{code.replace('_', '-').lower()}" for code in codes)
    return f"apt-get install tesseract-ocr {packs}"


def check_ocr(settings: OcrSettings, languages: Iterable[str]) -> None:
    """Refuse `--ocr` before any work when the engine or a language's model is missing."""
    wanted = models_for(languages, settings)
    try:
        import tesserocr  # noqa: F401
    except ImportError:
        raise ConfigError("--ocr needs the tesserocr package and Tesseract's language data: "
                          "pip install 'loralay-build[ocr]' && "
                          f"{apt_line(wanted)}") from None
    folder = tessdata_dir(settings)
    if folder is None:
        raise ConfigError(f"--ocr: no Tesseract language data found ({', '.join(TESSDATA_DIRS)}"
                          f"); install it with: {apt_line(wanted)}")
    missing = [code for code in wanted if not (folder / f"{code}.traineddata").is_file()]
    if missing:
        raise ConfigError(f"--ocr: no Tesseract model for {', '.join(missing)} in {folder}; "
                          f"install it with: {apt_line(missing)}")


def image_cover(pdf: Any, index: int) -> float:
    """`page_image_cover` of page `index` of a loaded document."""
    import pypdfium2.raw as raw

    page = raw.FPDF_LoadPage(pdf, index)
    if not page:
        return 0.0
    try:
        return page_image_cover(page)
    finally:
        raw.FPDF_ClosePage(page)


def page_image_cover(page: Any) -> float:
    """Share of a loaded page's area that its image objects cover (forms holding images count
    by their own bounds): a scan is one image the size of the page."""
    import pypdfium2.raw as raw

    width, height = raw.FPDF_GetPageWidthF(page), raw.FPDF_GetPageHeightF(page)
    covered = 0.0
    for obj in _objects(raw, page):
        kind = raw.FPDFPageObj_GetType(obj)
        if kind == raw.FPDF_PAGEOBJ_IMAGE or (kind == raw.FPDF_PAGEOBJ_FORM
                                              and _holds_image(raw, obj)):
            covered += _area(raw, obj)
    return covered / (width * height) if width * height > 0 else 0.0


def _objects(raw: Any, page: Any) -> Iterator[Any]:
    for i in range(raw.FPDFPage_CountObjects(page)):
        yield raw.FPDFPage_GetObject(page, i)


def _holds_image(raw: Any, form: Any, depth: int = 0) -> bool:
    for i in range(raw.FPDFFormObj_CountObjects(form)):
        obj = raw.FPDFFormObj_GetObject(form, i)
        kind = raw.FPDFPageObj_GetType(obj)
        if kind == raw.FPDF_PAGEOBJ_IMAGE or (kind == raw.FPDF_PAGEOBJ_FORM and depth < 4
                                              and _holds_image(raw, obj, depth + 1)):
            return True
    return False


def _area(raw: Any, obj: Any) -> float:
    import ctypes

    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    if not raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
        return 0.0
    return max(0.0, right.value - left.value) * max(0.0, top.value - bottom.value)


class Reader:
    """The Tesseract engine of this process for the last language set asked for: a
    dataset's documents mostly share theirs, and each engine holds 50-100 MB of models."""

    def __init__(self, settings: OcrSettings) -> None:
        self.settings = settings
        self._engines: dict[str, Any] = {}

    def engine(self, models: list[str]) -> Any:
        key = "+".join(models)
        if key not in self._engines:
            os.environ["OMP_THREAD_LIMIT"] = "1"  # the workers are the parallelism
            import tesserocr

            folder = tessdata_dir(self.settings)
            missing = [code for code in models if folder is None
                       or not (folder / f"{code}.traineddata").is_file()]
            if folder is None or missing:
                raise Reject(Reason.NEEDS_OCR, f"no Tesseract model for {', '.join(missing)}: "
                                               f"{apt_line(missing)}")
            self.close()
            api = tesserocr.PyTessBaseAPI(path=str(folder) + "/", lang=key)
            self._engines[key] = api
        return self._engines[key]

    def read(self, pdf: Any, page: Page, models: list[str]) -> PageText:
        """The page's words as Tesseract reads its rendering; Reject on a page too large or
        too slow to read."""
        gray, dpi = _render(pdf, page.index, self.settings)
        api = self.engine(models)
        api.SetImageBytes(gray.tobytes(), gray.shape[1], gray.shape[0], 1, gray.shape[1])
        api.SetSourceResolution(dpi)
        kinds = layout(api)
        finer = finer_dpi(kinds, dpi, models)
        if finer:  # lines of small type taken for vertical text: looked at closer
            gray, dpi = _render(pdf, page.index, self.settings, finer)
            api.SetImageBytes(gray.tobytes(), gray.shape[1], gray.shape[0], 1, gray.shape[1])
            api.SetSourceResolution(dpi)
            kinds = layout(api)
        if not kinds & TEXT_BLOCKS:  # a cover, a photograph, a plot: nothing to recognise
            return PageText(Page(page.index, page.width, page.height, page.rotation,
                                 ocr_confidence=0.0))
        if not api.Recognize(timeout=int(self.settings.page_seconds * 1000)):
            raise Reject(Reason.OCR_TIMEOUT, f"page {page.index + 1} took over "
                                             f"{self.settings.page_seconds:g} s to read")
        return page_text(api.GetTSVText(0), page, 72.0 / dpi, glued(api))

    def close(self) -> None:
        for api in self._engines.values():
            with contextlib.suppress(Exception):
                api.End()
        self._engines.clear()


# Tesseract's block types (PolyBlockType, `tesserocr.PT`) that hold text: flowing, heading
# and pull-out text, equation, inline equation, table, vertical text, caption.
TEXT_BLOCKS = frozenset(range(1, 9))
VERTICAL_TEXT = 7
# Models of scripts written top to bottom: vertical text is expected there.
_VERTICAL_MODELS = ("_vert",)


def layout(api: Any) -> set[int]:
    """The block types Tesseract's layout analysis finds in the image set. Recognition
    reuses the analysis, so a page that holds only pictures costs the analysis alone:
    0.3-0.5 CPU s at 300 dpi against 2.5-3 s for a page of text (`scripts/bench_ocr.py`)."""
    from tesserocr import RIL

    kinds: set[int] = set()
    blocks = api.AnalyseLayout()
    while blocks is not None:
        kinds.add(int(blocks.BlockType()))
        if not blocks.Next(RIL.BLOCK):
            break
    return kinds


def finer_dpi(kinds: set[int], dpi: int, models: list[str]) -> int:
    """The dpi to analyse the page at again, 0 for none: at 300 dpi Tesseract takes some
    lines of small Hangul type for vertical text and drops their words (the abstract of a
    Korean thesis); at 400 it reads them as lines. Only a page of horizontal scripts with
    vertical text pays the second analysis."""
    if VERTICAL_TEXT not in kinds or any(m.endswith(_VERTICAL_MODELS) for m in models):
        return 0
    return dpi * 4 // 3


def _render(pdf: Any, index: int, settings: OcrSettings,
            wanted: int = 0) -> tuple[Any, int]:
    """The page as displayed, in gray, at the configured dpi (or `wanted`) or the highest
    that stays within `max_pixels`."""
    import numpy as np
    import pypdfium2 as pdfium

    page = pdf[index]
    try:
        width, height = page.get_size()
        dpi = wanted or settings.dpi
        if width * height * (dpi / 72) ** 2 > settings.max_pixels:
            dpi = math.floor(72 * math.sqrt(settings.max_pixels / (width * height)))
            if dpi < MIN_DPI:
                raise Reject(Reason.TOO_LARGE, f"page {index + 1} is {width:.0f}x{height:.0f} "
                                               f"pt: over {settings.max_pixels} pixels at "
                                               f"{MIN_DPI} dpi")
        bitmap = page.render(scale=dpi / 72, grayscale=True, may_draw_forms=True)
        try:
            gray = np.array(bitmap.to_numpy()[..., 0] if bitmap.n_channels > 1
                            else bitmap.to_numpy(), dtype=np.uint8, copy=True)
        finally:
            bitmap.close()
    except pdfium.PdfiumError as exc:
        raise Reject(Reason.CORRUPTED, f"page {index + 1} cannot be rendered: {exc}") from exc
    finally:
        page.close()
    return gray.reshape(gray.shape[0], gray.shape[1]), dpi


def glued(api: Any) -> list[bool]:
    """For each word of the last reading, in the order of its TSV, whether Tesseract put no
    space before it inside its line: it reads Korean (and other scripts it does not space
    by a dictionary of words) one syllable or piece at a time, and its text joins them."""
    from tesserocr import RIL

    flags: list[bool] = []
    words = api.GetIterator()
    while words is not None:
        if not words.Empty(RIL.WORD):
            flags.append(not words.IsAtBeginningOf(RIL.TEXTLINE)
                         and words.BlanksBeforeWord() == 0)
        if not words.Next(RIL.WORD):
            break
    return flags


def page_text(tsv: str, page: Page, scale: float, glue: list[bool] | None = None) -> PageText:
    """Tesseract's TSV (levels 4, lines, and 5, words) as the page's lines in points; a word
    `glue` marks (one flag per TSV word) joins the word before it, as in Tesseract's text."""
    lines: dict[tuple[int, int, int], Line] = {}
    spans: dict[tuple[int, int, int], tuple[float, float]] = {}
    confidences: list[float] = []
    chars = 0
    rows = list(csv.reader(tsv.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    if glue and len(glue) != sum(row[:1] == ["5"] for row in rows):
        glue = None  # not this reading's words: each word stands alone
    position = -1  # of the word among the TSV's words
    for row in rows:
        if len(row) < 12 or not row[0].isdigit():
            continue
        level, key = int(row[0]), (int(row[2]), int(row[3]), int(row[4]))
        left, top, width, height = (int(v) for v in row[6:10])
        if level == 4:
            spans[key] = (top * scale, (top + height) * scale)
            continue
        position += level == 5
        text = row[11].strip()
        if level != 5 or not text or key not in spans:
            continue
        y0, y1 = spans[key]
        line = lines.setdefault(key, Line([], [], [], group=key[0]))
        confidences.append(max(0.0, float(row[10])))
        chars += len(text)
        if glue and position < len(glue) and glue[position] and line.words:
            x0, _, x1, _ = line.boxes[-1]
            line.words[-1] += text
            line.boxes[-1] = (x0, y0, max(x1, (left + width) * scale), y1)
            continue
        line.words.append(text)
        line.boxes.append((left * scale, y0, (left + width) * scale, y1))
        line.sizes.append(y1 - y0)
    mean = sum(confidences) / len(confidences) / 100 if confidences else 0.0
    result = PageText(Page(page.index, page.width, page.height, page.rotation,
                           ocr_confidence=round(mean, 4)))
    result.lines = [lines[key] for key in sorted(lines)]
    result.chars = chars
    return result


_readers: dict[OcrSettings, Reader] = {}


def ocr_pages(path: str | Path, pages: list[PageText], wanted: list[int],
              settings: OcrSettings, languages: Iterable[str]) -> list[PageText]:
    """`pages` with those at the positions `wanted` read by OCR instead, `too_large` beyond
    `max_pages`. With OCR off, they are left without words when they are few enough
    (`MAX_TEXTLESS_SHARE`), and the document is `needs_ocr` otherwise."""
    if not settings.enabled:
        return without_text(pages, wanted)
    if len(wanted) > settings.max_pages:
        raise Reject(Reason.TOO_LARGE, f"{len(wanted)} pages need OCR > [ocr] max_pages="
                                       f"{settings.max_pages}")
    import pypdfium2 as pdfium

    models = models_for(languages, settings)
    reader = _readers.setdefault(settings, Reader(settings))
    out = list(pages)
    pdf = pdfium.PdfDocument(str(path))
    try:
        for position in wanted:
            deadline.extend(settings.page_seconds + RENDER_SECONDS)
            out[position] = reader.read(pdf, pages[position].page, models)
    finally:
        pdf.close()
    return out


def without_text(pages: list[PageText], wanted: list[int]) -> list[PageText]:
    """`pages` with those at the positions `wanted` emptied and marked `without_text`, or
    `needs_ocr` when they are over `MAX_TEXTLESS_SHARE` of the document."""
    if len(wanted) > MAX_TEXTLESS_SHARE * len(pages):
        raise needs_ocr(len(wanted), len(pages))
    out = list(pages)
    for position in wanted:
        page = pages[position].page
        out[position] = PageText(Page(page.index, page.width, page.height, page.rotation,
                                      without_text=True))
    return out


def scanned(path: str | Path, positions: list[int], pages: list[PageText]) -> list[int]:
    """Of the pages at `positions` (nearly without text), those that images mostly cover.
    A page whose backend measured its cover while reading it (PDFium) is not loaded again;
    the file is opened only for the others."""
    covers = {i: pages[i].image_cover for i in positions}
    unmeasured = [i for i, cover in covers.items() if cover is None]
    if unmeasured:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(str(path))
        try:
            covers.update((i, image_cover(pdf.raw, pages[i].page.index)) for i in unmeasured)
        finally:
            pdf.close()
    return [i for i in positions if (covers[i] or 0.0) >= SCAN_IMAGE_COVER]
