"""Settings: every default in one place, overlaid by TOML files, `LORALAY_*` variables and flags.

Precedence, lowest first: the dataclass defaults below, `configs/<source>.toml` shipped with the
package, the file given with `--config`, environment variables `LORALAY_<SECTION>__<KEY>`
(e.g. `LORALAY_HTTP__MIN_INTERVAL=2`, `LORALAY_SOURCE__SEARCH_URL=http://...`), and
command-line flags.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from loralay_build.errors import ConfigError
from loralay_build.licences import check_patterns
from loralay_build.parse.ocr import OcrSettings
from loralay_build.parse.settings import ParseSettings
from loralay_build.source_table import SourceConfig, source_from_table
from loralay_build.tables import check_choice, check_ranges, from_table
from loralay_build.text.settings import MatchSettings
from loralay_build.textfile import checked_env, read_text

ENV_PREFIX = "LORALAY_"
IMAGE_FORMATS = ("webp", "png", "jpeg")
IMAGE_COLORS = ("auto", "gray", "rgb")
GRAY_FORMATS = ("png", "webp")  # lossless formats of gray pages
# Gray levels kept losslessly: PNG bit depths, so 2, 4 and 16 levels are stored exactly.
GRAY_LEVELS = (0, 2, 4, 16, 256)
MiB = 1024 * 1024
EXECUTORS = ("local", "ray", "serial")



@dataclass(frozen=True)
class HttpSettings:
    """The one HTTP client's limits. Politeness first: one connection, spaced requests."""

    # sent with every request: names the tool and a contact address, as crawl policies ask
    user_agent: str = (
        "loralay-build/0.1 (corpus builder; mailto:loralay-build@users.noreply.github.com)"
    )
    min_interval: float = 1.0  # seconds between two requests to the same host
    # per-host overrides of min_interval (host -> seconds, each at least 0)
    host_intervals: dict[str, float] = field(default_factory=dict)
    connect_timeout: float = 10.0  # seconds to open a connection
    read_timeout: float = 30.0  # between two reads of the body
    deadline: float = 300.0  # whole request, body included: a 1 byte/s trickle ends here
    max_bytes: int = 200 * MiB  # decoded body cap
    max_retries: int = 5  # tries after the first, within one run
    backoff_base: float = 1.0  # seconds before the first retry; doubles with each retry
    backoff_max: float = 120.0  # longest pause between two retries
    retry_after_max: float = 300.0  # a longer Retry-After defers the document to a later run
    max_redirects: int = 5  # redirects followed, each hop checked against the host policy
    allowed_hosts: tuple[str, ...] = ()  # download hosts; "*.example.org" allowed; empty = any
    url_rewrite: dict[str, str] = field(default_factory=dict)  # URL prefix -> replacement
    allow_private: bool = False  # loopback/private addresses (only for local test servers)

    def __post_init__(self) -> None:
        check_ranges(self, "http",
                     at_least={"min_interval": 0, "max_retries": 0, "backoff_base": 0,
                               "backoff_max": 0, "retry_after_max": 0, "max_redirects": 0,
                               "max_bytes": 1},
                     above={"connect_timeout": 0, "read_timeout": 0, "deadline": 0})
        for host, interval in self.host_intervals.items():
            if type(interval) not in (int, float) or interval < 0:
                raise ConfigError(f"[http] host_intervals {host!r} = {interval!r}: must be a "
                                  "number of seconds, at least 0")


