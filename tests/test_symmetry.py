"""Card relabellings (agents.symmetry) and the ``sym`` option of policy agents.

The rules name no suit, and under scoring without straights no ten-point rank either (002
"Cards and their value": 10, J, Q, K all count ten), so a renamed deal is the same game. The
tests check that on the engine, then that the policy input of a renamed position is the
gather ``SymmetryAverage`` uses, so averaging over renamings shows the network real positions.
"""

import random
from dataclasses import replace

import numpy as np
import pytest

from agents.neural.encoding import PaddedEncoder, symmetry_layout
from agents.registry import make_agent
from agents.symmetry import SymmetryAverage, card_permutation, relabellings
from scat_env import GameState, Rules, make_view
from scat_env.actions import NUM_ACTIONS


def _deal(seed: int, n: int = 3) -> tuple[list[list[int]], list[int], int]:
    deck = list(range(52))
    random.Random(seed).shuffle(deck)
    return [deck[3 * i:3 * i + 3] for i in range(n)], deck[3 * n + 1:], deck[3 * n]


def _state(rules: Rules, hands, stock, up) -> GameState:
    return GameState.from_parts(rules, hands=hands, stock=stock, discard=[up],
                                lives=[3] * len(hands), dealer=len(hands) - 1,
                                current_player=0, hand_number=1)


def _renamed_view(view, perm):
    """The view with every card renamed by ``perm`` (what a renamed deal must show)."""
    def f(c):
        return None if c is None else int(perm[c])

    return replace(
        view, hand=tuple(sorted(f(c) for c in view.hand)), drawn_card=f(view.drawn_card),
        taken_card=f(view.taken_card), top_discard=f(view.top_discard),
        discard_pile=tuple(f(c) for c in view.discard_pile),
        known_cards=tuple(tuple(sorted(f(c) for c in k)) for k in view.known_cards),
        log=tuple((s, kind, f(c) if c is not None else c) for s, kind, c in view.log),
        legal_actions=tuple(sorted(f(a) if a < 52 else a for a in view.legal_actions)),
        last_result=None)


def _play_both(seed: int, suits, ranks, rules: Rules):
    """Yield (view, view of the renamed deal) along one random hand played in both deals."""
    perm = card_permutation(suits, ranks)
    hands, stock, up = _deal(seed)
    game = _state(rules, hands, stock, up)
    renamed = _state(rules, [[int(perm[c]) for c in h] for h in hands],
                     [int(perm[c]) for c in stock], int(perm[up]))
    rng = random.Random(seed)
    while not game.is_terminal() and game.hand_number == 1:
        for seat in range(3):
            yield make_view(game, seat), make_view(renamed, seat), perm
        legal = game.legal_actions()
        action = legal[rng.randrange(len(legal))]
        game.apply_action(action)
        renamed.apply_action(int(perm[action]) if action < 52 else action)


@pytest.mark.parametrize("seed", range(4))
def test_a_deal_with_renamed_suits_and_ten_point_ranks_is_the_same_game(seed):
    # 002 "Cards and their value": the value of a hand is its best one-suit total.
    for view, other, perm in _play_both(seed, (2, 0, 3, 1), (11, 8, 10, 9), Rules()):
        assert other == replace(_renamed_view(view, perm), last_result=other.last_result)


@pytest.mark.parametrize("seed", range(3))
def test_the_renamed_position_encodes_as_the_gather_of_the_original(seed):
    rules = Rules()
    enc = PaddedEncoder(rules, 6)
    perms = relabellings(rules, 6, seed=seed)
    sym = SymmetryAverage(enc.size, symmetry_layout(6), perms)
    for k, (suits, ranks) in enumerate(perms):
        for view, other, _ in _play_both(seed, suits, ranks, rules):
            np.testing.assert_array_equal(enc.encode(view)[sym.gather[k]], enc.encode(other))


def test_the_expert_advice_inputs_are_relabelled_too():
    # The expert's numbers are per card or per position; its tie-breaks between equal
    # discards may pick another card, so most (not all) positions match exactly.
    rules = Rules()
    enc = PaddedEncoder(rules, 6, advice=True)
    perms = relabellings(rules, 4, seed=1)
    sym = SymmetryAverage(enc.size, symmetry_layout(6, advice=True), perms)
    same = total = 0
    for k, (suits, ranks) in enumerate(perms):
        for view, other, _ in _play_both(7, suits, ranks, rules):
            if not view.legal_actions:
                continue  # the advice is for the player to act
            total += 1
            same += np.allclose(enc.encode(view)[sym.gather[k]], enc.encode(other), atol=1e-6)
    assert same >= 0.95 * total


class _CardReader:
    """An exactly equivariant policy: the logit of discarding c is the input at c's slot."""

    advice = False

    def logits(self, obs, mask):
        x = np.atleast_2d(obs)
        out = np.zeros((x.shape[0], NUM_ACTIONS), dtype=np.float32)
        out[:, :52] = x[:, :52] + 2 * x[:, 52:104]
        out[:, 52:] = x[:, :52].sum(axis=1, keepdims=True)  # cards in hand: no card named
        out = out[0] if obs.ndim == 1 else out
        return np.where(mask, out, np.float32(-1e9))


