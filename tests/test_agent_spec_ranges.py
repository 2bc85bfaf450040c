"""Agent specs whose numbers make no sense are refused in one line when the agent is built,
not discovered mid-tournament (a ``nan`` weight, a search budget of hours a move)."""

from __future__ import annotations

import pytest

from agents.registry import make_agent


@pytest.mark.parametrize("spec, words", [
    ("expert:beta=nan", "beta must be between"),
    ("expert:beta=inf", "beta must be between"),
    ("expert:risk=-1", "risk must be between"),
    ("expert:gin_win=1.5", "gin_win must be between"),
    ("ismcts:100000000000", "budget must be between 1 and 100,000"),
    ("ismcts:-3", "budget must be between"),
    ("search:100000", "budget must be between 1 and 4,096"),
    ("search:nan", "budget must be a positive integer"),
    ("threshold:", "give the knock threshold"),
    ("threshold: ", "give the knock threshold"),
])
def test_an_out_of_range_spec_is_refused_in_one_line(spec, words):
    with pytest.raises(ValueError, match=words) as exc:
        make_agent(spec)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("spec", ["expert:beta=0.5,risk=0.6", "expert:draw_bonus=-1",
                                  "threshold", "threshold:never", "ismcts:100000",
                                  "search:4096", "search"])
def test_specs_within_range_still_build(spec):
    assert make_agent(spec).spec == spec


@pytest.mark.parametrize("spec", ["compact:" + "a" * 300, "sb3:" + "b" * 300 + ".zip",
                                  "compact:" + "c" * 300 + ".yaml"])
def test_a_spec_naming_a_file_the_system_cannot_open_is_one_line(spec):
    """A name longer than the file system allows can make the system refuse even to look
    the file up (an OSError, not a missing file): still one bounded line."""
    with pytest.raises(ValueError) as exc:
        make_agent(spec)
    assert "\n" not in str(exc.value) and len(str(exc.value)) <= 300
