"""Golden playthroughs: seeded games written out as text, one line per decision.

As in OpenSpiel's playthrough files, a recorded game pins down the whole behaviour of the
engine (deal, legal actions, scoring, dealer rotation, elimination) in a form a person can
read and a test can diff. Any change of the rules' behaviour shows up as a diff in
``tests/playthroughs/*.txt``; if the change is intended, regenerate the files with::

    python -m scat_env.playthrough --write tests/playthroughs

Moves come from a seeded ``random.Random`` choosing uniformly among the legal actions, so
the files depend on the engine alone (not on any agent's code).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from .actions import action_short
from .cards import cards_str
from .engine import GameState
from .rules import DEFAULT_MAX_TURNS, Rules, lives_label
from .view import make_view

#: (file stem, players, preset, seed) of every golden game.
GAMES: tuple[tuple[str, int, str, int], ...] = (
    ("standard_2p", 2, "standard", 1),
    ("standard_3p", 3, "standard", 2),
    ("standard_6p", 6, "standard", 3),
    ("cadillac_3p", 3, "cadillac", 4),
    ("gin_3p", 3, "gin", 5),
    ("italian_3p", 3, "italian", 6),
    ("computer_3p", 3, "computer", 7),
    ("moyer_second_knock_4p", 4, "moyer_second_knock", 8),
    ("french_canadian_3p", 3, "french_canadian", 9),
    ("golf_3p", 3, "golf", 10),
)


def record_game(num_players: int, rules: Rules | str, seed: int,
                max_turns: int = DEFAULT_MAX_TURNS) -> str:
    """Play one seeded game with uniformly random legal moves and return its transcript."""
    if isinstance(rules, str):
        rules = Rules.preset(rules)
    state = GameState(num_players, rules, seed=seed)
    rng = random.Random(seed)
    lines = [
        f"# scat-env playthrough: {num_players} players, rules {rules.name!r}, seed {seed}",
        "# regenerate: python -m scat_env.playthrough --write tests/playthroughs",
        f"# rules: {rules.to_dict()}",
    ]
    shown_results = 0
    hand_shown = 0

    def flush_results() -> None:
        nonlocal shown_results
        for res in state.results[shown_results:]:
            values = " ".join(f"p{s}={v:g}" for s, v in sorted(res.values.items()))
            lines.append(f"  result: {res.describe(_names(num_players))}")
            lines.append(f"  values: {values}")
            lines.append("  lives: " + " ".join(str(x) for x in res.lives_after))
            if res.points_after:
                lines.append("  points: " + " ".join(str(x) for x in res.points_after))
        shown_results = len(state.results)

    flush_results()
    while not state.is_terminal():
        if state.hand_number != hand_shown:
            hand_shown = state.hand_number
            standing = ", ".join(
                f"p{s} {lives_label(rules, state.lives[s])}" for s in range(num_players)
            )
            lines.append(f"hand {hand_shown} | dealer p{state.dealer} | {standing}")
        if state.turn >= max_turns:
            lines.append(f"truncated: {max_turns} turns in one hand")
            break
        seat = state.current_player
        view = make_view(state, seat)
        legal = view.legal_actions
        action = legal[rng.randrange(len(legal))]
        extra = ""
        if view.drawn_card is not None:
            how = "taken" if view.taken_card is not None else "from stock"
            extra = f" | drew {cards_str([view.drawn_card])} ({how})"
        top = cards_str([view.top_discard]) if view.top_discard is not None else "-"
        if view.slots:  # golf: the seat's three slots, ?? face down
            extra += " | slots " + " ".join(
                "??" if c is None else cards_str([c]) for c in view.slots[seat])
        lines.append(
            f"p{seat} {view.phase:<7} | hand {cards_str(view.hand)}{extra} | top {top}"
            f" | stock {view.stock_size}"
            + (f" | knocker p{view.knocker}" if view.knocker is not None else "")
            + f" | legal {' '.join(action_short(a) for a in legal)} -> {action_short(action)}"
        )
        state.apply_action(action)
        flush_results()
    if state.is_terminal():
        lines.append(f"end: {state.phase}, winner p{state.winner}")
    return "\n".join(lines) + "\n"


def _names(n: int) -> list[str]:
    return [f"p{s}" for s in range(n)]


def golden_files() -> dict[str, str]:
    """File name -> transcript for every game of :data:`GAMES`."""
    return {f"{stem}.txt": record_game(n, preset, seed) for stem, n, preset, seed in GAMES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scat_env.playthrough",
        description="Write or check the golden playthrough files of seeded Scat games.",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="DIR", help="(re)write the golden files into DIR")
    group.add_argument("--check", metavar="DIR", help="compare DIR's files with fresh games")
    args = parser.parse_args(argv)
    files = golden_files()
    if args.write:
        out = Path(args.write)
        out.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (out / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(files)} playthroughs to {out}")
        return 0
    stale = []
    for name, text in files.items():
        path = Path(args.check) / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    if stale:
        print(f"out of date: {', '.join(stale)}", file=sys.stderr)
        return 1
    print(f"all {len(files)} playthroughs match")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
