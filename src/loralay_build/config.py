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
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from loralay_build.errors import ConfigError
from loralay_build.parse.settings import ParseSettings
from loralay_build.tables import from_table
from loralay_build.text.settings import MatchSettings

ENV_PREFIX = "LORALAY_"
# "0" makes PDF parsing use the Python loop even when the compiled core is built.
NATIVE_ENV = "LORALAY_NATIVE"
MiB = 1024 * 1024



@dataclass(frozen=True)
class HttpSettings:
    """The one HTTP client's limits. Politeness first: one connection, spaced requests."""

    user_agent: str = (
        "loralay-build/0.1 (corpus builder; mailto:loralay-build@users.noreply.github.com)"
    )
    min_interval: float = 1.0  # seconds between two requests to the same host
    host_intervals: dict[str, float] = field(default_factory=dict)  # per-host overrides
    connect_timeout: float = 10.0
    read_timeout: float = 30.0  # between two reads of the body
    deadline: float = 300.0  # whole request, body included: a 1 byte/s trickle ends here
    max_bytes: int = 200 * MiB  # decoded body cap
    max_retries: int = 5  # tries after the first, within one run
    backoff_base: float = 1.0
    backoff_max: float = 120.0
    retry_after_max: float = 300.0  # a longer Retry-After defers the document to a later run
    max_redirects: int = 5
    allowed_hosts: tuple[str, ...] = ()  # download hosts; "*.example.org" allowed; empty = any
    url_rewrite: dict[str, str] = field(default_factory=dict)  # URL prefix -> replacement
    allow_private: bool = False  # loopback/private addresses (only for local test servers)


@dataclass(frozen=True)
class RunSettings:
    """How documents are processed: executor, isolation limits, retry policy across runs."""

    executor: str = "local"  # local (isolated process pool) | ray (a cluster) | serial (debugging)
    workers: int = 2
    timeout: float = 60.0  # wall-clock seconds per document, enforced by killing the worker
    memory_limit_mb: int = 2048  # RLIMIT_AS of each worker
    recycle_after: int = 200  # documents per worker before it is replaced
    max_attempts: int = 3  # runs in which a transient download failure is retried
    # --executor ray: "" starts a local Ray instance sized by `workers`; "auto" joins the
    # cluster of this node (`ray start`); "ray://host:10001" goes through a Ray Client server.
    ray_address: str = ""
    shared_blobs: bool = False  # Ray tasks read PDFs from --out (every node mounts it) or get bytes
    in_flight: int = 0  # Ray tasks submitted and not yet committed; 0 = 2 per cluster CPU
    # Processed documents are committed in batches (one filesystem sync, one state commit):
    # a crash redoes at most this many documents or seconds of work.
    commit_batch: int = 64
    commit_seconds: float = 5.0

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"[run] workers must be at least 1, got {self.workers}")


@dataclass(frozen=True)
class FilterSettings:
    """Corpus-level filters, computed over all processed documents at publish time."""

    enabled: bool = True
    max_pages_percentile: float = 95.0  # drop documents with more pages than this percentile
    min_abstract_percentile: float = 1.0  # drop documents whose summary is shorter than this


@dataclass(frozen=True)
class SplitSettings:
    """Chronological split ratios (oldest documents in train)."""

    train: float = 0.94
    validation: float = 0.03
    test: float = 0.03


@dataclass(frozen=True)
class OutputSettings:
    """Parquet shard layout."""

    shard_rows: int = 1000  # documents per shard
    row_group_rows: int = 200
    zstd_level: int = 3


