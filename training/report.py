"""Tournament reports: per-agent statistics, a Markdown table, JSON and PNG plots.

:func:`summarize` turns game records (see :mod:`training.tournament`) into one
deterministic dict: the same games give the same bytes of ``results.json`` (no timestamps,
no timings, floats rounded, keys sorted). Timing lives in ``timing.json`` beside it.

Statistics, per agent spec (a spec that fills several seats counts once per seat):

- ``win_rate``: games won / seat-games (the fair share is 1/players);
- ``lives_per_hand``: lives lost per hand dealt in;
- ``knock_rate``: knocks per hand dealt in; ``knock_success``: fraction of its knocks after
  which it lost no life;
- ``thirty_one_rate``: 31s declared in play per hand; ``dealt_31_rate``: 31s dealt;
- ``showdown_value``: mean hand value at a showdown (hands ended by a knock or by the
  stock running out);
- ``mean_place``: mean finishing place (1 = winner; the elimination order, the ranks the
  ratings use).

Every interval is a 95% interval that treats the deal as a cluster: the games of a deal
share its cards, so they are not independent. Proportions (``win_rate``, ``knock_rate``,
``knock_success``, the 31 rates) use a Wilson interval on the design-effect-adjusted sample
size (:func:`training.ratings.cluster_wilson_ci`); means (``lives_per_hand``,
``showdown_value``) use the cluster-robust delta-method normal interval
(:func:`training.ratings.cluster_ratio_ci`). ``win_rate`` also carries the naive Wilson
interval (games taken as independent) for comparison.

Ratings need OpenSkill and the plots matplotlib, optional extras (``ratings``, ``plots``)
imported only when used. Without OpenSkill the report leaves the ratings out and says so in
one line (``results.json``'s ``ratings_missing``, a line of ``results.md``); without
matplotlib :func:`write_report` writes every file but the plots (:data:`PLOTS_MISSING` is
the line a caller shows). With both installed the files are exactly as before.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from .ratings import (
    RATINGS_MISSING,
    ExtraMissing,
    cluster_ratio_ci,
    cluster_sums,
    cluster_wilson_ci,
    openskill_ratings,
    places_from_results,
    wilson_ci,
)

SHOWDOWN_REASONS = ("knock", "second_knock", "stock_exhausted", "hammer", "throw_down")
RESULTS_FILE = "results.json"
TIMING_FILE = "timing.json"
MARKDOWN_FILE = "results.md"
WINRATE_PNG = "winrate.png"
RATINGS_PNG = "ratings.png"
#: What a report's writer says, in one line, when the plots are left out for want of
#: matplotlib.
PLOTS_MISSING = "plots need the plots extra: pip install 'scat-env[plots]'"

_COUNTERS = (
    "seat_games", "wins", "hands", "lives_lost", "knocks", "knock_safe",
    "declared_31", "dealt_31", "showdown_value", "showdowns", "place",
)
# statistic -> (numerator counter, denominator counter, bounds)
_RATIOS: dict[str, tuple[str, str, tuple[float, float] | None]] = {
    "win_rate": ("wins", "seat_games", (0.0, 1.0)),
    "lives_per_hand": ("lives_lost", "hands", (0.0, math.inf)),
    "knock_rate": ("knocks", "hands", (0.0, 1.0)),
    "knock_success": ("knock_safe", "knocks", (0.0, 1.0)),
    "thirty_one_rate": ("declared_31", "hands", (0.0, 1.0)),
    "dealt_31_rate": ("dealt_31", "hands", (0.0, 1.0)),
    "showdown_value": ("showdown_value", "showdowns", None),
    "mean_place": ("place", "seat_games", None),
}


def _round(x: float, digits: int = 6) -> float | None:
    """JSON-safe, stable float: NaN becomes null; rounding hides nothing at 6 digits."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), digits)


def game_places(game: dict[str, Any]) -> list[int]:
    n = len(game["seats"])
    lives_end = game["lives_end"] or [0] * n
    return places_from_results(n, [h["eliminated"] for h in game["hands"]], lives_end)


def _seat_counts(game: dict[str, Any], seat: int, place: int) -> dict[str, float]:
    c = dict.fromkeys(_COUNTERS, 0.0)
    c["seat_games"] = 1
    c["place"] = place
    c["wins"] = 1 if game["winner"] == seat else 0
    for h in game["hands"]:
        value = h["values"][seat]
        if value is None:
            continue  # not dealt in (already out)
        c["hands"] += 1
        lost = h["lives_lost"][seat] or 0
        c["lives_lost"] += lost
        if h["knocker"] == seat:
            c["knocks"] += 1
            c["knock_safe"] += lost == 0
        if seat in h["declarers"]:
            if h["reason"] == "thirty_one":
                c["declared_31"] += 1
            elif h["reason"] == "dealt_thirty_one":
                c["dealt_31"] += 1
        if h["reason"] in SHOWDOWN_REASONS:
            c["showdown_value"] += value
            c["showdowns"] += 1
    return c


