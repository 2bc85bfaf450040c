"""Saved games and ``scat replay``: the file re-simulates exactly, tampering is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hang_limits import hang_limit

from agents.match import play_game
from agents.registry import make_agent
from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_cli.tui import showdown_view
from scat_env import NUM_ACTIONS, Rules
from scat_env.actions import action_short
from scat_session.savegame import (
    PlayerEntry,
    ReplayError,
    SavedGame,
    agent_seed,
    parse_action,
    result_record,
)
from scat_session.seating import new_game
from scat_session.words import explain_result

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    """The key and the ledger of these tests live in their tmp folder (where a child
    process with ``HOME=tmp_path`` finds them too), never in the user's ``~/.scat``."""
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / ".scat"))


def _finished_game(tmp_path: Path, seed: int = 13, players: int = 3) -> Path:
    """A finished human game, played in-process by always choosing menu option 1."""
    rules = Rules(pennies=1)
    game = new_game(players, ["random"] * (players - 1), rules, seed=seed, name="You")
    path = tmp_path / f"game{seed}.json"

    def answer(prompt: str) -> str:
        return "1"

    PlaySession(game, path, color=False, fast=True, input_fn=answer).run()
    return path


def test_every_action_token_round_trips():
    for a in range(NUM_ACTIONS):
        assert parse_action(action_short(a)) == a
    with pytest.raises(ValueError):
        parse_action("fly")


def test_a_saved_game_re_simulates_to_the_same_results(tmp_path, capsys):
    path = _finished_game(tmp_path)
    capsys.readouterr()
    saved = SavedGame.load(path)
    assert saved.status == "finished" and saved.winner is not None
    state = saved.resimulate()
    assert [result_record(r) for r in state.results] == saved.results
    assert state.winner == saved.winner
    # and the JSON form is stable: load -> dump -> load gives the same game
    again = SavedGame.from_json(json.loads(json.dumps(saved.to_json())))
    assert again.actions == saved.actions and again.results == saved.results


def test_agents_asked_again_choose_the_recorded_moves(tmp_path):
    """What resume relies on: seeded agents re-asked along the record agree with it."""
    rules = Rules(pennies=1)
    specs = ["greedy", "random", "expert"]
    agents = [make_agent(s, seed=agent_seed(3, i)) for i, s in enumerate(specs)]
    record = play_game(agents, rules, seed=3)
    saved = SavedGame(3, rules, 3, record.first_dealer,
                      [PlayerEntry(f"p{i}", s, agent_seed(3, i)) for i, s in enumerate(specs)],
                      human_seat=None, actions=list(record.actions),
                      results=[result_record(r) for r in record.results],
                      status="finished" if record.winner is not None else "in_progress",
                      winner=record.winner)
    fresh = [make_agent(s, seed=agent_seed(3, i)) for i, s in enumerate(specs)]
    for i, a in enumerate(fresh):
        a.reset(agent_seed(3, i))
    assert saved.resimulate(agents=fresh).winner == record.winner


def test_replay_command_shows_the_game_to_its_end(tmp_path, capsys):
    path = _finished_game(tmp_path, seed=5)
    capsys.readouterr()
    assert main(["replay", str(path), "--fast", "--no-color", "--reveal", "--width", "100"]) == 0
    out = capsys.readouterr().out
    saved = SavedGame.load(path)
    assert "Showdown · hand 1" in out and "Game over" in out
    assert f"Verified: {len(saved.actions)} decisions" in out
    winner = saved.names[saved.winner]
    assert ("You win!" if winner == "You" else f"{winner} wins the game.") in out
    assert "drew the " in out  # --reveal shows stock draws
    # The table is drawn at each new hand and before each of the watched seat's turns.
    state, draws = saved.new_state(), 0
    for seat, action in saved.actions:
        draws += seat == 0 and state.phase == "draw"
        state.apply_action(action)
    hands = len(saved.results)
    assert out.count("│ Discard pile:") >= max(draws, hands)