@dataclass(frozen=True)
class RunSettings:
    """How documents are processed: executor, isolation limits, retry policy across runs."""

    executor: str = "local"  # local (isolated process pool) | ray (a cluster) | serial (debugging)
    workers: int = 2  # worker processes (--workers); with Ray, the CPUs of a private instance
    timeout: float = 60.0  # wall-clock seconds per document, enforced by killing the worker
    memory_limit_mb: int = 2048  # RLIMIT_AS of each worker
    recycle_after: int = 200  # documents per worker before it is replaced
    # The malloc of the processes that parse documents (run/allocator.py): a library's file
    # name, searched as the dynamic loader does, or a path; "" or a library not installed:
    # the C library's malloc.
    allocator: str = "libmimalloc.so.2"
    max_attempts: int = 3  # runs in which a transient download failure is retried
    # --executor ray: "" starts a local Ray instance sized by `workers`; "auto" joins the
    # cluster of this node (`ray start`); "ray://host:10001" goes through a Ray Client server.
    ray_address: str = ""
    shared_blobs: bool = False  # Ray tasks read PDFs from --out (every node mounts it) or get bytes
    in_flight: int = 0  # Ray tasks submitted and not yet committed; 0 = 2 per cluster CPU
    # Seconds the driver waits for nodes when the Ray cluster has no CPU left, then stops
    # (nothing is lost: the same command resumes once nodes have joined).
    ray_no_cpu_wait: float = 600.0
    # Processed documents are committed in batches (one filesystem sync, one state commit):
    # a crash redoes at most this many documents or seconds of work.
    commit_batch: int = 64
    commit_seconds: float = 5.0  # a batch is also committed once it is this old
    # Row groups a publication encodes in the parent before `workers` local processes encode
    # the rest (0: from the first). Encoding is most of what publishing costs the parent;
    # below a thousand documents or so, starting the processes would cost more.
    encode_after_groups: int = 32

    def __post_init__(self) -> None:
        check_choice(self.executor, "run", "executor", EXECUTORS)
        check_ranges(self, "run",
                     at_least={"workers": 1, "memory_limit_mb": 1, "recycle_after": 1,
                               "max_attempts": 1, "in_flight": 0, "commit_batch": 1,
                               "commit_seconds": 0, "encode_after_groups": 0},
                     above={"timeout": 0, "ray_no_cpu_wait": 0})


@dataclass(frozen=True)
class FilterSettings:
    """Corpus-level filters, computed over all processed documents at publish time."""

    enabled: bool = True  # the percentile filters; false (--no-filter) keeps every document
    max_pages_percentile: float = 95.0  # drop documents with more pages than this percentile
    min_abstract_percentile: float = 1.0  # drop documents whose summary is shorter than this
    # Keep only these licences (SPDX ids, wildcards such as "CC-BY-*", or "redistributable");
    # empty keeps every licence. Applied with or without the percentile filters.
    licences: tuple[str, ...] = ()
    # Percentiles of fewer documents say nothing about the corpus (two documents would lose
    # one to each bound): below this count only the absolute limits ([parse] max_pages) apply.
    min_documents: int = 100

    def __post_init__(self) -> None:
        check_ranges(self, "filters", at_least={"max_pages_percentile": 0,
                                                "min_abstract_percentile": 0, "min_documents": 1},
                     at_most={"max_pages_percentile": 100, "min_abstract_percentile": 100})


