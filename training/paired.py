"""Is policy A stronger than policy B? Compare two evaluations game by game on the same deals.

Two runs of ``python -m training.evaluate`` with the same ``--seed`` deal the same cards: game
(deal, seating) of one run is game (deal, seating) of the other, only the evaluated seat's
agent differs. Two policies that mostly agree play many of those games identically, so the
*difference* of their win rates, taken game by game, is less noisy than the difference of two
separate win rates: for two policy sets that share members, pairing halves the standard error
of the difference, which is four times fewer games for the same certainty about a change.

    python -m training.evaluate SPEC_A --opponents expert --players 3 --games 10000 --out eval_a
    python -m training.evaluate SPEC_B --opponents expert --players 3 --games 10000 --out eval_b
    python -m training.paired eval_a eval_b

Prints a markdown row per setting (opponent x table size) found in both folders: games paired,
both win rates, A - B, its standard error clustered by deal (the games of one deal share its
cards, so they are not independent), and z. Settings played on different seeds or rules are
refused: their games do not pair.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from .tournament import CONFIG_FILE, GAMES_FILE, TournamentConfig, read_games


def evaluated_wins(games: list[dict]) -> dict[tuple[int, int], bool]:
    """``(deal, seating) -> won`` for the evaluated agent: lineup entry 0, the seat
    ``training.evaluate`` gives the spec under test (the others are the baseline)."""
    wins = {}
    for g in games:
        seat = g["lineup_index"].index(0)
        wins[(g["deal"], g["seating"])] = g["winner"] == seat
    return wins


def paired_difference(a: dict[tuple[int, int], bool],
                      b: dict[tuple[int, int], bool]) -> dict[str, float]:
    """Win rate of A and B on the games both played, A - B, and its standard error with the
    games of one deal as a cluster (the sandwich estimator of a mean, with the m / (m - 1)
    small-sample factor). Raises ValueError when no game is shared."""
    keys = sorted(set(a) & set(b))
    if not keys:
        raise ValueError("the two evaluations share no game (deal, seating): were they run "
                         "with the same --seed and table size?")
    n = len(keys)
    wa = sum(a[k] for k in keys) / n
    wb = sum(b[k] for k in keys) / n
    diff = wa - wb
    per_deal: dict[int, float] = defaultdict(float)
    count: dict[int, int] = defaultdict(int)
    for k in keys:
        per_deal[k[0]] += a[k] - b[k]
        count[k[0]] += 1
    m = len(per_deal)
    if m > 1:
        ss = sum((per_deal[d] - count[d] * diff) ** 2 for d in per_deal)
        se = math.sqrt(ss * m / (m - 1)) / n
    else:
        se = float("nan")
    return {"games": n, "deals": m, "a": wa, "b": wb, "diff": diff, "se": se,
            "z": diff / se if se > 0 else float("nan")}


def _setting(folder: Path) -> tuple[dict, list[dict]]:
    config_path = folder / CONFIG_FILE
    if not config_path.exists():
        raise ValueError(f"{folder}: no {CONFIG_FILE}; expected a tournament folder written by "
                         "python -m training.evaluate --out")
    try:
        recorded = json.loads(config_path.read_text(encoding="utf-8"))
        config = TournamentConfig.from_dict(recorded)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{config_path}: {str(exc)[:200]}") from None
    # Every record checked against its config, as a resume checks it: a log edited or
    # copied from another evaluation is refused naming its line, never paired.
    return recorded, read_games(folder / GAMES_FILE, config=config)


def compare(folder_a: Path, folder_b: Path) -> list[dict]:
    """One :func:`paired_difference` per setting (``expert_x3``, ...) in both folders."""
    for f in (folder_a, folder_b):
        if not f.is_dir():
            raise ValueError(f"{f}: not a folder (give the --out folders of two "
                             "python -m training.evaluate runs)")
    names = sorted(p.name for p in folder_a.iterdir()
                   if p.is_dir() and (folder_b / p.name).is_dir())
    if not names:
        raise ValueError(f"{folder_a} and {folder_b} have no setting (e.g. expert_x3) in common")
    rows = []
    for name in names:
        ca, games_a = _setting(folder_a / name)
        cb, games_b = _setting(folder_b / name)
        for field in ("seed", "rules", "num_players", "seating"):
            if ca.get(field) != cb.get(field):
                raise ValueError(f"{name}: {field} differs ({ca.get(field)!r} in {folder_a}, "
                                 f"{cb.get(field)!r} in {folder_b}); the games do not pair")
        row = paired_difference(evaluated_wins(games_a), evaluated_wins(games_b))
        row.update(setting=name, spec_a=ca["tables"][0][0], spec_b=cb["tables"][0][0],
                   players=ca["num_players"])
        rows.append(row)
    return rows


def format_rows(rows: list[dict]) -> str:
    lines = [f"A = `{rows[0]['spec_a']}`, B = `{rows[0]['spec_b']}`", "",
             "| setting | games paired | A | B | A - B | SE | z | A - B, x fair |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['setting']} | {r['games']} | {r['a']:.4f} | {r['b']:.4f} | "
                     f"{r['diff']:+.4f} | {r['se']:.4f} | {r['z']:+.2f} | "
                     f"{r['diff'] * r['players']:+.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.paired",
                                description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("eval_a", type=Path, help="--out folder of the first evaluation (A)")
    p.add_argument("eval_b", type=Path, help="--out folder of the second evaluation (B)")
    args = p.parse_args(argv)
    try:
        rows = compare(args.eval_a, args.eval_b)
    except ValueError as e:
        print(f"{p.prog}: error: {e}", file=sys.stderr)
        return 2
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
