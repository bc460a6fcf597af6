"""Encode and decode fixed-width blocks, one at a time or many in one numpy call.

Both directions run the same vectorised rules from :mod:`.layouts`, so a batch of a million
Object Reference Blocks is validated in a handful of array passes, and a single block costs one
batch of one. Every rejection is a :class:`WireError` naming the field; nothing else escapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from .errors import WireError
from .layouts import Layout, Violation


def _contiguous(values: list[int]) -> bool:
    return values == list(range(values[0], values[-1] + 1))


def _violations(layout: Layout, arr: np.ndarray) -> Iterator[Violation]:
    for name, value in layout.fixed.items():
        what = "reserved, must be 0" if value == 0 else f"must be {_shown(value)}"
        yield name, what, arr[name] != value
    for name, enum in layout.choices.items():
        col, values = arr[name], sorted(int(v) for v in enum)
        if _contiguous(values):
            bad = (col < values[0]) | (col > values[-1])
        else:
            bad = ~np.isin(col, values)
        yield name, f"unknown {enum.__name__} value", bad
    for name, mask in layout.masks.items():
        yield name, f"unknown bits outside mask {mask:#x}", (arr[name] & ~np.uint64(mask)) != 0
    if layout.cross_check is not None:
        yield from layout.cross_check(arr)


@dataclass(frozen=True)
class _Bound:
    """All values of a (possibly widened) little-endian word must lie in ``[lo, hi]``."""

    view: np.dtype
    lo: int
    hi: int


def _field_bounds(layout: Layout, name: str) -> tuple[int, int] | None:
    if name in layout.fixed:
        value = layout.fixed[name]
        value = int.from_bytes(value, "little") if isinstance(value, bytes) else int(value)
        return value, value
    enum = layout.choices.get(name)
    if enum is not None and _contiguous(values := sorted(int(v) for v in enum)):
        return values[0], values[-1]
    return None


def _screen_bounds(layout: Layout) -> list[_Bound]:
    """Range rules as words to check with one min and one max reduction each.

    A bounded field followed by reserved zero fields is widened over them (high bytes in little
    endian), so the ORB's ``object_kind`` and ``ref_flags`` become one u32 in ``[1, 9]``.
    """
    fields = [(n, layout.dtype.fields[n][1], layout.dtype[n].itemsize) for n in layout.names]
    bounds, i = [], 0
    while i < len(fields):
        name, offset, size = fields[i]
        limits = _field_bounds(layout, name)
        i += 1
        if limits is None:
            continue
        width, j = size, i
        while j < len(fields) and layout.fixed.get(fields[j][0]) == 0 and width + fields[j][2] <= 8:
            width += fields[j][2]
            j += 1
            if width in (2, 4, 8):
                size, i = width, j
        view = np.dtype(
            {"names": ["w"], "formats": [f"<u{size}"], "offsets": [offset], "itemsize": layout.size}
        )
        bounds.append(_Bound(view, *limits))
    return bounds


_SCREENS: dict[str, list[_Bound]] = {}


def _passes_screen(layout: Layout, arr: np.ndarray) -> bool:
    """An exact, fast check that every block is valid; the slow path only explains failures."""
    if not len(arr):
        return True
    bounds = _SCREENS.get(layout.name)
    if bounds is None:
        bounds = _SCREENS[layout.name] = _screen_bounds(layout)
    for bound in bounds:
        words = arr.view(bound.view)["w"]
        # lo <= w <= hi as one reduction: below lo, the unsigned difference wraps past hi - lo
        # (a strided min and max are two passes over every block)
        if np.subtract(words, words.dtype.type(bound.lo)).max() > bound.hi - bound.lo:
            return False
    for name, mask in layout.masks.items():
        if int(np.bitwise_or.reduce(arr[name])) & ~mask:
            return False
    enums = [n for n in layout.choices if _field_bounds(layout, n) is None]
    for name in enums:
        if not np.isin(arr[name], [int(v) for v in layout.choices[name]]).all():
            return False
    if layout.cross_check is not None:
        return not any(bad.any() for _, _, bad in layout.cross_check(arr))
    return True


def validate(layout: Layout, arr: np.ndarray, *, batch: bool = False) -> None:
    """Raise :class:`WireError` for the earliest block that breaks a rule of ``layout``."""
    if _passes_screen(layout, arr):
        return
    first: tuple[int, str, str] | None = None
    for name, reason, bad in _violations(layout, arr):
        if bad.any():
            index = int(bad.argmax())
            if first is None or index < first[0]:
                first = (index, name, reason)
    if first is not None:
        index, name, reason = first
        kind, start = arr.dtype.fields[name][:2]
        if kind.kind == "S":  # the item would lose its trailing NULs
            got = _shown(arr[index : index + 1].tobytes()[start : start + kind.itemsize])
        else:
            got = str(int(arr[name][index]))
        raise WireError(name, f"{reason} (got {got})", index if batch else None)


def _shown(value: object) -> str:
    """A fixed byte field as the hex a user typed, with its ASCII where it has any."""
    if not isinstance(value, bytes):
        return repr(value)
    text = value.decode("latin-1")
    return f"{value.hex()} ({text!r})" if text.isascii() and text.isprintable() else value.hex()


def decode_batch(layout: Layout, data: bytes | bytearray | memoryview) -> np.ndarray:
    """Decode and validate many consecutive blocks; returns a read-only structured array view."""
    size = len(data)
    if size % layout.size:
        raise WireError(
            layout.name, f"{size} bytes is not a whole number of {layout.size}-byte blocks"
        )
    arr = np.frombuffer(data, dtype=layout.dtype)
    validate(layout, arr, batch=True)
    return arr


def decode_block(layout: Layout, data: bytes | bytearray | memoryview) -> dict[str, object]:
    """Decode and validate exactly one block into ``{field: int}`` (``magic`` stays bytes)."""
    if len(data) != layout.size:
        raise WireError(layout.name, f"expected {layout.size} bytes, got {len(data)}")
    arr = np.frombuffer(data, dtype=layout.dtype)
    validate(layout, arr)
    return record_to_dict(arr[0])


def record_to_dict(record: np.void) -> dict[str, object]:
    """Python ints (full 64-bit, never floats) for every field of one structured record."""
    return {
        name: (value if isinstance(value, bytes) else int(value))
        for name, value in zip(record.dtype.names, record.item(), strict=True)
    }


def _enum_value(layout: Layout, name: str, value: object) -> object:
    """Enum fields also accept the member's name, as the conformance recipes write them."""
    enum = layout.choices.get(name) or layout.named.get(name)
    if enum is None or not isinstance(value, str):
        return value
    try:
        return int(enum[value.upper()])
    except KeyError:
        raise WireError(name, f"unknown {enum.__name__} name {value!r}") from None