@dataclass(frozen=True)
class ImageSettings:
    """`[images]`: what `--page-images` renders (costs measured by scripts/bench_images.py
    and listed in docs/benchmarks.md)."""

    enabled: bool = False  # --page-images: publish the `pages` configuration
    dpi: int = 100  # pixels per inch of the rendered pages
    format: str = "webp"  # encoding of colour pages (and of gray ones when not lossless)
    # lossy webp and jpeg (png is lossless). At method 0, quality 40 keeps the fidelity of
    # quality 50 at method 2 (35.8 dB PSNR on the realdocs' colour pages) in 60% of the time,
    # for 11% more bytes: about 100 KiB a colour page
    quality: int = 40
    method: int = 0  # lossy webp effort, 0 (fast, larger) to 6: 2 costs 1.6 times 0
    # auto: a page rendered without colour is stored in gray; gray: every page rendered in
    # gray (5.6 ms a page instead of 6.1 on average, colour lost); rgb: every page in colour
    color: str = "auto"
    # levels a gray page keeps, stored losslessly (png at 1, 2 or 4 bits, or webp lossless);
    # 256 keeps every level, 0 encodes gray pages with the lossy settings (jpeg always does)
    gray_levels: int = 16
    # how gray pages are stored losslessly: png (16 levels: 3 ms a page) or webp lossless
    # (9.4 ms, and 15% larger); colour pages are stored in `format`
    gray_format: str = "png"
    max_pixels: int = 16_000_000  # per page: a larger page costs the document its images
    pages: int = 0  # the first N pages of each document; 0 = all
    seconds: float = 20.0  # rendering budget per document
    mask: bool = True  # paint removed words (abstracts, headers, stamps) with the background

    def __post_init__(self) -> None:
        if self.format not in IMAGE_FORMATS:
            raise ConfigError(f"[images] format: expected one of {', '.join(IMAGE_FORMATS)}, "
                              f"got {self.format!r}")
        check_choice(self.color, "images", "color", IMAGE_COLORS)
        check_choice(self.gray_format, "images", "gray_format", GRAY_FORMATS)
        if not 10 <= self.dpi <= 600:
            raise ConfigError(f"[images] dpi: expected 10 to 600, got {self.dpi}")
        if not 1 <= self.quality <= 100:
            raise ConfigError(f"[images] quality: expected 1 to 100, got {self.quality}")
        if not 0 <= self.method <= 6:
            raise ConfigError(f"[images] method: expected 0 to 6, got {self.method}")
        if self.gray_levels not in GRAY_LEVELS:
            raise ConfigError(f"[images] gray_levels: expected one of "
                              f"{', '.join(map(str, GRAY_LEVELS))}, got {self.gray_levels}")
        if self.max_pixels < 1 or self.pages < 0 or self.seconds <= 0:
            raise ConfigError("[images] max_pixels and seconds must be positive, pages >= 0")

    def lossless_gray(self) -> bool:
        """Whether gray pages are reduced to `gray_levels` and stored losslessly."""
        return self.gray_levels > 0 and self.format != "jpeg"

    def encoder(self, gray: bool = False) -> dict[str, object]:
        """The pinned encoder options of a colour page, or of a gray one (recorded in
        build.json)."""
        if gray and self.lossless_gray():
            if self.format == "webp" and self.gray_format == "webp":
                return {"format": "WEBP", "lossless": True, "quality": 0, "method": 0,
                        "exact": False}
            # written by gray_png: rows unfiltered, deflated by ISA-L at its level 1 (a fifth
            # of zlib level 1's time, for slightly fewer bytes)
            return {"format": "PNG", "bits": min(8, self.gray_levels.bit_length() - 1),
                    "filter": "none", "compress_level": 1}
        if self.format == "webp":
            return {"format": "WEBP", "quality": self.quality, "method": self.method,
                    "exact": False}
        if self.format == "jpeg":
            return {"format": "JPEG", "quality": self.quality, "optimize": False,
                    "progressive": False, "subsampling": 2}
        return {"format": "PNG", "optimize": False, "compress_level": 6}


@dataclass(frozen=True)
class DedupSettings:
    """Near-duplicates across the datasets of one output folder (corpus.contamination)."""

    # report: list the shared works; guard: a work in validation or test of any dataset is
    # dropped from the train split of the others; drop: one copy per work, the first published.
    across: str = "report"
    threshold: float = 0.5  # estimated Jaccard of the bodies' word 5-grams that makes one work
    also: tuple[str, ...] = ()  # other output folders checked too (read only)
    exclude: tuple[str, ...] = ()  # ids and DOIs kept out of every split (published test sets)

    def __post_init__(self) -> None:
        if self.across not in ("report", "guard", "drop"):
            raise ConfigError(f"[dedup] across: expected report, guard or drop, "
                              f"got {self.across!r}")
        if not 0.0 < self.threshold <= 1.0:
            raise ConfigError(f"[dedup] threshold: expected a number in (0, 1], "
                              f"got {self.threshold}")


