"""The one exception the wire layer raises: every rejection names the offending field."""

from __future__ import annotations


class WireError(ValueError):
    """Bytes or values that break an NNRP/1 wire rule.

    ``field`` is the spec's field name (or a block name for length errors), ``reason`` says what
    is wrong; ``str(err)`` is ``"<field>: <reason>"`` so a CLI can print it as one line.
    ``index`` is the position of the first bad block in a batch, else ``None``.
    """

    def __init__(self, field: str, reason: str, index: int | None = None) -> None:
        self.field = field
        self.reason = reason
        self.index = index
        where = f" (block {index})" if index is not None else ""
        super().__init__(f"{field}: {reason}{where}")
