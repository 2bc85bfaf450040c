"""``scat play`` never lets the person learn a card they have not seen while the game is on.

The seed deals every hand, so it must not be printed, written in clear, or put in a file
name until the game is over; a save in progress is sealed under the user's key and signed,
so it neither opens elsewhere nor survives an edit; a save behind the game's last move does
not resume (no take-backs). Finished games stay replayable by anyone.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_env import Rules
from scat_session.savegame import SavedGame, agent_seed, result_record
from scat_session.seating import new_game

SEED = 987_654_321  # digits that appear nowhere else by chance
SHORT_RULES = "preset: standard\npennies: 1\ncounty: true\n"


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SCAT_REPLAY_DIR", str(tmp_path / "replays"))


def _play(monkeypatch, capsys, args: list[str], typed: str) -> tuple[int, str, str]:
    """``scat play ARGS`` in-process with ``typed`` as its input; (status, stdout, stderr)."""
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main(["play", "--fast", "--no-color", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _short_rules(tmp_path: Path) -> str:
    path = tmp_path / "short.yaml"
    path.write_text(SHORT_RULES)
    return str(path)


def _secrets() -> list[str]:
    return [str(SEED)] + [str(agent_seed(SEED, s)) for s in range(3)]


def _in_progress(tmp_path, monkeypatch, capsys, moves: int = 3) -> Path:
    save = tmp_path / "game.json"
    code, _, err = _play(monkeypatch, capsys, ["--seed", str(SEED), "--opponents", "random",
                                               "--save", str(save)], "1\n" * moves)
    assert code == 0, err
    return save


def test_the_seed_is_not_shown_written_or_in_the_file_name_while_the_game_is_on(
        tmp_path, monkeypatch, capsys):
    code, out, err = _play(monkeypatch, capsys, ["--seed", str(SEED), "--opponents", "random"],
                           "1\n1\n1\n")
    assert code == 0, err
    (save,) = (tmp_path / "replays").iterdir()
    text = save.read_text()
    for secret in _secrets():
        assert secret not in out, secret
        assert secret not in save.name
        assert secret not in text, secret  # neither the game's seed nor any agent's
    data = json.loads(text)
    assert data["status"] == "in_progress" and data["seed"] is None
    assert all(p["seed"] is None for p in data["players"]) and "mac" in data
    # The person's own key opens it: the game resumes where it stopped.
    game = SavedGame.load(save)
    assert game.seed == SEED and [p.seed for p in game.players][1:] == [
        agent_seed(SEED, 1), agent_seed(SEED, 2)]


def test_a_finished_game_is_in_clear_and_replays_with_no_key(tmp_path, monkeypatch, capsys):
    save = tmp_path / "done.json"
    code, out, err = _play(monkeypatch, capsys, ["--seed", str(SEED), "--opponents", "random",
                                                 "--players", "2", "--rules",
                                                 _short_rules(tmp_path), "--save", str(save)],
                           "1\n" * 2000)
    assert code == 0, err
    assert f"Seed {SEED}: the game is reproducible" in out
    data = json.loads(save.read_text())
    assert data["status"] == "finished" and data["seed"] == SEED
    assert "sealed" not in data and "mac" not in data
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "someone_else"))  # another account
    assert main(["replay", str(save), "--fast", "--no-color", "--reveal"]) == 0
    assert f"seed {SEED}" in capsys.readouterr().out


def test_a_save_in_progress_does_not_open_under_another_key(tmp_path, monkeypatch, capsys):
    save = _in_progress(tmp_path, monkeypatch, capsys)
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "another_machine"))
    for command in (["play", "--resume", str(save)], ["replay", str(save), "--fast"]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "another key" in err, err


def _edit(data: dict, what: str) -> None:
    if what == "human_seat":
        data["human_seat"] = 1
    elif what == "players":
        data["players"][1]["agent"] = "expert"
    elif what == "actions cut":
        data["actions"] = data["actions"][:-2]
    elif what == "actions edited":
        data["actions"][0][1] = "take" if data["actions"][0][1] != "take" else "stock"
    elif what == "seal removed":
        del data["sealed"], data["mac"]
        data["seed"] = SEED


@pytest.mark.parametrize("what", ["human_seat", "players", "actions cut", "actions edited",
                                  "seal removed"])
def test_an_edited_save_in_progress_is_refused_in_one_line(tmp_path, monkeypatch, capsys, what):
    save = _in_progress(tmp_path, monkeypatch, capsys, moves=6)
    data = json.loads(save.read_text())
    _edit(data, what)
    save.write_text(json.dumps(data))
    assert main(["play", "--resume", str(save), "--fast", "--no-color"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("scat play: error:"), err
    assert "changed" in err or "sealed" in err, err


def test_an_older_copy_of_the_save_does_not_resume(tmp_path, monkeypatch, capsys):
    """Draw, look, put the older file back and choose again: refused."""
    save = _in_progress(tmp_path, monkeypatch, capsys, moves=2)
    older = tmp_path / "older.json"
    shutil.copy(save, older)
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n1\n")
    assert code == 0, err
    assert len(SavedGame.load(save).actions) > len(SavedGame.load(older).actions)
    shutil.copy(older, save)
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "older than the game's last move" in err and "take-backs" in err, err


def test_a_copy_of_a_finished_game_in_progress_does_not_resume(tmp_path, monkeypatch, capsys):
    save = tmp_path / "g.json"
    args = ["--seed", "5", "--opponents", "random", "--players", "2", "--rules",
            _short_rules(tmp_path), "--save", str(save)]
    assert _play(monkeypatch, capsys, args, "1\n")[0] == 0
    older = tmp_path / "older.json"
    shutil.copy(save, older)
    assert _play(monkeypatch, capsys, ["--resume", str(save)], "1\n" * 2000)[0] == 0
    assert json.loads(save.read_text())["status"] == "finished"
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(older)], "1\n")
    assert code == 2 and "already over" in err, err


def test_a_version_2_save_in_progress_still_resumes_and_is_then_sealed(tmp_path, monkeypatch,
                                                                      capsys):
    """Files written before the seal hold their seed in clear; they load as they are."""
    save = _in_progress(tmp_path, monkeypatch, capsys, moves=4)
    game = SavedGame.load(save)
    data = game.to_json()
    for key in ("sealed", "mac", "game_id", "replacements"):
        data.pop(key)
    data.update(version=2, seed=SEED,
                results=[result_record(r) for r in game.resimulate().results])
    for p, entry in zip(data["players"], game.players, strict=True):
        p["seed"] = entry.seed
    old = tmp_path / "v2.json"
    old.write_text(json.dumps(data))
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(old)], "1\n")
    assert code == 0, err
    resealed = json.loads(old.read_text())
    assert resealed["version"] == 4 and resealed["seed"] is None and "mac" in resealed


def test_a_given_seed_is_sealed_like_a_random_one(tmp_path, monkeypatch, capsys):
    save = _in_progress(tmp_path, monkeypatch, capsys)
    assert str(SEED) not in save.read_text()
    game = new_game(3, ["random", "random"], Rules(), seed=SEED, name="You")
    session = PlaySession(game, tmp_path / "direct.json", color=False, fast=True,
                          input_fn=lambda prompt: (_ for _ in ()).throw(EOFError))
    assert session.run() == 0
    assert str(SEED) not in capsys.readouterr().out
    assert str(SEED) not in (tmp_path / "direct.json").read_text()


# -- an agent that breaks ---------------------------------------------------------------------
class _BrokenAgent:
    """Plays at random, then at its ``breaks_at``-th decision makes an illegal move (or raises
    an error that quotes its hand): what a buggy or hostile agent might do."""

    def __init__(self, seed: int | None, how: str, breaks_at: int = 4) -> None:
        import random

        self.rng = random.Random(seed)
        self.how, self.breaks_at, self.calls = how, breaks_at, 0
        self.hand_when_broken: list[int] = []
        self.spec = f"broken:{how}"

    def reset(self, seed: int | None = None) -> None:
        import random

        self.rng = random.Random(seed)

    def check_table(self, num_players: int, rules: Rules) -> None:
        return None

    def act(self, view) -> int:
        self.calls += 1
        if self.calls < self.breaks_at:
            return view.legal_actions[self.rng.randrange(len(view.legal_actions))]
        self.hand_when_broken = list(view.hand)
        if self.how == "raise":
            from scat_env import cards_str

            raise ValueError(f"SECRET my hand is {cards_str(view.hand)}")
        absent = next(c for c in range(52) if c not in view.hand)
        return absent  # a card it does not hold: the engine's error would list its hand


@pytest.fixture
def broken_agents(monkeypatch):
    from agents import registry

    registry.available()  # load the built-in agents first
    made: list[_BrokenAgent] = []

    def factory(arg, seed):
        agent = _BrokenAgent(seed, arg or "illegal")
        made.append(agent)
        return agent

    monkeypatch.setitem(registry._FACTORIES, "broken", (factory, "breaks on purpose"))
    return made


def _answers(n: int | None):
    count = iter(range(10**6))

    def ask(prompt: str) -> str:
        if n is not None and next(count) >= n:
            raise EOFError
        return "1"

    return ask


@pytest.mark.parametrize("how", ["illegal", "raise"])
def test_a_broken_agent_is_replaced_without_showing_its_cards(tmp_path, capsys, broken_agents,
                                                              how):
    from scat_env import card_str

    rules = Rules.preset(_short_rules(tmp_path))
    path = tmp_path / "g.json"
    game = new_game(3, [f"broken:{how}", "random"], rules, seed=12, name="You")
    assert PlaySession(game, path, color=False, fast=True, width=100,
                       input_fn=_answers(None)).run() == 0
    out = capsys.readouterr().out
    import re

    flat = " ".join(out.split())  # the notice may wrap
    (line,) = re.findall(r"Alice \(broken\) [^.]*?; the expert agent plays that seat from "
                         r"here on\. Your game goes on\.", flat)
    hand = broken_agents[0].hand_when_broken
    assert hand and not any(card_str(c) in line or card_str(c, symbols=True) in line
                            for c in hand)
    assert "SECRET" not in out and "illegal action" not in out and "legal:" not in out
    saved = json.loads(path.read_text())
    assert saved["status"] == "finished"
    (takeover,) = saved["replacements"]
    assert takeover["seat"] == 1 and takeover["agent"] == "expert"
    # The replay re-simulates the game exactly, takeover included, and so does a resume.
    SavedGame.load(path).resimulate()


def test_a_game_with_a_takeover_resumes_exactly(tmp_path, capsys, broken_agents):
    rules = Rules.preset(_short_rules(tmp_path))
    whole, split = tmp_path / "whole.json", tmp_path / "split.json"
    PlaySession(new_game(3, ["broken", "random"], rules, seed=12, name="You"), whole,
                color=False, fast=True, input_fn=_answers(None)).run()
    done = json.loads(whole.read_text())
    start = done["replacements"][0]["from_action"]
    before = sum(seat == 0 for seat, _ in done["actions"][:start])  # the person's answers
    PlaySession(new_game(3, ["broken", "random"], rules, seed=12, name="You"), split,
                color=False, fast=True, input_fn=_answers(before + 2)).run()
    halfway = SavedGame.load(split)
    assert halfway.status == "in_progress" and halfway.replacements
    PlaySession(halfway, split, color=False, fast=True, input_fn=_answers(None)).run()
    a, b = json.loads(whole.read_text()), json.loads(split.read_text())
    assert a["actions"] == b["actions"] and a["replacements"] == b["replacements"]
    assert a["winner"] == b["winner"]


# -- the key and the ledger ---------------------------------------------------------------------
def test_the_key_is_made_once_for_its_owner_only(tmp_path, monkeypatch, capsys):
    _in_progress(tmp_path, monkeypatch, capsys)
    key = tmp_path / "home" / "key"
    assert key.stat().st_mode & 0o777 == 0o600
    first = key.read_text()
    key.chmod(0o644)  # loosened by hand: put back to the owner only on the next use
    _in_progress(tmp_path, monkeypatch, capsys)
    assert key.read_text() == first and key.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("damaged", ["key"])  # a damaged ledger: tests/test_one_writer.py
def test_a_damaged_key_or_ledger_is_one_line_not_a_new_one(tmp_path, monkeypatch, capsys,
                                                           damaged):
    save = _in_progress(tmp_path, monkeypatch, capsys)
    (tmp_path / "home" / damaged).write_text("not what scat wrote")
    code, _, err = _play(monkeypatch, capsys, ["--resume", str(save)], "1\n")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "damaged" in err or "cannot be read" in err, err
    assert (tmp_path / "home" / damaged).read_text() == "not what scat wrote"
