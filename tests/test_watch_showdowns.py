"""``scat watch`` says, for every scored hand of every preset, the rule applied and the hands
the table saw, with the values the players count; golf's slot moves name their cards.

Each preset plays one hand (``--single-hand``) in-process; the same seeds played again by
:func:`agents.match.play_game` give the results the output is checked against.
"""

from __future__ import annotations

import re

import pytest

from agents.match import play_game
from agents.registry import make_agent
from scat_cli.main import main
from scat_cli.watch import seat_names
from scat_env import Rules
from scat_env.cards import card_str
from scat_env.rules import PRESETS
from scat_env.showdown import rule_text

AGENTS = ["greedy", "random", "threshold:20"]
SEED = 4


def _watch(preset: str, capsys: pytest.CaptureFixture[str], seed: int = SEED) -> str:
    code = main(["watch", "--agents", ",".join(AGENTS), "--rules", preset, "--seed", str(seed),
                 "--single-hand", "--fast"])
    assert code == 0
    return capsys.readouterr().out


def _results(preset: str, seed: int = SEED) -> list:
    agents = [make_agent(spec, seed=s) for s, spec in enumerate(AGENTS)]
    return play_game(agents, Rules.preset(preset), seed=seed, single_hand=True).results


def _hand_text(cards) -> str:
    return " ".join(card_str(c, symbols=True) for c in sorted(cards))


def _check_showdowns(preset: str, out: str, results: list) -> None:
    """Every scored hand in ``out``: its rule, then one row per seat dealt in with the hand
    the table saw (or "(not shown)"), its value, and its lives lost or points scored."""
    rules = Rules.preset(preset)
    assert results, "one hand was played: it was scored"
    names = seat_names(AGENTS)
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("* hand ")]
    assert len(starts) == len(results)
    for start, result in zip(starts, results, strict=True):
        assert lines[start + 1] == f"  rule: {rule_text(result.rule, rules)}"
        rows = lines[start + 2:start + 2 + len(result.lives_lost)]
        public = result.seen_by(None)
        for seat, row in zip(sorted(result.lives_lost), rows, strict=True):
            assert row.startswith(f"  {names[seat]}")
            if seat in public.hands:
                assert _hand_text(public.hands[seat]) in row
            else:  # after a declared 31 the other hands were never shown
                assert "(not shown)" in row
                assert _hand_text(result.hands[seat]) not in row
            if rules.scoring == "points":
                points = result.points_after[seat]
                assert row.endswith(f"{points} of {rules.points_to_win} points")
                won = result.points_won.get(seat, 0)
                assert f" +{won} " in row if won else " 0 " in row
            else:
                lost = result.lives_lost[seat]
                assert f" -{lost} " in row if lost else " 0 " in row
            # the value as the players count it: the poker tie-break is not a decimal
            assert not re.search(r"\d\.\d{3}", row), row


@pytest.mark.parametrize("preset", list(PRESETS))
def test_watch_names_the_rule_and_shows_the_hands_the_table_saw(preset, capsys):
    _check_showdowns(preset, _watch(preset, capsys), _results(preset))


@pytest.mark.parametrize("preset", ["standard", "french_canadian"])
def test_after_a_declared_31_watch_shows_only_the_declarers_hands(preset, capsys):
    """002 "Declaring 31": the holder shows its cards; the other hands go back unseen."""
    for seed in range(200):
        results = _results(preset, seed)
        if any(r.reason == "thirty_one" for r in results):
            break
    else:
        pytest.fail("no 31 declared in 200 hands: the test proves nothing")
    out = _watch(preset, capsys, seed)
    assert "(not shown)" in out
    _check_showdowns(preset, out, results)


def test_a_golf_watch_names_every_card_a_slot_move_turns_face_up(capsys):
    out = _watch("golf", capsys)
    moves = [line for line in out.splitlines()
             if re.match(r"  \S+: (put the|discard the .* and turn up)", line)]
    (result,) = _results("golf")
    # three slot moves per seat: every slot ends face up
    assert len(moves) == 3 * len(result.hands)
    card = r"(10|[2-9JQKA])[♣♦♥♠]"
    for line in moves:
        assert (re.search(rf"put the {card} in slot [123], the {card} that lay there to "
                          "the pile$", line)
                or re.search(rf"discard the {card} and turn up the {card} in slot [123]$",
                             line)), line
    # a face-up slot stays as it is: the cards put or turned up are the hands compared
    names = seat_names(AGENTS)
    for seat, hand in result.hands.items():
        face_up = {m.split(" in slot")[0].split()[-1] for m in moves
                   if m.startswith(f"  {names[seat]}: ")}
        assert face_up == {card_str(c, symbols=True) for c in hand}