@dataclass(frozen=True)
class Settings:
    """Everything one build needs; `source` is the free-form table of the source module."""

    source: dict[str, Any]
    http: HttpSettings = field(default_factory=HttpSettings)
    run: RunSettings = field(default_factory=RunSettings)
    parse: ParseSettings = field(default_factory=ParseSettings)
    match: MatchSettings = field(default_factory=MatchSettings)
    filters: FilterSettings = field(default_factory=FilterSettings)
    split: SplitSettings = field(default_factory=SplitSettings)
    output: OutputSettings = field(default_factory=OutputSettings)
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    def processing_hash(self) -> str:
        """Hash of what changes a processed document; a change re-processes every document."""
        keys = ("parse", "match")
        relevant = {k: self.raw.get(k, {}) for k in keys}
        relevant["source"] = {
            k: v
            for k, v in self.raw.get("source", {}).items()
            if k in ("cleaners", "abstract_format", "language_check", "language", "summary",
                     "min_reference_ratio")
        }
        return _hash(relevant)

    def config_hash(self) -> str:
        """Hash of the merged configuration, recorded in build.json.

        Where the work ran (executor, worker count, Ray address, in-flight bound) is left out:
        it does not change the output, and the same input must give byte-identical builds on
        any executor.
        """
        raw = dict(self.raw)
        run = {k: v for k, v in raw.pop("run", {}).items() if k not in PLACEMENT_KEYS}
        return _hash({**raw, "run": run} if run else raw)


PLACEMENT_KEYS = frozenset({"executor", "workers", "ray_address", "shared_blobs", "in_flight",
                            "commit_batch", "commit_seconds"})


def _hash(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def builtin_config(name: str) -> dict[str, Any]:
    """The configuration shipped for a source (`configs/<name>.toml`), or {} if there is none."""
    resource = resources.files("loralay_build") / "configs" / f"{name}.toml"
    if not resource.is_file():
        return {}
    return tomllib.loads(resource.read_text(encoding="utf-8"))


# `[source]` keys every source accepts (read by the pipeline, not by the source module).
COMMON_SOURCE_KEYS = frozenset({"cleaners", "abstract_format", "language_check", "language"})


def source_keys(name: str) -> frozenset[str] | None:
    """Keys `[source]` accepts for `name`: those of `configs/<name>.toml`'s `[source]` table
    (each default lives there), its `source_keys` list (keys without a default), and the
    common ones; None for a source without a shipped config (nothing to check against)."""
    builtin = builtin_config(name)
    if not builtin:
        return None
    declared = set(builtin.get("source", {})) | set(builtin.get("source_keys", []))
    return frozenset(declared | COMMON_SOURCE_KEYS)


def _check_source_keys(name: str, table: Mapping[str, Any]) -> None:
    valid = source_keys(name)
    unknown = sorted(set(table) - valid) if valid is not None else []
    if unknown:
        raise ConfigError(f"unknown [source] key(s) for {name}: {', '.join(unknown)}; "
                          f"valid keys: {', '.join(sorted(valid or ()))}")


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
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
        try:
            value: Any = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text
        out.setdefault(section, {})[key] = value
    return out


SECTIONS = ("source", "http", "run", "parse", "match", "filters", "split", "output")


def load_settings(
    source: str,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge every layer for `source` and validate it into a `Settings`."""
    raw = builtin_config(source)
    raw.pop("source_keys", None)
    if config_file is not None:
        raw = merge(raw, read_config_file(config_file))
    raw = merge(raw, env_overrides(os.environ if environ is None else environ))
    if overrides:
        raw = merge(raw, overrides)
    unknown = set(raw) - set(SECTIONS)
    if unknown:
        raise ConfigError(f"unknown section(s): {', '.join(sorted(unknown))}")
    _check_source_keys(source, raw.get("source", {}))
    split = from_table(SplitSettings, raw.get("split", {}), "split")
    if abs(split.train + split.validation + split.test - 1.0) > 1e-6:
        raise ConfigError("[split] train + validation + test must sum to 1")
    return Settings(
        source=dict(raw.get("source", {})),
        http=from_table(HttpSettings, raw.get("http", {}), "http"),
        run=from_table(RunSettings, raw.get("run", {}), "run"),
        parse=ParseSettings.from_mapping(raw.get("parse", {})),
        match=MatchSettings.from_mapping(raw.get("match", {})),
        filters=from_table(FilterSettings, raw.get("filters", {}), "filters"),
        split=split,
        output=from_table(OutputSettings, raw.get("output", {}), "output"),
        raw=raw,
    )
