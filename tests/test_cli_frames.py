"""``nnrpsim frames``: decode and encode from the terminal, and the one-line error path."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nnrpsim.cli import main
from nnrpsim.protocol import METADATA, InlineObject, MessageType, SubmitMode, encode_packet
from nnrpsim.protocol.codec import record_to_dict
from tests.conftest import golden_hex
from tests.protocol.blocks import random_valid, valid_submit
from tests.protocol.submits import body, metadata, orb

ORB_GOLDEN = "020000000700000044332211000000008877665500000000"
PUT_PACKET = (
    "4e4e52500100142800000000280000000500000009000000000000000000000000000000"
    "00000000010000000700000001000000000000000200000000000000307500000500000003000000"
    "0100000068656c6c6f"
)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_decode_packet_prints_one_json_object_with_spec_names(capsys):
    status, out, err = run(capsys, "frames", "decode", PUT_PACKET)
    assert status == 0 and err == ""
    doc = json.loads(out)
    assert doc["message"] == "CACHE_PUT"
    assert doc["header"]["session_id"] == 9 and doc["header"]["magic"] == "NNRP"
    assert doc["metadata"]["ttl_ms"] == 30_000 and doc["metadata"]["object_kind"] == 7
    assert doc["body_hex"] == b"hello".hex()


def test_decode_frame_submit_shows_its_body_region_by_region(capsys):
    camera, segment = InlineObject(1, b"hello"), InlineObject(7, b"system prompt", 2)
    raw = encode_packet(
        MessageType.FRAME_SUBMIT,
        metadata(submit_mode=SubmitMode.MIXED, object_ref_mask=0b10, camera_bytes=5),
        body(camera, segment, references=[orb(7, 3), orb(2, 4)], extension_payloads=b"x"),
    )
    status, out, _ = run(capsys, "frames", "decode", raw.hex())
    doc = json.loads(out)
    assert status == 0 and "body_hex" not in doc
    assert doc["metadata"]["object_ref_mask"] == 2 and doc["metadata"]["bytes_55"] == "00"
    assert doc["body"]["prelude"]["object_reference_bytes"] == 48
    assert doc["body"]["inline_objects"][1] == {
        "object_kind": 7,
        "profile_id": 2,
        "object_bytes": 13,
        "payload_hex": b"system prompt".hex(),
    }
    assert [ref["cache_key_lo"] for ref in doc["body"]["object_references"]] == [3, 4]
    assert doc["body"]["extension_payloads_hex"] == "78"
    broken = bytearray(raw)
    broken[40 + 56] = 0b11  # a tile index slot, and now a camera slot with no ORB
    status, _, err = run(capsys, "frames", "decode", broken.hex())
    assert status == 2
    assert err.startswith("error: object_ref_mask: 0x3 sets the slots of camera_block, ")


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_decode_all_reads_a_capture_from_stdin_a_packet_a_line(capsys, monkeypatch):
    submit = encode_packet(MessageType.FRAME_SUBMIT, metadata(), body(InlineObject(7, b"hi")))
    _stdin(monkeypatch, f"{PUT_PACKET}\n{submit.hex()}\n".encode())
    status, out, _ = run(capsys, "frames", "decode", "--all", "-")
    lines = out.splitlines()
    assert status == 0 and len(lines) == 2
    assert [json.loads(line)["message"] for line in lines] == ["CACHE_PUT", "FRAME_SUBMIT"]
    _stdin(monkeypatch, f"{PUT_PACKET}{submit.hex()[:-2]}".encode())
    status, _, err = run(capsys, "frames", "decode", "--all", "-")
    assert status == 2 and err == (
        f"error: body_len: 40 + meta_len + body_len = {len(submit)} bytes, but "
        f"{len(submit) - 1} are left in packet 1 "
        f"(from byte {len(PUT_PACKET) // 2})\n"
    )
    status, _, err = run(capsys, "frames", "decode", PUT_PACKET + submit.hex())
    assert status == 2
    assert err.endswith(": the bytes hold 2 packets (--all decodes each)\n")


def test_decode_all_of_a_block_reads_blocks_back_to_back(capsys):
    status, out, _ = run(capsys, "frames", "decode", "--block", "orb", "--all", ORB_GOLDEN * 3)
    assert (
        status == 0
        and [json.loads(line)["cache_namespace"] for line in out.splitlines()] == [7] * 3
    )


def test_decode_from_stdin_takes_a_frame_longer_than_an_argument_may_be(monkeypatch, capsys):
    """Linux holds one argument to 128 KiB: a 64 KiB body is more as hexadecimal."""
    payload = bytes(range(256)) * 256
    raw = encode_packet(MessageType.FRAME_SUBMIT, metadata(), body(InlineObject(7, payload)))
    proc = subprocess.run(
        [sys.executable, "-m", "nnrpsim", "frames", "decode", "-"],
        input=raw.hex(),
        capture_output=True,
        text=True,
        check=True,
    )
    (inline,) = json.loads(proc.stdout)["body"]["inline_objects"]
    assert bytes.fromhex(inline["payload_hex"]) == payload
    _stdin(monkeypatch, b"\xff\xfe")
    status, _, err = run(capsys, "frames", "decode", "-")
    assert status == 2 and err.startswith("error: hex: stdin holds bytes that are not hexadecimal")
    _stdin(monkeypatch, b"\n")  # (a capture with no packets: nothing to decode)
    assert run(capsys, "frames", "decode", "--all", "-") == (2, "", "error: hex: no bytes given\n")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_a_packet_decoded_encodes_back_to_its_bytes(seed):
    """Every message nnrpsim decodes field by field, and one it carries as bytes (PING)."""
    rng = np.random.default_rng(seed)
    msg_type = [*METADATA, MessageType.PING][seed % (len(METADATA) + 1)]
    fields, body_bytes = b"", b""
    if msg_type in METADATA:
        fields = record_to_dict(random_valid(METADATA[msg_type], 1, rng)[0])
        if "object_bytes" in fields:
            fields["object_bytes"] %= 100
            body_bytes = rng.bytes(fields["object_bytes"])
        if msg_type is MessageType.FRAME_SUBMIT:
            fields, body_bytes = valid_submit(fields, rng)
    raw = encode_packet(msg_type, fields, body_bytes, session_id=int(rng.integers(2**32)))
    decoded = io.StringIO()
    with redirect_stdout(decoded):
        assert main(["frames", "decode", raw.hex()]) == 0
    encoded = io.StringIO()
    with redirect_stdout(encoded):
        assert main(["frames", "encode", "packet", decoded.getvalue()]) == 0
    assert encoded.getvalue().strip() == raw.hex()


@pytest.mark.parametrize("case", ["l0.flow_update.packet.golden", "l0.result_hint.packet.golden"])
def test_the_conformance_golden_packets_decode_and_encode_back(shared, capsys, case):
    golden = golden_hex(shared, case, "packet_hex")
    status, out, _ = run(capsys, "frames", "decode", golden)
    assert status == 0 and json.loads(out)["header"]["session_id"] == 0x15
    assert run(capsys, "frames", "encode", "packet", out) == (0, f"{golden}\n", "")


def test_an_edited_packet_s_lengths_are_worked_out_again(capsys):
    raw = encode_packet(MessageType.FRAME_SUBMIT, metadata(), body(InlineObject(7, b"short")))
    doc = json.loads(run(capsys, "frames", "decode", raw.hex())[1])
    doc["body"]["inline_objects"][0]["payload_hex"] = b"a longer prompt".hex()
    status, out, _ = run(capsys, "frames", "encode", "packet", json.dumps(doc))
    again = json.loads(run(capsys, "frames", "decode", out.strip())[1])
    assert status == 0 and again["body"]["inline_objects"][0]["object_bytes"] == 15
    assert again["body"]["prelude"]["inline_object_bytes"] == 32
    assert again["header"]["body_len"] == 32 + 32


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"message": "NOPE"},
            "message: must name a message type, as decode prints it (got 'NOPE')",
        ),
        ({"message": "PING", "x": 1}, "x: not a key of a packet (keys: message, header, "),
        ({"message": "PING", "metadata_hex": "zz"}, "metadata_hex: not valid hexadecimal"),
        ({"message": "PING", "metadata_hex": 12}, "metadata_hex: must be hexadecimal text"),
        ({"message": "PING", "header": {"magic": "NNRPX"}}, "magic: must be 4 ASCII bytes"),
        (  # an enum field may be given by its member's name, as the conformance recipes are
            {
                "message": "CACHE_PUT",
                "metadata": {
                    **dict.fromkeys(("cache_namespace", "cache_key_hi", "cache_key_lo"), 1),
                    **dict.fromkeys(("ttl_ms", "object_bytes", "codec_bitmap", "flags"), 0),
                    "object_kind": "kv_block",
                },
            },
            "object_kind: unknown CacheObjectKind name 'kv_block'",
        ),
        ({"message": "CACHE_ACK", "metadata": []}, "metadata: must be a JSON object"),
        (
            {"message": "FRAME_SUBMIT", "metadata": metadata(), "body": {"inline_objects": {}}},
            "inline_objects: must be a JSON list",
        ),
        (
            {"message": "FRAME_SUBMIT", "metadata": metadata(), "body": {"prelude": {}, "y": 1}},
            "y: not a key of a body",
        ),
        (
            {
                "message": "FRAME_SUBMIT",
                "metadata": metadata(),
                "body": {"inline_objects": [{"payload_hex": "00"}]},
            },
            "object_kind: missing field of an inline object",
        ),
        (  # (the encoder's rules are the decoder's)
            {"message": "FRAME_SUBMIT", "metadata": metadata(camera_bytes=1)},
            "body_len: a FRAME_SUBMIT body opens with a 32-byte region prelude, got 0 bytes",
        ),
    ],
)
def test_a_bad_packet_to_encode_is_one_line(capsys, doc, message):
    status, out, err = run(capsys, "frames", "encode", "packet", json.dumps(doc))
    assert status == 2 and out == ""
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


def test_decode_block_keeps_full_64_bit_integers(capsys):
    hex_ = "0300000001000000887766554433221100ffeeddccbbaa990200000000000000"
    status, out, _ = run(capsys, "frames", "decode", "--block", "cache-invalidate", hex_)
    assert status == 0
    assert '"cache_key_lo": 11072869122414935808' in out  # a JSON number, not a float
    assert json.loads(out)["reason_code"] == 2


def test_encode_takes_a_profile_s_bytes_as_hexadecimal(capsys):
    fields = {**metadata(), "bytes_70_71": "abcd"}
    status, out, _ = run(capsys, "frames", "encode", "frame-submit", json.dumps(fields))
    assert status == 0 and out.strip().endswith("abcd")
    status, out, _ = run(capsys, "frames", "decode", "--block", "frame-submit", out.strip())
    assert json.loads(out) == {
        **fields,
        "bytes_0_27": "00" * 28,
        "bytes_36_39": "00" * 4,
        "bytes_48_51": "00" * 4,
        "bytes_55": "00",
    }


def test_encode_prints_hex_that_decodes_back(capsys):
    fields = {
        "object_kind": 2,
        "cache_namespace": 7,
        "cache_key_hi": 0x11223344,
        "cache_key_lo": 0x55667788,
    }
    status, out, _ = run(capsys, "frames", "encode", "orb", json.dumps(fields))
    assert status == 0 and out.strip() == ORB_GOLDEN


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["frames", "decode", "--block", "orb", "zz"], "error: hex: not valid hexadecimal"),
        (
            [
                "frames",
                "decode",
                "--block",
                "orb",
                "0100030001000000887766554433221100ffeeddccbbaa99",
            ],
            "error: ref_flags: reserved, must be 0 (got 3)",
        ),
        (
            ["frames", "decode", "--block", "orb", "00"],
            "error: object_reference: expected 24 bytes",
        ),
        (["frames", "encode", "orb", "{"], "error: json: Expecting property name"),
        (["frames", "encode", "orb", "[1]"], "error: json: must be an object"),
        (  # (json took the last of the two)
            ["frames", "encode", "orb", '{"object_kind": 7, "object_kind": 8}'],
            "error: json: key 'object_kind' given twice\n",
        ),
        (["frames", "encode", "cache-ack", '{"status": 9}'], "error: cache_namespace: missing"),
        (["frames", "encode", "bogus", "{}"], "error: argument block: invalid choice"),
        # no command: the commands by name, not argparse's dest (``required: frames_command``)
        (["frames"], "error: nnrpsim frames: a command is required: decode or encode ("),
        (
            [],
            "error: nnrpsim: a command is required: frames, run, validate, plot, compare, records "
            "or keys (",
        ),
        (["bogus"], "error: argument COMMAND: invalid choice: 'bogus'"),
        (  # argparse's repr of a long argument, cut short as nnrpsim's own errors cut a value
            ["records", "s.yaml", "--point", "7" * 100_000],
            f"error: argument --point: invalid int value: '{'7' * 27}...{'7' * 28}'\n",
        ),
        (  # a shell's glob of many files where one is taken: argparse lists them all
            ["validate", "s.yaml", *(f"f{i}.yaml" for i in range(50))],
            "error: unrecognized arguments: 'f0.yaml f1.yaml f2.yaml f3....l f47.yaml f48.yaml "
            "f49.yaml'\n",
        ),
        (["validate", "s.yaml", "a", "b"], "error: unrecognized arguments: a b\n"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


def test_console_entry_point_never_prints_a_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "nnrpsim", "frames", "decode", "4e4e5250"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: header:") and "Traceback" not in proc.stderr
