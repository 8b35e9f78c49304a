"""The gray PNG writer: every bit depth and row padding decodes (by Pillow) to exactly the
pixels given, and the same pixels give the same bytes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from loralay_build.gray_png import encode_gray


@pytest.mark.parametrize("bits", [1, 2, 4, 8])
@pytest.mark.parametrize("width", [1, 3, 7, 8, 13])
def test_every_depth_and_width_decodes_to_the_same_pixels(bits: int, width: int) -> None:
    rng = np.random.default_rng(bits * 100 + width)
    levels = np.array([round(k * 255 / (2**bits - 1)) for k in range(2**bits)], np.uint8)
    pixels = levels[rng.integers(0, len(levels), size=(5, width))]
    data = encode_gray(pixels, bits, 1)
    assert data[24] == bits  # the IHDR bit depth
    image = Image.open(io.BytesIO(data))
    assert image.mode == ("1" if bits == 1 else "L") and image.size == (width, 5)
    assert np.array_equal(np.asarray(image.convert("L")), pixels)
    assert encode_gray(pixels.copy(), bits, 1) == data


def test_a_bit_depth_png_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="bit depth"):
        encode_gray(np.zeros((2, 2), np.uint8), 3, 1)
