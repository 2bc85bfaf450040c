"""``scat play`` words the calls of the variations as their rules do, and keeps a quiet 31
quiet.

- Declaring 31 as a choice (preset ``undeclared_31``, 002/000: a 31 not declared at once
  counts as 30): an opponent that keeps its 31 quiet gets no line, no pause, no redraw.
- The knock says what it does under the rules in force: the computer versions' knock is
  followed by the knocker's own draw (002 "Scat software"), Doug Moyer's lets the next
  player knock too (002 "Variations").
- Anything typed in a call phase (throw down or look, sudden death or deal on) that is not
  one of its choices is answered with those choices, never with advice about drawing.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

import pytest
from conftest import knock_game

from agents.expert import ExpertAgent
from agents.registry import _FACTORIES, register
from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_cli.tui import make_console, showdown_view
from scat_env import GameState, Rules, cards_str, parse_card
from scat_env.actions import DECLARE, KNOCK, PASS, SUDDEN_DEATH
from scat_env.engine import Phase
from scat_env.view import make_view
from scat_session.humanio import InputError, knock_effect, menu_options, parse_command
from scat_session.savegame import parse_action
from scat_session.seating import new_game


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


class QuietExpert(ExpertAgent):
    """The expert, except that it never declares a 31 it may keep quiet."""

    def act(self, view):  # type: ignore[no-untyped-def]
        if DECLARE in view.legal_actions and PASS in view.legal_actions:
            return PASS
        return super().act(view)


@pytest.fixture
def quiet_agent():
    register("quiet31", lambda arg, seed: QuietExpert(seed=seed), "test agent")
    yield "quiet31"
    _FACTORIES.pop("quiet31", None)


def test_an_opponents_quiet_31_gets_no_line(tmp_path, monkeypatch, capsys, quiet_agent):
    """Seeds are tried until an opponent keeps a 31 quiet (the save records its PASS); the
    screen never says so."""
    for seed in range(1, 40):
        save = tmp_path / f"game{seed}.json"
        monkeypatch.setattr("sys.stdin", io.StringIO("1\n" * 4000))
        code = main(["play", "--fast", "--no-color", "--rules", "undeclared_31", "--players",
                     "3", "--opponents", quiet_agent, "--seed", str(seed), "--save", str(save)])
        out = capsys.readouterr().out
        assert code == 0
        moves = json.loads(save.read_text())["actions"]
        quiet = [m for m in moves if m[0] != 0 and parse_action(m[1]) == PASS]
        assert "pass" not in out.lower(), out[-2000:]
        if quiet:
            return
    pytest.fail("no opponent kept a 31 quiet in 39 games: the test proves nothing")


def _view_at(rules: Rules, phase: Phase, **changes: object):
    state = GameState(3, rules, seed=5)
    while state.phase is not phase:
        state.apply_action(state.legal_actions()[0])
    return make_view(state, state.current_player)


def test_the_knock_says_what_it_does_under_each_rule():
    standard = Rules.preset("standard")
    assert knock_effect(standard) == "everyone else gets one more turn, then the showdown"
    computer = Rules.preset("computer")
    assert knock_effect(computer).startswith("then draw and discard; everyone else")
    moyer = Rules.preset("moyer")
    assert "unless the next player knocks too" in knock_effect(moyer)
    assert "ends at once" in knock_effect(moyer, second=True)
    view = _view_at(replace(computer, first_turn_knock=True), Phase.DRAW)
    (knock,) = [o for o in menu_options(view) if o.action == KNOCK]
    assert "then draw and discard" in knock.label


def test_why_no_knock_follows_the_rules_in_force():
    computer = Rules.preset("computer")  # no knock on a player's first turn
    view = _view_at(computer, Phase.DRAW)
    assert KNOCK not in view.legal_actions
    with pytest.raises(InputError, match="no knock on a player's first turn"):
        parse_command("k", view)


def _quiet_move(state: GameState) -> int:
    """A move that neither knocks nor calls sudden death (PASS deals on)."""
    return [a for a in state.legal_actions() if a not in (KNOCK, SUDDEN_DEATH)][0]


def test_a_second_knock_refused_names_who_may_knock_too():
    state = GameState(4, Rules.preset("moyer"), seed=11)
    while not (state.phase is Phase.DRAW and KNOCK in state.legal_actions()):
        state.apply_action(_quiet_move(state))
    state.apply_action(KNOCK)
    # The knocker's left-hand player may knock too (it draws and discards instead); the
    # player after it may not.
    assert KNOCK in state.legal_actions()
    state.apply_action(_quiet_move(state))
    state.apply_action(_quiet_move(state))
    assert state.phase is Phase.DRAW
    view = make_view(state, state.current_player)
    assert KNOCK not in view.legal_actions
    with pytest.raises(InputError, match="only the next player after the knocker"):
        parse_command("k", view)


@pytest.mark.parametrize("preset, phase", [("throw_down", Phase.BLIND),
                                           ("sudden_death", Phase.SUDDEN_DEATH)])
@pytest.mark.parametrize("typed", ["s", "d", "e", "k", "7c"])
def test_a_call_phase_answers_with_its_own_choices(preset, phase, typed):
    view = _view_at(Rules.preset(preset), phase)
    with pytest.raises(InputError) as err:
        parse_command(typed, view)
    text = str(err.value)
    assert text.startswith("That is not a choice now. Choose ")
    for option in menu_options(view):
        assert option.key in text
    assert "draw" not in text.lower() or "stock" not in text.lower()


@pytest.mark.parametrize("preset, phase", [("throw_down", Phase.BLIND),
                                           ("sudden_death", Phase.SUDDEN_DEATH),
                                           ("hammer", Phase.DRAW)])
def test_a_hint_at_a_call_says_the_experts_call_and_why(preset, phase):
    from agents.expert import ExpertAgent
    from scat_session.hints import hint

    view = _view_at(Rules.preset(preset), phase)
    text = hint(ExpertAgent(seed=0), view)
    assert "The expert would " in text and len(text.splitlines()) == 1


def test_agents_asked_for_from_many_threads_at_once_are_all_known(monkeypatch):
    """The first use of the registry from several threads at once (a server's first
    requests) finds every agent: none sees a half-filled table."""
    import threading

    from agents import registry

    monkeypatch.setattr(registry, "_LOADED", False)
    errors: list[BaseException] = []

    def build() -> None:
        try:
            registry.make_agent("greedy")
            registry.make_agent("expert")
        except BaseException as exc:  # noqa: BLE001 - collected and reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_golf_at_the_terminal_shows_the_slots_face_down_and_the_held_card(
        tmp_path, monkeypatch, capsys):
    """002 golf: three face-down cards nobody may look at, the owner included; a drawn card
    is held until it goes into a slot or onto the pile."""
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n1\n" * 30))
    code = main(["play", "--fast", "--no-color", "--rules", "golf", "--players", "3",
                 "--opponents", "expert", "--seed", "5", "--save", str(tmp_path / "g.json")])
    out = capsys.readouterr().out
    assert code == 0
    assert "?? ?? ??" in out and "holding" in out
    assert "put the" in out and "in a slot" in out
    assert "Place it face up in a face-down slot" in out
    # every slot move, the person's and the opponents', names the cards it turned face up
    card = r"(10|[2-9JQKA])[♣♦♥♠]"
    assert re.search(rf"^(> )?You put the {card} in slot [123], the {card} that lay there "
                     r"to the pile\.$", out, re.M)
    for name in ("Alice", "Bob"):
        assert re.search(rf"^{name} (put the {card} in slot [123], the {card} that lay there "
                         rf"to the pile|discarded the {card} and turned up the {card} in "
                         r"slot [123])$", out, re.M)
    assert "chose: " not in out


class _Checked:
    """An agent that runs ``check`` before each move: the screen so far, read at that point."""

    def __init__(self, inner, check) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.check = inner, check

    def act(self, view):  # type: ignore[no-untyped-def]
        self.check()
        return self.inner.act(view)


def test_golf_at_the_terminal_never_names_a_card_still_face_down(tmp_path, capsys):
    """What the person reads names a card only once it is face up (002 golf: nobody looks at
    a face-down card, its owner included): never a card in a face-down slot, in the stock,
    or an opponent's card drawn from the stock and not yet placed or discarded."""
    game = new_game(3, ["expert", "expert"], Rules.preset("golf"), seed=8, name="You")
    session: PlaySession
    checked = {"chunks": 0, "cards": 0}
    hand_seen = [0]
    leaks: list[str] = []

    def check() -> None:
        text = capsys.readouterr().out
        state = session.state
        if state.hand_number != hand_seen[0]:  # the text ends a hand: all of it face up
            hand_seen[0] = state.hand_number
            return
        hidden = set(state.stock)
        for seat, hand in enumerate(state.hands):
            hidden |= {c for i, c in enumerate(hand[:3]) if not state.face_up[seat] >> i & 1}
            if seat != 0 and len(hand) == 4 and not state.known[seat] >> hand[3] & 1:
                hidden.add(hand[3])  # drawn from the stock: its holder alone has seen it
        named = {parse_card(m.group(0)) for m in re.finditer(r"(10|[2-9JQKA])[♣♦♥♠]", text)}
        if named & hidden:  # kept, not raised: an agent that raises is replaced
            leaks.append(f"{cards_str(sorted(named & hidden))} in {text!r}")
        checked["chunks"] += 1
        checked["cards"] += len(named)

    def answer(prompt: str) -> str:
        check()
        return "1"

    session = PlaySession(game, tmp_path / "g.json", color=False, fast=True, width=100,
                          input_fn=answer)
    session.agents = [a if a is None else _Checked(a, check) for a in session.agents]
    assert session.run() == 0
    assert leaks == []
    assert checked["chunks"] > 30 and checked["cards"] > 100
    assert not game.replacements  # every check ran inside the agents it wraps


