"""The review of a finished game (scat_session/review.py, ``scat replay --review``, the end
of ``scat play``): the person's decisions valued from their own view, mistakes costliest
first, and one clear line for what cannot be reviewed."""

from __future__ import annotations

from pathlib import Path

import pytest

import agents.search as search
from scat_cli.game import PlaySession
from scat_cli.main import main
from scat_env import PlayerView, Rules
from scat_session.review import HONESTY, MISTAKE, review_game
from scat_session.savegame import SavedGame
from scat_session.seating import new_game


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / ".scat"))


def _finished(tmp_path: Path, seed: int = 13, answer: str = "1") -> Path:
    """A finished 3-player game against ``expert``, the person always picking menu entry
    ``answer``."""
    game = new_game(3, ["expert", "expert"], Rules(), seed=seed, name="You")
    path = tmp_path / f"game{seed}.json"
    PlaySession(game, path, color=False, fast=True, input_fn=lambda prompt: answer).run()
    return path


def test_every_reviewed_decision_is_the_persons_and_values_every_legal_move(tmp_path):
    save = SavedGame.load(_finished(tmp_path))
    review = review_game(save, worlds=8)
    assert review.decisions and review.seat == save.human_seat == 0
    for d in review.decisions:
        seat, action = save.actions[d.index]
        assert seat == 0 and action == d.played
        assert d.view.seat == 0 and d.view.current_player == 0
        assert sorted(v.action for v in d.values) == sorted(d.view.legal_actions)
        assert d.cost >= 0.0 and (d.cost == 0.0) == (d.best.action == d.played or
                                                     d.best.mean == d.played_value.mean)
    worst = review.costliest()
    assert len(worst) <= 3 and all(d.mistake and d.cost >= MISTAKE for d in worst)
    assert [d.cost for d in worst] == sorted((d.cost for d in worst), reverse=True)
    data = review.to_json()
    assert data["honesty"] == HONESTY
    assert data["costliest"] == [d.index for d in worst]


def test_the_review_reads_only_the_players_view(tmp_path, monkeypatch):
    """What the search is given is the person's view at the time, nothing of the game's
    full state (the opponents' cards are in the file, and over, but not used)."""
    seen: list[object] = []
    real = search.SearchAgent.play_out

    def spy(self, view, *args, **kwargs):  # noqa: ANN001, ANN202
        seen.append(view)
        return real(self, view, *args, **kwargs)

    monkeypatch.setattr(search.SearchAgent, "play_out", spy)
    save = SavedGame.load(_finished(tmp_path, seed=5))
    review_game(save, worlds=4)
    assert seen and all(type(v) is PlayerView and v.seat == 0 for v in seen)


def test_a_game_in_progress_is_not_reviewed(tmp_path):
    game = new_game(3, ["expert", "expert"], Rules(), seed=2, name="You")
    with pytest.raises(ValueError, match="only a finished game"):
        review_game(game)


def test_replay_review_prints_the_costliest_first_on_their_tables(tmp_path, capsys):
    path = _finished(tmp_path, seed=7)
    capsys.readouterr()
    assert main(["replay", str(path), "--review", "--worlds", "32", "--no-color",
                 "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert "Review of You's decisions" in out
    assert "judged from what you could see" in out
    assert "decisions reviewed" in out and "Every decision" in out
    # always the first menu entry (draw from the stock, discard the first card) makes
    # mistakes, each shown on the table as it stood
    assert "costliest" in out
    assert "Win chance of each move:" in out and "Scat · custom rules" in out


@pytest.mark.parametrize("argv, message", [
    (["--worlds", "0"], "--worlds must be between 1 and"),
    (["--worlds", "5"], "--worlds is for --review"),
    (["--review", "--reveal"], "--reveal is for watching the turns"),
    (["--review", "--fast"], "--fast is for watching the turns"),
])
def test_bad_review_options_are_one_line(tmp_path, capsys, argv, message):
    path = _finished(tmp_path, seed=3)
    capsys.readouterr()
    args = ["replay", str(path), *argv]
    if message.startswith("--worlds must"):
        args.append("--review")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_end_of_a_game_offers_the_review(tmp_path, capsys, monkeypatch):
    """``r`` at the last screen reviews the game there and then."""
    import scat_cli.review

    monkeypatch.setattr(scat_cli.review, "DEFAULT_WORLDS", 4)
    game = new_game(2, ["expert"], Rules(), seed=4, name="You")
    session = PlaySession(game, tmp_path / "g.json", color=False, fast=True, width=100,
                          input_fn=lambda prompt: "r" if game.status == "finished" else "1")
    assert session.run() == 0
    out = capsys.readouterr().out
    assert "Review your decisions with: scat replay --review" in out
    assert "r: review your decisions now" in out
    assert "Review of You's decisions" in out and "decisions reviewed" in out


def test_a_golf_game_is_reviewed_take_or_draw_and_place_or_turn_up(tmp_path, capsys):
    """Golf's two choices are the search's too (decision (w)): each kind of move is played
    out with the golf policy, and the review names the golf moves it weighed."""
    game = new_game(2, ["expert"], Rules.preset("golf"), seed=2, name="You")
    path = tmp_path / "golf.json"
    PlaySession(game, path, color=False, fast=True, input_fn=lambda prompt: "1").run()
    out = capsys.readouterr().out
    assert "r: review your decisions now" in out
    assert main(["replay", str(path), "--review", "--worlds", "4", "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "decisions reviewed" in out and "Nothing to review" not in out
    saved = SavedGame.load(path)
    review = review_game(saved, worlds=4, seed=1)
    phases = {d.view.phase for d in review.decisions}
    assert phases == {"golf_draw", "golf_place"}
    for d in review.decisions:  # every legal move weighed, in its own phase's terms
        assert {v.action for v in d.values} == set(d.view.legal_actions)


def test_a_game_with_nothing_to_review_says_so_and_the_end_offers_nothing(tmp_path, capsys):
    """The calls' moves are not the search's: ``r`` is not offered, and ``--review`` says
    why."""
    game = new_game(2, ["expert"], Rules.preset("hammer"), seed=2, name="You")
    path = tmp_path / "hammer.json"
    PlaySession(game, path, color=False, fast=True, input_fn=lambda prompt: "1").run()
    out = capsys.readouterr().out
    assert "r: review your decisions now" not in out
    assert main(["replay", str(path), "--review", "--worlds", "4", "--no-color"]) == 0
    assert "Nothing to review: none of these decisions" in capsys.readouterr().out
