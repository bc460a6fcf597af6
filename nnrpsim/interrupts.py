"""A Ctrl-C that comes while an interrupted study writes the summary of its finished runs waits
for it.

An interrupted study still summarises the runs it finished (under a second for a thousand). A
second SIGINT there cut the summary short and left the runs without one: an impatient second
Ctrl-C does that, and so does ``timeout -s INT``, which signals the process and then its whole
group. Within :func:`interrupts_deferred` the first SIGINT is held until the block ends; a
further one stops the block at once, for a user who will not wait.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """SIGINT held over the block and raised (KeyboardInterrupt) as it ends; a second one
    raises at once. Outside the main thread, where no signal handler can be set, the block
    runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = False

    def hold(signum: int, frame: object) -> None:
        nonlocal held
        if held:
            raise KeyboardInterrupt
        held = True

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )
    if held:
        raise KeyboardInterrupt
