"""Bring your own PDFs: a JSON-lines manifest of documents and their abstracts."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any, ClassVar

from loralay_build.blobs import BlobStore, sha256_file
from loralay_build.corpus.columns import Column
from loralay_build.dates import PARTIAL_DATE
from loralay_build.errors import ConfigError, Reason, Reject
from loralay_build.fetch import HEAD_BYTES, PDF_MAGIC
from loralay_build.http import HttpClient
from loralay_build.identity import Identity
from loralay_build.licences import LicenceMapping
from loralay_build.parse.clean import Cleaner
from loralay_build.records import Candidate
from loralay_build.source_table import SourceConfig
from loralay_build.sources.base import DiscoveryContext, batched
from loralay_build.sources.command import Option, SourceCommand, given
from loralay_build.text.iso639 import is_language_code
from loralay_build.textfile import text_lines
from loralay_build.views.schema import ViewLayout

SAFE_ID = re.compile(r"^[^\x00-\x1f]{1,500}$")
BATCH = 500


def parse_line(line: str, lineno: int, base: Path, dataset: str,
               allow_outside: bool = False, root: Path | None = None) -> Candidate:
    """One manifest line -> Candidate; raises ConfigError naming the line when it is invalid.

    A `pdf` path must stay inside the manifest's folder unless `allow_outside`: a manifest
    from elsewhere must not make the tool read and publish arbitrary files. `root`: the
    folder resolved once by the caller (the manifest is read twice, checks then discovery).
    """
    try:
        record: dict[str, Any] = json.loads(line)
    except ValueError as exc:
        raise ConfigError(f"line {lineno}: not JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise ConfigError(f"line {lineno}: expected an object")
    doc_id = str(record.get("id", ""))
    if not SAFE_ID.match(doc_id):
        raise ConfigError(f"line {lineno}: missing or invalid 'id'")
    pdf = record.get("pdf")
    if not isinstance(pdf, str) or not pdf:
        raise ConfigError(f"line {lineno}: missing 'pdf'")
    abstracts = record.get("abstracts") or {}
    if not isinstance(abstracts, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in abstracts.items()
    ):
        raise ConfigError(f"line {lineno}: 'abstracts' must map language codes to text")
    published = str(record.get("published") or "")
    if published and not PARTIAL_DATE.match(published):
        raise ConfigError(f"line {lineno}: 'published' must be YYYY, YYYY-MM or YYYY-MM-DD")
    for key in ("title", "licence", "url"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise ConfigError(f"line {lineno}: '{key}' must be a string, "
                              f"not {type(record[key]).__name__}")
    split = record.get("split")
    if split not in (None, "train", "validation", "test"):
        raise ConfigError(f"line {lineno}: 'split' must be train, validation or test")
    path = Path(os.path.realpath(os.path.join(base, pdf)))  # Path.resolve(), without its cost
    if not allow_outside and not path.is_relative_to(root or base.resolve()):
        raise ConfigError(f"line {lineno}: 'pdf' {pdf!r} is outside the manifest's folder "
                          f"{base}; give --allow-outside (or set [source] allow_outside = "
                          "true) to allow it")
    language = record.get("language")
    if not isinstance(language, str) or not is_language_code(language):
        got = ("it has none" if "language" not in record
               else f"got {json.dumps(language, ensure_ascii=False)}")
        raise ConfigError(f"line {lineno} (id {doc_id!r}): 'language' must be the ISO 639-1 "
                          f"code of the document's main language, e.g. \"language\": \"en\" "
                          f"(fr, es, ...); {got}")
    try:
        stat: os.stat_result | None = os.stat(path)
    except (OSError, ValueError):
        stat = None
    if stat is not None and not S_ISREG(stat.st_mode):
        stat = None
    extra: dict[str, Any] = {"size": stat.st_size if stat else None,
                             "mtime": stat.st_mtime_ns if stat else None}
    if split:
        extra["split"] = split
    return Candidate(
        id=f"local:{doc_id}",
        source="local",
        source_id=doc_id,
        dataset=dataset,
        title=str(record.get("title") or ""),
        language=language,
        abstracts={k: v for k, v in abstracts.items() if v.strip()},
        published=published,
        file_url=str(path),
        landing_url=str(record.get("url") or ""),
        licence=str(record.get("licence") or ""),
        extra=extra,
    )


def _read_manifest(lines: Iterable[tuple[int, str]], base: Path, dataset: str,
                   allow_outside: bool = False) -> Iterator[Candidate]:
    """The candidates of numbered manifest lines; an invalid line, a repeated id or a manifest
    without any entry is a ConfigError."""
    seen: set[str] = set()
    root = base.resolve()
    for lineno, line in lines:
        if not line.strip():
            continue
        cand = parse_line(line, lineno, base, dataset, allow_outside, root)
        if cand.id in seen:
            raise ConfigError(f"line {lineno}: duplicate id {cand.source_id!r}")
        seen.add(cand.id)
        yield cand
    if not seen:
        raise ConfigError("the manifest has no entries")


def _manifest(cfg: LocalConfig, dataset: str) -> Iterator[Candidate]:
    """The candidates of the configured manifest; errors name the manifest file."""
    manifest = Path(cfg.input)
    if manifest.is_dir():
        raise ConfigError(f"input manifest {manifest} is a folder: give the JSON-lines file")
    if not manifest.is_file():
        raise ConfigError(f"input manifest not found: {manifest}")
    try:
        yield from _read_manifest(text_lines(manifest), manifest.parent, dataset,
                                  cfg.allow_outside)
    except ConfigError as exc:
        text = str(exc)
        raise ConfigError(text if text.startswith(str(manifest)) else f"{manifest}: {text}") \
            from None


@dataclass(frozen=True, kw_only=True)
class LocalConfig(SourceConfig):
    """`[source]` of `local`: the manifest (`--input`)."""

    input: str = ""  # JSON-lines manifest
    allow_outside: bool = False  # accept `pdf` paths outside the manifest's folder
    paths: ClassVar[tuple[str, ...]] = ("input",)


def _keys(values: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    return given(input=values["input_"], allow_outside=values["allow_outside"])


@dataclass(frozen=True)
class LocalIdentity(Identity):
    """A manifest entry is what its line says and the bytes of its PDF. The path, and the
    size and time that tell whether the file there changed, are its location; the `url`
    the row carries is not."""

    excluded: tuple[str, ...] = ("file_url", "extra.size", "extra.mtime")

    def same_file(self, old: Candidate, new: Candidate, blob_sha: str) -> bool:
        """Whether the PDF at the new path (or with a new size or time) is the one stored:
        hashed again, as a copy of a folder gives its files new times."""
        try:
            return sha256_file(Path(new.file_url)) == blob_sha
        except (OSError, ValueError):
            return False


class LocalSource:
    name = "local"
    config_class: type[SourceConfig] = LocalConfig
    command = SourceCommand(
        help="Build from your own PDFs listed in a manifest.",
        options=(
            Option("--input", "JSON-lines manifest: id, pdf, abstracts, language, published, "
                   "...", name="input_", kind="file", required=True),
            Option("--allow-outside", "Accept `pdf` paths outside the manifest's folder.",
                   kind="flag"),
        ),
        keys=_keys,
    )
    declares: tuple[Column, ...] = ()
    columns: tuple[str, ...] = ()  # a manifest gives only what the core holds
    card_notes = ""
    cleaners: tuple[tuple[str, Cleaner], ...] = ()
    views: tuple[ViewLayout, ...] = ()
    demos: tuple[str, ...] = ()
    licences = LicenceMapping()
    identity: Identity = LocalIdentity()
    lists_whole_input = True  # an entry missing from the manifest has left the input

    def check_input(self, config: SourceConfig) -> None:
        """Read the whole manifest before the build creates anything: a bad line, a repeated
        id or an empty manifest is refused with the disk left as it was."""
        if not isinstance(config, LocalConfig):
            raise TypeError(f"[source] is a {type(config).__name__}, not a LocalConfig")
        for _ in _manifest(config, self.name):
            pass

    def discover(self, ctx: DiscoveryContext) -> Iterator[list[Candidate]]:
        yield from batched(_manifest(ctx.settings(LocalConfig), ctx.dataset), BATCH)

    def fetch(self, candidate: Candidate, client: HttpClient, blobs: BlobStore) -> str:
        path = Path(candidate.file_url)
        # A reject names the file, not its folder: the rejects (and the build record that
        # sums them) must not change when the input folder moves.
        if path.is_dir():
            raise Reject(Reason.NOT_PDF, f"{path.name} is a folder, not a PDF file")
        if not path.is_file():
            raise Reject(Reason.UNAVAILABLE, f"no such file: {path.name}")
        with path.open("rb") as handle:
            if PDF_MAGIC not in handle.read(HEAD_BYTES):
                raise Reject(Reason.NOT_PDF, f"{path.name} has no %PDF- header")
        return blobs.add_link(path)  # the user's PDFs are not copied
