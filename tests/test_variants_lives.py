"""The lives family: Ride the Bus moves a player one stop for every lost hand, a knocker's
too (002 Ride the Bus), with or without the extra stops."""

from __future__ import annotations

import pytest
from conftest import knock_game

from scat_env import Rules, lives_label

H10, H17, H23 = "JC 7H 4D", "QS 9D 8D", "KH 8H 5H"


@pytest.mark.parametrize("preset", ["ride_the_bus", "ride_the_bus_extra_stops"])
def test_ride_the_bus_a_lone_lowest_knocker_moves_one_stop(preset):
    result = knock_game([H10, H17, H23], rules=preset).results[-1]
    assert result.lives_lost == {0: 1, 1: 0, 2: 0}


@pytest.mark.parametrize("preset", ["ride_the_bus", "ride_the_bus_extra_stops"])
def test_ride_the_bus_every_lost_hand_is_one_stop(preset):
    rules = Rules.preset(preset)
    assert rules.knocker_loss == 1
    stops = [lives_label(rules, n) for n in range(rules.start_lives, 0, -1)]
    assert stops[:2] == ["seated", "standing at the back"]
    assert len(stops) == rules.start_lives == 5 + rules.extra_stops


def test_the_standard_knocker_still_pays_two():
    assert knock_game([H10, H17, H23]).results[-1].lives_lost == {0: 2, 1: 0, 2: 0}
