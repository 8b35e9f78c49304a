"""The configuration reference: every key of every section, with its type, default, shipped
values, range and meaning, from the settings dataclasses and `configs/*.toml`."""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from loralay_build.config import SECTIONS, Settings, builtin_config
from loralay_build.docgen.fielddocs import field_docs, field_ranges
from loralay_build.source_table import SourceConfig
from loralay_build.sources import SOURCES

WIDEST_VALUE = 48  # characters of a value shown in a table cell; longer ones are cut
SHIPPED_WIDTH = 16  # a longer shipped value is named by its source alone (see its TOML)


@dataclasses.dataclass(frozen=True)
class Key:
    """One configuration key as the reference shows it."""

    name: str
    kind: str
    default: str
    allowed: str
    meaning: str


def toml_value(value: Any) -> str:
    """A value as TOML writes it, cut to the table's width."""
    text = _toml(value)
    return text if len(text) <= WIDEST_VALUE else text[: WIDEST_VALUE - 1] + "…"


def _toml(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_bare(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return repr(value)


def _bare(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else _toml(key)


def kind(hint: Any) -> str:
    """What TOML value a field takes."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType):
        arms = [kind(arm) for arm in args if arm is not type(None)]
        return " or ".join(arms)
    if origin is Literal:
        return "string"
    if origin is tuple:
        return f"array of {_plural(kind(args[0]))}"
    if origin is dict:
        return f"table of {_plural(kind(args[1]))}"
    return {bool: "boolean", int: "integer", float: "float", str: "string"}.get(
        hint, str(hint))


def _plural(word: str) -> str:
    if word.startswith(("array", "table")):
        return word.replace("array", "arrays", 1).replace("table", "tables", 1)
    return " or ".join(f"{arm}s" for arm in word.split(" or "))


def _literal_choices(hint: Any) -> tuple[str, ...]:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return tuple(str(a) for a in args)
    if origin in (Union, types.UnionType, tuple):
        return tuple(c for arm in args if arm is not Ellipsis for c in _literal_choices(arm))
    return ()


def _allowed(hint: Any, checks: list[str]) -> str:
    choices = _literal_choices(hint)
    found = ([f"one of {', '.join(f'`{c}`' for c in choices)}"] if choices else []) + [
        c for c in checks if not (choices and c.startswith("one of"))]
    if not found:
        return "true or false" if hint is bool else ""
    text = ", ".join(found)
    return f"each {text}" if get_origin(hint) is tuple else text


def _toml_key(field: dataclasses.Field[Any]) -> str:
    return str(field.metadata.get("key", field.name))


def keys(cls: type) -> list[Key]:
    """Every field of a settings dataclass as a key of its section."""
    hints = get_type_hints(cls)
    docs, ranges = field_docs(cls), field_ranges(cls)
    found = []
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            default = toml_value(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            default = toml_value(field.default_factory())
        else:
            default = "(shipped)"
        found.append(Key(_toml_key(field), kind(hints[field.name]), default,
                         _allowed(hints[field.name], ranges.get(field.name, [])),
                         docs.get(field.name, "")))
    return found


def section_classes() -> dict[str, type]:
    """Section name -> its settings dataclass, in the order of `config.SECTIONS`."""
    hints = get_type_hints(Settings)
    return {section: hints[section] for section in SECTIONS if section != "source"}


def undocumented() -> list[str]:
    """`[section] key` of every key whose dataclass field says nothing of its meaning."""
    missing = [f"[{section}] {key.name}" for section, cls in section_classes().items()
               for key in keys(cls) if not key.meaning]
    for name, source in sorted(SOURCES.items()):
        missing += [f"[source] {key.name} ({name})" for key in keys(source.config_class)
                    if not key.meaning]
    return sorted(set(missing))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def _shipped(section: str, key: str) -> str:
    """The values `configs/<source>.toml` gives a key, by source."""
    values = []
    for name in sorted(SOURCES):
        table = builtin_config(name).get(section, {})
        if key in table:
            value = toml_value(table[key])
            values.append(f"{name}: `{value}`" if len(value) <= SHIPPED_WIDTH else name)
    return "; ".join(values)


def _code(text: str) -> str:
    return f"`{text}`" if text and not text.startswith("(") and text != "not set" else text


def render() -> str:
    """The reference as Markdown: the shared sections, then `[source]` per source."""
    out: list[str] = []
    for section, cls in section_classes().items():
        summary = (cls.__doc__ or "").strip().split("\n\n")[0]
        out += [f"### `[{section}]`", "", " ".join(summary.split()), ""]
        rows = [[f"`{k.name}`", k.kind, _code(k.default), _shipped(section, k.name),
                 k.allowed, k.meaning] for k in keys(cls)]
        out += _table(rows, ["key", "type", "default", "shipped", "range", "meaning"])
        out.append("")
    common = {k.name for k in keys(SourceConfig)}
    out += ["### `[source]`: every source", "",
            " ".join((SourceConfig.__doc__ or "").split()) + " "
            + "The per-document keys feed the processing hash: changing one re-processes "
            "every document.", ""]
    rows = [[f"`{k.name}`", k.kind, _code(k.default), _shipped("source", k.name), k.allowed,
             k.meaning] for k in keys(SourceConfig)]
    out += _table(rows, ["key", "type", "default", "shipped", "range", "meaning"])
    out.append("")
    for name, source in SOURCES.items():
        cls = source.config_class
        shipped = builtin_config(name).get("source", {})
        out += [f"### `[source]` of `{name}`", "",
                " ".join((cls.__doc__ or "").split()) + f" Shipped in `configs/{name}.toml`.",
                ""]
        own = [k for k in keys(cls) if k.name not in common]
        rows = [[f"`{k.name}`", k.kind,
                 _code(toml_value(shipped[k.name])) if k.name in shipped else _code(k.default),
                 k.allowed, k.meaning] for k in own]
        out += _table(rows, ["key", "type", "value", "range", "meaning"]) if rows else [
            "No keys beyond those every source has."]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
