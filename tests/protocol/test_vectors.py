"""Byte-exact conformance: the derived cache vectors, the recipes they came from, and the
goldens."""

from __future__ import annotations

import pytest

from nnrpsim.protocol import (
    BLOCKS,
    CLIENT_HELLO,
    OBJECT_REFERENCE,
    WireError,
    decode_block,
    encode_block,
)
from tests.conftest import golden_hex, load_json

KIND_TO_BLOCK = {
    "object_reference": "orb",
    "cache_put_metadata": "cache-put",
    "cache_ack_metadata": "cache-ack",
    "cache_invalidate_metadata": "cache-invalidate",
    "cache_reference_metadata": "cache-reference",
    "cache_miss_metadata": "cache-miss",
}
REJECTED_BY_SDKS = {"preview4.object_reference.camera_block"}  # ref_flags = 3


def _derived(shared):
    return load_json(shared / "spec/vectors/cache_vectors_hex.derived.json")["vectors"]


def _recipes(shared):
    doc = load_json(shared / "spec/vectors/protocol_nnrp-1-preview4_vectors_semantic-vectors.json")
    return {v["name"]: v for v in doc["vectors"]}


def _recipe_fields(recipe: dict, layout) -> dict:
    """Recipe values as the encoder takes them: u64 strings become ints, enum names stay names."""
    fields = {}
    for name in layout.names:
        if name in recipe:
            value = recipe[name]
            fields[name] = int(value) if isinstance(value, str) and value.isdigit() else value
    return fields


def test_every_derived_vector_is_covered(shared):
    vectors = _derived(shared)
    assert len(vectors) == 6
    assert {v["kind"] for v in vectors.values()} == set(KIND_TO_BLOCK)


@pytest.mark.parametrize(
    "name",
    [
        "preview4.cache_put.camera_block",
        "preview4.cache_ack.camera_block",
        "preview4.cache_invalidate.object_key",
        "preview4.cache_reference.runtime_object",
        "preview4.cache_miss.not_found",
    ],
)
def test_derived_vector_round_trips_and_matches_recipe(shared, name):
    vector = _derived(shared)[name]
    layout = BLOCKS[KIND_TO_BLOCK[vector["kind"]]]
    raw = bytes.fromhex(vector["hex"])
    decoded = decode_block(layout, raw)
    assert encode_block(layout, decoded) == raw
    recipe = _recipe_fields(_recipes(shared)[name], layout)
    assert encode_block(layout, recipe).hex() == vector["hex"]
    for field, value in recipe.items():
        if isinstance(value, int):
            assert decoded[field] == value, field


def test_preview4_orb_recipe_with_ref_flags_3_is_rejected(shared):
    for name in REJECTED_BY_SDKS:
        raw = bytes.fromhex(_derived(shared)[name]["hex"])
        with pytest.raises(WireError) as err:
            decode_block(OBJECT_REFERENCE, raw)
        assert err.value.field == "ref_flags"
        with pytest.raises(WireError, match="ref_flags"):
            encode_block(OBJECT_REFERENCE, _recipe_fields(_recipes(shared)[name], OBJECT_REFERENCE))


def test_orb_golden_round_trips(shared):
    golden = golden_hex(shared, "l0.object_reference.block.golden")
    decoded = decode_block(OBJECT_REFERENCE, bytes.fromhex(golden))
    assert decoded == {
        "object_kind": 2,
        "ref_flags": 0,
        "cache_namespace": 7,
        "cache_key_hi": 0x11223344,
        "cache_key_lo": 0x55667788,
    }
    assert encode_block(OBJECT_REFERENCE, decoded).hex() == golden


def test_client_hello_golden_round_trips_with_spec_cache_fields(shared):
    golden = golden_hex(shared, "l0.control.client_hello.golden")
    decoded = decode_block(CLIENT_HELLO, bytes.fromhex(golden))
    # Spec section 8: the preview4 baseline CLIENT_HELLO cache fields.
    assert decoded["cache_digest_bitmap"] == 1
    assert decoded["cache_object_bitmap"] == 7
    assert decoded["cache_namespace_count"] == 1
    assert decoded["max_cache_entries"] == 64
    assert decoded["max_cache_bytes"] == 65_536
    assert encode_block(CLIENT_HELLO, decoded).hex() == golden
