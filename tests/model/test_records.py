"""The operation log keeps a row per operation and expands it into a record per reference."""

from __future__ import annotations

import pytest

from nnrpsim.model.records import InstallCause, OperationLog, RefOutcome


def test_references_expand_per_object_and_keep_what_was_not_a_plain_hit():
    log = OperationLog()
    log.append(1.0, 2.5, False, 7, 0, [3, 4], {}, {})
    log.append(
        5.0,
        1.25,
        True,
        8,
        1,
        [4, 9, 3],
        {9: RefOutcome.CACHE_MISS, 3: RefOutcome.INSTALLED},
        {3: InstallCause.COLD, 4: InstallCause.EXPIRED},
    )
    refs = log.references()
    assert refs["time_ms"].tolist() == [1.0, 1.0, 5.0, 5.0, 5.0]
    assert refs["session"].tolist() == [7, 7, 8, 8, 8]
    assert refs["server"].tolist() == [0, 0, 1, 1, 1]
    assert refs["object"].tolist() == [3, 4, 4, 9, 3]
    assert refs["outcome"].tolist() == [0, 0, 0, RefOutcome.CACHE_MISS, RefOutcome.INSTALLED]
    assert refs["cause"].tolist() == [0, 0, InstallCause.EXPIRED, 0, InstallCause.COLD]
    ops = log.operations()
    assert ops["start_ms"].tolist() == [1.0, 5.0]
    assert ops["latency_ms"].tolist() == [2.5, 1.25]
    assert ops["fallback"].tolist() == [False, True]


def test_an_empty_log_gives_empty_columns():
    log = OperationLog()
    assert all(len(column) == 0 for column in log.references().values())
    assert all(len(column) == 0 for column in log.operations().values())


def test_a_fallback_that_never_completed_is_counted_once():
    from nnrpsim.model.auditor import Auditor

    auditor = Auditor(operation_never_completed=3, fallbacks=5, fallbacks_completed=4)
    assert auditor.violations == 3 and auditor.fallback_success_rate == 0.8
    auditor.check_hit(now_ms=10, expires_ms=10, version=2, expected=1, current=2)
    assert auditor.violations == 5  # expired, and not the version the host asked for


@pytest.mark.parametrize(("expires_ms", "violations"), [(11, 0), (10, 1), (9, 1)])
def test_a_hit_in_the_millisecond_its_lease_runs_out_is_on_an_expired_lease(expires_ms, violations):
    """A lease lives until its expiry, not at it (the table's rule), whatever else is right."""
    from nnrpsim.model.auditor import Auditor

    auditor = Auditor()
    auditor.check_hit(now_ms=10, expires_ms=expires_ms, version=1, expected=1, current=1)
    assert auditor.hit_on_expired_lease == auditor.violations == violations
