"""Tournament harness: duplicate deals, seat balance, determinism, resume, reports, stats."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from agents.match import play_game
from agents.random_agent import RandomAgent
from agents.registry import available, make_agent, register
from scat_env import GameState, Rules
from training.ratings import (
    cluster_ratio_ci,
    cluster_wilson_ci,
    openskill_ratings,
    places_from_results,
    wilson_ci,
)
from training.report import summarize, write_report
from training.tournament import (
    TournamentConfig,
    deal_seed,
    population_tables,
    read_games,
    run_tournament,
    runner,
    seatings_for,
)

# Heuristic agents owned elsewhere; the harness tests use the stable greedy family and check
# the expert separately (it must honour the same reset contract).
STRONG = "threshold:25"


# -- the engine property duplicate deals rely on ----------------------------------------------
def _deal_states(agents, seed):
    """The engine's generator state right after each deal, by hand number."""
    first = GameState(len(agents), Rules(), seed=seed)
    states = {first.hand_number: first.rng.getstate()}

    def on_step(state, seat, action):
        if state.hand_number not in states:  # a new hand was just dealt
            states[state.hand_number] = state.rng.getstate()

    play_game(agents, Rules(), seed=seed, on_step=on_step)
    return states


def test_engine_draws_every_shuffle_from_its_own_seeded_generator():
    # However differently the agents play, deal k comes from the same shuffle: the state's
    # generator is advanced only by shuffles, never by play.
    a = _deal_states([make_agent("random", 1), make_agent("random", 2), make_agent("random", 3)], 11)
    b = _deal_states([make_agent(STRONG, 1), make_agent("greedy", 2), make_agent(STRONG, 3)], 11)
    common = set(a) & set(b)
    assert len(common) >= 3
    assert all(a[h] == b[h] for h in common)
    assert GameState(3, seed=11).hands == GameState(3, seed=11).hands
    assert GameState(3, seed=11).hands != GameState(3, seed=12).hands


# -- seatings -------------------------------------------------------------------------------
@pytest.mark.parametrize("lineup", [
    ("a", "b"), ("a", "b", "c"), ("a", "b", "b", "b"), ("a", "b", "c", "d"),
    ("a", "b", "c", "d", "e"), ("a", "a", "b", "b", "c", "c"),
])
@pytest.mark.parametrize("mode", ["auto", "permutations", "rotations", "mirrored"])
def test_every_spec_sits_in_every_seat_equally_often(lineup, mode):
    seatings = seatings_for(lineup, mode)
    n = len(lineup)
    assert len(set(seatings)) == len(seatings)
    assert all(sorted(p) == list(range(n)) for p in seatings)
    for seat in range(n):
        at_seat = Counter(lineup[p[seat]] for p in seatings)
        for spec, count in Counter(lineup).items():
            assert at_seat[spec] * n == count * len(seatings), (seat, spec, seatings)


def test_auto_seating_uses_every_permutation_for_small_tables():
    assert len(seatings_for(("a", "b", "c"))) == 6
    assert len(seatings_for(("a", "b", "c", "d"))) == 24
    assert len(seatings_for(("a", "b", "b", "b"))) == 4  # identical seatings merged
    assert len(seatings_for(tuple("abcde"))) == 10  # 120 > 24: rotations and mirror


def test_population_round_robin_and_lineup_errors():
    assert population_tables(["x", "y", "z"], 2) == [("x", "y"), ("x", "z"), ("y", "z")]
    assert population_tables(["x", "y", "z"], 3) == [("x", "y", "z")]
    with pytest.raises(ValueError, match="--field"):
        population_tables(["x", "y"], 4)
    with pytest.raises(ValueError, match="repeats"):
        population_tables(["x", "x"], 2)
    with pytest.raises(ValueError, match="2 to 10"):
        TournamentConfig(tables=(("random",) * 11,))
    with pytest.raises(ValueError, match="games"):
        TournamentConfig(tables=(("random", "greedy"),), games=0)
    with pytest.raises(ValueError, match="rules file not found"):
        TournamentConfig(tables=(("random", "greedy"),), rules="nope/missing.yaml")