@dataclass(frozen=True)
class SplitSettings:
    """Chronological split ratios (oldest documents in train)."""

    train: float = 0.94  # share of the documents, the oldest, in train
    validation: float = 0.03  # share in validation, dated after train
    test: float = 0.03  # share in test, the newest; the three shares sum to 1

    def __post_init__(self) -> None:
        shares = {"train": 0.0, "validation": 0.0, "test": 0.0}
        check_ranges(self, "split", at_least=shares, at_most=dict.fromkeys(shares, 1.0))
        if abs(self.train + self.validation + self.test - 1.0) > 1e-6:
            raise ConfigError("[split] train + validation + test must sum to 1")


@dataclass(frozen=True)
class OutputSettings:
    """Parquet shard layout."""

    # Documents a new shard is packed to. A changed or removed document rewrites its whole
    # shard; the Hub upload of that shard sends only the chunks that changed (pages are cut
    # by content), so what a rewrite costs is mostly local CPU and bytes. Above
    # rows_per_file, so an increment's partial shards fit the file rule for a while before
    # the smallest are merged.
    shard_rows: int = 320
    # A split of r documents holds at most max(1, r // rows_per_file) shards: readers open
    # few files (the Hub advises fewer than 10,000 a folder, and load_dataset pays per
    # file). When a publication would hold more, its smallest kept shards are repacked with
    # the new rows, so a folder of small shards (an older layout) is merged on its next run
    # from the rows in place, no document processed again.
    rows_per_file: int = 250
    # Documents dated within this many days of the newest are packed apart, in shards as
    # small as the file rule leaves room for: revisions (new versions) come within months of
    # a paper's first, so a revision rewrites a small shard, not a full one. 0: no such tier.
    recent_days: int = 365
    # A shard's rows are cut into runs of row groups by their ids, runs of this many rows on
    # average (at most four times as many): a run whose rows did not change is copied as
    # bytes into a rewritten shard, so a change costs its run, not its shard, in CPU and in
    # what a Hub upload sends (32 ten-page documents: about 2.5 MB).
    row_group_rows: int = 32
    # A row group also ends at this many uncompressed bytes, so a reader (the Hub's viewer)
    # can read one whole even when rows reach megabytes each.
    row_group_bytes: int = 100_000_000
    zstd_level: int = 3  # compression level of the Parquet shards
    # Pages cut where the content says, so a rewritten shard shares most pages with the old
    # one and a content-addressed upload moves only what changed.
    content_defined_chunking: bool = True
    # Of the work files: none, lz4 or zstd. A work file lives only until its row is
    # published, so by default it is not compressed: lz4 makes it 30 % smaller for about
    # 0.04 ms of the parent's CPU per page written and read back, zstd 55 % for 0.2 ms.
    work_compression: str = "none"

    def __post_init__(self) -> None:
        if self.work_compression not in ("zstd", "lz4", "none"):
            raise ConfigError("[output] work_compression must be zstd, lz4 or none, got "
                              f"{self.work_compression!r}")
        check_ranges(self, "output", at_least={"shard_rows": 1, "rows_per_file": 1,
                                               "recent_days": 0,
                                               "row_group_rows": 1,
                                               "row_group_bytes": 1, "zstd_level": 1},
                     at_most={"zstd_level": 22})


@dataclass(frozen=True)
class StoreSettings:
    """What the state folder keeps."""

    # Downloaded PDFs stay after publishing: a re-download (after a settings change
    # re-processes everything) is slow and sometimes rate-limited. With false, a document's
    # PDF is deleted once it is published, filtered or rejected, and downloaded again if it
    # is ever processed again. `local` PDFs are links to the user's files, never deleted.
    keep_downloads: bool = True
    # A published document's work file is deleted once its shard is in place: the shard
    # holds the same row (read back from there when the shard is rewritten, and processed
    # again from the stored PDF if the dataset folder is lost), so work files do not double
    # the corpus on disk. With true they stay, and `verify` also compares every published
    # row with its work file, i.e. with what a full republish would write.
    keep_work: bool = False


