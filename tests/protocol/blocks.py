"""Random valid blocks of any layout, drawn from a seeded generator (test helper)."""

from __future__ import annotations

import numpy as np

from nnrpsim.protocol import (
    OBJECT_REF_SLOTS,
    CacheObjectKind,
    InlineObject,
    InvalidateScope,
    Layout,
    SubmitMode,
    encode_submit_body,
)


def random_valid(layout: Layout, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` records with random bits in every free field and every rule of ``layout`` obeyed."""
    raw = rng.integers(0, 256, size=n * layout.size, dtype=np.uint8)
    records = np.frombuffer(raw.tobytes(), dtype=layout.dtype).copy()
    for name, value in layout.fixed.items():
        records[name] = value
    for name, enum in layout.choices.items():
        records[name] = rng.choice([int(v) for v in enum], size=n)
    for name, mask in layout.masks.items():
        records[name] &= records.dtype[name].type(mask)
    if "invalidate_scope" in layout.names:
        _obey_scope_table(records, rng)
    if "miss_reason" in layout.names:
        records["miss_reason"] = np.where(
            rng.random(n) < 0.5, rng.integers(0, 8, n), rng.integers(0x8000, 0x10000, n)
        )
    if "object_ref_mask" in layout.names:
        _obey_submit_rules(records, rng)
    for name in ("object_reference_bytes", "typed_payload_descriptor_bytes"):
        if name in layout.names:
            records[name] -= records[name] % 24
    if "extension_descriptor_bytes" in layout.names:
        records["extension_descriptor_bytes"] -= records["extension_descriptor_bytes"] % 16
    return records


def _obey_submit_rules(records: np.ndarray, rng: np.random.Generator) -> None:
    """FRAME_SUBMIT metadata: an operation, the mask by mode, no tile-index bytes referenced."""
    records["operation_id"][records["operation_id"] == 0] = 1
    inline = records["submit_mode"] == SubmitMode.INLINE
    mask = records["object_ref_mask"]
    mask[inline] = 0
    mask[~inline & (mask == 0)] = rng.integers(1, 16, int((~inline & (mask == 0)).sum()))
    records["tile_index_bytes"][(mask & 2) != 0] = 0


def valid_submit(fields: dict, rng: np.random.Generator) -> tuple[dict, bytes]:
    """FRAME_SUBMIT metadata ``fields`` (random, valid) made small enough to carry, and a body
    that obeys them: an ORB a slot set, beside LLM kinds' ORBs; the camera and tile-index
    blocks inline where not referenced (none in a reference submit); typed payload
    descriptors."""
    fields = dict(fields)
    slots = [
        kind for bit, kind in enumerate(OBJECT_REF_SLOTS) if fields["object_ref_mask"] >> bit & 1
    ]
    inline = []
    for name, kind in (("camera_bytes", 1), ("tile_index_bytes", 2)):
        inlined = kind not in slots and fields["submit_mode"] != SubmitMode.REFERENCE
        fields[name] = fields[name] % 50 if inlined else 0
        if fields[name]:
            inline.append(InlineObject(kind, rng.bytes(fields[name]), int(rng.integers(0, 9))))
    inline.append(InlineObject(CacheObjectKind.PROMPT_SEGMENT, rng.bytes(int(rng.integers(0, 30)))))
    llm = [CacheObjectKind.TOOL_SCHEMA] * int(rng.integers(0, 3))
    references = [
        {"object_kind": int(kind), "cache_namespace": 1, "cache_key_hi": 2, "cache_key_lo": i}
        for i, kind in enumerate(llm + slots)
    ]
    fields["payload_frame_count"] %= 3
    body = encode_submit_body(
        inline, references, typed_payload_descriptors=bytes(24 * fields["payload_frame_count"])
    )
    return fields, body


def _obey_scope_table(records: np.ndarray, rng: np.random.Generator) -> None:
    scope = records["invalidate_scope"]
    whole = scope == InvalidateScope.WHOLE_SESSION
    records["cache_namespace"][whole] = 0
    coarse = whole | (scope == InvalidateScope.NAMESPACE)
    records["cache_key_hi"][coarse] = 0
    by_kind = scope == InvalidateScope.OBJECT_KIND
    records["cache_key_hi"][by_kind] = rng.integers(1, max(CacheObjectKind) + 1, by_kind.sum())
    records["cache_key_lo"][coarse | by_kind] = 0
