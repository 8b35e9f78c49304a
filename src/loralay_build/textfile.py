"""Text the user hands over (manifests, config files, id lists, environment values), decoded
as UTF-8 with an error that points at the first bad byte.

Why: a byte that is not UTF-8 used to end in a `UnicodeDecodeError` traceback; the user needs
the file, the line and the byte offset to find and fix it (exit 2 like any other bad input).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from loralay_build.errors import ConfigError

BOM = "\ufeff"


def _not_utf8(where: str, line: int, offset: int, byte: int) -> ConfigError:
    return ConfigError(f"{where}: line {line}, byte {offset}: not UTF-8 text (byte 0x{byte:02x}); "
                       "save it as UTF-8")


def decode_lines(raw: Iterable[bytes], where: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of `raw`, a BOM at the start dropped; `where` names the
    input in the error a bad byte raises (its offset counts from the start of the input)."""
    offset = 0
    for lineno, chunk in enumerate(raw, 1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(where, lineno, offset + exc.start, chunk[exc.start]) from None
        offset += len(chunk)
        yield lineno, text.removeprefix(BOM) if lineno == 1 else text


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a file, streamed (a manifest or a snapshot may not fit in memory)."""
    try:
        with path.open("rb") as handle:
            yield from decode_lines(handle, str(path))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_text(path: Path) -> str:
    """A whole (small) file as text, a BOM at its start dropped."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    return decoded(data, str(path))


def decoded(data: bytes, where: str) -> str:
    """`data` as text, or the error naming the line and offset of its first bad byte."""
    try:
        return data.decode("utf-8").removeprefix(BOM)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _not_utf8(where, line, exc.start, data[exc.start]) from None


def checked_env(name: str, value: str) -> str:
    """An environment value as Python gives it (bytes that are not UTF-8 become lone
    surrogates), refused when it holds such a byte."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raw = value.encode("utf-8", "surrogateescape")
        offset = len(value[: exc.start].encode("utf-8", "surrogateescape"))
        raise _not_utf8(f"environment variable {name}", raw.count(b"\n", 0, offset) + 1,
                        offset, raw[offset]) from None
    return value


def escaped(text: str) -> str:
    """`text` with the bytes that were not UTF-8 (arguments and paths reach Python as lone
    surrogates, which SQLite and JSON files refuse) written as `\\xNN`."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
