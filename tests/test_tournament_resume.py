"""``--resume`` reads ``games.jsonl`` back as untrusted input: a log that does not belong to
the tournament (another tournament's, an edited one, one without its config) is refused in
one line naming the file and line, and the folder is left as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hang_limits import hang_guard

from scat_cli.main import main
from scat_env.rules import PRESETS
from training.tournament import (
    VERIFY_MIN,
    RecordCheck,
    TournamentConfig,
    read_games,
    run_tournament,
    runner,
)

CFG = TournamentConfig(tables=(("greedy", "random", "threshold:20"),), games=24, seed=4)
CLI = ["tournament", "--field", "greedy,random,threshold:20", "--games", "24", "--seed", "4",
       "--workers", "1", "--quiet", "--no-plots"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished run of CFG (config.json and games.jsonl)."""
    out = tmp_path_factory.mktemp("finished")
    run_tournament(CFG, out, workers=1, progress=False)
    return out


def _copy(finished: Path, dest: Path) -> Path:
    shutil.copytree(finished, dest)
    return dest


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def _write(out: Path, records: list, tail: str = "") -> None:
    (out / "games.jsonl").write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records) + tail)


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != ".lock"}


def _refused(out: Path, match: str, **kw) -> None:
    """Resume is refused with ``match`` and leaves every file as it was."""
    before = _snapshot(out)
    with pytest.raises(ValueError, match=match) as info:
        run_tournament(CFG, out, workers=1, progress=False, resume=True, **kw)
    assert "\n" not in str(info.value)
    assert _snapshot(out) == before


def test_a_log_without_its_config_is_refused(finished, tmp_path):
    out = _copy(finished, tmp_path / "out")
    (out / "config.json").unlink()
    _refused(out, "games.jsonl holds games but there is no config.json")


def test_another_tournaments_log_beside_this_config_is_refused(finished, tmp_path):
    other = TournamentConfig(tables=CFG.tables, games=CFG.games, seed=CFG.seed + 1)
    run_tournament(other, tmp_path / "other", workers=1, progress=False)
    out = _copy(finished, tmp_path / "out")
    shutil.copy(tmp_path / "other" / "games.jsonl", out / "games.jsonl")
    _refused(out, r"games.jsonl:1: game \(0, 0, 0\) has deal seed \d+, but this tournament "
                  r"deals deal 0 with seed \d+")


def _swap(rec: dict) -> None:
    rec["winner"] = 1 - rec["winner"] if rec["winner"] in (0, 1) else 0


# (what to do to record 5, what the refusal says)
TAMPERING = {
    "winner": (_swap, r"winner is \d, but the lives say seat \d"),
    "winner of a truncated game": (lambda r: r.update(truncated=True),
                                   "truncated is true but the game is over"),
    "lives_end": (lambda r: r["lives_end"].__setitem__(0, r["lives_end"][0] + 1),
                  "lives_end .* do not match the hands' losses"),
    "a loss": (lambda r: r["hands"][0]["lives_lost"].__setitem__(0, 7),
               "hand 0: seat 0 loses 7 lives with 4 left"),
    "eliminated": (lambda r: r["hands"][-1].update(eliminated=[]),
                   r"hand \d+: eliminated \[\], but the losses put out"),
    "lives as floats": (lambda r: r.update(lives_end=[float(v) for v in r["lives_end"]]),
                        "lives_end .* do not match the hands' losses"),
    "a dealer out of turn": (lambda r: r["hands"][1].update(dealer=r["hands"][0]["dealer"]),
                             "hand 1 is dealt by seat .*, but the deal passes to seat"),
    "seats": (lambda r: r.update(seats=r["seats"][::-1]), "seats .*, but this tournament seats"),
    "player count": (lambda r: r.update(seats=r["seats"] + ["greedy"]),
                     "but this tournament seats"),
    "a key outside the schedule": (lambda r: r.update(deal=10_000),
                                   r"game \(0, 10000, \d\) is not in this tournament's schedule"),
    "a bool for a count": (lambda r: r.update(decisions=True), "decisions must be a count"),
    "a float seat": (lambda r: r.update(first_dealer=0.0), "first_dealer must be a seat"),
    "an unknown field": (lambda r: r.update(note="x"), "unknown field 'note'"),
    "a missing field": (lambda r: r.pop("hands"), "no hands"),
    "a hand too many": (lambda r: r["hands"].append(r["hands"][-1]),
                        r"hand \d+ is played after the game was over"),
    "not a record": (lambda r: r.update(hands="many"), "hands must be a list"),
    "a first hand without its dealer": (lambda r: r["hands"][0].pop("dealer"),
                                        "hand 0: not a hand summary"),
}


@pytest.mark.parametrize("what", list(TAMPERING))
def test_a_record_edited_by_hand_is_refused_naming_its_line(finished, tmp_path, what):
    out = _copy(finished, tmp_path / "out")
    records = _records(out)
    edit, message = TAMPERING[what]
    edit(records[4])
    # A torn last line too: the refusal must not repair (or otherwise touch) the file.
    _write(out, records[:10], tail='{"table":0,"de')
    _refused(out, f"games.jsonl:5: (game .* )?(not a game record of this tournament: )?"
                  f"{message}.*; not resuming")


def test_a_game_logged_twice_is_refused(finished, tmp_path):
    out = _copy(finished, tmp_path / "out")
    records = _records(out)
    _write(out, records[:6] + [records[2]])
    _refused(out, r"games.jsonl:7: game \(0, 0, 2\) again \(first on line 3\)")


