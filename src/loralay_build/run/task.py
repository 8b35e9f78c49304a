"""What the parent and a worker exchange: a document's task and its outcome.

Apart from the work (`run/process.py`), so that the parent, which only sends tasks and
receives outcomes, does not import the parser, the matcher and their engines (PDFium,
edlib, CLD2, Pillow): the pool's fork server imports them for the workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loralay_build.config import ImageSettings
from loralay_build.errors import Reason
from loralay_build.licences import NOASSERTION
from loralay_build.parse.clean import Cleaner
from loralay_build.parse.ocr import OcrSettings
from loralay_build.parse.settings import ParseSettings
from loralay_build.records import Candidate
from loralay_build.source_table import DocumentOptions
from loralay_build.text.settings import MatchSettings

if TYPE_CHECKING:
    from loralay_build.images import PageImage

# Bumped when run.process.build_row's columns change, so that work files of the old shape
# are rebuilt.
ROW_FORMAT = "3"  # 3: `sections` and `word_roles`


@dataclass(frozen=True)
class Task:
    """Everything a worker needs for one document; picklable."""

    candidate: Candidate
    pdf_path: str
    pdf_sha256: str
    parse: ParseSettings
    match: MatchSettings
    options: DocumentOptions = field(default_factory=DocumentOptions)  # per-document options
    images: ImageSettings | None = None  # --page-images: render, mask and encode the pages
    ocr: OcrSettings = field(default_factory=OcrSettings)  # --ocr: pages without a text layer
    # The candidate's licence as an SPDX id, mapped in the parent (licences.to_spdx), which
    # knows every source's mapping; a worker imports no source.
    licence: str = NOASSERTION
    # The cleaners `options.cleaners` names, resolved in the parent: a source's own are data
    # (parse.clean.CoverPage…), so a worker imports no source to run them.
    cleaners: dict[str, Cleaner] = field(default_factory=dict)


@dataclass
class Outcome:
    """Either an example row (column name -> value) or a reject; `stats` feed the filters."""

    row: dict[str, Any] | None = None
    reason: Reason | None = None
    detail: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    pages: list[PageImage] = field(default_factory=list)  # with --page-images
