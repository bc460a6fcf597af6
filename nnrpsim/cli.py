"""The ``nnrpsim`` command line: a thin shell over the public Python API.

Bad input of any kind ends with one line ``error: <field>: <reason>`` on stderr and exit status 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import __version__
from .protocol import BLOCKS, WireError, decode_block, decode_packet, encode_block

EXIT_USAGE = 2


class UsageError(Exception):
    """A one-line complaint about the command line or its input."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print usage and a second line
        raise UsageError(message)


def _parse_hex(text: str) -> bytes:
    cleaned = "".join(text.split()).removeprefix("0x")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        raise UsageError("hex: not valid hexadecimal") from None


def _jsonable(value: object) -> object:
    """Integers stay JSON numbers (full 64-bit); only the header's magic bytes become text."""
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _frames_decode(args: argparse.Namespace) -> dict[str, object]:
    data = _parse_hex(args.hex)
    if args.block:
        return decode_block(BLOCKS[args.block], data)
    packet = decode_packet(data)
    out: dict[str, object] = {"message": packet.msg_type.name, "header": packet.header}
    if packet.metadata is not None:
        out["metadata"] = packet.metadata
    else:
        out["metadata_hex"] = packet.metadata_raw.hex()
    out["body_hex"] = packet.body.hex()
    return out


def _frames_encode(args: argparse.Namespace) -> str:
    try:
        fields = json.loads(args.json)
    except json.JSONDecodeError as err:
        raise UsageError(f"json: {err.msg} at line {err.lineno} column {err.colno}") from None
    if not isinstance(fields, dict):
        raise UsageError("json: must be an object of field names to integers")
    return encode_block(BLOCKS[args.block], fields).hex()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="nnrpsim", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"nnrpsim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    frames = commands.add_parser("frames", help="encode and decode NNRP/1 cache frames")
    frame_commands = frames.add_subparsers(dest="frames_command", required=True)
    decode = frame_commands.add_parser("decode", help="decode a packet (or a bare block) as JSON")
    decode.add_argument("--block", choices=sorted(BLOCKS), help="decode a bare block, no header")
    decode.add_argument("hex", help="the bytes as hexadecimal (whitespace allowed)")
    decode.set_defaults(handler=lambda a: json.dumps(_jsonable(_frames_decode(a))))
    encode = frame_commands.add_parser("encode", help="encode a bare block from JSON, print hex")
    encode.add_argument("block", choices=sorted(BLOCKS))
    encode.add_argument("json", help="field values, e.g. '{\"object_kind\": 7, ...}'")
    encode.set_defaults(handler=_frames_encode)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        print(args.handler(args))
    except (UsageError, WireError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    return 0
