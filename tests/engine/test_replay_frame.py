"""The frame under way in a sequential replay, on a lease store of a few objects: what its own
PUTs ended goes inline, the rest resolves (hits, then installs) and renews last."""

from __future__ import annotations

from nnrpsim.engine import EndReason
from nnrpsim.engine.replay.frame import Frame
from nnrpsim.engine.replay.host_rules import HostRules

NEVER, EXPIRED, INVALIDATED, EVICTED = (
    int(EndReason.NEVER_INSTALLED),
    int(EndReason.EXPIRED),
    int(EndReason.INVALIDATED),
    int(EndReason.EVICTED),
)


class Store:
    """Leases held, and what the frame asked of them, in order."""

    def __init__(self, held: set[int], renew_due: set[int]) -> None:
        self.leases, self.renew_due, self.calls = held, renew_due, []

    def frame(self, host: HostRules, misses: list[int], starts: list[int]) -> Frame:
        return Frame(
            host,
            misses,
            iter(starts),
            self.leases.__contains__,
            lambda obj, now: self.calls.append(("hit", obj, now)) or obj in self.renew_due,
            lambda obj, now: self.calls.append(("install", obj, now)),
            lambda obj, now, size, asked: self.calls.append(("renew", obj, now, asked)),
            lambda obj: self.calls.append(("take back", obj)),
        )


def test_what_the_frames_puts_ended_goes_inline_and_the_rest_resolves_then_renews():
    """Objects 1-3 were live as the frame began; its PUTs evicted 2 and put 4 and 5, then a
    later PUT of the burst evicted 5. Object 3 is made from 2: its source is gone, so it goes
    inline though its own lease holds. 4 was charged as cold, 5 as expired."""
    store = Store(held={1, 3, 4}, renew_due={1})
    host, misses = HostRules(6, inline_once=True, backoff_ms=0), [0] * len(EndReason)
    misses[NEVER], misses[EXPIRED] = 1, 1  # the two installs' misses, as the paths charge them
    frame = store.frame(host, misses, [10])
    frame.begin(0, 100)
    frame.pending.extend([(1, 10, 500, -1), (2, 20, 500, -1), (3, 30, 500, 2)])
    frame.installed.extend([(4, 40, NEVER, -1), (5, 50, EXPIRED, -1)])
    frame.evicted.extend([2, 5, 4])  # 4 evicted, then put again later in the burst
    host.told.add(3)  # an earlier turn, spent now by this inline body

    frame.done()

    assert store.calls == [
        ("hit", 1, 100),
        ("install", 4, 100),
        ("take back", 5),
        ("renew", 1, 100, 500),
    ]
    assert (frame.hits, frame.hit_bytes, frame.renewals, frame.renewal_bytes) == (1, 10, 1, 10)
    assert (frame.unput, frame.unput_bytes) == (1, 50)
    assert misses[NEVER] == 1 and misses[EXPIRED] == 0
    assert misses[EVICTED] == 2 and misses[INVALIDATED] == 1  # 2 and 5; 3 by its source
    assert host.inlined_of == [0, 0, 1, 1, 0, 1]
    # told of 2 and 5 (not of 4, put again) after the decisions; each inline body its turn
    assert host.told == set()
    assert frame.pending == frame.installed == frame.evicted == []


def test_a_new_frame_closes_the_last_and_decides_by_its_leases_as_it_begins():
    store = Store(held={7}, renew_due=set())
    host = HostRules(9, inline_once=False, backoff_ms=0)
    frame = store.frame(host, [0] * len(EndReason), [2, 5])
    frame.begin(0, 10)
    frame.pending.append((7, 1, 100, -1))
    frame.along_source[8] = 7
    frame.begin(1, 20)
    assert store.calls == [("hit", 7, 10)]  # at the closed frame's time
    assert frame.along_source == {} and (frame.op, frame.at, frame.end) == (1, 20, 5)
    objects = [7, 7, 8, 7, 8, 6]
    assert frame.decide(lambda obj, now: None if obj == 7 else now, objects, 2) == {8: 20, 7: None}
