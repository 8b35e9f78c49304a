"""Page images aligned with the word boxes, with the removed words painted out.

Why: document models that read the page itself need the rendered page beside the words. The
abstract is removed from the words but still printed on the page, so an unmasked image hands
the summary back to an image-reading model: every removed word's box is painted with the
page's background before encoding.

The page is rendered by PDFium as displayed (its /Rotate applied, the crop box as the frame),
the frame `article_bboxes` use, so a box in points maps to pixels by `dpi / 72` exactly.
Rendering and encoding settings are pinned: the same PDF and settings give the same bytes.

Most pages of papers and acts hold no colour. Such a page is stored in gray, reduced to a
few levels and encoded losslessly: text then stays sharp (no lossy ringing) and encodes in a
third of the time lossy WebP takes at method 2 (a sixth at method 4); the encoder is most of
the images' cost.
"""

from __future__ import annotations

import io
import math
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import pypdfium2 as pdfium
from PIL import Image, ImageChops, ImageDraw

from loralay_build.config import ImageSettings

Box = tuple[float, float, float, float]
Colour = int | tuple[int, int, int]


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


def render_page(pdf: pdfium.PdfDocument, index: int, dpi: int, max_pixels: int,
                gray: bool = False) -> Image.Image:
    """One page as displayed, `dpi / 72` pixels per point, in RGB or gray (L);
    ImagesSkipped beyond the budget. PDFium renders RGB in that byte order, so no channel
    swap follows; rendering in gray costs a fifth to a third less."""
    page = pdf[index]
    try:
        width, height = page.get_size()
        scale = dpi / 72
        if width * scale * height * scale > max_pixels:
            raise ImagesSkipped(f"page {index + 1} is {width:.0f}x{height:.0f} pt: over "
                                f"{max_pixels} pixels at {dpi} dpi")
        if gray:  # an L image shares the bitmap's buffer: copied before the bitmap goes
            image: Image.Image = page.render(scale=scale, grayscale=True).to_pil().copy()
        else:
            image = page.render(scale=scale, rev_byteorder=True).to_pil()
    finally:
        page.close()
    return image


def without_colour(image: Image.Image) -> bool:
    """True when every pixel of an RGB page is gray (its three channels equal)."""
    red, green, blue = image.split()
    return (ImageChops.difference(red, green).getbbox() is None
            and ImageChops.difference(green, blue).getbbox() is None)


def reduce_gray(image: Image.Image, levels: int) -> Image.Image:
    """The gray page with `levels` evenly spaced levels (0 and 255 kept): what a lossless
    encoder stores compactly, and PNG at 1, 2 or 4 bits exactly."""
    if levels >= 256:
        return image
    step = 255 / (levels - 1)
    return image.point([round(round(v / step) * step) for v in range(256)])


def prepare(image: Image.Image, settings: ImageSettings) -> Image.Image:
    """The rendered page as it is stored: in gray when it holds no colour (`color`), gray
    pages reduced to `gray_levels` when they are stored losslessly."""
    if image.mode == "RGB" and settings.color == "auto" and without_colour(image):
        image = image.convert("L")  # exact: the weights sum to one
    if image.mode == "L" and settings.lossless_gray():
        image = reduce_gray(image, settings.gray_levels)
    return image


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
    out = io.BytesIO()
    image.save(out, **settings.encoder(gray=image.mode == "L"))  # type: ignore[arg-type]
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
    try:
        out = []
        for done, index in enumerate(wanted, 1):
            image = prepare(render_page(pdf, index, settings.dpi, settings.max_pixels,
                                        gray=settings.color == "gray"), settings)
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
