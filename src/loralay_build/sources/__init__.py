"""Source modules, by name, and the settings of a build of one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loralay_build import config
from loralay_build.config import Settings
from loralay_build.corpus.card import declare_notes
from loralay_build.corpus.columns import declare
from loralay_build.errors import ConfigError
from loralay_build.licences import declare_licences
from loralay_build.parse.clean import declare_cleaners
from loralay_build.sources.arxiv import ArxivSource
from loralay_build.sources.base import Source
from loralay_build.sources.eurlex import EurlexSource
from loralay_build.sources.hal import HalSource
from loralay_build.sources.koreascience import KoreaScienceSource
from loralay_build.sources.local import LocalSource
from loralay_build.sources.openreview import OpenReviewSource
from loralay_build.sources.pubmed import PubmedSource
from loralay_build.sources.scielo import SciELOSource
from loralay_build.sources.views.cohan import LAYOUT as COHAN
from loralay_build.views.schema import declare_views

SOURCES: dict[str, type[Source]] = {}


def register(source: type[Source]) -> None:
    """Make a source known by its name: its `build-corpus` command, its settings, and what
    it declares: its columns (for the schema and the card), its card notes, its licences,
    its cleaners and its views. The order of registration is the published order of the
    sources' own columns."""
    if source.name in SOURCES:
        raise ValueError(f"source {source.name!r} is registered twice")
    SOURCES[source.name] = source
    declare(source.declares)
    declare_notes(source.name, source.card_notes)
    declare_licences(source.name, source.licences)
    declare_cleaners(source.cleaners)
    declare_views(source.views)


# OpenReview's columns before arXiv's and EUR-Lex's: the order builds made before datasets had
# their own schema published them in.
for _source in (HalSource, LocalSource, SciELOSource, KoreaScienceSource, OpenReviewSource,
                ArxivSource, PubmedSource, EurlexSource):
    register(_source)
declare_views((COHAN,))  # every source's (`[source] views = ["cohan"]`)


def source_class(name: str) -> type[Source]:
    try:
        return SOURCES[name]
    except KeyError:
        raise ConfigError(f"unknown source {name!r}; known: {', '.join(sorted(SOURCES))}") from None


def get_source(name: str) -> Source:
    return source_class(name)()


def load_settings(name: str, config_file: Path | None = None,
                  environ: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Settings:
    """`config.load_settings` with the source's own `[source]` dataclass."""
    return config.load_settings(name, config_file, environ, overrides,
                                source_config=source_class(name).config_class)


def settings_from_raw(name: str, raw: dict[str, Any]) -> Settings:
    """`config.settings_from_raw` with the source's own `[source]` dataclass."""
    return config.settings_from_raw(name, raw, source_class(name).config_class)