def test_a_jacobs_showdown_counts_points_and_says_where_the_tie_break_decided():
    """002 Jeffrey Jacobs: equal hands are told apart as in poker. A-10-9 and K-Q-J of one
    suit both count 30; the screen says 30 for both, not the tie-break's fraction, and says
    why A-10-9 scored. A race has no lives: what each scored and its points instead."""
    rules = Rules.preset("french_canadian_jacobs")
    state = knock_game(["AH 10H 9H", "KS QS JS", "QD 9D 8D"], rules=rules)
    result = state.results[-1]
    assert result.points_won == {0: 1} and int(result.values[0]) == int(result.values[1])
    console = make_console(color=False, width=100)
    with console.capture() as cap:
        console.print(showdown_view(result.seen_by(0), rules, ["You", "Bob", "Cy"]))
    out = cap.get()
    assert "of 31 points" in out and "30.97" not in out
    assert not re.search(r"\d\.\d", out), out
    assert re.search(r"│ You \(knocked\)\s+9♥ 10♥ A♥\s+30\s+\+1\s+1 of 31 points", out)
    assert re.search(r"│ Bob\s+J♠ Q♠ K♠\s+30\s+0\s+0 of 31 points", out)
    assert "Scored" in out and "Points" in out
    assert "Lost" not in out and "lives left" not in out
    assert "Tied at 30, told apart as in poker" in out
    words = " ".join(out.replace("│", " ").split())  # the panel's lines joined again
    assert "A♥ 10♥ 9♥ (You) beats K♠ Q♠ J♠ (Bob)." in words


def test_a_points_race_shows_points_not_lives(tmp_path, monkeypatch, capsys):
    """Cribbage.ca's French Canadian 31: a race to 31 points; the table shows the score."""
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n1\n" * 20 + "q\ny\n"))
    code = main(["play", "--fast", "--no-color", "--rules", "french_canadian", "--players",
                 "3", "--opponents", "expert", "--seed", "3", "--save", str(tmp_path / "f.json")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Points" in out and "of 31 points" in out
