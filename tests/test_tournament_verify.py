"""A resume re-plays every logged game by default when that costs a few seconds, so one
consistently forged record is caught wherever it is, and it says what it checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz_inputs import run_cli

from training.tournament import VERIFY_MIN, RecordCheck, TournamentConfig, logcheck, run_tournament

GAMES = 2 * VERIFY_MIN + 2  # more than a sample: the old default re-played 64 of them
CFG = TournamentConfig(tables=(("greedy", "random"),), games=GAMES, seed=11)
CLI = ["tournament", "--field", "greedy,random", "--games", str(GAMES), "--seed", "11",
       "--workers", "1", "--no-plots"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("finished")
    run_tournament(CFG, out, workers=1, progress=False)
    return out


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def _write(out: Path, records: list[dict]) -> None:
    (out / "games.jsonl").write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))


def _mirror(rec: dict) -> None:
    """What the two seats did, swapped consistently: passes every check on the record."""
    def seat(s: int | None) -> int | None:
        return None if s is None else 1 - s

    rec["first_dealer"], rec["winner"] = seat(rec["first_dealer"]), seat(rec["winner"])
    rec["lives_end"] = rec["lives_end"][::-1]
    for h in rec["hands"]:
        h["dealer"], h["knocker"] = seat(h["dealer"]), seat(h["knocker"])
        h["lives_lost"], h["values"] = h["lives_lost"][::-1], h["values"][::-1]
        h["eliminated"] = sorted(seat(s) for s in h["eliminated"])


def _forge_last(finished: Path, dest: Path) -> int:
    """A copy of the run whose last record is consistently forged; its line number."""
    dest.mkdir()
    for name in ("games.jsonl", "config.json"):
        (dest / name).write_bytes((finished / name).read_bytes())
    records = _records(dest)
    line = max(i for i, r in enumerate(records) if r["winner"] is not None)
    _mirror(records[line])
    RecordCheck(CFG)(records[line])
    _write(dest, records)
    return line + 1


class _FirstLines:
    """A sample that always picks the first lines: the forged last one is never in it."""

    def sample(self, population: range, k: int) -> list[int]:
        return list(population)[:k]


def test_one_forged_record_is_caught_by_a_default_resume_wherever_it_is(finished, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(logcheck.secrets, "SystemRandom", _FirstLines)
    out = tmp_path / "out"
    line = _forge_last(finished, out)
    before = (out / "games.jsonl").read_bytes()
    with pytest.raises(ValueError, match=f"games.jsonl:{line}: game .* does not replay"):
        run_tournament(CFG, out, workers=1, progress=False, resume=True)
    assert (out / "games.jsonl").read_bytes() == before
    assert not (out / "results.json").exists()


def test_a_default_resume_re_plays_every_record_when_that_is_cheap(finished, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("games.jsonl", "config.json"):
        (out / name).write_bytes((finished / name).read_bytes())
    run = run_tournament(CFG, out, workers=1, progress=False, resume=True)
    assert run.logged == len(run.games) and run.verified == run.logged
    assert run.verify_line().startswith(f"verified {run.logged} of {run.logged} logged games")


def test_a_full_re_play_past_the_budget_keeps_to_the_sample_and_says_so(finished, tmp_path,
                                                                        monkeypatch):
    monkeypatch.setattr(logcheck, "VERIFY_SECONDS", 0.0)
    out = tmp_path / "out"
    out.mkdir()
    for name in ("games.jsonl", "config.json"):
        (out / name).write_bytes((finished / name).read_bytes())
    run = run_tournament(CFG, out, workers=1, progress=False, resume=True)
    assert run.verified == VERIFY_MIN and run.logged == len(run.games)
    assert run.rest_estimate_s is not None and run.rest_estimate_s > 0
    assert "re-playing the rest would take about" in run.verify_line()
    assert "--verify all" in run.verify_line()


def test_the_sample_mode_keeps_to_the_sample(finished, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("games.jsonl", "config.json"):
        (out / name).write_bytes((finished / name).read_bytes())
    run = run_tournament(CFG, out, workers=1, progress=False, resume=True, verify="sample")
    assert run.verified == VERIFY_MIN
    assert "a random sample" in run.verify_line()


def test_scat_tournament_resume_says_how_many_records_it_verified(finished, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("games.jsonl", "config.json"):
        (out / name).write_bytes((finished / name).read_bytes())
    status, stdout, err = run_cli([*CLI, "--out", str(out), "--resume"])
    assert status == 0, err
    logged = len(_records(out))
    assert (f"verified {logged} of {logged} logged games by re-playing them: each came out "
            "as logged") in stdout


def test_scat_tournament_resume_refuses_a_forged_record_in_one_line(finished, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(logcheck.secrets, "SystemRandom", _FirstLines)
    out = tmp_path / "out"
    line = _forge_last(finished, out)
    status, _, err = run_cli([*CLI, "--out", str(out), "--resume", "--quiet"])
    assert status == 2
    assert err.count("\n") == 1 and f"games.jsonl:{line}: game" in err
