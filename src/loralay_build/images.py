"""Page images aligned with the word boxes, with the removed words painted out.

Why: document models that read the page itself need the rendered page beside the words. The
abstract is removed from the words but still printed on the page, so an unmasked image hands
the summary back to an image-reading model: every removed word's box is painted with the
page's background before encoding.

The page is rendered by PDFium as displayed (its /Rotate applied, the crop box as the frame),
the frame `article_bboxes` use, so a box in points maps to pixels by `dpi / 72` exactly.
Rendering and encoding settings are pinned: the same PDF and settings give the same bytes.

Most pages of papers and acts hold no colour. Such a page is stored in gray, reduced to a
few levels and encoded losslessly (PNG at 4 bits by default, gray_png): text then stays
sharp (no lossy ringing) and encodes in a twentieth of the time lossy WebP takes. Rendering
is most of the images' cost: a page is rendered by PDFium into memory reused for the whole
document and handed to Pillow without a copy.
"""

from __future__ import annotations

import ctypes
import functools
import io
import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image, ImageDraw

from loralay_build.config import ImageSettings
from loralay_build.gray_png import encode_gray
from loralay_build.native import native_module

Box = tuple[float, float, float, float]
Colour = int | tuple[int, int, int]
IDENTITY = bytes(range(256))


@dataclass
class PageImage:
    page: int  # the true 0-based page index, as in `word_pages`
    data: bytes
    width_px: int
    height_px: int
    masked_boxes: list[list[int]] = field(default_factory=list)


class ImagesSkipped(Exception):
    """The document's pages cannot be rendered within budget: its text row stays, without
    images."""


def pixel_box(box: Box, scale: float, width: int, height: int) -> list[int]:
    """A box in points as the pixel box that covers it (anti-aliased edges included)."""
    return [max(0, math.floor(box[0] * scale) - 1), max(0, math.floor(box[1] * scale) - 1),
            min(width, math.ceil(box[2] * scale) + 1), min(height, math.ceil(box[3] * scale) + 1)]


def background(image: Image.Image) -> Colour:
    """The page's most common colour, what is under the words: a gray level for a gray page,
    else found on a reduced copy."""
    if image.mode == "L":
        histogram = image.histogram()
        return histogram.index(max(histogram))
    small = image.reduce(4) if min(image.size) >= 8 else image
    colours = small.getcolors(small.width * small.height) or []
    counted = [(n, tuple(c)) for n, c in colours if isinstance(c, tuple)]
    _, colour = max(counted, default=(1, (255, 255, 255)))
    return (int(colour[0]), int(colour[1]), int(colour[2]))


class Canvas:
    """The memory a document's pages are rendered and prepared in, reused page after page
    and read by Pillow in place: a fresh 3-byte bitmap per page and its copy into Pillow
    took about 1 of the 7.6 ms a page cost. What `render` and `prepare` return on it is
    valid until the next page is rendered."""

    def __init__(self) -> None:
        self._bitmap = (ctypes.c_ubyte * 0)()
        self._scratch = np.empty(0, np.uint32)

    def pixels(self, width: int, height: int, channels: int) -> np.ndarray:
        """The reused memory as a (height, width, channels) page, grown when too small."""
        size = width * height * channels
        if len(self._bitmap) < size:
            self._bitmap = (ctypes.c_ubyte * size)()
        pixels: np.ndarray = np.frombuffer(memoryview(self._bitmap).cast("B"), np.uint8, size)
        return pixels.reshape(height, width, channels)

    def without_colour(self, pixels: np.ndarray) -> bool:
        """True when every pixel of an RGBX page is gray (its three channels equal): one
        pass of 32-bit words, R^G and G^B in their low 16 bits, with no allocation."""
        height, width = pixels.shape[:2]
        words = pixels.view("<u4")[..., 0]
        self._scratch = _at_least(self._scratch, height * width)
        mixed = self._scratch[:height * width].reshape(height, width)
        np.right_shift(words, 8, out=mixed)
        np.bitwise_xor(mixed, words, out=mixed)
        np.bitwise_and(mixed, 0xFFFF, out=mixed)
        return not mixed.any()


def _at_least(array: np.ndarray, size: int) -> np.ndarray:
    return array if len(array) >= size else np.empty(size, array.dtype)


def _shared(mode: str, pixels: np.ndarray) -> Image.Image:
    """An image on the canvas's (contiguous) pixels, writable in place for the mask."""
    image = Image.frombuffer(mode, (pixels.shape[1], pixels.shape[0]), pixels, "raw", mode,
                             0, 1)
    image.readonly = False
    return image


def render(pdf: pdfium.PdfDocument, index: int, dpi: int, max_pixels: int, gray: bool,
           canvas: Canvas) -> np.ndarray:
    """One page as displayed, `dpi / 72` pixels per point (sizes rounded up), on `canvas`:
    (height, width) gray or (height, width, 4) RGBX (PDFium's 32-bit order reversed, R
    first); ImagesSkipped beyond the budget. PDFium is called directly: pypdfium2's
    `render` cost about 0.2 ms a page more, in Python."""
    page = pdfium_c.FPDF_LoadPage(pdf.raw, index)
    if not page:
        raise ImagesSkipped(f"page {index + 1} cannot be loaded for rendering")
    try:
        points = pdfium_c.FPDF_GetPageWidthF(page), pdfium_c.FPDF_GetPageHeightF(page)
        scale = dpi / 72
        if points[0] * scale * points[1] * scale > max_pixels:
            raise ImagesSkipped(f"page {index + 1} is {points[0]:.0f}x{points[1]:.0f} pt: "
                                f"over {max_pixels} pixels at {dpi} dpi")
        width, height = (math.ceil(side * scale) for side in points)
        channels, format = (1, pdfium_c.FPDFBitmap_Gray) if gray else (4, pdfium_c.FPDFBitmap_BGRx)
        pixels = canvas.pixels(width, height, channels)
        bitmap = pdfium_c.FPDFBitmap_CreateEx(width, height, format, pixels.ctypes.data,
                                              width * channels)
        try:
            pdfium_c.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xFFFFFFFF)
            flags = pdfium_c.FPDF_ANNOT | (pdfium_c.FPDF_GRAYSCALE if gray
                                           else pdfium_c.FPDF_REVERSE_BYTE_ORDER)
            pdfium_c.FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, flags)
        finally:
            pdfium_c.FPDFBitmap_Destroy(bitmap)
    finally:
        pdfium_c.FPDF_ClosePage(page)
    return pixels[..., 0] if gray else pixels


