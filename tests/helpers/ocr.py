"""Whether Tesseract can read a language here, as a skip mark for the tests that OCR."""

from __future__ import annotations

import os

import pytest

from loralay_build.errors import ConfigError
from loralay_build.parse.ocr import OcrSettings, check_ocr


def tesseract_missing(language: str) -> str:
    """What `--ocr` in `language` lacks on this machine (the install line), or ""."""
    try:
        check_ocr(OcrSettings(enabled=True), [language])
    except ConfigError as exc:
        return str(exc)
    return ""


def needs_tesseract(language: str) -> pytest.MarkDecorator:
    """Skip without Tesseract and its `language` model, except under CI, which installs them
    (.ci/run): there a missing engine fails the tests instead."""
    missing = tesseract_missing(language)
    return pytest.mark.skipif(bool(missing) and not os.environ.get("CI"), reason=missing)
