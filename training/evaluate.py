"""Evaluation of a policy against baseline fields, during and after training.

The policy plays ONE seat of an ``n``-player table whose other seats are all the same
baseline (``random``, ``greedy``, ``expert``...). Games come in blocks of ``n`` that share
a deal seed, with the policy's seat rotated through all ``n`` seats (duplicate-style, so
neither the seat nor the deal favours it). Win rates come with Wilson 95% intervals; the
fair share of a seat is ``1/n``.

Two evaluations: :func:`evaluate_agent`, the quick check during training, and
:func:`final_tournament_evaluation`, the end-of-training report, played by the duplicate-deal
tournament harness (:mod:`training.tournament`) with CIs clustered by deal. This module also
draws the learning curve and writes a run's ``report.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agents.adapters.padded import PolicyAgent
from agents.match import GameRecord, play_game
from agents.registry import make_agent
from scat_env import Rules

from .ratings import wilson_ci


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (robust near 0 and 1, unlike the normal one);
    ``(0, 1)`` when nothing was observed."""
    if n == 0:
        return (0.0, 1.0)
    return wilson_ci(wins, n, z)


def duplicate_games(make_learner: Any, rules: Rules, spec: str, n: int, games: int,
                    seed: int = 0) -> Iterator[tuple[int, GameRecord]]:
    """Yield ``(learner's seat, record)`` for the duplicate-deal games of one setting: blocks
    of ``n`` games share a deal seed, the learner's seat rotated through all ``n``. One
    generator so every analysis of "the policy against a baseline field" plays the same
    deals as :func:`evaluate_agent` (``games`` rounded up to a multiple of ``n``)."""
    for b in range(max(1, math.ceil(games / n))):
        deal_seed = seed * 1_000_003 + b * 7919 + n
        for seat in range(n):
            agents = [make_agent(spec, seed=deal_seed + s) for s in range(n)]
            agents[seat] = make_learner(deal_seed + seat)
            yield seat, play_game(agents, rules, seed=deal_seed)


def evaluate_agent(make_learner: Any, rules: Rules, opponents: list[str], player_counts: list[int],
                   games: int, seed: int = 0) -> dict[str, Any]:
    """``make_learner(seed) -> Agent``; ``games`` per (opponent, player count), rounded up to
    a multiple of the player count so every seat is played equally often."""
    win_rate: dict[str, float] = {}
    ci: dict[str, list[float]] = {}
    played: dict[str, int] = {}
    truncated = 0
    for spec in opponents:
        for n in player_counts:
            wins = 0
            total = 0
            for seat, rec in duplicate_games(make_learner, rules, spec, n, games, seed):
                total += 1
                wins += rec.winner == seat
                truncated += rec.truncated
            key = f"{spec}_x{n}"
            win_rate[key] = wins / total
            ci[key] = list(wilson(wins, total))
            played[key] = total
    return {"win_rate": win_rate, "ci95": ci, "games": played, "truncated": truncated,
            "fair_share": {f"x{n}": 1 / n for n in player_counts}}


def evaluate_policy(policy: Any, max_players: int, rules: Rules, opponents: list[str],
                    player_counts: list[int], games: int, seed: int = 0) -> dict[str, Any]:
    """Evaluate a numpy policy (argmax play) with :func:`evaluate_agent`."""
    return evaluate_agent(lambda s: PolicyAgent(policy, max_players, seed=s), rules, opponents,
                          player_counts, games, seed)


