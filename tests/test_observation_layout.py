"""The documented observation layout matches the encoder (the docs are a contract too)."""

import re

import numpy as np
import pytest

import scat_env
from scat_env import GameState, Phase, make_view
from scat_env.aec_env import __doc__ as ENV_DOC
from scat_env.observation import ObservationEncoder, layout_table, observation_size, pieces


@pytest.mark.parametrize("n", range(2, 11))
def test_documented_size_formula_matches_encoder(n):
    assert observation_size(n) == 52 * (n + 4) + 4 * n + 12
    env = scat_env.env(num_players=n)
    assert env.observation_space("player_0")["observation"].shape == (observation_size(n),)


def test_env_docstring_quotes_the_sizes_the_encoder_produces():
    quoted = re.search(r"``52 \* \(n \+ 4\) \+ 4n \+ 12``: (\d+) for 2 players, (\d+) for 3, "
                       r"(\d+) for 6, (\d+) for 10", ENV_DOC)
    assert quoted, "the size line of the env docstring changed shape"
    assert [int(x) for x in quoted.groups()] == [observation_size(n) for n in (2, 3, 6, 10)]


@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_layout_table_covers_every_index_once(n):
    rows = [r for r in layout_table(n).splitlines()[2:]]
    covered = []
    for row in rows:
        lo, hi = map(int, row.split("|")[1].strip().split(".."))
        covered.extend(range(lo, hi + 1))
    assert covered == list(range(observation_size(n)))
    assert [r.split("`")[1] for r in rows] == [name for name, _ in pieces(n)]


def test_observation_values_stay_in_unit_box_for_every_preset():
    for preset in scat_env.PRESETS:
        rules = scat_env.Rules.preset(preset)
        enc = ObservationEncoder(4, rules)
        st = GameState(4, rules, seed=11)
        for _ in range(120):
            if st.is_terminal():
                break
            for seat in range(4):
                obs = enc.encode(make_view(st, seat))
                assert obs.dtype == np.float32 and obs.min() >= 0.0 and obs.max() <= 1.0, preset
            st.apply_action(st.legal_actions()[-1] if st.phase is Phase.DISCARD else st.legal_actions()[0])
