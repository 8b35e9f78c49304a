"""Reject reasons (a closed set) and the small exception hierarchy used across stages."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why a document was dropped. Every drop in a build is counted under one of these."""

    UNAVAILABLE = "unavailable"  # download failed for good (404, 403, retries exhausted)
    NOT_PDF = "not_pdf"  # the body is not a PDF (HTML error page, captcha, empty)
    CORRUPTED = "corrupted"  # unreadable, no pages, or the parser crashed on it
    ENCRYPTED = "encrypted"  # needs a password we do not have, or an unknown security handler
    NO_TEXT_LAYER = "no_text_layer"  # scanned, or the text layer is garbage
    NEEDS_OCR = "needs_ocr"  # pages without a usable text layer, and OCR is off (`--ocr`)
    OCR_TIMEOUT = "ocr_timeout"  # reading a page by OCR exceeded its time limit
    TIMEOUT = "timeout"  # processing exceeded its wall-clock limit
    TOO_LARGE = "too_large"  # download or document beyond the configured caps (memory included)
    # the metadata has no abstract in the document's main language
    ABSTRACT_MISSING_IN_METADATA = "abstract_missing_in_metadata"
    ABSTRACT_NOT_FOUND = "abstract_not_found"  # the main abstract is not in the PDF's text
    LANGUAGE_MISMATCH = "language_mismatch"  # not in the declared language (`language_check`)
    TOO_MANY_PAGES = "too_many_pages"  # more pages than `[filters] max_pages_percentile` allows
    SUMMARY_TOO_SHORT = "summary_too_short"  # summary under `[filters] min_abstract_percentile`
    DUPLICATE = "duplicate"  # another copy of the same work is published
    BLOCKED = "blocked"  # bot challenge or robots.txt refusal
    REFERENCE_TOO_SHORT = "reference_too_short"  # act not longer than its summary (EUR-Lex)
    LICENCE = "licence"  # the licence is not among those `--licences` keeps
    EXCLUDED = "excluded"  # listed by `--exclude-ids` / `[dedup] exclude` (a published test set)


# Reasons that come from what a document's record gave (a file that is not there or not a
# PDF, no abstract in the metadata), not from the build: a run rejecting documents for them
# says so on stderr, terminal or not (run.lifecycle).
GIVEN_INPUT = (Reason.UNAVAILABLE, Reason.NOT_PDF, Reason.ABSTRACT_MISSING_IN_METADATA)


class LoralayError(Exception):
    """Base class of the errors this package raises on purpose."""


class ConfigError(LoralayError):
    """A configuration file, flag or environment variable is invalid."""


class Reject(LoralayError):
    """A document is dropped for a recorded reason; the run goes on."""

    def __init__(self, reason: Reason, detail: str = "",
                 stats: dict[str, int] | None = None) -> None:
        super().__init__(f"{reason.value}: {detail}" if detail else reason.value)
        self.reason = reason
        self.detail = detail
        self.stats = stats or {}  # counts kept with the reject (pages that need OCR)


class TransientError(LoralayError):
    """A failure worth retrying in a later attempt or run (network, 5xx, truncated body)."""


class Deferred(TransientError):
    """A document the server asked us to fetch later (a long rate-limit wait, a challenge).

    Not a failure of the document: it waits for the next run without using up an attempt.
    """


class LockHeld(LoralayError):
    """Another run holds the dataset's lock."""
