"""Python values as Arrow arrays, laid out from buffers.

pyarrow's own converter (`pa.array` on Python objects) imports pandas on its first call when
pandas is installed, as it is beside `datasets`: ~0.25 s of CPU and ~47 MiB in the parent of
every build, for a few scalar columns. The types of the published schemas (strings, bytes,
integers, floats, booleans, lists, fixed-size lists and structs, each possibly null) are built here
directly, with the same checks: a value of the wrong type or out of range is an error.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from loralay_build.columns import Strings

_BOOLS = (bool, np.bool_)
_NUMPY: dict[pa.DataType, type[np.integer[Any]] | type[np.floating[Any]]] = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}


def buffer_array(values: np.ndarray, type_: pa.DataType) -> pa.Array:
    """A numpy array of fixed-width values as an Arrow array without nulls, sharing memory."""
    data = np.ascontiguousarray(values)
    return pa.Array.from_buffers(type_, len(data), [None, pa.py_buffer(data)])


def take(values: pa.Array, positions: np.ndarray) -> pa.Array:
    """`values.take(positions)`, the positions passed as an Arrow array: given as numpy, they
    would go through pyarrow's converter, and so import pandas."""
    return values.take(buffer_array(positions.astype(np.int64, copy=False), pa.int64()))


def integers(values: pa.Array) -> np.ndarray:
    """An Arrow array of integers without nulls as numpy, from its buffer (`to_numpy` would
    import pandas)."""
    assert values.null_count == 0, "an array with nulls"
    dtype = np.dtype(values.type.to_pandas_dtype())
    return np.frombuffer(values.buffers()[1], dtype, len(values), values.offset * dtype.itemsize)


def to_arrow(values: Sequence[Any], type_: pa.DataType) -> pa.Array:
    """`values` (Python values, None for null) as an Arrow array of `type_`."""
    n = len(values)
    present = [v is not None for v in values]
    nulls = n - sum(present)
    validity = _bits(present) if nulls else None
    if pa.types.is_string(type_):
        packed = Strings.pack([_checked(v, str, type_) if v is not None else "" for v in values])
        return pa.StringArray.from_buffers(n, pa.py_buffer(packed.offsets),
                                           pa.py_buffer(packed.data), validity, nulls)
    if pa.types.is_binary(type_):  # page images
        data = [_checked(v, bytes, type_) if v is not None else b"" for v in values]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(d) for d in data], out=offsets[1:])
        if offsets[-1] > np.iinfo(np.int32).max:
            raise OverflowError(f"over 2 GiB of bytes in one Arrow {type_} array")
        return pa.Array.from_buffers(type_, n, [validity, pa.py_buffer(
            offsets.astype(np.int32)), pa.py_buffer(b"".join(data))], nulls)
    if pa.types.is_boolean(type_):
        bits = _bits([_checked(v, _BOOLS, type_) if v is not None else False for v in values])
        return pa.Array.from_buffers(type_, n, [validity, bits], nulls)
    if type_ in _NUMPY:
        return pa.Array.from_buffers(type_, n, [validity, pa.py_buffer(_numbers(values, type_))],
                                     nulls)
    if pa.types.is_fixed_size_list(type_):
        size = type_.list_size
        flat = [x for v in values
                for x in (_sized(v, size, type_) if v is not None else [None] * size)]
        child = to_arrow(flat, type_.value_type)
        return pa.Array.from_buffers(type_, n, [validity], nulls, children=[child])
    if pa.types.is_list(type_):
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum([len(_checked(v, list, type_)) if v is not None else 0 for v in values],
                  out=offsets[1:])
        child = to_arrow([x for v in values if v is not None for x in v], type_.value_type)
        return pa.Array.from_buffers(type_, n, [validity, pa.py_buffer(offsets)], nulls,
                                     children=[child])
    if pa.types.is_struct(type_):
        rows = [_checked(v, dict, type_) if v is not None else {} for v in values]
        children = [to_arrow([row.get(field.name) for row in rows], field.type)
                    for field in type_]
        return pa.Array.from_buffers(type_, n, [validity], nulls, children=children)
    raise TypeError(f"no conversion to Arrow type {type_}")


def _checked(value: Any, kind: type | tuple[type, ...], type_: pa.DataType) -> Any:
    """`value` if it is a `kind` (a bool is no number, a tuple is a list); TypeError if not."""
    if isinstance(value, kind) or (kind is list and isinstance(value, tuple)):
        return value
    raise TypeError(f"cannot store {value!r} ({type(value).__name__}) as Arrow {type_}")


def _sized(value: Any, size: int, type_: pa.DataType) -> Any:
    if len(_checked(value, list, type_)) != size:
        raise ValueError(f"{value!r} does not hold the {size} values of Arrow {type_}")
    return value


def _bits(flags: list[bool]) -> pa.Buffer:
    """A bitmap, least significant bit first (Arrow's validity and boolean layout)."""
    return pa.py_buffer(np.packbits(np.array(flags, dtype=bool), bitorder="little"))


def _numbers(values: Sequence[Any], type_: pa.DataType) -> np.ndarray:
    """The values as numpy numbers of `type_` (nulls as 0); integers must fit exactly."""
    integer = pa.types.is_integer(type_)
    kind = numbers.Integral if integer else numbers.Real  # numpy's numbers included
    for v in values:
        if v is not None and (isinstance(v, _BOOLS) or not isinstance(v, kind)):
            raise TypeError(f"cannot store {v!r} ({type(v).__name__}) as Arrow {type_}")
    plain = [0 if v is None else v for v in values]
    if integer:
        info = np.iinfo(np.dtype(_NUMPY[type_]))
        if any(not info.min <= v <= info.max for v in plain):
            raise OverflowError(f"a value does not fit Arrow {type_}")
    with np.errstate(over="ignore"):  # a float beyond float32 becomes inf, as in pyarrow
        return np.array(plain, dtype=_NUMPY[type_])
