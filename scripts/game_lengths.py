"""How long a game of each rules preset usually lasts, written to
``scat_session/game_lengths.json``.

``scat rules``, ``scat play`` and the browser's new-game form show this file where a person
picks a preset (:mod:`scat_session.lengths`), because the presets differ by an order of
magnitude: a French Canadian race to 31 points takes hundreds of decisions where the
standard game takes about a hundred.

The table is the one a person meets by default: three players, the person at seat 0 played
here by the rule-based ``expert`` (a stand-in that plays a sensible game at once), the
other seats by ``scat play``'s default opponents for the preset
(:func:`scat_session.seating.default_opponent`). Each game is played to its end (or the turn
cap) on the engine; game ``g`` of a preset uses seed ``base_seed + g``, so the file is
reproducible. Minutes are what a person would spend at the pace of :data:`PACE`: seconds
per decision of theirs, the default ``--delay`` per opponent move, and a look at each
showdown.

Example (a few minutes on one core)::

    python scripts/game_lengths.py --games 100
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.match import play_game  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from scat_env import Rules  # noqa: E402
from scat_env.rules import PRESETS  # noqa: E402
from scat_session.lengths import LENGTHS_FILE  # noqa: E402
from scat_session.seating import default_opponent  # noqa: E402

#: Seconds a person at a plausible pace spends: per decision of their own (a draw and a
#: discard are two), per opponent move (``scat play``'s default ``--delay``), and per
#: showdown (reading it and pressing Enter).
PACE = {"person_decision": 4.0, "opponent_move": 0.8, "showdown": 5.0}
PLAYERS = 3
PERSON = "expert"


def minutes(person: int, others: int, hands: int) -> float:
    """A game's length for a person at :data:`PACE`."""
    seconds = (person * PACE["person_decision"] + others * PACE["opponent_move"]
               + hands * PACE["showdown"])
    return seconds / 60


def spread(values: list[float]) -> dict[str, float]:
    """The median and the middle 80% (10th to 90th percentile) of ``values``."""
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return {"median": round(statistics.median(values), 1), "low": round(cuts[0], 1),
            "high": round(cuts[-1], 1)}


def measure(preset: str, games: int, base_seed: int) -> dict[str, object]:
    """``games`` games of ``preset`` at :data:`PLAYERS` players, summed up."""
    rules = Rules.preset(preset)
    opponent = default_opponent(PLAYERS, rules)
    rows: dict[str, list[float]] = {"decisions": [], "person_decisions": [], "hands": [],
                                    "minutes": []}
    truncated = 0
    for g in range(games):
        seed = base_seed + g
        agents = [make_agent(PERSON, seed=seed)]
        agents += [make_agent(opponent, seed=seed * 10 + s) for s in range(1, PLAYERS)]
        record = play_game(agents, rules, seed=seed)
        person = sum(1 for seat, _ in record.actions if seat == 0)
        rows["decisions"].append(record.decisions)
        rows["person_decisions"].append(person)
        rows["hands"].append(len(record.results))
        rows["minutes"].append(minutes(person, record.decisions - person, len(record.results)))
        truncated += record.truncated
    out: dict[str, object] = {"opponent": opponent, "games": games, "truncated": truncated}
    out.update({key: spread(values) for key, values in rows.items()})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games per preset (default 100)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game")
    parser.add_argument("--presets", default=None,
                        help="comma-separated presets to measure (default: all)")
    parser.add_argument("--out", default=str(LENGTHS_FILE), help="the file to write")
    args = parser.parse_args(argv)
    names = args.presets.split(",") if args.presets else list(PRESETS)
    path = Path(args.out)
    old = json.loads(path.read_text()) if path.is_file() else {}
    presets = dict(old.get("presets", {}))
    for name in names:
        presets[name] = measure(name, args.games, args.seed)
        m = presets[name]["minutes"]
        print(f"{name:<26} {presets[name]['opponent']:<24} "
              f"{m['median']:>5} min ({m['low']}-{m['high']})", flush=True)
    data = {
        "what": f"{PLAYERS} players: the person ({PERSON} plays the seat) against scat play's "
                "default opponents; median and 10th-90th percentile",
        "command": "python scripts/game_lengths.py --games " + str(args.games),
        "players": PLAYERS,
        "pace_seconds": PACE,
        "presets": {name: presets[name] for name in PRESETS if name in presets},
    }
    path.write_text(dumps(data))
    return 0


def dumps(data: dict[str, object]) -> str:
    """The file's text: one line per preset, so a regenerated file reads as a short diff."""
    presets = data["presets"]
    assert isinstance(presets, dict)
    head = {k: v for k, v in data.items() if k != "presets"}
    lines = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    rows = [f"  {json.dumps(name)}: {json.dumps(entry)}" for name, entry in presets.items()]
    return "{\n" + "\n".join(lines) + '\n "presets": {\n' + ",\n".join(rows) + "\n }\n}\n"


if __name__ == "__main__":
    raise SystemExit(main())