@dataclass(frozen=True)
class Settings:
    """Everything one build needs; `source` is the source's own configuration dataclass."""

    source: SourceConfig
    http: HttpSettings = field(default_factory=HttpSettings)
    run: RunSettings = field(default_factory=RunSettings)
    parse: ParseSettings = field(default_factory=ParseSettings)
    match: MatchSettings = field(default_factory=MatchSettings)
    filters: FilterSettings = field(default_factory=FilterSettings)
    split: SplitSettings = field(default_factory=SplitSettings)
    output: OutputSettings = field(default_factory=OutputSettings)
    dedup: DedupSettings = field(default_factory=DedupSettings)
    images: ImageSettings = field(default_factory=ImageSettings)
    ocr: OcrSettings = field(default_factory=OcrSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    def processing_hash(self) -> str:
        """Hash of what changes a processed document; a change re-processes every document."""
        keys = ("parse", "match", "images")
        relevant = {k: self.raw.get(k, {}) for k in keys}
        relevant["source"] = self.source.hash_input(self.raw.get("source", {}))
        return _hash(relevant)

    def config_hash(self) -> str:
        """Hash of the merged configuration, recorded in build.json.

        Where the work ran (executor, worker count, Ray address, in-flight bound) is left out:
        it does not change the output, and the same input must give byte-identical builds on
        any executor. So are the source's paths (`SourceConfig.paths`): the same documents
        read from another folder give the same build. So is `[ocr]`: it decides which
        documents can be read, each row says which of its pages OCR made, and a run without
        `--ocr` leaves the published ones be.
        """
        raw = dict(self.raw)
        raw.pop("ocr", None)
        source = {k: v for k, v in raw.pop("source", {}).items() if k not in self.source.paths}
        if source:
            raw["source"] = source
        run = {k: v for k, v in raw.pop("run", {}).items() if k not in PLACEMENT_KEYS}
        return _hash({**raw, "run": run} if run else raw)


PLACEMENT_KEYS = frozenset({"executor", "workers", "ray_address", "shared_blobs", "in_flight",
                            "ray_no_cpu_wait", "commit_batch", "commit_seconds",
                            "encode_after_groups"})


def _hash(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def builtin_config(name: str) -> dict[str, Any]:
    """The configuration shipped for a source (`configs/<name>.toml`), or {} if there is none."""
    resource = resources.files("loralay_build") / "configs" / f"{name}.toml"
    if not resource.is_file():
        return {}
    return tomllib.loads(resource.read_text(encoding="utf-8"))


def read_config_file(path: Path) -> dict[str, Any]:
    text = read_text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc


def merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Deep-merge two config tables; the overlay wins."""
    out = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """`LORALAY_SECTION__KEY=value` becomes {section: {key: value}}; values parse as TOML."""
    out: dict[str, Any] = {}
    for name, text in environ.items():
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        section, _, key = name[len(ENV_PREFIX) :].lower().partition("__")
        checked_env(name, name)
        text = checked_env(name, text)
        try:
            value: Any = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        out.setdefault(section, {})[key] = value
    return out


SECTIONS = ("source", "http", "run", "parse", "match", "filters", "split", "output", "store",
            "dedup", "images", "ocr")


def _checked_filters(filters: FilterSettings) -> FilterSettings:
    """Licence patterns are checked before any work: a typo would otherwise drop everything."""
    return replace(filters, licences=check_patterns(filters.licences))


def load_settings(
    source: str,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    source_config: type[SourceConfig],
) -> Settings:
    """Merge every layer for `source` and validate it into a `Settings`, the `[source]`
    table into `source_config` (`sources.load_settings` names the source's own).

    A refused value is reported with the layer that set it (the file, the environment
    variable or the flag), found by validating the layers merged one more at a time.
    """
    builtin = builtin_config(source)
    layers: list[tuple[str, Mapping[str, Any]]] = [(f"configs/{source}.toml", builtin)]
    if config_file is not None:
        layers.append((f"--config {config_file}", read_config_file(config_file)))
    env = env_overrides(os.environ if environ is None else environ)
    for section, table in env.items():
        names = ", ".join(f"{ENV_PREFIX}{section.upper()}__{k.upper()}" for k in table)
        layers.append((f"environment variable {names}", {section: table}))
    if overrides:
        layers.append(("command-line options", overrides))
    raw: dict[str, Any] = {}
    for _, table in layers:
        raw = merge(raw, table)
    try:
        settings = _validate(source, raw, source_config)
    except ConfigError as exc:
        blame = _first_failing_layer(source, layers, source_config)
        raise ConfigError(f"{exc} (set by {blame})" if blame else str(exc)) from None
    _check_overridden(source, raw, layers, source_config)
    return settings


def _check_overridden(source: str, raw: dict[str, Any],
                      layers: list[tuple[str, Mapping[str, Any]]],
                      source_config: type[SourceConfig]) -> None:
    """Refuse a bad value in a layer even where a higher layer sets the same key: a file
    that is wrong is wrong whatever the flags of one run say. Each layer's values are put
    back over the merged configuration, so a key only the higher layers give is still set."""
    for index, (label, table) in enumerate(layers[:-1]):
        again = merge(raw, table)
        if again == raw:  # nothing of this layer is overridden
            continue
        try:
            _validate(source, again, source_config)
        except ConfigError as exc:
            keys = _set_keys(table)
            above = ", ".join(name for name, later in layers[index + 1:]
                              if keys & _set_keys(later))
            raise ConfigError(f"{exc} (set by {label}; overridden by {above}, but fix it "
                              "there)") from None


def _set_keys(table: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (section, key) pairs a layer sets."""
    return {(section, key) for section, keys in table.items() if isinstance(keys, Mapping)
            for key in keys}


def _first_failing_layer(source: str, layers: list[tuple[str, Mapping[str, Any]]],
                         source_config: type[SourceConfig]) -> str | None:
    """The first layer whose merge with the ones below it no longer validates."""
    raw: dict[str, Any] = {}
    for label, table in layers:
        raw = merge(raw, table)
        try:
            _validate(source, raw, source_config)
        except ConfigError:
            return label
    return None


def settings_from_raw(source: str, raw: dict[str, Any],
                      source_config: type[SourceConfig]) -> Settings:
    """Validate the configuration an earlier build recorded (`remove` publishes with it)."""
    return _validate(source, raw, source_config)


def _validate(source: str, raw: dict[str, Any], source_config: type[SourceConfig]) -> Settings:
    unknown = set(raw) - set(SECTIONS)
    if unknown:
        raise ConfigError(f"unknown section(s): {', '.join(sorted(unknown))}")
    return Settings(
        source=source_from_table(source_config, raw.get("source", {}), source),
        http=from_table(HttpSettings, raw.get("http", {}), "http"),
        run=from_table(RunSettings, raw.get("run", {}), "run"),
        parse=ParseSettings.from_mapping(raw.get("parse", {})),
        match=MatchSettings.from_mapping(raw.get("match", {})),
        filters=_checked_filters(from_table(FilterSettings, raw.get("filters", {}), "filters")),
        split=from_table(SplitSettings, raw.get("split", {}), "split"),
        output=from_table(OutputSettings, raw.get("output", {}), "output"),
        dedup=from_table(DedupSettings, raw.get("dedup", {}), "dedup"),
        images=from_table(ImageSettings, raw.get("images", {}), "images"),
        ocr=from_table(OcrSettings, raw.get("ocr", {}), "ocr"),
        store=from_table(StoreSettings, raw.get("store", {}), "store"),
        raw=raw,
    )
