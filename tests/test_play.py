"""``scat play``: input parsing, the game loop, save/resume, and a real terminal session."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hang_limits import hang_limit

from scat_cli.errors import CliError
from scat_cli.game import PlaySession
from scat_cli.play import opponent_specs
from scat_env import (
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    KNOCK,
    GameState,
    Rules,
    card_str,
    make_view,
    parse_card,
)
from scat_env.rules import PRESETS
from scat_session.humanio import HELP, HINT, QUIT, InputError, menu_options, parse_command
from scat_session.savegame import SavedGame, portable_spec
from scat_session.seating import new_game

REPO = Path(__file__).resolve().parents[1]
SHORT_RULES = "preset: standard\npennies: 1\ncounty: true\n"  # two lives each: short games


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    """The key and the ledger of these tests live in their tmp folder (where a child
    process with ``HOME=tmp_path`` finds them too), never in the user's ``~/.scat``."""
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / ".scat"))


# -- helpers ------------------------------------------------------------------------------
def state_at_seat0(seed: int, players: int = 2, rules: Rules | None = None) -> GameState:
    """A game advanced (random legal moves by the others) to seat 0's draw decision."""
    rng = random.Random(seed)
    state = GameState(players, rules, seed=seed)
    while not (state.current_player == 0 and state.phase == "draw"):
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def scripted(answers: list[str], then: str | None = "1") -> Iterator[str]:
    yield from answers
    while then is not None:
        yield then
    raise EOFError