def test_games_round_up_to_whole_duplicate_deals():
    cfg = TournamentConfig(tables=(("random", "greedy", "greedy"),), games=10)
    assert cfg.deals_per_table() == 4 and len(cfg.keys()) == 12  # 3 seatings x 4 deals
    cfg = TournamentConfig(tables=population_tables(["random", "greedy", STRONG], 2), games=13)
    assert len(cfg.keys()) == 18  # 3 tables x 2 seatings x 3 deals


def test_deal_seeds_differ_between_deals_and_master_seeds():
    seeds = {deal_seed(m, d) for m in range(3) for d in range(200)}
    assert len(seeds) == 600


# -- duplicate deals in a real run -------------------------------------------------------------
_SEEN: list[tuple[int, int, tuple[int, ...]]] = []


class _Recorder(RandomAgent):
    """Notes the hand it was dealt in hand 1 (its first decision), keyed by deal seed."""

    def reset(self, seed=None):
        super().reset(seed)
        self.game_seed = seed
        self.noted = False

    def act(self, view):
        if not self.noted and view.hand_number == 1 and view.phase == "draw":
            self.noted = True
            deal, seat = divmod(self.game_seed, 1000)  # play_game reseeds: seed*1000+seat
            assert seat == view.seat
            _SEEN.append((deal, seat, tuple(view.hand)))
        return super().act(view)


register("test_recorder", lambda arg, seed: _Recorder(seed), "test only")


def test_duplicate_deals_deal_the_same_first_hands_in_every_seating(tmp_path):
    _SEEN.clear()
    cfg = TournamentConfig(tables=(("test_recorder", "random", "greedy"),), games=60, seed=5)
    run = run_tournament(cfg, tmp_path, workers=1, progress=False)
    # Every seating of a deal shares the deal's seed and first dealer.
    by_deal: dict[int, set] = {}
    for g in run.games:
        by_deal.setdefault(g["deal"], set()).add((g["seed"], g["first_dealer"]))
    assert all(len(v) == 1 for v in by_deal.values())
    # The recorder, moving round the seats, was dealt that seat's cards of the same deal.
    seats_seen: dict[int, set[int]] = {}
    for seed, seat, hand in _SEEN:
        expected = GameState(3, Rules(), seed=seed).hands[seat]
        assert hand == tuple(sorted(expected))
        seats_seen.setdefault(seed, set()).add(seat)
    assert len(seats_seen) == cfg.deals_per_table()
    assert sum(len(s) == 3 for s in seats_seen.values()) >= 0.8 * len(seats_seen)


# -- determinism, resume, torn lines -----------------------------------------------------------
def _files(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in ("games.jsonl", "results.json")}


def _run(cfg, out, **kw):
    run = run_tournament(cfg, out, progress=False, **kw)
    write_report(out, summarize(cfg.to_dict(), run.games), plots=False)
    return run


def test_results_do_not_depend_on_the_number_of_workers(tmp_path):
    cfg = TournamentConfig(tables=((STRONG, "greedy", "random"),), games=36, seed=3)
    _run(cfg, tmp_path / "one", workers=1)
    _run(cfg, tmp_path / "two", workers=2, chunk_games=5)
    _run(cfg, tmp_path / "again", workers=2, chunk_games=3)
    assert _files(tmp_path / "one") == _files(tmp_path / "two") == _files(tmp_path / "again")
    other = TournamentConfig(tables=((STRONG, "greedy", "random"),), games=36, seed=4)
    _run(other, tmp_path / "seed4", workers=1)
    assert _files(tmp_path / "seed4")["games.jsonl"] != _files(tmp_path / "one")["games.jsonl"]


