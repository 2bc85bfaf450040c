"""The engine plays every variation exactly as recorded: the golden digests.

Each family's play lives in ``scat_env/variants/<family>/engine.py`` and reaches the core
:class:`~scat_env.engine.GameState` through hooks chosen once per game. Moving a rule from
one place to another must not change a single decision, so for every preset and 2, 3, 6 and
10 players a few seeded games of random play are reduced to one digest: every decision's
phase, mover and legal actions, the action chosen, every scored hand
(:meth:`HandResult.to_dict`), and the final lives, points, face-up slots, returns and
winner. ``tests/data/engine_digests.json`` holds the digests recorded from the engine, with
each preset's rule fields, so that the games replay the rules recorded, even if a preset is
later redefined.

A digest that changes means a rule changed: if that was the intent, regenerate the file
(and say so in the commit) with::

    PYTHONPATH=$PWD python tests/test_engine_hooks.py --write

The other tests check the binding itself: the standard game binds no hook, each preset
binds its families' hooks only, every family fills only hook points the core declares
(:data:`scat_env.engine.HOOKS`), and a clone or a pickled copy carries its hooks with it.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import pickle
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from scat_env import GameState, Rules
from scat_env.engine import FAMILIES, HOOKS, Phase, PhasePlay
from scat_env.rules import PRESETS

FIXTURE = Path(__file__).resolve().parent / "data" / "engine_digests.json"
SIZES = (2, 3, 6, 10)
GAMES = 8  # seeded games per preset and size
MAX_TURNS = 120  # a hand of random play may wander; the cut is part of what is recorded


def play_digest(rules: Rules, num_players: int, seed: int) -> str:
    """One seeded game of uniform random play reduced to a hex digest (see the module
    docstring for what goes in)."""
    h = hashlib.sha256()
    state = GameState(num_players, rules, seed=seed, max_turns_per_hand=MAX_TURNS)
    pick = random.Random(seed * 7919 + num_players)
    scored = 0
    while not state.is_terminal():
        legal = state.legal_actions()
        action = legal[pick.randrange(len(legal))]
        h.update(repr((str(state.phase), state.current_player, legal, action)).encode())
        state.apply_action(action)
        while scored < len(state.results):
            h.update(json.dumps(state.results[scored].to_dict(), sort_keys=True).encode())
            scored += 1
    h.update(repr((state.lives, state.points, state.face_up, state.returns(), state.winner,
                   state.cut, state.hand_number, str(state.phase))).encode())
    return h.hexdigest()


def preset_digest(rules: Rules, num_players: int) -> str:
    """The digest of :data:`GAMES` seeded games of one preset at one table size."""
    h = hashlib.sha256()
    for seed in range(GAMES):
        h.update(play_digest(rules, num_players, seed).encode())
    return h.hexdigest()[:24]


def record() -> dict[str, Any]:
    """Every preset's rule fields and its digest per table size: the fixture's content."""
    out = {}
    for name in PRESETS:
        rules = Rules.preset(name)
        out[name] = {"rules": _plain_rules(rules),
                     "digests": {str(n): preset_digest(rules, n) for n in SIZES}}
    return out


def _plain_rules(rules: Rules) -> dict[str, Any]:
    return {k: v for k, v in rules.to_dict().items() if k != "name"}


def _recorded() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}


@pytest.mark.parametrize("name", sorted(_recorded()))
def test_every_preset_plays_the_recorded_games(name: str) -> None:
    """Same seeds, same rules: same decisions, legal actions, results and final state."""
    entry = _recorded()[name]
    rules = Rules(**entry["rules"])
    got = {str(n): preset_digest(rules, n) for n in SIZES}
    assert got == entry["digests"], f"{name}: the engine no longer plays these rules as recorded"


def test_every_preset_is_recorded() -> None:
    """A new preset gets its digest too (regenerate the file: see the module docstring)."""
    assert set(PRESETS) <= set(_recorded())


@pytest.mark.parametrize("name", ["standard", "golf", "moyer", "undeclared_31", "hammer",
                                  "throw_down_any", "french_canadian_jacobs", "computer"])
def test_a_clone_and_a_pickled_copy_play_on_like_the_original(name: str) -> None:
    """The hooks a game binds travel with it: a clone and an unpickled copy, taken mid-game,
    play the same rest of the game as the original."""
    rules = Rules.preset(name)
    for seed in range(3):
        state = GameState(3, rules, seed=seed, max_turns_per_hand=MAX_TURNS)
        pick = random.Random(seed)
        for _ in range(7):
            if state.is_terminal():
                break
            legal = state.legal_actions()
            state.apply_action(legal[pick.randrange(len(legal))])
        copies = [state.clone(), pickle.loads(pickle.dumps(state))]
        picks = [random.Random(99) for _ in range(3)]
        games = [state, *copies]
        while not state.is_terminal():
            moves = [g.legal_actions() for g in games]
            assert moves[0] == moves[1] == moves[2]
            for g, p in zip(games, picks, strict=True):
                g.apply_action(moves[0][p.randrange(len(moves[0]))])
        assert [g.results for g in games[1:]] == [state.results] * 2
        assert [g.lives for g in games[1:]] == [state.lives] * 2


def test_the_standard_game_binds_no_hook() -> None:
    """The standard game is the core's own play: every hook is unbound, so a variation that
    is off costs it nothing but an ``is None`` test."""
    state = GameState(3, Rules(), seed=0)
    for hook, (name, _) in HOOKS.items():
        value = getattr(state, name)
        if hook == "phases":
            assert value == {}
        elif hook == "drawn_phase":
            assert value is Phase.DISCARD
        else:
            assert value is None, hook


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_names_only_hook_points_of_the_core(family: str) -> None:
    """Each family's ``hooks(rules)``, under every preset, fills only hook points of
    :data:`scat_env.engine.HOOKS`, with plain module functions (shared by clone, pickled by
    name) and phases the core does not play itself."""
    module = importlib.import_module(f"scat_env.variants.{family}.engine")
    for name in PRESETS:
        for hook, value in module.hooks(Rules.preset(name)).items():
            assert hook in HOOKS, f"{family}: {hook}"
            if hook == "phases":
                assert not set(value) & {Phase.DRAW, Phase.DISCARD}
                assert all(isinstance(play, PhasePlay) for play in value.values())
            elif hook != "drawn_phase" and not isinstance(value, PhasePlay):
                assert value.__module__ == module.__name__ and "." not in value.__qualname__


@pytest.mark.parametrize(("name", "bound"), [
    ("golf", {"_after_deal_hook", "_phase_hooks", "_drawn_phase", "_lives_hook"}),
    ("moyer", {"_knock_hook", "_deal_hook", "_phase_hooks", "_value_hook"}),
    ("hammer", {"_draw_call_hook"}),
    ("throw_down", {"_play_start_hook", "_phase_hooks"}),
    ("undeclared_31", {"_after_deal_hook", "_new_31_hook", "_phase_hooks", "_value_hook"}),
    ("french_canadian", {"_score_hook"}),
    ("french_canadian_jacobs", {"_score_hook", "_knock_hook"}),
    ("computer", {"_knock_hook"}),
    ("cadillac", set()),
])
def test_a_preset_binds_the_hooks_of_its_families_only(name: str, bound: set[str]) -> None:
    state = GameState(3, Rules.preset(name), seed=0)
    standard = GameState(3, Rules(), seed=0)
    differ = {field for field, _ in HOOKS.values()
              if getattr(state, field) != getattr(standard, field)}
    assert differ == bound


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_engine_hooks.py --write  (rewrites the digests)")
    FIXTURE.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