def make_input(answers: list[str], then: str | None = "1"):
    it = scripted(answers, then)

    def ask(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return ask


def run_session(game: SavedGame, path: Path, answers: list[str], then: str | None = "1") -> int:
    session = PlaySession(game, path, color=False, fast=True, width=100,
                          input_fn=make_input(answers, then))
    return session.run()


# -- input parsing ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(30))
def test_menu_lists_exactly_the_legal_moves_and_numbers_play_them(seed):
    rng = random.Random(seed)
    state = GameState(3, seed=seed)
    for _ in range(40):
        if state.is_terminal():
            break
        view = make_view(state, state.current_player)
        options = menu_options(view)
        assert sorted(o.action for o in options) == sorted(view.legal_actions)
        for o in options:
            assert parse_command(str(o.number), view).action == o.action
            assert parse_command(o.key, view).action == o.action  # the shortcut shown
        state.apply_action(rng.choice(state.legal_actions()))


def test_shortcuts_cards_and_symbols_are_understood():
    state = state_at_seat0(1)
    view = make_view(state, 0)
    assert parse_command("s", view).action == DRAW_STOCK
    assert parse_command(" D ", view).action == DRAW_DISCARD
    assert parse_command("?", view).kind == HELP
    assert parse_command("h", view).kind == HINT
    assert parse_command("q", view).kind == QUIT
    state.apply_action(DRAW_STOCK)
    view = make_view(state, 0)
    card = view.hand[0]
    for text in (card_str(card).lower(), card_str(card, symbols=True), card_str(card)):
        assert parse_command(text, view).action == card


def test_garbage_input_is_explained_not_played():
    view = make_view(state_at_seat0(2), 0)
    with pytest.raises(InputError, match="don't understand 'xyzzy'"):
        parse_command("xyzzy", view)
    with pytest.raises(InputError, match="no option 9"):
        parse_command("9", view)


def test_a_card_not_in_hand_is_refused_naming_the_hand():
    state = state_at_seat0(3)
    state.apply_action(DRAW_STOCK)
    view = make_view(state, 0)
    absent = next(c for c in range(52) if c not in view.hand)
    with pytest.raises(InputError, match="You don't hold the " + re.escape(card_str(absent, True))):
        parse_command(card_str(absent), view)


def test_the_card_just_taken_cannot_go_straight_back():
    state = state_at_seat0(4)
    taken = state.discard[-1]
    state.apply_action(DRAW_DISCARD)
    view = make_view(state, 0)
    with pytest.raises(InputError, match="just took the " + re.escape(card_str(taken, True))):
        parse_command(card_str(taken), view)
    assert taken not in [o.action for o in menu_options(view)]


def test_a_card_before_drawing_asks_to_draw_first():
    view = make_view(state_at_seat0(5), 0)
    with pytest.raises(InputError, match="Draw first"):
        parse_command(card_str(view.hand[0]), view)


def test_illegal_knocks_name_the_rule_that_forbids_them():
    state = state_at_seat0(6)
    state.apply_action(DRAW_STOCK)
    with pytest.raises(InputError, match="only knock instead of drawing"):
        parse_command("k", make_view(state, 0))
    # after another player's knock (3 players, so seat 0 still has its last turn)
    state = state_at_seat0(7, players=3)
    state.apply_action(DRAW_STOCK)
    state.apply_action(state.legal_actions()[0])
    state.apply_action(KNOCK)  # seat 1 knocks
    while state.current_player != 0:
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(InputError, match="Bob already knocked"):
        parse_command("k", make_view(state, 0), ["You", "Bob", "Carol"])
    # a minimum to knock
    rules = Rules(min_knock=31)
    state = state_at_seat0(8, rules=rules)
    with pytest.raises(InputError, match="at least 31 to knock"):
        parse_command("k", make_view(state, 0))


def test_end_play_is_refused_while_the_stock_lasts():
    view = make_view(state_at_seat0(9), 0)
    with pytest.raises(InputError, match="stock still has"):
        parse_command("e", view)
    assert END_PLAY not in [o.action for o in menu_options(view)]


# -- opponents ----------------------------------------------------------------------------
def test_opponent_specs_one_for_all_or_one_each():
    assert opponent_specs(4, "greedy") == (4, ["greedy"] * 3)
    assert opponent_specs(None, "greedy,random") == (3, ["greedy", "random"])
    with pytest.raises(CliError, match="lists 2 agents for 3 opponents"):
        opponent_specs(4, "greedy,random")
    with pytest.raises(CliError, match="between 2 and 10"):
        opponent_specs(11, "random")


def test_the_default_opponent_is_the_shipped_policy_set():
    from agents.registry import DEFAULT_POLICIES

    assert opponent_specs(3, None) == (3, [DEFAULT_POLICIES[0]] * 2)


def test_scat_cli_play_default_opponent_is_the_seating_one():
    """The name older scripts and the project's checks use for who sits at a table by
    default is the function both front ends seat by, and a misspelt name is still an
    AttributeError."""
    import scat_cli.play
    from scat_cli.play import default_opponent
    from scat_session import seating

    assert default_opponent is seating.default_opponent
    assert default_opponent(3, Rules.preset("golf")) == seating.default_opponent(
        3, Rules.preset("golf"))
    with pytest.raises(AttributeError, match="default_oponent"):
        scat_cli.play.default_oponent  # noqa: B018


@pytest.mark.parametrize("preset", PRESETS)
def test_without_the_cards_figures_every_preset_seats_a_policy_trained_on_it(preset,
                                                                             monkeypatch):
    """``scat play --rules P`` without ``--opponents``, where the model card measured nothing,
    seats the shipped policy that learned P: the standard game's set for the standard rules,
    the policy of every preset for the rest."""
    from agents.registry import make_agent
    from scat_session import strength

    monkeypatch.setattr(strength, "strength_file", lambda: None)
    rules = Rules.preset(preset)
    for n in (3, 6):
        _, specs = opponent_specs(n, None, rules)
        assert specs[0] == ("compact:scat_batch_set" if rules == Rules()
                            else "compact:scat_rules")
        assert make_agent(specs[0]).trained_on(rules)


def test_saved_specs_name_their_files_from_any_folder(tmp_path):
    (tmp_path / "runs").mkdir()
    policy = tmp_path / "runs" / "policy.npz"
    policy.write_bytes(b"")
    assert portable_spec("compact:runs/policy.npz", tmp_path) == f"compact:{policy}"
    assert portable_spec("compact:runs/policy.npz:sample", tmp_path) == f"compact:{policy}:sample"
    for spec in ("expert", "threshold:25", "compact:scat_batch_set", f"compact:{policy}",
                 "compact:runs/missing.npz"):
        assert portable_spec(spec, tmp_path) == spec
    # the shipped set, named by its path in a checkout, is saved by its name
    assert (portable_spec("compact:policies/scat_batch_set.yaml:sample", REPO)
            == "compact:scat_batch_set:sample")


def test_a_policy_that_cannot_play_the_table_is_refused_before_the_game(tmp_path, capsys):
    from scat_cli.main import main

    heads_up = tmp_path / "heads_up.yaml"  # a set with a two-player member only
    heads_up.write_text("format: scat-policy-set\npolicies:\n"
                        f"  2: {REPO / 'policies' / 'scat_batch_2p.npz'}\n")
    code = main(["play", "--players", "8", "--opponents", f"greedy,compact:{heads_up},"
                 + ",".join(["random"] * 5), "--save", str(tmp_path / "g.json")])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "8" in err[0]
    assert not (tmp_path / "g.json").exists()


# -- whole games in-process ---------------------------------------------------------------
def test_scripted_game_finishes_saves_and_shows_the_winner(tmp_path, capsys):
    rules = Rules.preset(str(_rules_file(tmp_path)))
    game = new_game(2, ["random"], rules, seed=11, name="You")
    path = tmp_path / "g.json"
    assert run_session(game, path, ["xyzzy", "?", "h"]) == 0
    out = capsys.readouterr().out
    assert "I don't understand 'xyzzy'" in out
    assert "Keys" in out and "Hint:" in out
    assert "Showdown · hand 1" in out
    assert "Game over" in out and ("You win!" in out or "Alice wins the game." in out)
    saved = SavedGame.load(path)
    assert saved.status == "finished"
    state = saved.resimulate()
    assert state.is_terminal() and state.winner == saved.winner


@pytest.mark.parametrize("stop_after", [1, 5, 12])
def test_a_resumed_game_continues_exactly_like_an_uninterrupted_one(tmp_path, stop_after):
    rules = Rules.preset(str(_rules_file(tmp_path)))
    whole = tmp_path / "whole.json"
    run_session(new_game(3, ["random", "greedy"], rules, seed=5, name="You"), whole, [])
    split = tmp_path / "split.json"
    # stop_after human answers, then q + confirm
    run_session(new_game(3, ["random", "greedy"], rules, seed=5, name="You"), split,
                ["1"] * stop_after + ["q", "y"], then=None)
    halfway = SavedGame.load(split)
    if halfway.status == "finished":
        pytest.skip("the game ended before the quit")
    assert run_session(halfway, split, []) == 0
    a, b = json.loads(whole.read_text()), json.loads(split.read_text())
    assert a["actions"] == b["actions"] and a["results"] == b["results"]
    assert a["winner"] == b["winner"]


def test_end_of_input_saves_and_exits_cleanly(tmp_path, capsys):
    game = new_game(2, ["random"], Rules(), seed=3, name="You")
    path = tmp_path / "eof.json"
    assert run_session(game, path, ["1", "1"], then=None) == 0
    out = capsys.readouterr().out
    assert "End of input" in out and f"--resume {path}" in out
    saved = SavedGame.load(path)
    assert saved.status == "in_progress" and saved.actions
    saved.resimulate()


def test_declining_to_quit_carries_on(tmp_path, capsys):
    rules = Rules.preset(str(_rules_file(tmp_path)))
    game = new_game(2, ["random"], rules, seed=4, name="You")
    assert run_session(game, tmp_path / "g.json", ["q", "n"]) == 0
    out = capsys.readouterr().out
    assert "Carrying on." in out and "Game over" in out


def test_resume_refuses_a_finished_game(tmp_path):
    from scat_cli.main import main

    rules = Rules.preset(str(_rules_file(tmp_path)))
    path = tmp_path / "done.json"
    run_session(new_game(2, ["random"], rules, seed=2, name="You"), path, [])
    assert main(["play", "--resume", str(path)]) == 2


def _rules_file(tmp_path: Path) -> Path:
    f = tmp_path / "short.yaml"
    f.write_text(SHORT_RULES)
    return f


# -- a real terminal ----------------------------------------------------------------------
PROMPT = r"\n> "


def _spawn(args: list[str], tmp_path: Path):
    pexpect = pytest.importorskip("pexpect")
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "TERM": "xterm",
           "SCAT_REPLAY_DIR": str(tmp_path / "replays"), "PYTHONPATH": str(REPO),
           "HOME": str(tmp_path), "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    return pexpect.spawn(sys.executable, ["-m", "scat_cli", *args], cwd=str(REPO), env=env,
                         encoding="utf-8", dimensions=(50, 110), timeout=hang_limit(180),
                         preexec_fn=_ctrl_c_as_a_terminal_gives_it)


