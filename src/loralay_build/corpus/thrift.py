"""Thrift's compact protocol, read and written without a schema.

A Parquet file's footer and page index are Thrift structures in the compact protocol. Row
groups are copied between shards as bytes (`corpus.rowgroups`), and only their offsets in
the footer and page index change, so the structures are decoded generically, as field id,
wire type and value in the order read, and written back the same way: a structure decoded
and encoded unchanged gives its bytes back, and the fields this project does not know stay
as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from loralay_build.native import native_module

BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)

Value = Union[bool, int, bytes, "ThriftList", "Struct"]


class ThriftError(ValueError):
    """Bytes that are not a compact-protocol structure (a damaged footer or page index)."""


@dataclass
class ThriftList:
    """A list (or set) of values of one wire type."""

    kind: int
    items: list[Value]


@dataclass
class Struct:
    """A structure's fields as (id, wire type, value), in the order they were read."""

    fields: list[tuple[int, int, Value]]

    def get(self, fid: int) -> Value | None:
        return next((value for f, _, value in self.fields if f == fid), None)

    def set(self, fid: int, value: Value) -> None:
        """Replace the value of field `fid` (which must be present), keeping its type."""
        for at, (f, kind, _) in enumerate(self.fields):
            if f == fid:
                self.fields[at] = (f, kind, value)
                return
        raise KeyError(fid)


class _Reader:
    def __init__(self, data: bytes | memoryview, at: int) -> None:
        self.data, self.at = memoryview(data), at

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise ThriftError("structure cut short")
        self.at += 1
        return int(self.data[self.at - 1])

    def varint(self) -> int:
        out = shift = 0
        while True:
            byte = self.byte()
            out |= (byte & 0x7F) << shift
            if byte < 0x80:
                return out
            shift += 7
            if shift > 70:
                raise ThriftError("varint too long")

    def zigzag(self) -> int:
        raw = self.varint()
        return (raw >> 1) ^ -(raw & 1)

    def take(self, size: int) -> bytes:
        if size < 0 or self.at + size > len(self.data):
            raise ThriftError("structure cut short")
        self.at += size
        return bytes(self.data[self.at - size : self.at])

    def value(self, kind: int) -> Value:
        if kind in (BOOL_TRUE, BOOL_FALSE):  # in a list: one byte each
            return self.byte() == BOOL_TRUE
        if kind == BYTE:
            return self.byte()
        if kind in (I16, I32, I64):
            return self.zigzag()
        if kind == DOUBLE:
            return self.take(8)
        if kind == BINARY:
            return self.take(self.varint())
        if kind in (LIST, SET):
            head = self.byte()
            size, inner = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            return ThriftList(inner, [self.value(inner) for _ in range(size)])
        if kind == STRUCT:
            return self.struct()
        raise ThriftError(f"wire type {kind} is not read here")

    def struct(self) -> Struct:
        fields: list[tuple[int, int, Value]] = []
        last = 0
        while (head := self.byte()) != 0:
            kind, delta = head & 0x0F, head >> 4
            fid = last + delta if delta else self.zigzag()
            value: Value = kind == BOOL_TRUE if kind in (BOOL_TRUE, BOOL_FALSE) else (
                self.value(kind))
            fields.append((fid, kind, value))
            last = fid
        return Struct(fields)


def read_struct(data: bytes | memoryview, at: int = 0) -> tuple[Struct, int]:
    """The structure starting at offset `at` of `data`, and the offset after it.

    The compiled core decodes it when built (a row group's footer in an eighth of the time);
    what it leaves, damaged bytes included, is decoded here.
    """
    native = native_module()
    if native is not None:
        made: tuple[Struct, int] | None = native.thrift_struct(data, at, Struct, ThriftList)
        if made is not None:
            return made
    return read_struct_python(data, at)


def read_struct_python(data: bytes | memoryview, at: int = 0) -> tuple[Struct, int]:
    """read_struct in Python alone (the compiled core's reference)."""
    reader = _Reader(data, at)
    try:
        return reader.struct(), reader.at
    except RecursionError as exc:
        raise ThriftError("structure nested too deep") from exc


def _varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _zigzag(out: bytearray, value: int) -> None:
    _varint(out, (value << 1) ^ (value >> 63))


def _value(out: bytearray, kind: int, value: Value) -> None:
    if kind in (BOOL_TRUE, BOOL_FALSE):
        out.append(BOOL_TRUE if value else BOOL_FALSE)
    elif kind == BYTE:
        assert isinstance(value, int)
        out.append(value & 0xFF)
    elif kind in (I16, I32, I64):
        assert isinstance(value, int)
        _zigzag(out, value)
    elif kind == DOUBLE:
        assert isinstance(value, bytes) and len(value) == 8
        out += value
    elif kind == BINARY:
        assert isinstance(value, bytes)
        _varint(out, len(value))
        out += value
    elif kind in (LIST, SET):
        assert isinstance(value, ThriftList)
        size = len(value.items)
        out.append((min(size, 15) << 4) | value.kind)
        if size >= 15:
            _varint(out, size)
        for item in value.items:
            _value(out, value.kind, item)
    elif kind == STRUCT:
        assert isinstance(value, Struct)
        _struct(out, value)
    else:
        raise ThriftError(f"wire type {kind} is not written here")


def _struct(out: bytearray, struct: Struct) -> None:
    last = 0
    for fid, kind, value in struct.fields:
        wire = (BOOL_TRUE if value else BOOL_FALSE) if kind in (BOOL_TRUE, BOOL_FALSE) else kind
        if 0 < fid - last <= 15:
            out.append(((fid - last) << 4) | wire)
        else:
            out.append(wire)
            _zigzag(out, fid)
        if kind not in (BOOL_TRUE, BOOL_FALSE):
            _value(out, kind, value)
        last = fid
    out.append(0)


def write_struct(struct: Struct) -> bytes:
    """The compact-protocol bytes of `struct`."""
    out = bytearray()
    _struct(out, struct)
    return bytes(out)