def agent_stats(games: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-spec totals and ratio statistics with cluster-robust 95% intervals."""
    # spec -> deal -> counter -> sum
    per: dict[str, dict[int, dict[str, float]]] = defaultdict(
        lambda: defaultdict(lambda: dict.fromkeys(_COUNTERS, 0.0))
    )
    for g in games:
        places = game_places(g)
        for seat, spec in enumerate(g["seats"]):
            acc = per[spec][g["deal"]]
            for k, v in _seat_counts(g, seat, places[seat]).items():
                acc[k] += v
    out: dict[str, dict[str, Any]] = {}
    for spec in sorted(per):
        deals = per[spec]
        totals = {k: sum(d[k] for d in deals.values()) for k in _COUNTERS}
        stats: dict[str, Any] = {
            "totals": {k: _round(v) for k, v in totals.items()},
            "deals": len(deals),
        }
        for name, (num, den, bounds) in _RATIOS.items():
            sums = cluster_sums((d, deals[d][num], deals[d][den]) for d in deals)
            if bounds == (0.0, 1.0):
                est, low, high = cluster_wilson_ci(sums)
            else:
                est, low, high = cluster_ratio_ci(sums, bounds=bounds)
            stats[name] = {"value": _round(est), "ci95": [_round(low), _round(high)]}
        lo, hi = wilson_ci(totals["wins"], totals["seat_games"])
        stats["win_rate"]["wilson95"] = [_round(lo), _round(hi)]
        out[spec] = stats
    return out


def table_stats(games: list[dict[str, Any]], tables: list[list[str]]) -> list[dict[str, Any]]:
    """Win rate of each spec at each table (head-to-head results of a round-robin)."""
    out = []
    for t, lineup in enumerate(tables):
        tg = [g for g in games if g["table"] == t]
        wins: dict[str, int] = defaultdict(int)
        seats: dict[str, int] = defaultdict(int)
        for g in tg:
            for s, spec in enumerate(g["seats"]):
                seats[spec] += 1
                wins[spec] += g["winner"] == s
        out.append({
            "lineup": list(lineup),
            "games": len(tg),
            "win_rate": {spec: _round(wins[spec] / seats[spec]) for spec in sorted(seats)},
        })
    return out


def summarize(config: dict[str, Any], games: list[dict[str, Any]]) -> dict[str, Any]:
    """The deterministic results document of a tournament (``results.json``)."""
    games = sorted(games, key=lambda g: (g["deal"], g["table"], g["seating"]))
    try:
        ratings = openskill_ratings((g["seats"], game_places(g)) for g in games)
        missing = {}
    except ExtraMissing:
        ratings, missing = {}, {"ratings_missing": RATINGS_MISSING}
    n_hands = sum(len(g["hands"]) for g in games)
    return {
        **missing,
        "config": config,
        "games": len(games),
        "hands": n_hands,
        "truncated_games": sum(1 for g in games if g["truncated"]),
        "mean_hands_per_game": _round(n_hands / len(games)) if games else None,
        "mean_decisions_per_game": (
            _round(sum(g["decisions"] for g in games) / len(games)) if games else None
        ),
        "fair_win_rate": _round(1 / config["num_players"]),
        "interval": "95%, clustered by deal: proportions use a Wilson interval on the "
                    "design-effect-adjusted sample size, means a cluster-robust delta-method "
                    "normal interval; win_rate.wilson95 is the naive Wilson interval",
        "agents": agent_stats(games),
        "tables": table_stats(games, config["tables"]),
        "ratings": {
            spec: {k: (_round(v, 3) if k != "games" else v) for k, v in r.items()}
            for spec, r in ratings.items()
        },
        "rating_model": "openskill PlackettLuce, ranks = elimination order, "
                        "games in (deal, table, seating) order; ordinal = mu - 3 sigma; "
                        "games with one spec in several seats are not rated",
    }


# -- rendering -----------------------------------------------------------------------------
def percent(stat: dict[str, Any], ci: bool = True) -> str:
    """A proportion as ``"41.2% [39.0, 43.4]"`` (``ci``: with its interval, where it has one),
    ``"-"`` when it has no value. Shared by results.md and ``scat tournament``'s table."""
    v, (lo, hi) = stat["value"], stat["ci95"]
    if v is None:
        return "-"
    if ci and lo is not None:
        return f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
    return f"{100 * v:.1f}%"


def number(stat: dict[str, Any], ci: bool = False, digits: int = 3) -> str:
    """A statistic with ``digits`` decimals (``ci``: with its interval), ``"-"`` when none."""
    v, (lo, hi) = stat["value"], stat["ci95"]
    if v is None:
        return "-"
    if ci and lo is not None:
        return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"
    return f"{v:.{digits}f}"


def ranked_specs(summary: dict[str, Any]) -> list[str]:
    """Agents best first: by win rate, then rating ordinal, then name."""
    agents, ratings = summary["agents"], summary["ratings"]
    return sorted(
        agents,
        key=lambda s: (-(agents[s]["win_rate"]["value"] or 0),
                       -(ratings.get(s, {}).get("ordinal") or -math.inf), s),
    )


def markdown(summary: dict[str, Any]) -> str:
    """The results as Markdown tables (the README's format)."""
    cfg = summary["config"]
    mode = "single hands" if cfg["single_hand"] else "games"
    lines = [
        f"{summary['games']} {mode}, {cfg['num_players']} players, rules `{cfg['rules']}`, "
        f"seed {cfg['seed']}, {len(cfg['tables'])} table(s) x {cfg['deals_per_table']} "
        f"duplicate deals, seating `{cfg['seating']}`; fair win rate "
        f"{100 * summary['fair_win_rate']:.1f}%. Brackets: 95% intervals clustered by deal.",
        "",
        "| agent | win rate [95% CI] | lives lost / hand [95% CI] | knock rate "
        "| knock success | 31 declared / hand | 31 dealt / hand | showdown value "
        "| mean place | rating mu ± sigma | ordinal |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for spec in ranked_specs(summary):
        a = summary["agents"][spec]
        r = summary["ratings"].get(spec, {})
        lines.append(
            f"| `{spec}` | {percent(a['win_rate'])} | {number(a['lives_per_hand'], ci=True)} "
            f"| {percent(a['knock_rate'], ci=False)} "
            f"| {percent(a['knock_success'], ci=False)} "
            f"| {number(a['thirty_one_rate'], digits=4)} | {number(a['dealt_31_rate'], digits=4)} "
            f"| {number(a['showdown_value'], digits=2)} | {number(a['mean_place'], digits=2)} "
            + (f"| {r['mu']:.2f} ± {r['sigma']:.2f} | {r['ordinal']:.2f} |" if r
               else "| - | - |")
        )
    if len(summary["tables"]) > 1:
        lines += ["", "Win rate at each table (round-robin):", ""]
        specs = ranked_specs(summary)
        lines.append("| table | games | " + " | ".join(f"`{s}`" for s in specs) + " |")
        lines.append("|---|---|" + "---|" * len(specs))
        for t in summary["tables"]:
            cells = [
                f"{100 * t['win_rate'][s]:.1f}%" if s in t["win_rate"] else ""
                for s in specs
            ]
            lines.append(f"| {', '.join(t['lineup'])} | {t['games']} | " + " | ".join(cells) + " |")
    if summary.get("ratings_missing"):
        lines += ["", summary["ratings_missing"]]
    elif not summary["ratings"]:
        lines += ["", "No ratings: every table seats one spec more than once (see win rates)."]
    lines += [
        "",
        f"Hands: {summary['hands']} ({summary['mean_hands_per_game']:.2f} per game); "
        f"truncated games: {summary['truncated_games']}.",
    ]
    return "\n".join(lines) + "\n"


def plot_win_rates(summary: dict[str, Any], path: Path | io.BytesIO) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = ranked_specs(summary)
    vals = [summary["agents"][s]["win_rate"]["value"] or 0.0 for s in specs]
    lows = [summary["agents"][s]["win_rate"]["ci95"][0] for s in specs]
    highs = [summary["agents"][s]["win_rate"]["ci95"][1] for s in specs]
    err = [
        [v - (lo if lo is not None else v) for v, lo in zip(vals, lows, strict=True)],
        [(hi if hi is not None else v) - v for v, hi in zip(vals, highs, strict=True)],
    ]
    fig, ax = plt.subplots(figsize=(1.6 + 1.2 * len(specs), 3.6))
    ax.bar(range(len(specs)), [100 * v for v in vals], color="#4c72b0",
           yerr=[[100 * e for e in err[0]], [100 * e for e in err[1]]], capsize=6)
    ax.axhline(100 * summary["fair_win_rate"], color="grey", linestyle="--", linewidth=1,
               label=f"fair share ({100 * summary['fair_win_rate']:.1f}%)")
    ax.set_xticks(range(len(specs)), specs, rotation=20, ha="right")
    ax.set_ylabel("game win rate (%)")
    cfg = summary["config"]
    ax.set_title(f"{cfg['num_players']} players, {summary['games']} games, 95% CI (by deal)",
                 fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png", metadata={"Software": None})
    plt.close(fig)


def plot_ratings(summary: dict[str, Any], path: Path | io.BytesIO) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = [s for s in ranked_specs(summary) if s in summary["ratings"]][::-1]
    mus = [summary["ratings"][s]["mu"] for s in specs]
    sig = [3 * summary["ratings"][s]["sigma"] for s in specs]
    fig, ax = plt.subplots(figsize=(6, 1.2 + 0.5 * len(specs)))
    ax.errorbar(mus, range(len(specs)), xerr=sig, fmt="o", color="#dd8452", capsize=5)
    ax.set_yticks(range(len(specs)), specs)
    ax.set_xlabel("OpenSkill Plackett-Luce mu (bars: ± 3 sigma)")
    ax.set_title("ratings", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png", metadata={"Software": None})
    plt.close(fig)


# -- files ---------------------------------------------------------------------------------
#: What the temporary file of :func:`write_atomic` is called: ``.NAME.<random>.tmp`` beside
#: ``NAME``, unique, so two writers never share one, and recognisable, so the next run in a
#: folder (holding its lock) can sweep up what a killed run left (:func:`stale_temp_files`).
TEMP_SUFFIX = ".tmp"


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is out: a write may take only part of the buffer (a
    signal, a nearly full disk), and a short write must not pass for a whole one."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write ``path`` whole or not at all: into a unique temporary file beside it, then
    ``os.replace``. A reader (or a later run) sees the old file or the new one, never half a
    file; on any failure (a full disk, a read-only folder, Ctrl-C) the temporary file is
    removed and the error names ``path`` itself (an ``OSError`` carries it as ``filename``).

    Not fsync'ed: this guards against the process dying, not the machine losing power."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
        try:
            write_all(fd, payload)
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; results are for sharing
        finally:
            os.close(fd)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def stale_temp_files(folder: Path, names: tuple[str, ...]) -> list[Path]:
    """Temporary files of :func:`write_atomic` for ``names`` in ``folder`` (left by a run that
    was killed mid-write), and the fixed-name ``NAME.tmp`` files earlier versions used.
    Only call this while holding the folder's lock: then no writer of them is alive."""
    found = []
    for p in folder.iterdir():
        for name in names:
            if p.name == name + TEMP_SUFFIX or (
                p.name.startswith(f".{name}.") and p.name.endswith(TEMP_SUFFIX)
            ):
                found.append(p)
                break
    return found


def plots_available() -> bool:
    """Whether matplotlib can be imported (the ``plots`` extra), without importing it."""
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is not None
    except ValueError:  # a module object without a spec stands in for it
        return True


def _png(plot: Any, summary: dict[str, Any], path: Path) -> None:
    """Render a plot to memory, then write it atomically (never half a PNG on disk)."""
    buffer = io.BytesIO()
    plot(summary, buffer)
    write_atomic(path, buffer.getvalue())


#: Every file :func:`write_report` may write.
REPORT_FILES = (RESULTS_FILE, MARKDOWN_FILE, TIMING_FILE, WINRATE_PNG, RATINGS_PNG)


def write_report(
    out_dir: str | Path,
    summary: dict[str, Any],
    timing: dict[str, Any] | None = None,
    plots: bool = True,
) -> dict[str, Path]:
    """Write results.json, results.md, timing.json and the PNG plots; return their paths.
    Each file is written atomically (:func:`write_atomic`). Without matplotlib the plots are
    left out (:func:`plots_available`; the caller says :data:`PLOTS_MISSING`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / RESULTS_FILE, "markdown": out / MARKDOWN_FILE}
    write_atomic(paths["json"], json.dumps(summary, indent=2, sort_keys=True) + "\n")
    write_atomic(paths["markdown"], markdown(summary))
    if timing is not None:
        paths["timing"] = out / TIMING_FILE
        write_atomic(paths["timing"], json.dumps(timing, indent=2, sort_keys=True) + "\n")
    if plots and plots_available():
        paths["winrate_png"] = out / WINRATE_PNG
        _png(plot_win_rates, summary, paths["winrate_png"])
        if summary["ratings"]:  # none when every table repeats a spec
            paths["ratings_png"] = out / RATINGS_PNG
            _png(plot_ratings, summary, paths["ratings_png"])
    return paths


def write_between_markers(path: Path, marker: str, text: str) -> None:
    """Replace what lies between a document's two ``<!-- marker -->`` lines with ``text``:
    how a model card's generated tables are written (``scripts/*_table.py``), so a figure is
    a script's output, never typed in. ``ValueError`` unless there is exactly one pair."""
    mark = f"<!-- {marker} -->"
    doc = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(mark) + r".*?" + re.escape(mark), re.S)
    if len(pattern.findall(doc)) != 1:
        raise ValueError(f"{path}: wants one pair of {mark} markers")
    path.write_text(pattern.sub(lambda _: f"{mark}\n{text}\n{mark}", doc), encoding="utf-8")