@pytest.mark.skipif("expert" not in available(), reason="no expert agent in this checkout")
def test_expert_results_do_not_depend_on_the_number_of_workers(tmp_path):
    # Workers reuse agent instances across games; reset(seed) must start a fresh game.
    cfg = TournamentConfig(tables=(("expert", "greedy", "random"),), games=24, seed=8)
    _run(cfg, tmp_path / "one", workers=1)
    _run(cfg, tmp_path / "two", workers=2, chunk_games=5)
    assert _files(tmp_path / "one") == _files(tmp_path / "two")


def test_resume_after_an_interruption_gives_the_same_results(tmp_path, monkeypatch):
    cfg = TournamentConfig(tables=(("greedy", "random"),), games=30, seed=1)
    _run(cfg, tmp_path / "whole", workers=1)

    real = runner.play_key
    calls = {"n": 0}

    def flaky(key):
        calls["n"] += 1
        if calls["n"] > 11:
            raise KeyboardInterrupt
        return real(key)

    monkeypatch.setattr(runner, "play_key", flaky)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg, tmp_path / "cut", workers=1, progress=False, chunk_games=4)
    monkeypatch.setattr(runner, "play_key", real)
    assert len(read_games(tmp_path / "cut" / "games.jsonl")) == 8  # two whole chunks
    with pytest.raises(ValueError, match="--resume"):
        run_tournament(cfg, tmp_path / "cut", workers=1, progress=False)
    run = _run(cfg, tmp_path / "cut", workers=2, resume=True)
    assert run.played_now == 22
    assert _files(tmp_path / "cut") == _files(tmp_path / "whole")


