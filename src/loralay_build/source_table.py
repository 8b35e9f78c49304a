"""Checks of a source's free-form `[source]` table, before any work.

Why: a value of the wrong kind (`cleaners = "running_headers"`) or a typo of a closed choice
(`abstract_format = "htm"`) was accepted, then rejected every document one by one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from loralay_build.errors import ConfigError
from loralay_build.parse.clean import CLEANERS
from loralay_build.tables import check_choice
from loralay_build.text.clean import Format

LANGUAGE_CHECKS = ("none", "abstract", "body")  # see run.process
SUMMARY_MODES = ("in_document", "separate")
ABSTRACT_FORMATS: tuple[str, ...] = get_args(Format)


def _kind(value: Any) -> str:
    """What TOML calls the value's type; a comma-separated string and an array are one kind,
    since list-valued keys accept both."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a float" if isinstance(value, float) else "an integer"
    if isinstance(value, str | list):
        return "a string or array"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _same_kind(value: Any, default: Any) -> bool:
    if _kind(default) == "a float":
        return _kind(value) in ("a float", "an integer")
    return _kind(value) == _kind(default)


def check_source_table(table: Mapping[str, Any], defaults: Mapping[str, Any],
                       source_choices: Mapping[str, list[str]]) -> None:
    """Each value has the kind of the source's shipped default, and keys with a closed set
    of values (those every source shares, and the source's `source_choices`) hold one."""
    for key, value in table.items():
        default = defaults.get(key)
        if default is not None and not _same_kind(value, default):
            raise ConfigError(f"[source] {key} = {value!r}: expected {_kind(default)} like "
                              f"the default {default!r}")
    cleaners = table.get("cleaners", [])
    if not isinstance(cleaners, list) or not all(isinstance(c, str) for c in cleaners):
        raise ConfigError(f"[source] cleaners = {cleaners!r}: expected an array of cleaner "
                          f"names, e.g. [\"running_headers\"]")
    for name in cleaners:
        check_choice(name, "source", "cleaners", tuple(sorted(CLEANERS)))
    choices = {"abstract_format": ABSTRACT_FORMATS, "language_check": LANGUAGE_CHECKS,
               "summary": SUMMARY_MODES,
               **{key: tuple(values) for key, values in source_choices.items()}}
    for key, allowed in choices.items():
        if key in table:
            check_choice(table[key], "source", key, allowed)
    if not isinstance(table.get("language", ""), str):
        raise ConfigError(f"[source] language = {table['language']!r}: expected a string")
