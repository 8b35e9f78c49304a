"""Thresholds of abstract matching, with documented defaults and strict loading from TOML."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from loralay_build.errors import ConfigError
from loralay_build.tables import from_table

Mode = Literal["engine", "faithful"]


@dataclass(frozen=True)
class MatchSettings:
    """How abstracts are located and when a document is rejected.

    Ratios are edit distances per character of the normalised abstract, so long abstracts
    get a budget in proportion to their length instead of a fixed count of edits.
    """

    mode: Mode = "engine"
    """"engine" (seeded search over the whole document) or "faithful" (the LoRaLay cascade)."""

    accept_ratio: float = 0.15
    """A span at most this many edits per abstract character away is a confident hit."""

    absent_ratio: float = 0.45
    """Beyond this ratio the abstract is absent; between the two ratios it is partly present."""

    seed_len: int = 12
    """Length in characters of the exact seeds taken from the abstract."""

    max_seeds: int = 96
    """Most seeds taken per abstract, spread evenly; bounds the seeding cost on long abstracts."""

    seed_hits: int = 5
    """Most occurrences of one seed that vote; seeds of boilerplate text cannot flood the vote."""

    bin_chars: int = 32
    """Width in characters of a diagonal bin in the seed vote."""

    min_votes: int = 2
    """Fewest seed votes (bin plus neighbours) for a diagonal to be aligned at all."""

    candidates: int = 3
    """How many of the best-voted diagonals are aligned; the lowest distance wins."""

    slack_ratio: float = 0.25
    """Window margin each side of a diagonal, as a share of the abstract length."""

    min_slack: int = 64
    """Smallest window margin in characters, for short abstracts."""

    split_seed_share: float = 0.25
    """Share of seeds that must occur in the body before a split abstract is looked for."""

    partial_share: float = 0.25
    """Share of an abstract found in confident pieces that makes it partly present."""

    piece_chars: int = 24
    """Smallest piece, in characters, that a split abstract is cut into."""

    split_spread: float = 3.0
    """Pieces of a split abstract lie within this many abstract lengths of the largest piece."""

    copy_leakage: float = 0.2
    """Leakage above which a further copy of a found abstract is searched for and removed."""

    max_copies: int = 2
    """Most further copies of one abstract removed (repeated cover or title pages)."""

    ngram: int = 5
    """Word n-gram size of the leakage audit."""

    faithful_max_l_dist: int = 20
    """Faithful mode: fuzzysearch `max_l_dist` (the released LoRaLay code used 15)."""

    faithful_regex_errors: int = 3
    """Faithful mode: error count of the regex fuzzy stage `{e<=N}` (released code: 5)."""

    faithful_regex_timeout: float = 0.5
    """Faithful mode: seconds before one regex search is abandoned as "not found"."""

    faithful_require_all: bool = True
    """Faithful mode: reject when any abstract is missing (released rule), not only the main one."""

    def __post_init__(self) -> None:
        if self.mode not in get_args(Mode):
            raise ConfigError(f"match mode must be one of {get_args(Mode)}, not {self.mode!r}")
        if not 0.0 < self.accept_ratio <= self.absent_ratio < 1.0:
            raise ConfigError("need 0 < accept_ratio <= absent_ratio < 1")
        positive = ("seed_len", "max_seeds", "seed_hits", "bin_chars", "candidates", "ngram",
                "piece_chars")
        for name in positive:
            if getattr(self, name) < 1:
                raise ConfigError(f"match setting {name} must be at least 1")
        if self.min_votes < 1 or self.min_slack < 0 or self.slack_ratio < 0:
            raise ConfigError("min_votes must be >= 1, min_slack and slack_ratio >= 0")
        if self.max_copies < 0 or not 0.0 <= self.copy_leakage <= 1.0:
            raise ConfigError("max_copies must be >= 0 and copy_leakage in [0, 1]")
        if not 0.0 <= self.split_seed_share <= 1.0 or self.split_spread <= 0:
            raise ConfigError("split_seed_share must be in [0, 1] and split_spread > 0")
        if not 0.0 < self.partial_share <= 1.0:
            raise ConfigError("partial_share must be in (0, 1]")
        if self.faithful_max_l_dist < 0 or self.faithful_regex_errors < 0:
            raise ConfigError("faithful edit counts must be >= 0")
        if self.faithful_regex_timeout <= 0:
            raise ConfigError("faithful_regex_timeout must be > 0")

    @classmethod
    def from_mapping(cls, values: Mapping[str, object]) -> MatchSettings:
        """Settings from a TOML table; unknown keys and wrong types are configuration errors."""
        return from_table(cls, values, "match")
