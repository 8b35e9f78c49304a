"""The `[source]` table, typed: the per-document options every source shares, and the base of
each source's own configuration dataclass.

Why: a free-form table accepted a typo of a key or of a closed choice (`abstract_format =
"htm"`) and then rejected every document one by one; a declared dataclass refuses it, with the
key and the layer that set it, before any work. The shipped values of each key live in
`configs/<source>.toml`; a key without one has its default in the dataclass (mostly None).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from loralay_build.errors import ConfigError
from loralay_build.parse.clean import CLEANERS
from loralay_build.tables import check_choice, check_ranges
from loralay_build.text.clean import Format

LanguageCheck = Literal["none", "abstract", "body"]  # see run.process
SummaryMode = Literal["in_document", "separate"]

C = TypeVar("C", bound="DocumentOptions")


def key(name: str) -> Any:
    """A field whose `[source]` key is not a Python name (`from`); no default."""
    return dataclasses.field(metadata={"key": name})


def optional_key(name: str) -> Any:
    """A field whose `[source]` key is not a Python name, without a shipped value."""
    return dataclasses.field(default=None, metadata={"key": name})


@dataclass(frozen=True, kw_only=True)
class DocumentOptions:
    """How each document of a source is processed: what the worker gets, and what the
    processing hash covers (a change re-processes every document)."""

    cleaners: tuple[str, ...] = ()  # what is dropped from the body before matching, in order
    abstract_format: Format = "plain"  # how metadata abstracts are written
    # reject as language_mismatch: nothing, the main abstract or the body not in the
    # candidate's language
    language_check: LanguageCheck = "none"
    language: str = ""  # main language of the source's records (discovery)
    summary: SummaryMode = "in_document"  # separate: the target is its own document
    min_reference_ratio: float = 0.0  # keep only documents this many times their summary

    def __post_init__(self) -> None:
        for name in self.cleaners:
            check_choice(name, "source", "cleaners", tuple(sorted(CLEANERS)))
        check_ranges(self, "source", at_least={"min_reference_ratio": 0})

    def ocr_languages(self) -> tuple[str, ...]:
        """The languages (ISO 639-1) the source's documents may be written in, whose OCR
        models `--ocr` checks before any work."""
        return (self.language,) if self.language else ()

    def document_options(self) -> DocumentOptions:
        """Only the per-document part, the one object sent with every task."""
        return DocumentOptions(**{f.name: getattr(self, f.name)
                                  for f in dataclasses.fields(DocumentOptions)})

    def hash_input(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The per-document options set by a configuration layer (`given`: the merged
        `[source]` table), as the processing hash has always covered them: a key left to its
        default is not part of it, so a build keeps its work keys across versions."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(DocumentOptions)
                if f.name in given}


@dataclass(frozen=True, kw_only=True)
class SourceConfig(DocumentOptions):
    """The keys every source accepts; a source's own dataclass adds its keys."""

    # Abstract similarity above which same-title documents are one work (corpus.dedup);
    # None keeps the shared-PDF rule alone.
    dedup_threshold: float | None = None
    # The keys naming files on this machine (a manifest, id lists): where the input is,
    # not what it holds, so the build record's configuration hash leaves them out.
    paths: ClassVar[tuple[str, ...]] = ()
    # Views written after the layout dataset, each in its own folder NAME-<view>, among
    # VIEWS (sources.views.publish; a source with views of its own adds their names).
    views: tuple[str, ...] = ()
    VIEWS: ClassVar[tuple[str, ...]] = ("cohan",)

    def endpoints(self) -> list[str]:
        """The URLs of the source's services (keys named `*_url`), trusted by the client."""
        return [value for f in dataclasses.fields(self) if f.name.endswith("_url")
                and isinstance(value := getattr(self, f.name), str)]

    def __post_init__(self) -> None:
        super().__post_init__()
        for view in self.views:
            check_choice(view, "source", "views", self.VIEWS)
        if self.dedup_threshold is not None and not 0 < self.dedup_threshold <= 1:
            raise ConfigError(f"[source] dedup_threshold = {self.dedup_threshold!r}: must be "
                              "above 0 and at most 1")


def source_from_table(cls: type[C], table: Mapping[str, Any], source: str) -> C:
    """`cls(**table)` after refusing unknown keys, missing keys and values of the wrong type."""
    fields = {f.metadata.get("key", f.name): f
              for f in dataclasses.fields(cls)}
    unknown = sorted(set(table) - set(fields))
    if unknown:
        raise ConfigError(f"unknown [source] key(s) for {source}: {', '.join(unknown)}; "
                          f"valid keys: {', '.join(sorted(fields))}")
    hints = get_type_hints(cls)
    values = {fields[k].name: _typed(v, hints[fields[k].name], k) for k, v in table.items()}
    missing = sorted(k for k, f in fields.items() if f.name not in values
                     and f.default is dataclasses.MISSING
                     and f.default_factory is dataclasses.MISSING)
    if missing:
        raise ConfigError(f"[source] of {source} lacks {', '.join(missing)}")
    return cls(**values)


def _typed(value: Any, hint: Any, key: str) -> Any:
    """`value` as `hint` (arrays become tuples, integers floats), or a ConfigError."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return value
    if origin is Literal:
        check_choice(value, "source", key, tuple(str(a) for a in args))
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arm in (a for a in args if a is not type(None)):
            try:
                return _typed(value, arm, key)
            except ConfigError as exc:
                errors.append(exc)
        raise errors[0]
    if origin is tuple and isinstance(value, list | tuple):
        return tuple(_typed(item, args[0], key) for item in value)
    if origin is dict and isinstance(value, Mapping):
        return {str(k): _typed(v, args[1], f"{key}.{k}") for k, v in value.items()}
    if hint is float and type(value) is int:
        return float(value)
    if origin is None and type(value) is hint:
        return value
    raise ConfigError(f"[source] {key} = {value!r}: expected {_kind(hint)}")


def _kind(hint: Any) -> str:
    """What TOML calls a value of `hint`."""
    origin = get_origin(hint)
    if origin is tuple:
        return f"an array of {_kind(get_args(hint)[0]).removeprefix('a ').removeprefix('an ')}s"
    if origin is dict:
        return "a table"
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}.get(
        hint, str(hint))