def format_report(ev: dict[str, Any], title: str = "Evaluation") -> str:
    """Markdown table: win rate, 95% CI, fair share and ratio to the fair share."""
    lines = [f"## {title}", "", "| opponents | players | games | win rate | 95% CI | fair share | x fair |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for key, rate in ev["win_rate"].items():
        spec, _, n = key.rpartition("_x")
        lo, hi = ev["ci95"][key]
        fair = 1 / int(n)
        lines.append(f"| {spec} | {n} | {ev['games'][key]} | {rate:.3f} | [{lo:.3f}, {hi:.3f}] "
                     f"| {fair:.3f} | {rate / fair:.2f} |")
    return "\n".join(lines) + "\n"


def fair_share_line(ev: dict[str, Any]) -> str:
    """An evaluation in one line, each win rate as a multiple of the fair share (1/n):
    ``random 2p 1.98x, greedy 2p 1.12x fair share``."""
    parts = []
    for key, rate in ev["win_rate"].items():
        spec, _, n = key.rpartition("_x")
        parts.append(f"{spec} {n}p {rate * int(n):.2f}x")
    return ", ".join(parts) + " fair share"


def write_learning_curve(history: list[dict[str, Any]], path: str | Path,
                         final: dict[str, Any] | None = None) -> None:
    """Win rate as a multiple of the fair share against training samples: one panel per
    opponent (each with its own scale, so a field the policy beats at 2x does not squash the
    others), one line per player count with its 95% interval as a band, and the final
    evaluation (duplicate deals, a larger sample) as a point with its interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    # every setting of the final evaluation and of the checks (which may play fewer or
    # other table sizes), in the final evaluation's order
    keys = list(dict.fromkeys(k for ev in ([final] if final else []) + history
                              for k in ev["win_rate"]))
    opponents = list(dict.fromkeys(k.rpartition("_x")[0] for k in keys))
    fig, axes = plt.subplots(1, len(opponents), figsize=(4.2 * len(opponents), 3.8), squeeze=False)
    for ax, opp in zip(axes[0], opponents, strict=True):
        _plot_opponent(ax, history, final, [k for k in keys if k.rpartition("_x")[0] == opp])
        ax.axhline(1.0, color="grey", ls="--", lw=1)
        # from 0 (a panel of the final evaluation alone is not zoomed onto its points), with
        # room for those points, drawn side by side past the last check
        right = ax.dataLim.x1
        ax.set_xlim(0, right * 1.04 if right > 0 else 1)
        ax.set_title(f"vs a field of {opp}", fontsize=10)
        ax.set_xlabel("training samples (learner decisions)")
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("win rate / fair share (1/n); dashed: fair")
    fig.suptitle("Learning curve: bands and bars are 95% intervals; diamonds: final evaluation",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _plot_opponent(ax: Any, history: list[dict[str, Any]], final: dict[str, Any] | None,
                   keys: list[str]) -> None:
    """One panel of :func:`write_learning_curve`: the settings ``keys`` of one opponent."""
    xs = [h["samples"] for h in history]
    x_final = final.get("samples", xs[-1] if xs else 0) if final is not None else 0
    for i, key in enumerate(keys):
        n = int(key.rpartition("_x")[2])
        color = f"C{i}"
        if history:
            ys = [h["win_rate"].get(key, float("nan")) * n for h in history]
            band = [h.get("ci95", {}).get(key, [float("nan")] * 2) for h in history]
            ax.plot(xs, ys, marker=".", color=color, label=f"{n} players")
            ax.fill_between(xs, [lo * n for lo, _ in band], [hi * n for _, hi in band],
                            color=color, alpha=0.15, lw=0)
        if final is not None and key in final["win_rate"]:
            f_lo, f_hi = final["ci95"][key]
            f_y = final["win_rate"][key] * n
            # side by side, so the bars of one opponent's table sizes do not hide each other
            f_x = x_final * (1 + 0.015 * (i - 1)) if x_final else i
            ax.errorbar([f_x], [f_y], yerr=[[f_y - f_lo * n], [f_hi * n - f_y]], fmt="D",
                        color=color, ms=6, capsize=4, mec="black",
                        label=None if history else f"{n} players")
    if final is not None:
        games = max(final["games"].values())
        ax.plot([], [], "D", color="white", mec="black", label=f"final ({games:,} games each)")


def tournament_evaluation(spec: str, opponents: list[str], player_counts: list[int], games: int,
                          out_dir: str | Path, *, seed: int = 0, workers: int = 1,
                          rules: str = "standard") -> dict[str, Any]:
    """Final evaluation with the duplicate-deal tournament harness (:mod:`training.tournament`):
    for each (opponent, n) one table ``[spec] + [opponent] * (n - 1)``, every deal played in
    all ``n`` rotations. Returns the :func:`format_report` dict, CIs clustered by deal."""
    from training.report import summarize, write_report
    from training.tournament import TournamentConfig, run_tournament

    out = Path(out_dir)
    result: dict[str, Any] = {"win_rate": {}, "ci95": {}, "games": {}, "truncated": 0,
                              "fair_share": {f"x{n}": 1 / n for n in player_counts},
                              "harness": "training.tournament (duplicate deals, rotations)"}
    for opp in opponents:
        for n in player_counts:
            key = f"{opp}_x{n}"
            config = TournamentConfig(tables=((spec,) + (opp,) * (n - 1),), games=games,
                                      rules=rules, seed=seed, seating="rotations")
            run = run_tournament(config, out / key, workers=workers, resume=True, progress=False)
            report = summarize(config.to_dict(), run.games)
            write_report(out / key, report, plots=False)
            stats = report["agents"][spec]["win_rate"]
            result["win_rate"][key] = stats["value"]
            result["ci95"][key] = list(stats["ci95"])
            result["games"][key] = len(run.games)
            result["truncated"] += report.get("truncated_games", 0)
    return result


#: The deals of every end-of-training evaluation (``--seed`` of ``python -m training.evaluate``).
FINAL_EVAL_SEED = 999_999


def final_tournament_evaluation(spec: str, opponents: list[str], player_counts: list[int],
                                games: int, folder: str | Path, *, workers: int = 1,
                                rules: str = "standard", log: Any = print) -> dict[str, Any]:
    """The end-of-training report of either trainer: :func:`tournament_evaluation` of
    ``spec`` (``compact:PATH`` or ``sb3:PATH``) into a fresh ``folder``.

    The tournaments are resumable, so a stale folder from an earlier policy is removed
    first: its games must not be mixed in. The fixed seed (:data:`FINAL_EVAL_SEED`) makes
    the final figures of two runs comparable with each other and with
    ``python -m training.evaluate --seed 999999``; the command's default seed 0 deals other
    cards, and a table of one set of deals must not be compared with the other's."""
    import shutil
    import time

    folder = Path(folder)
    if folder.exists():
        shutil.rmtree(folder)
    t0 = time.perf_counter()
    ev = tournament_evaluation(spec, list(opponents), list(player_counts), games, folder,
                               seed=FINAL_EVAL_SEED, workers=workers, rules=rules)
    ev["seconds"] = time.perf_counter() - t0
    log(f"[final eval] {sum(ev['games'].values())} games in {ev['seconds']:.0f} s with "
        f"{workers} worker(s)")
    return ev


def policy_spec(trainer: str, out: str | Path) -> str:
    """The agent spec of the policy ``trainer`` leaves in its run folder ``out``."""
    from .trainers import trainer as find_trainer

    return find_trainer(trainer).policy_spec(Path(out))


def run_report(trainer: str, cfg: Any, out: str | Path, summary: dict[str, Any]) -> str:
    """A run's ``report.md``: what was trained, the final evaluation, the learning curve and
    the commands that play or evaluate the policy."""
    import dataclasses

    import yaml

    out = Path(out)
    spec = policy_spec(trainer, out)
    speed = summary.get("samples_per_s_since_start")
    lines = [f"# Training report: {cfg.name} ({trainer} trainer)", "",
             f"Trained for {summary.get('elapsed_s', 0):,.0f} s: {summary.get('samples', 0):,} "
             "learner samples"
             + (f", {summary['env_steps']:,} moves at the tables" if "env_steps" in summary else "")
             + (f"; {speed:,.0f} samples/s since the run (re)started." if speed else "."), ""]
    if "final_eval" in summary:
        final = summary["final_eval"]
        lines.append(format_report(final, "Final evaluation").rstrip("\n"))
        lines += ["", f"The policy in one seat, every other seat one baseline; "
                  f"{sum(final['games'].values()):,} games on duplicate deals from seed "
                  f"{FINAL_EVAL_SEED}, every deal in all seat rotations; 95% CIs clustered by "
                  f"deal; {final.get('truncated', 0)} truncated games"
                  + (f"; {final['seconds']:,.0f} s." if "seconds" in final else "."), ""]
    if (out / "learning_curve.png").exists():
        lines += ["## Learning curve", "", "![learning curve](learning_curve.png)", ""]
    last = summary.get("last_update")
    if last:  # the batched trainer's PPO statistics (training.batch_ppo.UPDATE_STATS)
        lines += ["## Last update", "", "| " + " | ".join(last) + " |",
                  "| " + " | ".join("---" for _ in last) + " |",
                  "| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else f"{v:,}"
                                    for v in last.values()) + " |", "",
                  "Every update's figures: `summary.json` (`losses`) and TensorBoard (`tb/`).",
                  ""]
    sizes = list(getattr(cfg, "eval_players", None) or [3])
    players = max(sizes)
    field_ = ",".join([spec] + ["expert"] * (players - 1))
    lines += ["## Next", "", "```sh",
              f"scat play --players {players} --opponents {spec}        # play against it",
              f"python -m training.evaluate {spec} --players {','.join(map(str, sizes))} "
              f"--out {out / 'evaluation'}   # a larger evaluation",
              f"scat tournament --field {field_} --out {out / 'vs_expert'}"]
    if (out / "tb").is_dir():
        lines.append(f"tensorboard --logdir {out / 'tb'}")
    lines += ["```", "",
              "## Config", "", "```yaml",
              yaml.safe_dump({"trainer": trainer, **dataclasses.asdict(cfg)}, sort_keys=False,
                             default_flow_style=None).rstrip(),
              "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m training.evaluate SPEC``: the shipped-policy evaluation (tournament)."""
    import argparse
    import json
    import time

    p = argparse.ArgumentParser(prog="python -m training.evaluate", description=main.__doc__)
    p.add_argument("spec", help="agent spec to evaluate, e.g. compact:scat_batch_set")
    p.add_argument("--opponents", default="expert,greedy,random")
    p.add_argument("--players", default="2,3,4")
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", required=True, help="folder for the tournaments and evaluation.md")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    ev = tournament_evaluation(args.spec, args.opponents.split(","),
                               [int(x) for x in args.players.split(",")], args.games, args.out,
                               seed=args.seed, workers=args.workers)
    ev["seconds"] = time.perf_counter() - t0
    out = Path(args.out)
    (out / "evaluation.json").write_text(json.dumps(ev, indent=2))
    text = format_report(ev, f"Evaluation of `{args.spec}`: one seat vs a field of one baseline")
    text += (f"\n{sum(ev['games'].values())} games, duplicate deals (seed {args.seed}), every deal "
             f"in all seat rotations; 95% CIs clustered by deal; {ev['truncated']} truncated games; "
             f"{ev['seconds']:.0f} s with {args.workers} workers.\n")
    (out / "evaluation.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