def _ctrl_c_as_a_terminal_gives_it() -> None:
    """In the game's process before it starts: Ctrl-C handled and not blocked, as in a
    person's shell. A child inherits an ignored or blocked SIGINT from the process that
    starts it, and a busy test worker's state is not a person's terminal: once, under
    load, the game never saw the Ctrl-C this test sends."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _discard_options(text: str) -> list[str]:
    return re.findall(r"Discard (\S+)  ->", text)


def _finish(child, transcript: list[str]) -> str:
    """Answer '1' at every prompt until the game ends; return the full transcript."""
    import pexpect

    for _ in range(2000):
        i = child.expect([PROMPT, pexpect.EOF])
        transcript.append(child.before)
        if i == 1:
            break
        child.sendline("1")
    child.close()
    return "".join(transcript)


def test_play_a_whole_game_in_a_terminal_with_bad_input(tmp_path):
    """The acceptance test: a person at a pseudo-terminal, mistakes included, to the end."""
    rules = _rules_file(tmp_path)
    save = tmp_path / "game.json"
    child = _spawn(["play", "--players", "2", "--opponents", "random", "--rules", str(rules),
                    "--seed", "21", "--fast", "--no-color", "--save", str(save)], tmp_path)
    out: list[str] = []

    child.expect(PROMPT)
    out.append(child.before)
    assert "Your turn: draw a card, or knock." in child.before
    assert re.search(r"1\s+s\s+Draw from the stock", child.before)

    child.sendline("xyzzy")  # garbage
    child.expect(PROMPT)
    assert "I don't understand 'xyzzy'" in child.before

    child.sendintr()  # Ctrl-C asks first, and "n" carries on
    child.expect(r"Quit now\?")
    child.sendline("n")
    child.expect(PROMPT)
    assert "Carrying on." in child.before

    child.sendline("e")  # the stock is not exhausted
    child.expect(PROMPT)
    assert "stock still has" in child.before

    child.sendline("d")  # take the top discard...
    child.expect(PROMPT)
    taken = re.search(r"You took the (\S+)\.", child.before).group(1)
    hand = _discard_options(child.before)
    assert hand and taken not in hand

    child.sendline(taken)  # ...and try to put it straight back (typed with its symbol)
    child.expect(PROMPT)
    assert "you may not put it straight back" in child.before

    held = {parse_card(c) for c in hand} | {parse_card(taken)}
    absent = next(c for c in range(52) if c not in held)
    child.sendline(card_str(absent).lower())  # a card not in hand
    child.expect(PROMPT)
    assert "You don't hold the " + card_str(absent, symbols=True) in child.before

    child.sendline("k")  # knocking after drawing
    child.expect(PROMPT)
    assert "only knock instead of drawing" in child.before

    child.sendline(card_str(parse_card(hand[0])).lower())  # a legal discard, by name
    text = _finish(child, out)
    assert child.exitstatus == 0, text[-2000:]
    assert "Showdown · hand 1" in text
    assert re.search(r"You win!|Alice wins the game\.", text)
    assert "Replay saved to" in text
    assert "\x1b[" not in text  # --no-color: no escape codes at all

    saved = SavedGame.load(save)
    assert saved.status == "finished"
    assert saved.resimulate().winner == saved.winner  # the replay reproduces the game


def test_quit_in_a_terminal_then_resume_and_finish(tmp_path):
    rules = _rules_file(tmp_path)
    save = tmp_path / "resume.json"
    args = ["--fast", "--no-color"]
    child = _spawn(["play", "--players", "3", "--opponents", "random", "--rules", str(rules),
                    "--seed", "8", "--save", str(save), *args], tmp_path)
    for _ in range(3):
        child.expect(PROMPT)
        child.sendline("1")
    child.expect(PROMPT)
    child.sendline("q")
    child.expect(r"Quit now\?")
    child.sendline("y")
    child.expect("Game saved to")
    child.expect(r"Resume it with: scat play --resume")
    child.expect(__import__("pexpect").EOF)
    child.close()
    assert child.exitstatus == 0
    before = SavedGame.load(save)
    assert before.status == "in_progress" and len(before.actions) >= 3

    child = _spawn(["play", "--resume", str(save), *args], tmp_path)
    text = _finish(child, [])
    assert child.exitstatus == 0, text[-2000:]
    assert "Resuming" in text and "Game over" in text
    after = SavedGame.load(save)
    assert after.status == "finished"
    assert after.actions[: len(before.actions)] == before.actions
    after.resimulate()


# -- the screen at 80x24 ------------------------------------------------------------------
def _screen_lines(renderable, width: int = 80) -> list[str]:
    from rich.console import Console

    console = Console(width=width, color_system=None, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text().rstrip("\n").split("\n")


def _positions(players: int, preset: str, seed: int) -> Iterator[GameState]:
    """Positions at seat 0's turns through a whole game of random play (knocks,
    eliminations and the exhausted stock included)."""
    rng = random.Random(seed)
    state = GameState(players, Rules.preset(preset), seed=seed)
    while not state.is_terminal():
        if state.current_player == 0:
            yield state
        legal = state.legal_actions()
        state.apply_action(KNOCK if KNOCK in legal and rng.random() < 0.1 else rng.choice(legal))


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("preset", ["standard", "ride_the_bus", "cadillac", "gin",
                                    "swedish_points"])
def test_the_table_fits_80x24_and_shows_lives_dealer_knock_and_turn(players, preset):
    from scat_cli.tui import MENU_LINES, table_view
    from scat_session.seating import agent_label, default_names
    from scat_session.words import lives_text

    names = default_names(players)
    labels = [""] + [agent_label("compact:scat_batch_set")] * (players - 1)
    checked = 0
    for i, state in enumerate(_positions(players, preset, seed=players * 100 + len(preset))):
        if i % 3:
            continue
        if i % 2:  # a name as long as a person may type, and a label with an argument
            names = [*names[:-1], "Bartholomew-Alexander"]
            labels = [*labels[:-1], agent_label("threshold:25")]
        view = make_view(state, 0)
        lines = _screen_lines(table_view(view, names, labels, width=80, height=24))
        assert max(len(line) for line in lines) <= 80, "\n".join(lines)
        assert len(lines) + MENU_LINES <= 24, "\n".join(lines)
        rows = {s: next(line for line in lines if f" {names[s][:8]}" in line)
                for s in range(players)}
        for s, row in rows.items():
            assert (lives_text(view.rules, view.lives[s]) in row
                    or lives_text(view.rules, view.lives[s], short=True) in row), row
            assert ("dealer" in row) == (s == view.dealer), row
            assert ("knocked" in row) == (s == view.knocker), row
            assert ("▶" in row) == (s == view.current_player), row
        checked += 1
    assert checked >= 3


def test_lives_are_counted_in_the_presets_own_words():
    from scat_session.words import lives_text

    assert lives_text(Rules.preset("ride_the_bus"), 4) == "standing at the back, 4 stops left"
    assert lives_text(Rules.preset("ride_the_bus"), 1) == "on the stairs, 1 stop left"
    assert lives_text(Rules.preset("standard"), 1) == "on the county, 1 life left"
    assert lives_text(Rules.preset("standard"), 4) == "3 pennies, 4 lives left"
    assert lives_text(Rules.preset("no_county"), 3) == "3 pennies"
    assert lives_text(Rules.preset("gin"), 2) == "G, 2 lives left"
    assert lives_text(Rules.preset("standard"), 4, short=True) == "4 lives left"
    assert lives_text(Rules.preset("standard"), 0) == "out"


@pytest.mark.parametrize("players", [2, 4, 6])
def test_a_whole_game_at_80_columns_never_prints_a_longer_line(tmp_path, capsys, players):
    rules = Rules.preset(str(_rules_file(tmp_path)))
    game = new_game(players, ["greedy"] * (players - 1), rules, seed=players, name="You")
    path = tmp_path / "g.json"
    session = PlaySession(game, path, color=False, fast=True, width=80, height=24,
                          input_fn=make_input(["h", "", "?"]))
    assert session.run() == 0
    out = capsys.readouterr().out
    long = [line for line in out.splitlines() if len(line) > 80 and str(path) not in line]
    assert not long, long
    assert "Showdown · hand 1" in out and "Game over" in out


def test_enter_on_an_empty_line_and_resume_redraw_the_table(tmp_path, capsys):
    rules = Rules.preset(str(_rules_file(tmp_path)))
    path = tmp_path / "g.json"
    title = re.compile(r"Scat · \S+ rules · hand \d+ · turn \d+")
    run_session(new_game(3, ["greedy"] * 2, rules, seed=9, name="You"), path,
                ["s", "", "q", "y"], then=None)
    out = capsys.readouterr().out
    before_enter, after_enter = out.split("You drew the", 1)
    assert len(title.findall(before_enter)) == 1
    assert len(title.findall(after_enter)) == 1  # the discard decision, drawn again on Enter
    saved = SavedGame.load(path)
    assert saved.status == "in_progress"
    run_session(saved, path, [], then=None)
    resumed = capsys.readouterr().out
    assert resumed.startswith("Resuming")
    assert title.search(resumed.split("Your turn" if "Your turn" in resumed else "End of input")[0])


def test_a_hint_gives_the_experts_move_and_its_numbers():
    from agents.registry import make_agent
    from scat_session.hints import hint

    expert = make_agent("expert", seed=0)
    said = []
    for seed in range(12):
        for state in _positions(3, "standard", seed):
            view = make_view(state, 0)
            if view.phase != "draw":
                continue
            text = hint(expert, view)
            assert "The expert would" in text and re.search(r"\d", text), text
            assert expert.act(view) != KNOCK or "would knock" in text
            said.append(text)
            state = state.clone()
            state.apply_action(DRAW_STOCK if DRAW_STOCK in state.legal_actions()
                               else DRAW_DISCARD)
            text = hint(expert, make_view(state, 0))
            assert text.startswith("Discard the ") and "worth" in text, text
    joined = " ".join(said)
    for words in ("a stock draw is worth", "lowest alone", "loses you a life"):
        assert words in joined


def test_scat_play_starts_without_torch_gymnasium_pettingzoo_or_matplotlib(tmp_path):
    """The first prompt of ``scat play`` (default opponents) needs the engine, numpy and the
    shipped policies only: the heavy libraries cost seconds of start-up."""
    import subprocess

    code = (
        "import sys\n"
        "from scat_cli.main import main\n"
        f"main(['play', '--fast', '--no-color', '--seed', '1', '--save', {str(tmp_path / 'g.json')!r}])\n"
        "heavy = {'torch', 'gymnasium', 'pettingzoo', 'matplotlib'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=hang_limit(300))
    assert proc.returncode == 0, proc.stderr
    assert "Game saved to" in proc.stdout  # it reached the first prompt, then end of input
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout[-500:]


def test_a_saved_game_resumes_from_another_folder(tmp_path):
    """Specs that name files by relative paths are saved so they resolve from anywhere."""
    import shutil
    import subprocess

    (tmp_path / "start" / "runs").mkdir(parents=True)
    shutil.copy(REPO / "policies" / "scat_batch_2p.npz", tmp_path / "start" / "runs" / "p.npz")
    save = tmp_path / "game.json"

    def scat(cwd: Path, *args: str, typed: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "scat_cli", "play", *args], cwd=cwd,
                              input=typed, capture_output=True, text=True, timeout=hang_limit(300))

    first = scat(tmp_path / "start", "--opponents", "compact:runs/p.npz,expert", "--seed", "5",
                 "--fast", "--no-color", "--save", str(save), typed="1\n1\n")
    assert first.returncode == 0 and "Game saved to" in first.stdout, first.stderr
    assert json.loads(save.read_text())["actions"]
    specs = [p["agent"] for p in json.loads(save.read_text())["players"]]
    assert specs == ["human", f"compact:{(tmp_path / 'start' / 'runs' / 'p.npz').resolve()}",
                     "expert"]
    (tmp_path / "elsewhere").mkdir()
    again = scat(tmp_path / "elsewhere", "--resume", str(save), "--fast", "--no-color")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("Resuming") and "Scat · standard rules" in again.stdout


@pytest.mark.parametrize("preset", ["hammer", "throw_down_any", "sudden_death", "undeclared_31"])
def test_the_calls_of_the_variations_are_on_the_menu_and_play_to_the_end(tmp_path, capsys,
                                                                         preset):
    """Rules that offer calls (a hammer, a throw-down, sudden death, declaring 31) list them
    by name in the menu, and whole games with them play, save and replay."""
    from scat_cli.main import main
    from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS, action_str

    rules = Rules.preset(preset).replace(pennies=1)
    calls = [action_str(a).capitalize() for a in range(CORE_ACTIONS, NUM_ACTIONS)]
    for seed in range(20):  # until the person is offered a call (some need a first turn)
        path = tmp_path / f"g{seed}.json"
        game = new_game(3, ["greedy", "greedy"], rules, seed=seed, name="You")
        assert run_session(game, path, [], then="1") == 0
        out = capsys.readouterr().out
        saved = SavedGame.load(path)
        chosen = [a for _, a in saved.actions if a >= CORE_ACTIONS]
        assert "Game over" in out and saved.status == "finished"
        assert ("chose:" in out) == bool(chosen)
        assert main(["replay", str(path), "--fast", "--no-color", "--reveal"]) == 0
        capsys.readouterr()
        if any(label in out for label in calls):
            break
    else:
        pytest.fail(f"{preset}: no call was offered to the person in 20 games")


def _prompt(state) -> str:
    """The line over the move menu, as the screen shows it."""
    from scat_cli.tui import menu_view
    from scat_env import make_view
    from scat_session.humanio import menu_options

    view = make_view(state, state.current_player)
    return menu_view(view, menu_options(view)).plain.splitlines()[0]


def test_the_draw_prompt_offers_only_what_the_menu_offers():
    """"Your turn: draw a card, or knock." only where a knock is on the menu: not after
    another player's knock, not on a first turn the rules keep from knocking, not once the
    stock is exhausted (then: take the discard, or end the play)."""
    from conftest import exhaust_stock, game, move

    hands = ["KH 8H 5H", "QS 9D 8D", "AC 6S 4S"]
    st = game(hands, "2D", "3C 4C 5C 6C 7C 8C 9C", dealer=2)
    assert _prompt(st) == "Your turn: draw a card, or knock."
    move(st, 0, "knock")
    assert _prompt(st) == "Your last turn: draw a card."
    st = game(hands, "2D", dealer=2, rules=Rules(first_turn_knock=False))
    assert _prompt(st) == "Your turn: draw a card."
    st = game(hands, "2D", "3C 4C 5C 6C", dealer=2)
    exhaust_stock(st)
    assert _prompt(st) == "Your turn: take the top discard, or end the play."
    st = game(hands, "2D", "3C 4C 5C 6C", dealer=2, rules=Rules(knock_when_stock_exhausted=True))
    exhaust_stock(st)
    assert _prompt(st) == "Your turn: take the top discard, knock, or end the play."
    st = game(hands, "2D", "3C 4C 5C 6C", dealer=2, rules=Rules(hammer=True))
    assert _prompt(st) == "Your turn: draw a card, knock, or call a hammer."