def _store(record: np.ndarray, layout: Layout, name: str, value: object) -> None:
    value = _enum_value(layout, name, value)
    kind = layout.dtype.fields[name][0]
    if kind.kind == "S":
        if isinstance(value, str):
            value = value.encode("ascii", errors="replace")
        if not isinstance(value, bytes) or len(value) != kind.itemsize:
            raise WireError(name, f"must be {kind.itemsize} ASCII bytes")
    elif kind.kind == "V":  # bytes the spec leaves to a profile: as bytes, or as hex text
        value = _opaque(name, value, kind.itemsize)
    else:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise WireError(name, f"must be an integer, got {type(value).__name__}")
        limit = np.iinfo(kind).max
        if not 0 <= int(value) <= limit:
            raise WireError(name, f"{int(value)} is out of range 0..{limit}")
    record[name] = value


def _opaque(name: str, value: object, size: int) -> bytes:
    if isinstance(value, str):
        try:
            value = bytes.fromhex(value)
        except ValueError:
            raise WireError(name, "must be hexadecimal text") from None
    if not isinstance(value, (bytes, bytearray)) or len(value) != size:
        raise WireError(name, f"must be {size} bytes")
    return bytes(value)


def encode_block(layout: Layout, fields: Mapping[str, object]) -> bytes:
    """Encode one block from ``{field: value}``.

    Every field is required except those the spec fixes (reserved fields, magic, version), which
    default to their fixed value, and bytes it leaves to a profile (``bytes_*``), zeros unless
    given. Unknown keys, out-of-range integers and rule violations raise.
    """
    unknown = sorted(set(fields) - set(layout.names))
    if unknown:
        raise WireError(unknown[0], f"unknown field of {layout.name}")
    record = np.zeros(1, dtype=layout.dtype)
    for name in layout.names:
        if name in fields:
            _store(record, layout, name, fields[name])
        elif name in layout.fixed:
            record[name] = layout.fixed[name]
        elif layout.dtype.fields[name][0].kind != "V":  # (opaque bytes stay zeros)
            raise WireError(name, f"missing field of {layout.name}")
    validate(layout, record)
    return record.tobytes()


def encode_batch(layout: Layout, records: np.ndarray) -> bytes:
    """Validate and serialise a structured array of ``layout.dtype`` in one call."""
    if records.dtype != layout.dtype:
        raise WireError(layout.name, f"records must have dtype {layout.dtype}, got {records.dtype}")
    validate(layout, records, batch=True)
    return records.tobytes()
