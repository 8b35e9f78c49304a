"""Frozen settings dataclasses built from TOML tables, with the same checks for every section."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from loralay_build.errors import ConfigError

T = TypeVar("T")


def from_table(cls: type[T], table: Mapping[str, Any], section: str) -> T:
    """`cls(**table)` after refusing unknown keys and values of the wrong type.

    TOML arrays become tuples where the default is a tuple, and integers are accepted where a
    float is expected; a boolean is never taken for a number.
    """
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"unknown key(s) in [{section}]: {', '.join(unknown)}")
    defaults = cls()
    kwargs: dict[str, Any] = {}
    for key, value in table.items():
        default = getattr(defaults, key)
        if isinstance(default, tuple) and isinstance(value, list):
            value = tuple(value)
        elif type(default) is float and type(value) is int:
            value = float(value)
        if type(value) is not type(default):
            raise ConfigError(
                f"[{section}] {key}: expected {type(default).__name__}, got {value!r}"
            )
        kwargs[key] = value
    return cls(**kwargs)


def check_ranges(
    obj: object,
    section: str,
    at_least: Mapping[str, float] | None = None,
    above: Mapping[str, float] | None = None,
    at_most: Mapping[str, float] | None = None,
) -> None:
    """Refuse out-of-range numbers before any work: a negative timeout or interval would
    otherwise be accepted and reject every document, or hammer a server."""
    for name, low in (at_least or {}).items():
        if getattr(obj, name) < low:
            raise ConfigError(f"[{section}] {name} = {getattr(obj, name)!r}: must be at least "
                              f"{low:g}")
    for name, low in (above or {}).items():
        if getattr(obj, name) <= low:
            raise ConfigError(f"[{section}] {name} = {getattr(obj, name)!r}: must be above "
                              f"{low:g}")
    for name, high in (at_most or {}).items():
        if getattr(obj, name) > high:
            raise ConfigError(f"[{section}] {name} = {getattr(obj, name)!r}: must be at most "
                              f"{high:g}")


def check_choice(value: object, section: str, name: str, choices: tuple[str, ...]) -> None:
    """A value from a closed set (a typo such as "htm" is refused, not silently ignored)."""
    if value not in choices:
        raise ConfigError(f"[{section}] {name} = {value!r}: must be one of "
                          f"{', '.join(choices)}")
