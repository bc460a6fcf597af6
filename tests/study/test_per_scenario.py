"""Work kept for each living scenario: done once, shared, and dropped with its owner."""

import gc
import weakref

from nnrpsim.scenario.per_scenario import once_per_scenario


class Owner:
    """A frozen scenario's stand-in: compared by identity, as the cache compares."""


class Value:
    """What is worked out: weakly referenced to see when the cache lets it go."""


def test_each_owner_is_computed_once_and_an_equal_one_again():
    computed: list[Owner] = []

    @once_per_scenario
    def value_of(owner: Owner) -> Value:
        """The docstring the wrapper keeps."""
        computed.append(owner)
        return Value()

    a, b = Owner(), Owner()
    assert value_of(a) is value_of(a) and value_of(b) is not value_of(a)
    assert computed == [a, b] and value_of.__doc__ == "The docstring the wrapper keeps."


def test_a_value_goes_with_its_owner_and_a_new_owner_gets_its_own():
    @once_per_scenario
    def value_of(owner: Owner) -> Value:
        return Value()

    owners = [Owner() for _ in range(100)]
    kept = [weakref.ref(value_of(owner)) for owner in owners]
    del owners
    gc.collect()
    assert all(ref() is None for ref in kept)
    # new owners may reuse the dead ones' ids: each still gets a value of its own
    again = [Owner() for _ in range(100)]
    values = [value_of(owner) for owner in again]
    assert len({id(value) for value in values}) == 100
    assert all(value_of(owner) is value for owner, value in zip(again, values, strict=True))
