"""training.paired: two evaluations on the same deals, compared game by game."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from training import paired as pc
from training.evaluate import tournament_evaluation
from training.tournament import TournamentConfig


def _evaluate(spec: str, folder: Path, seed: int = 1, games: int = 12) -> dict:
    return tournament_evaluation(spec, ["random"], [2, 3], games, folder, seed=seed)


def test_difference_and_clustered_error_by_hand():
    """Deal 0: A wins both seatings, B neither (+2); deal 1: both lose both (0). The mean
    difference is 2 / 4 = 0.5 and the two deal totals sit 1 either side of 2 x 0.5, so the
    clustered SE is sqrt((1 + 1) x 2 / 1) / 4 = 0.5."""
    a = {(0, 0): True, (0, 1): True, (1, 0): False, (1, 1): False}
    b = {k: False for k in a}
    r = pc.paired_difference(a, b)
    assert (r["games"], r["deals"], r["a"], r["b"]) == (4, 2, 0.5, 0.0)
    assert r["diff"] == pytest.approx(0.5) and r["se"] == pytest.approx(0.5)
    assert r["z"] == pytest.approx(1.0)


def test_only_shared_games_are_paired():
    a = {(0, 0): True, (0, 1): False, (5, 0): True}
    b = {(0, 0): False, (0, 1): False, (9, 0): True}
    r = pc.paired_difference(a, b)
    assert r["games"] == 2 and r["diff"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="share no game"):
        pc.paired_difference({(1, 0): True}, {(2, 0): True})


def test_same_policy_twice_differs_by_exactly_zero(tmp_path):
    """The duplicate-deal harness is deterministic: the same spec on the same seed plays the
    same games, so A - B is 0 with no spread, at every table size."""
    _evaluate("greedy", tmp_path / "a")
    _evaluate("greedy", tmp_path / "b")
    rows = pc.compare(tmp_path / "a", tmp_path / "b")
    assert [r["setting"] for r in rows] == ["random_x2", "random_x3"]
    for r in rows:
        assert r["diff"] == 0 and r["se"] == 0 and math.isnan(r["z"])


def test_win_rates_are_the_evaluated_seats(tmp_path):
    """The evaluated agent moves round the table with the rotations; the per-game wins must
    follow it and add up to the harness's own win rate for that agent."""
    ev_a = _evaluate("greedy", tmp_path / "a")
    ev_b = _evaluate("expert", tmp_path / "b")
    rows = {r["setting"]: r for r in pc.compare(tmp_path / "a", tmp_path / "b")}
    for key in ("random_x2", "random_x3"):
        assert rows[key]["games"] == ev_a["games"][key] == ev_b["games"][key]
        assert rows[key]["a"] == pytest.approx(ev_a["win_rate"][key], abs=1e-5)
        assert rows[key]["b"] == pytest.approx(ev_b["win_rate"][key], abs=1e-5)
        want = ev_a["win_rate"][key] - ev_b["win_rate"][key]
        assert rows[key]["diff"] == pytest.approx(want, abs=1e-5)
    text = pc.format_rows(list(rows.values()))
    assert "A = `greedy`, B = `expert`" in text and "| random_x3 |" in text


def test_different_seeds_are_refused_by_name(tmp_path, capsys):
    _evaluate("greedy", tmp_path / "a", seed=1, games=4)
    _evaluate("greedy", tmp_path / "b", seed=2, games=4)
    with pytest.raises(ValueError, match="seed differs"):
        pc.compare(tmp_path / "a", tmp_path / "b")
    assert pc.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "seed differs" in capsys.readouterr().err


def test_bad_folders_give_clear_errors(tmp_path):
    (tmp_path / "a" / "random_x2").mkdir(parents=True)
    (tmp_path / "b" / "random_x2").mkdir(parents=True)
    with pytest.raises(ValueError, match="not a folder"):
        pc.compare(tmp_path / "missing", tmp_path / "b")
    with pytest.raises(ValueError, match="no config.json"):
        pc.compare(tmp_path / "a", tmp_path / "b")
    (tmp_path / "c").mkdir()
    with pytest.raises(ValueError, match="no setting"):
        pc.compare(tmp_path / "a", tmp_path / "c")
    # a torn or foreign game log is refused by the harness's own reader, naming the line
    for f in ("a", "b"):
        cfg = {"seed": 0, "rules": "standard", "num_players": 2, "seating": "rotations",
               "tables": [["greedy", "random"]]}
        (tmp_path / f / "random_x2" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="config.json: not a tournament config: no 'games'"):
        pc.compare(tmp_path / "a", tmp_path / "b")
    for f in ("a", "b"):
        cfg = TournamentConfig(tables=(("greedy", "random"),), games=4, seating="rotations")
        (tmp_path / f / "random_x2" / "config.json").write_text(json.dumps(cfg.to_dict()))
    (tmp_path / "a" / "random_x2" / "games.jsonl").write_text("not json\n{}\n")
    with pytest.raises(ValueError, match="games.jsonl:1"):
        pc.compare(tmp_path / "a", tmp_path / "b")


def test_an_edited_evaluation_log_is_refused_naming_its_line(tmp_path, capsys):
    _evaluate("greedy", tmp_path / "a", games=4)
    _evaluate("greedy", tmp_path / "b", games=4)
    log = tmp_path / "b" / "random_x2" / "games.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    rec = json.loads(lines[1])
    rec["winner"] = 1 - rec["winner"]
    log.write_text(lines[0] + json.dumps(rec) + "\n" + "".join(lines[2:]))
    assert pc.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "random_x2/games.jsonl:2: winner is" in err