def test_torn_last_line_is_ignored_and_cut_off_on_resume(tmp_path):
    cfg = TournamentConfig(tables=(("greedy", "random"),), games=10, seed=2)
    _run(cfg, tmp_path / "whole", workers=1)
    out = tmp_path / "torn"
    out.mkdir()
    (out / "config.json").write_bytes((tmp_path / "whole" / "config.json").read_bytes())
    lines = (tmp_path / "whole" / "games.jsonl").read_text().splitlines(keepends=True)
    (out / "games.jsonl").write_text("".join(lines[:4]) + lines[4][: len(lines[4]) // 2])
    assert len(read_games(out / "games.jsonl")) == 4
    run = _run(cfg, out, workers=1, resume=True)
    assert run.played_now == 6
    assert _files(out) == _files(tmp_path / "whole")
    # A complete line without its newline is also treated as torn (the game is replayed).
    (out / "games.jsonl").write_text("".join(lines[:3]) + lines[3].rstrip("\n"))
    assert len(read_games(out / "games.jsonl")) == 3
    # A bad line in the middle is not ours to skip: refuse, naming the line.
    (out / "games.jsonl").write_text(lines[0] + "garbage\n" + "".join(lines[1:]))
    with pytest.raises(ValueError, match=":2: corrupt"):
        read_games(out / "games.jsonl")


def test_resume_refuses_a_different_tournament(tmp_path):
    cfg = TournamentConfig(tables=(("greedy", "random"),), games=4, seed=0)
    run_tournament(cfg, tmp_path, workers=1, progress=False)
    other = TournamentConfig(tables=(("greedy", "random"),), games=4, seed=9)
    with pytest.raises(ValueError, match="differs in: seed"):
        run_tournament(other, tmp_path, workers=1, progress=False, resume=True)
    run = run_tournament(other, tmp_path, workers=1, progress=False, overwrite=True)
    assert run.played_now == 4


# -- reports and statistics --------------------------------------------------------------------
def test_report_writes_json_markdown_and_plots(tmp_path):
    cfg = TournamentConfig(tables=population_tables(["random", "greedy", STRONG], 2), games=24)
    run = run_tournament(cfg, tmp_path, workers=1, progress=False)
    summary = summarize(cfg.to_dict(), run.games)
    paths = write_report(tmp_path, summary, {"seconds": run.seconds})
    for key in ("json", "markdown", "timing", "winrate_png", "ratings_png"):
        assert paths[key].stat().st_size > 0, key
    assert paths["winrate_png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths["json"].read_text())
    assert "seconds" not in json.dumps(data)  # timing stays out of the deterministic file
    assert data["games"] == len(run.games) == 24
    total_wins = sum(a["totals"]["wins"] for a in data["agents"].values())
    assert total_wins == sum(g["winner"] is not None for g in run.games)
    md = paths["markdown"].read_text()
    for spec in ("random", "greedy", STRONG):
        assert f"`{spec}`" in md
    assert "Win rate at each table" in md


def test_greedy_outplays_random_in_stats_and_ratings(tmp_path):
    cfg = TournamentConfig(tables=(("greedy", "random"),), games=40, seed=0)
    run = run_tournament(cfg, tmp_path, workers=1, progress=False)
    s = summarize(cfg.to_dict(), run.games)
    g, r = s["agents"]["greedy"], s["agents"]["random"]
    assert g["win_rate"]["ci95"][0] > 0.5 > r["win_rate"]["ci95"][1]
    assert g["lives_per_hand"]["value"] < r["lives_per_hand"]["value"]
    assert s["ratings"]["greedy"]["ordinal"] > s["ratings"]["random"]["ordinal"]
    for a in (g, r):
        lo, hi = a["win_rate"]["ci95"]
        assert lo <= a["win_rate"]["value"] <= hi


def test_wilson_interval_matches_the_textbook_value():
    lo, hi = wilson_ci(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)
    assert wilson_ci(0, 50)[0] == pytest.approx(0.0, abs=1e-12) and wilson_ci(0, 50)[1] > 0.05


def test_cluster_intervals_reduce_to_the_binomial_for_independent_trials():
    trials = [(1.0, 1.0)] * 30 + [(0.0, 1.0)] * 70
    est, lo, hi = cluster_ratio_ci(trials)
    se = math.sqrt(0.3 * 0.7 / 100) * math.sqrt(100 / 99)
    assert est == pytest.approx(0.3)
    assert hi - est == pytest.approx(1.959964 * se, rel=1e-5)
    # Design effect 1: the cluster Wilson interval is the plain one (up to k/(k-1)).
    _, clo, chi = cluster_wilson_ci(trials)
    wlo, whi = wilson_ci(30, 100)
    assert clo == pytest.approx(wlo, abs=2e-3) and chi == pytest.approx(whi, abs=2e-3)
    # Perfectly correlated clusters of 10: ten times fewer effective trials, wider interval.
    clustered = [(10.0, 10.0)] * 3 + [(0.0, 10.0)] * 7
    _, lo2, hi2 = cluster_wilson_ci(clustered)
    assert hi2 - lo2 > 2.5 * (whi - wlo)


def test_places_follow_the_elimination_order():
    # Seat 2 out in hand 1, seats 0 and 3 out together in hand 4, seat 1 wins.
    assert places_from_results(4, [[2], [], [], [0, 3]], [0, 2, 0, 0]) == [2, 1, 4, 2]
    # A single hand: nobody out, more lives left is better.
    assert places_from_results(3, [[]], [4, 2, 3]) == [1, 3, 2]


def test_openskill_rates_the_consistent_winner_highest_and_ignores_mirror_games():
    games = [(("a", "b", "c"), (1, 2, 3)), (("c", "a", "b"), (3, 1, 2))] * 10
    games += [(("a", "a", "c"), (1, 2, 3)), (("d", "d", "d"), (1, 2, 3))]
    r = openskill_ratings(games)
    assert r["a"]["ordinal"] > r["b"]["ordinal"] > r["c"]["ordinal"]
    assert r["a"]["games"] == 20 and "d" not in r
