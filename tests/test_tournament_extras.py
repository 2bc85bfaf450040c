"""Ratings (OpenSkill) and plots (matplotlib) are optional extras: a tournament without them
writes every other result, byte for byte as with them, and says in one line each where the
missing results would be."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hang_limits import hang_limit

from training.ratings import RATINGS_MISSING
from training.report import PLOTS_MISSING

REPO = Path(__file__).resolve().parent.parent
ARGS = ["tournament", "--agents", "random,greedy,threshold:20", "--games", "12",
        "--workers", "1", "--seed", "2"]


def _scat(out: Path, blocked: tuple[str, ...], *extra: str) -> subprocess.CompletedProcess:
    """``scat`` in a fresh interpreter where importing each of ``blocked`` fails, as it does
    when the extra is not installed."""
    code = ("import sys\n"
            f"for name in {blocked!r}:\n"
            "    sys.modules[name] = None\n"
            "from scat_cli.main import main\n"
            f"raise SystemExit(main({[*ARGS, '--out', str(out), *extra]!r}))\n")
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=hang_limit(300))


def _without_ratings(results: dict) -> dict:
    return {k: v for k, v in results.items() if k not in ("ratings", "ratings_missing")}


def test_a_tournament_without_openskill_or_matplotlib_writes_every_other_result(tmp_path):
    whole = _scat(tmp_path / "whole", (), "--quiet")
    bare = _scat(tmp_path / "bare", ("openskill", "matplotlib"), "--quiet")
    assert whole.returncode == 0 and bare.returncode == 0, bare.stderr
    assert bare.stderr.splitlines() == [RATINGS_MISSING, PLOTS_MISSING]
    assert not whole.stderr
    names = {p.name for p in (tmp_path / "bare").iterdir()}
    assert {"config.json", "games.jsonl", "results.json", "results.md"} <= names
    assert not names & {"winrate.png", "ratings.png"}
    assert {"winrate.png", "ratings.png"} <= {p.name for p in (tmp_path / "whole").iterdir()}
    for name in ("config.json", "games.jsonl"):
        assert (tmp_path / "bare" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    bare_results = json.loads((tmp_path / "bare" / "results.json").read_text())
    whole_results = json.loads((tmp_path / "whole" / "results.json").read_text())
    assert bare_results["ratings"] == {} and bare_results["ratings_missing"] == RATINGS_MISSING
    assert "ratings_missing" not in whole_results and whole_results["ratings"]
    assert _without_ratings(bare_results) == _without_ratings(whole_results)
    markdown = (tmp_path / "bare" / "results.md").read_text()
    assert markdown.count(RATINGS_MISSING) == 1 and "No ratings" not in markdown


def test_without_matplotlib_the_ratings_are_kept_and_only_the_plots_are_missing(tmp_path):
    done = _scat(tmp_path, ("matplotlib",))
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("\n") <= 2 and PLOTS_MISSING in done.stderr  # header + this line
    assert RATINGS_MISSING not in done.stderr + done.stdout
    assert json.loads((tmp_path / "results.json").read_text())["ratings"]
    assert not list(tmp_path.glob("*.png"))
