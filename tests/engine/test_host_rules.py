"""The hosts' side of a sequential replay, one rule at a time: what a DES host sends inline
instead of referencing or putting (both replay paths follow these rules)."""

from __future__ import annotations

from nnrpsim.engine import EndReason
from nnrpsim.engine.replay.host_rules import HostRules

SOURCE, MADE, OTHER = 0, 1, 2
EXPIRED, INVALIDATED, EVICTED = (
    int(EndReason.EXPIRED),
    int(EndReason.INVALIDATED),
    int(EndReason.EVICTED),
)


def test_after_the_server_ends_a_lease_under_its_host_the_next_miss_goes_inline_once():
    """Spec section 14: inline next time, then reinstall. A lease that ran out is put again at
    once, and without ``inline_once`` nothing is remembered."""
    rules = HostRules(3, inline_once=True, backoff_ms=0)
    rules.ended_under_host([SOURCE])
    assert rules.goes_inline(SOURCE, 100, 10, EVICTED)
    assert not rules.goes_inline(SOURCE, 100, 20, EVICTED)  # the turn is spent: put it
    assert not rules.goes_inline(OTHER, 100, 20, EXPIRED)
    assert (rules.inlined, rules.inlined_bytes, rules.inlined_of) == (1, 100, [1, 0, 0])
    forgetful = HostRules(0, inline_once=False, backoff_ms=0)
    forgetful.ended_under_host([SOURCE])
    assert not forgetful.goes_inline(SOURCE, 100, 10, EVICTED)


def test_a_refused_put_keeps_the_object_inline_for_the_back_off_and_no_longer():
    rules = HostRules(3, inline_once=False, backoff_ms=50)
    rules.refused(OTHER, 100)
    assert rules.goes_inline(OTHER, 10, 149, INVALIDATED)
    assert not rules.goes_inline(OTHER, 10, 150, INVALIDATED)
    assert (rules.backed_off, rules.backed_off_bytes, rules.inlined) == (1, 10, 0)


def test_what_a_frame_makes_from_a_source_sent_inline_goes_inline_too():
    """A source that went inline earlier in the frame takes what is made from it along, for
    the same reason; one that comes later in the frame and holds no usable lease does too
    when it will go inline (its turn, its back-off), not when it will simply be put."""
    rules = HostRules(3, inline_once=True, backoff_ms=0)
    rules.send_inline(SOURCE, 100, 7, EVICTED, False)
    rules.follow_source(MADE, SOURCE, 7, live=True, source_lapse=EVICTED)
    assert rules.take_blocked(MADE, live=True) == (EVICTED, False)
    assert rules.take_blocked(MADE, live=True) is None  # taken once
    rules.follow_source(MADE, SOURCE, 8, live=True, source_lapse=EXPIRED)  # later in the frame: put
    assert rules.take_blocked(MADE, live=True) is None
    rules.ended_under_host([SOURCE])
    # later, in its inline turn
    rules.follow_source(MADE, SOURCE, 9, live=True, source_lapse=EVICTED)
    assert rules.take_blocked(MADE, live=True) == (INVALIDATED, False)


def test_what_is_made_from_a_source_backing_off_later_in_the_frame_backs_off_too():
    """The source comes later in the frame and its host backs off from it (refused at 100,
    for 50 ms): what is made from it goes inline with it, counted as backing off and charged
    the source's lapse; once the back-off is over, it is put."""
    rules = HostRules(3, inline_once=False, backoff_ms=50)
    rules.refused(SOURCE, 100)
    rules.follow_source(MADE, SOURCE, 120, live=True, source_lapse=EXPIRED)
    assert rules.take_blocked(MADE, live=True) == (EXPIRED, True)
    rules.follow_source(MADE, SOURCE, 150, live=True, source_lapse=EXPIRED)
    assert rules.take_blocked(MADE, live=True) is None


def test_an_object_backing_off_itself_goes_inline_for_its_own_lapse_not_its_sources():
    """The DES host decides an object by its own lease before its source: one that holds no
    live lease and is backing off from its own refused PUT goes inline charged its own lapse,
    even when its source went inline earlier in the frame; with a live lease, the source's."""
    rules = HostRules(3, inline_once=False, backoff_ms=50)
    rules.refused(MADE, 100)
    rules.send_inline(SOURCE, 100, 120, INVALIDATED, True)
    rules.follow_source(MADE, SOURCE, 120, live=False, source_lapse=INVALIDATED)
    assert rules.take_blocked(MADE, live=False) is None
    assert rules.goes_inline(MADE, 10, 120, EXPIRED)
    assert rules.inlined_at[MADE][2] == EXPIRED
    rules.follow_source(MADE, SOURCE, 120, live=True, source_lapse=INVALIDATED)
    assert rules.take_blocked(MADE, live=True) == (INVALIDATED, True)


def test_a_source_refused_for_its_frame_sends_what_is_made_from_it_inline_but_put():
    """The DES host put the object in the same burst as its refused source: a PUT no reference
    follows (``take_orphan``) where it needs a lease; a live lease of it is left alone."""
    rules = HostRules(3, inline_once=False, backoff_ms=1000)
    rules.refused(SOURCE, 5, follower=MADE)
    assert not rules.puts_along(SOURCE, OTHER, 5, EXPIRED)  # no second PUT in that frame
    assert rules.take_blocked(MADE, live=False) is None  # needs a lease: put all the same
    assert rules.take_orphan(MADE) and not rules.take_orphan(MADE)
    assert rules.take_blocked(OTHER, live=True) == (INVALIDATED, False)  # live: inline only


def test_no_source_is_put_along_for_what_goes_inline_or_while_backing_off_from_it():
    rules = HostRules(3, inline_once=True, backoff_ms=100)
    rules.ended_under_host([MADE])
    assert not rules.puts_along(SOURCE, MADE, 1, EXPIRED)  # MADE takes its inline turn
    rules.refused(SOURCE, 10)
    assert not rules.puts_along(SOURCE, OTHER, 50, EXPIRED)  # backing off: OTHER inline
    assert rules.take_blocked(OTHER, live=True) == (EXPIRED, True)
    assert rules.puts_along(SOURCE, OTHER, 110, EXPIRED)