def test_averaging_an_equivariant_policy_changes_nothing():
    rules = Rules()
    enc = PaddedEncoder(rules, 6)
    sym = SymmetryAverage(enc.size, symmetry_layout(6), relabellings(rules, 24, seed=2))
    policy = _CardReader()
    for view, _, _ in _play_both(3, (0, 1, 2, 3), (8, 9, 10, 11), rules):
        obs = enc.encode(view)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[list(view.legal_actions)] = True
        np.testing.assert_allclose(sym.logits(policy, obs, mask), policy.logits(obs, mask))




def test_relabellings_start_with_the_identity_are_distinct_and_repeatable():
    rules = Rules()
    got = relabellings(rules, 30, seed=4)
    assert got[0] == ((0, 1, 2, 3), (8, 9, 10, 11))
    assert len(set(got)) == 30
    assert got == relabellings(rules, 30, seed=4)
    assert len(relabellings(rules, 576)) == 576


def test_straights_keep_the_ten_point_ranks_in_order():
    # A straight flush (002 Variations) tells 9-10-J from 9-J-Q: only suits may be renamed.
    rules = Rules.preset("straight_flush")
    assert all(ranks == (8, 9, 10, 11) for _, ranks in relabellings(rules, 24))
    with pytest.raises(ValueError, match="these rules have 24"):
        relabellings(rules, 25)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_a_bad_relabelling_count_is_refused(bad):
    with pytest.raises(ValueError, match="positive int"):
        relabellings(Rules(), bad)


def test_a_bad_permutation_is_refused():
    with pytest.raises(ValueError, match="four suits"):
        card_permutation((0, 0, 1, 2))
    with pytest.raises(ValueError, match="ten-point ranks"):
        card_permutation((0, 1, 2, 3), (8, 9, 10, 12))








def test_an_sb3_policy_averages_over_renamings_in_one_batch(tmp_path):
    # SB3Policy.logits takes a batch as well as one observation, so :sym works for sb3:.
    from sb3_contrib import MaskablePPO

    from training.single_agent import ScatSingleAgentEnv

    MaskablePPO("MlpPolicy", ScatSingleAgentEnv(), n_steps=64, batch_size=32,
                seed=0).save(tmp_path / "tiny.zip")
    plain = make_agent(f"sb3:{tmp_path / 'tiny.zip'}")
    agent = make_agent(f"sb3:{tmp_path / 'tiny.zip'}:sym=3")
    hands, stock, up = _deal(5)
    view = make_view(_state(Rules(), hands, stock, up), 0)
    obs = plain._encoder(view.rules).encode(view)
    sym = agent._symmetry(view.rules, obs.size)
    batch = plain.policy.logits(obs[sym.gather], np.ones(NUM_ACTIONS, dtype=bool))
    one = plain.policy.logits(obs[sym.gather[1]], np.ones(NUM_ACTIONS, dtype=bool))
    np.testing.assert_allclose(batch[1], one, rtol=1e-5, atol=1e-6)
    want = batch[np.arange(3)[:, None], sym.actions].mean(axis=0)
    legal = list(view.legal_actions)
    np.testing.assert_allclose(agent.logits(view)[legal], want[legal], rtol=1e-5, atol=1e-6)


def test_the_sym_option_of_a_padded_policy_spec():
    """``sb3:PATH`` models on the padded observation take ``:sample``, ``:full`` and
    ``:sym[=N]`` (card relabellings averaged)."""
    from agents.adapters.padded import parse_policy_spec

    assert parse_policy_spec("m.zip", "sb3") == ("m.zip", {"sample": False,
                                                           "active_only": True})
    assert parse_policy_spec("m.zip:sym", "sb3")[1]["symmetry"] == 24
    path, options = parse_policy_spec("m.zip:sym=8:full", "sb3")
    assert path == "m.zip" and options == {"sample": False, "active_only": False,
                                           "symmetry": 8}
    assert parse_policy_spec("m.zip:sample:sym=3", "sb3")[1] == {
        "sample": True, "active_only": True, "symmetry": 3}


@pytest.mark.parametrize("option, message", [
    ("sym=0", "from 1 to 576"), ("sym=x", "whole number"), ("sym=577", "from 1 to 576"),
    ("sym:sym=2", "given twice"),
])
def test_a_bad_sym_option_names_the_problem(option, message):
    from agents.adapters.padded import parse_policy_spec

    with pytest.raises(ValueError, match=message):
        parse_policy_spec(f"m.zip:{option}", "sb3")


@pytest.mark.parametrize("spec, word", [
    ("m.zip:bogus", "bogus"), ("m.zip:sample:bogus", "bogus"), ("m.zip:Full", "Full"),
    ("m.zip:symm=3", "symm=3"),
])
def test_an_unknown_option_after_a_policy_is_named_with_the_options(spec, word):
    from agents.adapters.padded import parse_policy_spec

    with pytest.raises(ValueError) as refused:
        parse_policy_spec(spec, "sb3")
    assert str(refused.value) == (
        f"sb3: unknown option {word!r} in sb3:{spec}; options: sample, argmax, full, sym, "
        "sym=N (N from 1 to 576)")