def render_page(pdf: pdfium.PdfDocument, index: int, dpi: int, max_pixels: int,
                gray: bool = False) -> Image.Image:
    """One page as displayed, as an RGB or gray (L) image of its own (`inspect`)."""
    pixels = render(pdf, index, dpi, max_pixels, gray, Canvas())
    return Image.fromarray(pixels[..., :3] if pixels.ndim == 3 else pixels)


@functools.cache
def gray_lut(levels: int) -> bytes:
    """Each gray value's nearest of `levels` evenly spaced levels (0 and 255 kept): what a
    lossless encoder stores compactly, and PNG at 1, 2 or 4 bits exactly."""
    step = 255 / (levels - 1)
    return bytes(round(round(v / step) * step) for v in range(256))


def prepare(pixels: np.ndarray, settings: ImageSettings, canvas: Canvas) -> Image.Image:
    """The rendered page as it is stored: in gray when it holds no colour (`color`), its
    red channel then being the page, gray pages reduced to `gray_levels` when stored
    losslessly; RGBX otherwise. The compiled core does the colour test, the channel and
    the levels in one pass (`gray_plane`, the same pixels)."""
    levels = settings.gray_levels if settings.lossless_gray() else 256
    lut = gray_lut(levels) if levels < 256 else None
    if pixels.ndim == 3:
        image = _shared("RGBX", pixels)
        if settings.color != "auto":
            return image
        native = native_module()
        if native is not None:
            height, width = pixels.shape[:2]
            plane = native.gray_plane(pixels, width, height, lut or IDENTITY)
            if plane is None:
                return image
            return _shared("L", np.frombuffer(plane, np.uint8).reshape(height, width))
        if not canvas.without_colour(pixels):
            return image
        image = image.getchannel(0)
    else:
        image = _shared("L", pixels)
    return image if lut is None else image.point(lut)


def mask(image: Image.Image, boxes: Iterable[Box], scale: float) -> list[list[int]]:
    """Paint each box with the page background; returns the painted pixel boxes."""
    boxes = list(boxes)
    if not boxes:  # most pages: no background to look for
        return []
    colour = background(image)
    draw = ImageDraw.Draw(image)
    painted = []
    for box in boxes:
        px = pixel_box(box, scale, image.width, image.height)
        if px[2] > px[0] and px[3] > px[1]:
            draw.rectangle((px[0], px[1], px[2] - 1, px[3] - 1), fill=colour)
            painted.append(px)
    return painted


def encode(image: Image.Image, settings: ImageSettings) -> bytes:
    options = settings.encoder(gray=image.mode == "L")
    bits, level = options.get("bits"), options.get("compress_level")
    if image.mode == "L" and isinstance(bits, int) and isinstance(level, int):
        return encode_gray(np.asarray(image), bits, level)  # lossless gray PNG
    if image.mode == "RGBX" and options["format"] == "PNG":  # WebP and JPEG read RGBX
        image = image.convert("RGB")
    out = io.BytesIO()
    image.save(out, **options)  # type: ignore[arg-type]
    return out.getvalue()


def removed_boxes(before: Iterable[tuple[int, Box]],
                  after: Iterable[tuple[int, Box]]) -> dict[int, list[Box]]:
    """Boxes of the words parsed but not published (abstracts, headers, stamps), by page:
    (page, box) pairs of the parsed document less those of the published body."""
    left = Counter(after)
    out: dict[int, list[Box]] = {}
    for page, box in before:
        if left[(page, box)]:
            left[(page, box)] -= 1
        else:
            out.setdefault(page, []).append(box)
    return out


def page_images(pdf_path: str, pages: Sequence[int], removed: dict[int, list[Box]],
                settings: ImageSettings) -> list[PageImage]:
    """The document's pages (true indices), masked and encoded; ImagesSkipped when over a
    budget."""
    started = time.monotonic()
    scale = settings.dpi / 72
    wanted = list(pages) if settings.pages == 0 else list(pages)[:settings.pages]
    count = len(wanted)
    pdf = pdfium.PdfDocument(pdf_path)
    canvas = Canvas()
    try:
        out = []
        for done, index in enumerate(wanted, 1):
            pixels = render(pdf, index, settings.dpi, settings.max_pixels,
                            settings.color == "gray", canvas)
            image = prepare(pixels, settings, canvas)
            boxes = removed.get(index, ()) if settings.mask else ()
            painted = mask(image, boxes, scale)
            out.append(PageImage(index, encode(image, settings), image.width, image.height,
                                 painted))
            if time.monotonic() - started > settings.seconds:
                raise ImagesSkipped(f"rendering took over {settings.seconds:g} s "
                                    f"({done} of {count} pages)")
        return out
    finally:
        pdf.close()