def _mirror(rec: dict) -> None:
    """Swap what the two seats of a heads-up game did, consistently: a forgery that passes
    every check on the record alone (with two seats the deal alternates either way)."""
    def seat(s: int | None) -> int | None:
        return None if s is None else 1 - s

    rec["first_dealer"] = seat(rec["first_dealer"])
    rec["winner"] = seat(rec["winner"])
    rec["lives_end"] = rec["lives_end"][::-1]
    for h in rec["hands"]:
        h["dealer"], h["knocker"] = seat(h["dealer"]), seat(h["knocker"])
        h["lives_lost"], h["values"] = h["lives_lost"][::-1], h["values"][::-1]
        h["eliminated"] = sorted(seat(s) for s in h["eliminated"])
        h["declarers"] = sorted(seat(s) for s in h["declarers"])


def test_a_consistent_forgery_is_caught_by_replaying_the_game(tmp_path):
    cfg = TournamentConfig(tables=(("greedy", "random"),), games=20, seed=6)
    out = tmp_path / "out"
    run_tournament(cfg, out, workers=1, progress=False)
    records = _records(out)
    line = next(i for i, r in enumerate(records) if r["winner"] == 0)
    _mirror(records[line])
    assert records[line]["winner"] == 1
    RecordCheck(cfg)(records[line])  # the forgery passes every check on the record alone
    _write(out, records)
    before = _snapshot(out)
    with pytest.raises(ValueError, match=f"games.jsonl:{line + 1}: game .* does not replay as "
                                         r"logged \(\w+: logged .*, played .*\)"):
        run_tournament(cfg, out, workers=1, progress=False, resume=True)
    assert _snapshot(out) == before


def test_the_sample_replays_five_percent_and_verify_all_every_game(tmp_path):
    cfg = TournamentConfig(tables=(("greedy", "random"),), games=2 * VERIFY_MIN + 40, seed=2)
    out = tmp_path / "out"
    first = run_tournament(cfg, out, workers=1, progress=False)
    assert first.verified == 0
    logged = len(first.games)
    sampled = run_tournament(cfg, out, workers=1, progress=False, resume=True, verify="sample")
    assert sampled.verified == VERIFY_MIN
    run = run_tournament(cfg, out, workers=1, progress=False, resume=True, verify="all")
    assert run.verified == logged and run.played_now == 0
    records = _records(out)
    for rec in records:
        _mirror(rec)
    _write(out, records)
    # The refusal stops a pool of workers mid-play: that shutdown once hung for good.
    with hang_guard(300, "a resume refused with two workers"), \
            pytest.raises(ValueError, match="does not replay as logged"):
        run_tournament(cfg, out, workers=2, progress=False, resume=True)


def test_a_log_nested_past_any_record_is_one_clear_error(finished, tmp_path):
    out = _copy(finished, tmp_path / "out")
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    (out / "games.jsonl").write_text(lines[0] + "[" * 100_000 + "]" * 100_000 + "\n"
                                     + "".join(lines[1:]))
    _refused(out, "games.jsonl:2: corrupt game record")


def test_scat_tournament_resume_refuses_an_edited_log_in_one_line(finished, tmp_path, capsys):
    out = _copy(finished, tmp_path / "out")
    records = _records(out)
    _swap(records[7])
    _write(out, records)
    assert main([*CLI, "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "games.jsonl:8: winner is" in err
    assert not (out / "results.json").exists()


def test_a_genuine_log_resumes_to_the_same_results(finished, tmp_path, capsys):
    out = _copy(finished, tmp_path / "out")
    records = _records(out)
    _write(out, records[::-1][:15])  # any order, any subset
    assert main([*CLI, "--out", str(out), "--resume"]) == 0
    assert _records(out) == _records(finished)
    assert "verified 15 of 15 logged games" not in capsys.readouterr().out  # --quiet


@pytest.mark.parametrize("single_hand", [False, True])
def test_every_record_a_tournament_writes_passes_the_checks(single_hand):
    """No false refusals: every rules preset the agents can play, truncated games
    (max_turns 3), 2 to 5 players."""
    checked = truncated = 0
    presets = set()
    for preset in PRESETS:
        for table, max_turns in ((("greedy", "random"), 300), (("greedy",) * 3, 3),
                                 (("random",) * 5, 40)):
            cfg = TournamentConfig(tables=(table,), games=5, seed=1, rules=preset,
                                   single_hand=single_hand, max_turns=max_turns,
                                   seating="rotations")
            runner._init_worker(cfg, ignore_sigint=False)
            check = RecordCheck(cfg)
            for key in cfg.keys():
                try:
                    rec = json.loads(json.dumps(runner.play_key(key)))
                except ValueError:  # an agent that cannot play these rules: not the log's
                    break
                assert check(rec) == key
                checked += 1
                truncated += rec["truncated"]
                presets.add(preset)
    assert len(presets) >= 15 and checked > 200 and truncated > 10


def test_read_games_with_a_config_checks_but_without_one_only_parses(finished, tmp_path):
    out = _copy(finished, tmp_path / "out")
    records = _records(out)
    _swap(records[0])
    _write(out, records)
    assert len(read_games(out / "games.jsonl")) == len(records)
    with pytest.raises(ValueError, match=":1: winner is"):
        read_games(out / "games.jsonl", config=CFG)


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000, r"config.json is not a tournament config \(not JSON\)"),
    ("[1]", "config.json is not a tournament config; use another --out"),
    ("x" * (2 << 20), r"config.json is not a tournament config \(not JSON\)"),
    ('{"seed": 0}', "holds a different tournament .differs in: deals_per_table, games"),
])
def test_a_damaged_config_is_one_clear_error(finished, tmp_path, text, message):
    out = _copy(finished, tmp_path / "out")
    (out / "config.json").write_text(text)
    _refused(out, message)
