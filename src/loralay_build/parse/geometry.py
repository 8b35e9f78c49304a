"""Page-space to display-space transforms, and box sanitising before anything is stored."""

from __future__ import annotations

import math

from loralay_build.records import Box

# Crop box of a page in PDF user space (left, bottom, right, top) and its /Rotate in quarter
# turns clockwise.
Frame = tuple[float, float, float, float, int]


def display_size(frame: Frame) -> tuple[float, float]:
    """Width and height of the page as a viewer shows it (after /Rotate)."""
    left, bottom, right, top, quarter = frame
    width, height = abs(right - left), abs(top - bottom)
    return (height, width) if quarter % 2 else (width, height)


def to_display(frame: Frame, x0: float, y0: float, x1: float, y1: float) -> Box:
    """Map a user-space rectangle (y up) to display space (top-left origin, y down).

    /Rotate turns the page clockwise: at 90 the user-space bottom-left corner becomes the
    top-left corner on screen, at 270 the user-space top-right one does.
    """
    left, bottom, right, top, quarter = frame
    if quarter == 0:
        a, b, c, d = x0 - left, top - y1, x1 - left, top - y0
    elif quarter == 1:
        a, b, c, d = y0 - bottom, x0 - left, y1 - bottom, x1 - left
    elif quarter == 2:
        a, b, c, d = right - x1, y0 - bottom, right - x0, y1 - bottom
    else:
        a, b, c, d = top - y1, right - x1, top - y0, right - x0
    return (min(a, c), min(b, d), max(a, c), max(b, d))


def clean_box(box: Box, width: float, height: float) -> Box | None:
    """The box ordered and clamped to the page, or None when a coordinate is not finite."""
    x0, y0, x1, y1 = box
    if not (math.isfinite(x0) and math.isfinite(y0) and math.isfinite(x1) and math.isfinite(y1)):
        return None
    if x0 > x1:
        x0, x1 = x1, x0
    if y0 > y1:
        y0, y1 = y1, y0
    return (
        min(max(x0, 0.0), width),
        min(max(y0, 0.0), height),
        min(max(x1, 0.0), width),
        min(max(y1, 0.0), height),
    )


def usable_size(width: float, height: float) -> bool:
    """A page size is usable when finite, positive and not absurd (beyond 200 inches)."""
    limit = 14_400.0
    return (
        math.isfinite(width)
        and math.isfinite(height)
        and 0.0 < width <= limit
        and 0.0 < height <= limit
    )


def rotate_box(box: Box, direction: int, width: float, height: float) -> Box:
    """Express a display box in the frame where text of `direction` reads left to right."""
    x0, y0, x1, y1 = box
    if direction == 0:
        return box
    if direction == 1:
        return (y0, width - x1, y1, width - x0)
    if direction == 2:
        return (width - x1, height - y1, width - x0, height - y0)
    return (height - y1, x0, height - y0, x1)
