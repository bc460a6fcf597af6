"""JSON objects whose names are each given once. Python's json keeps the last of two names
alike, and drops the other value without a word; a scenario's YAML and a trace's CSV columns
refuse them, and so does the JSON nnrpsim reads (``frames encode``, a Mooncake trace's lines)."""

from __future__ import annotations

from .quoted import quoted


def once_each(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``json.loads``' ``object_pairs_hook``: the object, or ValueError naming a name given
    twice."""
    fields = dict(pairs)
    if len(fields) < len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise ValueError(f"key {quoted(name)} given twice")
            seen.add(name)
    return fields
