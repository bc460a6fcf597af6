"""The frame under way in a sequential replay, alike on both paths (:mod:`.ordered`,
:mod:`.on_table`), which differ only in how they hold the server's leases.

A DES host decides a frame's references as its leases stood when the frame began, then sends
the frame's PUTs: they may end what the frame was to reference, or its source (the server
touches a lease only when the frame arrives), and the host is told of what they evicted only
after its decisions. The server then resolves the frame's hits, then what it installed (each
touches its lease), and renews last.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .host_rules import HostRules
from .result import EVICTED, INVALIDATED


class Frame:
    """One operation's references while the replay goes through them, and what its closing
    counted. A path reads and appends to the lists in place (by local names, on its hot path):
    they are cleared, never rebound."""

    def __init__(
        self,
        host: HostRules,
        misses: list[int],
        starts: Iterator[int],
        held: Callable[[int], bool],
        hit: Callable[[int, int], bool],
        resolve_install: Callable[[int, int], None],
        renew: Callable[[int, int, int, int], None],
        take_back: Callable[[int], None] | None = None,
        named: bool = True,
    ) -> None:
        """``starts``: where each operation after the first begins in the stream; ``named``:
        whether the stream names its operations (else each reference is a frame here, and the
        hosts' rules take the references of one millisecond for one frame). The lease
        store's part: ``held(obj)``, whether ``obj`` holds a lease (none of the frame's PUTs
        ended it); ``hit(obj, now)`` resolves a hit, returning whether its renewal is due;
        ``resolve_install(obj, now)`` resolves a reference to what the frame installed;
        ``renew(obj, now, size, asked)`` renews a lease; ``take_back(obj)``, if given, takes
        back an install whose body went inline after all."""
        self.host, self.misses, self.starts = host, misses, starts
        self.held, self.hit, self.renew = held, hit, renew
        self.resolve_install = resolve_install
        self.take_back, self.named = take_back, named
        self.op = self.at = -1  # the operation under way, and when it began
        self.end = 0  # where its references end in the stream
        self.at_start: dict[int, int | None] = {}  # object -> its lapse as the frame began
        # hits waiting for the frame's PUTs: (object, size, TTL asked, its source or -1)
        self.pending: list[tuple[int, int, int, int]] = []
        # installs: (object, size, the EndReason its miss was charged to, its source or -1)
        self.installed: list[tuple[int, int, int, int]] = []
        self.along_source: dict[int, int] = {}  # object -> the source put along for it
        self.put_along: set[int] = set()  # sources put along (once a frame)
        self.evicted: list[int] = []  # what its PUTs evicted: their hosts are told after
        self.hits = self.hit_bytes = self.renewals = self.renewal_bytes = 0
        # installs whose bodies went inline after all: PUTs no reference follows
        self.unput = self.unput_bytes = 0

    def begin(self, op: int, now: int) -> None:
        """Operation ``op`` begins at ``now``: the one before it is done."""
        self.done()
        self.along_source.clear()
        self.put_along.clear()
        self.op, self.at, self.end = op, now, next(self.starts)
        if self.named:
            self.host.frame = op

    def decide(
        self, lapse: Callable[[int, int], int | None], objects: list[int], first: int
    ) -> dict[int, int | None]:
        """Each of the frame's ``objects[first:]`` lapse (None while it holds a lease) as the
        frame begins, after what changed up to then: its references are decided by these."""
        at = self.at
        self.at_start = {obj: lapse(obj, at) for obj in objects[first : self.end]}
        return self.at_start

    def done(self) -> None:
        """The frame's PUTs are in: its hosts are told what they evicted (and did not put
        again). What they ended, or ended the source of, goes inline (the host was told in
        time); the rest resolves."""
        host, misses, held, now = self.host, self.misses, self.held, self.at
        # one put again later in the burst holds a lease its host was granted after the
        # notice was sent: the host reads the notice first, and ignores it
        if self.evicted:
            host.ended_under_host([obj for obj in self.evicted if not held(obj)])
            self.evicted.clear()
        renewed = []
        for obj, size, asked, source in self.pending:
            if not held(obj) or (source >= 0 and not held(source)):
                reason = INVALIDATED if held(obj) else EVICTED
                misses[reason] += 1
                host.told.discard(obj)  # this inline body is its turn
                host.send_inline(obj, size, now, reason, False)
                continue
            self.hits += 1
            self.hit_bytes += size
            if self.hit(obj, now):
                renewed.append((obj, size, asked))
        for obj, size, charged, source in self.installed:
            if not held(obj) or (source >= 0 and not held(source)):  # put, yet its body inline
                reason = INVALIDATED if held(obj) else EVICTED
                misses[charged] -= 1
                misses[reason] += 1
                self.unput += 1
                self.unput_bytes += size
                if self.take_back is not None:
                    self.take_back(obj)
                host.told.discard(obj)
                host.send_inline(obj, size, now, reason, False)
            else:
                self.resolve_install(obj, now)
        for obj, size, asked in renewed:
            self.renew(obj, now, size, asked)
            self.renewals += 1
            self.renewal_bytes += size
        self.pending.clear()
        self.installed.clear()
