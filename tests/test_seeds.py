"""Game seeds: one scat draws itself cannot be searched, and every bit of it counts.

The seed deals every hand and orders the stock. A seed drawn from 2**31 values can be found
from the person's first hand, the dealer and the upcard by trying them all (docs/SECURITY.md,
"Seeds"), and then every hidden card is known. So a seed the person does not choose has 128
bits from the operating system, and it reaches the deal and every agent whole: seeds that
differ only in their high bits deal and play differently. A seed the person gives
(``--seed``, 0 to 2**63 - 1) still replays exactly.
"""

from __future__ import annotations

import io
import json
import re

import pytest

from agents.match import play_game
from agents.registry import make_agent
from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_env import GameState, Rules
from scat_session import savegame
from scat_session.savegame import SEED_BITS, SavedGame, agent_seed, new_seed
from scat_session.seating import new_game

#: A 128-bit seed; its twins below differ from it in one bit each.
BASE = 0xB7E1_5162_8AED_2A6A_BF71_5880_9CF4_F3C7
HIGH_BITS = (31, 32, 63, 64, 100, 127)
#: Every agent kind that draws random numbers, built from the registry as a game builds it.
RANDOM_AGENTS = ("random", "ismcts:20", "compact:scat_batch_set:sample",
                 "compact:scat_batch_set:sample")


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


def test_a_drawn_seed_has_128_bits_from_the_os(monkeypatch):
    seeds = [new_seed() for _ in range(256)]
    assert SEED_BITS >= 128
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**SEED_BITS for s in seeds)
    # Half of all seeds use the top bit; 256 without it happens once in 2**256.
    assert max(s.bit_length() for s in seeds) == SEED_BITS
    asked: list[int] = []

    def from_the_os(bits: int) -> int:
        asked.append(bits)
        return 2**bits - 1

    monkeypatch.setattr(savegame.secrets, "randbits", from_the_os)
    assert new_seed() == 2**SEED_BITS - 1 and asked == [SEED_BITS]


@pytest.mark.parametrize("bit", HIGH_BITS)
def test_seeds_differing_only_in_a_high_bit_deal_differently(bit):
    twin = BASE ^ (1 << bit)
    for players in (2, 3, 6):
        one = GameState(players, Rules(), seed=BASE)
        other = GameState(players, Rules(), seed=twin)
        assert (one.hands, one.stock) != (other.hands, other.stock), (players, bit)


@pytest.mark.parametrize("spec", RANDOM_AGENTS)
def test_seeds_differing_only_in_a_high_bit_drive_agents_differently(spec):
    """Built and reset as a saved game builds them (:func:`agent_seed`), agents whose game
    seeds differ only above bit 31, 32, 63 or 64 hold different generators."""
    states = set()
    for seed in (BASE, *(BASE ^ (1 << bit) for bit in HIGH_BITS)):
        agent = make_agent(spec, seed=agent_seed(seed, 1))
        agent.reset(agent_seed(seed, 1))
        states.add(repr(agent.rng.getstate()))
    assert len(states) == 1 + len(HIGH_BITS)


def test_seeds_differing_only_in_a_high_bit_play_different_games():
    """The match runner seeds each agent from the game seed (``seed * 1000 + seat``)."""
    games = set()
    for seed in (BASE, BASE ^ (1 << 127), BASE ^ (1 << 64)):
        agents = [make_agent("random", seed=0) for _ in range(3)]
        record = play_game(agents, Rules(pennies=1), seed=seed)
        games.add(repr([r.to_dict() for r in record.results]))
    assert len(games) == 3


def _answers(n: int | None):
    asked = iter(range(10**6))

    def ask(prompt: str) -> str:
        if n is not None and next(asked) >= n:
            raise EOFError
        return "1"

    return ask


def test_a_seed_beyond_2_63_saves_resumes_and_replays(tmp_path, capsys):
    """A drawn seed is larger than a ``--seed`` may be: the save seals it, resumes from it
    and, once the game is over, holds it in clear for anyone to replay."""
    seed = 2**127 + 12_345
    path = tmp_path / "g.json"
    rules = Rules(pennies=1)
    game = new_game(3, ["random", "expert"], rules, seed=seed, name="You")
    assert PlaySession(game, path, color=False, fast=True, input_fn=_answers(3)).run() == 0
    halfway = SavedGame.load(path)
    assert halfway.seed == seed and halfway.status == "in_progress"
    assert str(seed) not in path.read_text()
    PlaySession(halfway, path, color=False, fast=True, input_fn=_answers(None)).run()
    done = json.loads(path.read_text())
    assert done["status"] == "finished" and done["seed"] == seed
    assert done["players"][1]["seed"] == agent_seed(seed, 1)
    whole = tmp_path / "whole.json"
    PlaySession(new_game(3, ["random", "expert"], rules, seed=seed, name="You"), whole,
                color=False, fast=True, input_fn=_answers(None)).run()
    assert json.loads(whole.read_text())["actions"] == done["actions"]
    capsys.readouterr()
    assert main(["replay", str(path), "--fast", "--no-color"]) == 0
    assert "Verified:" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["play", "watch"])
@pytest.mark.parametrize("seed", [2**63, -1, 2**127])
def test_a_given_seed_stays_within_0_to_2_63(monkeypatch, capsys, command, seed):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    args = (["play", "--fast"] if command == "play"
            else ["watch", "--agents", "random,random", "--fast"])
    assert main([*args, "--seed", str(seed)]) == 2
    assert "--seed must be between 0 and 2**63 - 1" in capsys.readouterr().err


def test_a_watched_game_prints_a_seed_that_replays_it(capsys):
    """``scat watch`` shows its seed first (a watched game hides nothing from anyone), so
    the seed must be one ``--seed`` takes back."""
    args = ["watch", "--agents", "random,expert", "--fast", "--single-hand"]
    assert main(args) == 0
    first = capsys.readouterr().out
    seed = int(re.search(r"--seed (\d+)", first).group(1))
    assert 0 <= seed < 2**63
    assert main([*args, "--seed", str(seed)]) == 0
    assert capsys.readouterr().out == first