def test_replay_waits_for_enter_and_q_stops(tmp_path):
    path = _finished_game(tmp_path, seed=6)
    proc = subprocess.run(
        [sys.executable, "-m", "scat_cli", "replay", str(path), "--no-color"],
        input="\n\nq\n", capture_output=True, text=True, cwd=REPO, timeout=hang_limit(300),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Enter: next turn") == 3
    assert "Replay stopped." in proc.stdout


def _tampered(tmp_path: Path, change) -> Path:
    path = _finished_game(tmp_path, seed=9)
    data = json.loads(path.read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return bad


def _swap_discard(data):
    seat, token = next((i, t) for i, t in enumerate(data["actions"]) if t[1].startswith("d:"))
    data["actions"][seat][1] = "d:AS" if token[1] != "d:AS" else "d:KS"


def _change_loss(data):
    data["results"][0]["lives_lost"] = {k: 1 - v for k, v in data["results"][0]["lives_lost"].items()}


def _drop_last_action(data):
    data["actions"].pop()


@pytest.mark.parametrize("change, message", [
    (_swap_discard, "is not legal here|re-simulates differently"),
    (_change_loss, "hand 1 re-simulates differently"),
    (_drop_last_action, "re-simulate|finished"),
    (lambda d: d.update(seed=d["seed"] + 1), "first dealer|re-simulates differently|not legal"),
    (lambda d: d.update(format="chess"), "not a scat replay"),
    (lambda d: d.update(version=99), "version 99"),
    (lambda d: d["actions"].append([0, "fly"]), "not an action token"),
])
def test_a_corrupt_or_mismatched_replay_is_one_clear_error(tmp_path, capsys, change, message):
    bad = _tampered(tmp_path, change)
    capsys.readouterr()
    assert main(["replay", str(bad), "--fast", "--no-color"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("scat replay: error:")
    assert __import__("re").search(message, err), err


def test_a_version_1_file_still_resumes_and_is_rewritten_in_the_env_form(tmp_path):
    """Version 1 wrote hand results in a form of its own; its decisions are still checked."""
    path = _finished_game(tmp_path, seed=4)
    data = json.loads(path.read_text())
    results = data["results"]
    data["version"] = 1
    data["results"] = [{"hand": r["hand_number"], "hands": {"0": "KH 8H 5H"}} for r in results]
    old = tmp_path / "v1.json"
    old.write_text(json.dumps(data))
    game = SavedGame.load(old)
    game.resimulate()
    assert game.results == results
    game.save(old)
    assert json.loads(old.read_text())["version"] == 4
    data["results"].pop()  # a hand missing from a version 1 file is still refused
    old.write_text(json.dumps(data))
    with pytest.raises(ReplayError, match="ends in the re-simulation but not in the file"):
        SavedGame.load(old).resimulate()


def test_unreadable_files_are_refused(tmp_path, capsys):
    (tmp_path / "half.json").write_text('{"format": ')
    assert main(["replay", str(tmp_path / "half.json")]) == 2
    assert main(["replay", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert "not valid JSON" in err and "no saved game" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("preset", ["standard", "knocker_pays_ties", "knocker_only_ties",
                                    "gin", "cadillac", "ride_the_bus"])
def test_every_showdown_names_who_lost_and_renders(preset):
    """The explanation names every player who lost a life, under every scoring rule."""
    rules = Rules.preset(preset)
    names = ["Alice", "Bob", "Carol", "Dave"]
    seen = 0
    for seed in range(15):
        agents = [make_agent("greedy" if s % 2 else "random", seed=seed * 10 + s)
                  for s in range(4)]
        record = play_game(agents, rules, seed=seed)
        for result in record.results:
            text = " ".join(explain_result(result, rules, names))
            for s, lost in result.lives_lost.items():
                if lost:
                    assert names[s] in text, (result, text)
            showdown_view(result, rules, names)  # renders without error
            seen += 1
    assert seen > 20


def _unfinished_game(tmp_path: Path) -> Path:
    """A human game left after a few moves (end of input saves it, still in progress)."""
    game = new_game(3, ["random", "random"], Rules(), seed=5, name="You")
    path = tmp_path / "unfinished.json"
    answers = iter(["1"] * 4)

    def answer(prompt: str) -> str:
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    PlaySession(game, path, color=False, fast=True, input_fn=answer).run()
    return path


@pytest.mark.parametrize("flags", [["--reveal"], ["--seat", "1"], ["--seat", "2", "--reveal"]])
def test_replay_refuses_to_show_hidden_cards_of_a_game_in_progress(tmp_path, capsys, flags):
    path = _unfinished_game(tmp_path)
    data = json.loads(path.read_text())
    assert data["status"] == "in_progress" and data["human_seat"] == 0
    assert main(["replay", str(path), "--fast", "--no-color", *flags]) == 2
    err = capsys.readouterr().err
    assert "in progress" in err and len(err.strip().splitlines()) == 1
    # Marking it finished by hand does not help: the moves say it is not over.
    data["status"] = "finished"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path), "--fast", "--no-color", *flags]) == 2
    # The player's own seat, cards hidden, is always fine.
    data["status"] = "in_progress"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path), "--fast", "--no-color", "--seat", "0"]) == 0


@pytest.mark.parametrize("name", ["Ev\x1b[2Jil", "Bob\rAlice", "[bold red]X[/]", "x" * 25, ""])
def test_a_save_with_a_name_a_terminal_would_act_on_is_refused(tmp_path, capsys, name):
    path = _finished_game(tmp_path)
    data = json.loads(path.read_text())
    data["players"][1]["name"] = name
    path.write_text(json.dumps(data))
    assert main(["replay", str(path), "--fast", "--no-color"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["a\x1b[2J", "[bold]Me[/]"])
def test_play_refuses_such_a_name_before_the_game(tmp_path, capsys, name):
    assert main(["play", "--name", name, "--save", str(tmp_path / "g.json")]) == 2
    assert "--name" in capsys.readouterr().err and not (tmp_path / "g.json").exists()


@pytest.mark.parametrize(("decisions", "hands", "words"), [
    (21, 1, "21 decisions and 1 hand re-simulated"),
    (1, 2, "1 decision and 2 hands re-simulated"),
    (0, 0, "0 decisions and 0 hands re-simulated"),
])
def test_the_verified_line_counts_in_singular_and_plural(decisions, hands, words):
    from scat_cli.replay import verified_text

    assert verified_text(decisions, hands) == f"Verified: {words} exactly as recorded."
