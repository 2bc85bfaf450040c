"""``scripts/preset_table.py``: the model card's preset table is the script's output.

- A cell is the batched duplicate-deal evaluation of the seated player; any worker count
  gives the same figures.
- The card's table is replaced between its markers, the rest of the card kept; a card
  without the markers is refused.
- Bad arguments are one line and exit status 2.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("preset_table", REPO / "scripts" /
                                                  "preset_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_table_is_written_between_the_cards_markers(tmp_path, capsys):
    script = _script()
    card = tmp_path / "card.md"
    card.write_text("# Card\n\n<!-- preset-table -->\nSTALE\n<!-- preset-table -->\n\nkept\n")
    out = tmp_path / "cells.json"
    args = ["--presets", "standard,golf", "--players", "3", "--games", "12", "--spec",
            "expert", "--opponent", "greedy", "--json", str(out), "--card", str(card)]
    assert script.main(args) == 0
    text = card.read_text()
    assert "STALE" not in text and text.endswith("\n\nkept\n")
    assert "| `golf` | golf | `expert` " in text and "of 2 measured cells clear 1.0x" in text
    cells = json.loads(out.read_text())["cells"]
    assert set(cells) == {"standard", "golf"} and cells["golf"]["3"]["games"] == 12
    assert cells["golf"]["3"]["spec"] == "expert" and not cells["golf"]["3"]["learned"]
    # the card again from the figures file alone, measuring nothing
    card.write_text("<!-- preset-table -->\n<!-- preset-table -->\n")
    assert script.main(["--from-json", str(out), "--card", str(card)]) == 0
    assert card.read_text().strip("\n").split("\n")[1:-1] == text.split("\n")[3:-4]
    assert "--seed 20261128 --presets standard,golf --spec expert --opponent greedy`" in text
    assert script.main(["--from-json", str(card)]) == 2
    capsys.readouterr()
    # the same cells from two worker processes
    assert script.main([*args[:-2], "--workers", "2"]) == 0
    again = json.loads(out.read_text())["cells"]
    assert again["golf"]["3"]["win_rate"] == cells["golf"]["3"]["win_rate"]
    assert again["standard"]["3"]["win_rate"] == cells["standard"]["3"]["win_rate"]


def test_a_confirmed_cell_is_the_seated_players_figure_on_fresh_deals(tmp_path, capsys):
    """``--confirm-games``: the seat is chosen on the screening's deals, and its figure is
    measured again on deals of the next seed (the best of several noisy figures is biased
    upward): the confirmed figure is what a plain run on that seed measures, and the
    screening's stays beside it."""
    script = _script()
    base = ["--presets", "standard", "--players", "3", "--spec", "expert", "--opponent",
            "greedy"]
    out, plain = tmp_path / "confirmed.json", tmp_path / "plain.json"
    card = tmp_path / "card.md"
    card.write_text("<!-- preset-table -->\n<!-- preset-table -->\n")
    assert script.main([*base, "--games", "12", "--seed", "5", "--confirm-games", "30",
                        "--json", str(out), "--card", str(card)]) == 0
    assert script.main([*base, "--games", "30", "--seed", "6", "--json", str(plain)]) == 0
    capsys.readouterr()
    cell = json.loads(out.read_text())["cells"]["standard"]["3"]
    want = json.loads(plain.read_text())["cells"]["standard"]["3"]
    assert cell["games"] == want["games"] == 30 and cell["screened"]["games"] == 12
    assert cell["win_rate"] == want["win_rate"] and cell["ci95"] == want["ci95"]
    text = card.read_text()
    assert "--confirm-games 30`" in text and "measured again on 30 or more games" in text


def test_an_update_measures_its_presets_again_and_keeps_the_rest(tmp_path, capsys):
    """``--update``: the presets named are measured again (each cell's deals come from the
    seed alone, so an unchanged player measures the same), every other cell is kept, and the
    file names the whole command, whose output it is. A file of another command, or a kept
    cell now played by other candidates, is refused in one line."""
    script = _script()
    out = tmp_path / "cells.json"
    base = ["--players", "3", "--games", "12", "--candidates", "compact:scat_rules", "--json",
            str(out)]
    assert script.main(["--presets", "standard,golf", *base]) == 0
    first = json.loads(out.read_text())
    whole = first["command"].replace(" --presets standard,golf", "")
    first["cells"]["standard"]["3"]["seconds"] = -1.0  # a kept cell is not measured again
    out.write_text(json.dumps({**first, "command": whole}))  # as the whole command wrote it
    assert script.main(["--update", "--presets", "golf", *base]) == 0
    again = json.loads(out.read_text())
    assert again["command"] == whole and list(again["cells"]) == ["standard", "golf"]
    assert again["cells"]["standard"] == first["cells"]["standard"]
    golf, was = again["cells"]["golf"]["3"], first["cells"]["golf"]["3"]
    assert golf["win_rate"] == was["win_rate"] and golf["seconds"] >= 0
    capsys.readouterr()
    # another command's file (another candidate in place of one measured there)
    other = [*base[:-3], "compact:scat_golf", *base[-2:]]
    assert script.main(["--update", "--presets", "golf", *other]) == 2
    assert "was written by `" in capsys.readouterr().err
    # a candidate added at the end that plays a kept cell must measure it too
    added = [*base[:-3], "compact:scat_rules,compact:scat_batch_set", *base[-2:]]
    assert script.main(["--update", "--presets", "golf", *added]) == 2
    assert "standard at 3 players is now played by" in capsys.readouterr().err
    # one that plays only the presets measured again joins, and the file names it
    added = [*base[:-3], "compact:scat_rules,compact:scat_golf", *base[-2:]]
    assert script.main(["--update", "--presets", "golf", *added]) == 0
    capsys.readouterr()
    joined = json.loads(out.read_text())
    assert joined["command"] == whole.replace("compact:scat_rules",
                                              "compact:scat_rules,compact:scat_golf")
    assert joined["cells"]["standard"] == first["cells"]["standard"]
    assert set(joined["cells"]["golf"]["3"]["candidates"]) == {"compact:scat_rules",
                                                               "compact:scat_golf"}
    again = json.loads(out.read_text())
    again["cells"]["standard"]["3"]["candidates"] = {"expert": {}}
    out.write_text(json.dumps(again))
    assert script.main(["--update", "--presets", "golf", *added]) == 2
    err = capsys.readouterr().err
    assert "standard at 3 players is now played by ['compact:scat_rules']" in err
    assert err.count("\n") == 1
    assert script.main(["--update", "--presets", "golf", "--players", "3"]) == 2
    assert "--update wants --json, --presets and --candidates" in capsys.readouterr().err


def test_a_card_without_markers_is_refused(tmp_path):
    card = tmp_path / "card.md"
    card.write_text("# Card\n")
    with pytest.raises(ValueError, match="wants one pair of <!-- preset-table --> markers"):
        _script().write_card(card, "table")


@pytest.mark.parametrize("args, message", [
    (["--presets", "no_such"], "unknown preset 'no_such'"),
    (["--games", "0"], "--games and --workers must be at least 1"),
    (["--confirm-games", "-1"], "--confirm-games must be at least 0"),
])
def test_bad_arguments_are_one_line_and_status_2(args, message, capsys):
    assert _script().main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_family_member_is_a_candidate_on_its_family_alone():
    """``compact:scat_golf`` reads the rules, so it would play a standard table, but it
    learned golf alone: measured there, never elsewhere; the every-preset policy and the
    standard game's set stay candidates wherever they play."""
    from argparse import Namespace

    script = _script()
    args = Namespace(spec=None, candidates="compact:scat_batch_set,compact:scat_rules,"
                                           "compact:scat_golf,compact:scat_gin,"
                                           "compact:scat_calls,compact:scat_points,"
                                           "compact:scat_lives_set,compact:scat_calls_b,"
                                           "compact:scat_calls_c,compact:scat_gin_italian,"
                                           "compact:scat_calls_avg,compact:scat_calls_set")
    assert script._players(args, "golf", 3) == ["compact:scat_rules", "compact:scat_golf"]
    # gin's member, and the run on gin and the Italian pack together
    assert script._players(args, "gin", 6) == ["compact:scat_rules", "compact:scat_gin",
                                               "compact:scat_gin_italian"]
    assert script._players(args, "italian", 3) == [
        "compact:scat_batch_set", "compact:scat_rules", "compact:scat_lives_set",
        "compact:scat_gin_italian"]
    # the calls' four members and their set learned five of the calls presets: Moyer's and
    # sudden death's tables are not among them
    assert script._players(args, "throw_down_any", 3) == [
        "compact:scat_rules", "compact:scat_calls", "compact:scat_calls_b",
        "compact:scat_calls_c", "compact:scat_calls_avg", "compact:scat_calls_set"]
    assert script._players(args, "moyer", 3) == ["compact:scat_rules"]
    # the knock and lives options' set learned ten presets, Moyer's second knock among them
    assert script._players(args, "moyer_second_knock", 6) == [
        "compact:scat_batch_set", "compact:scat_rules", "compact:scat_calls",
        "compact:scat_lives_set", "compact:scat_calls_b", "compact:scat_calls_c",
        "compact:scat_calls_avg", "compact:scat_calls_set"]
    assert script._players(args, "ride_the_bus", 3) == [
        "compact:scat_batch_set", "compact:scat_rules", "compact:scat_lives_set"]
    # the points races' member learned French Canadian and Jacobs' race alone
    assert script._players(args, "french_canadian_jacobs", 6) == ["compact:scat_rules",
                                                                  "compact:scat_points"]
    assert script._players(args, "standard", 6) == ["compact:scat_batch_set",
                                                    "compact:scat_rules"]


def test_the_shipped_figures_seat_the_best_measured_player_and_the_game_seats_it():
    """``policies/presets.json``: each table's seat is its best measured candidate (or
    ``expert`` where none beat its fair share), and that is who ``scat play`` seats."""
    from scat_env import Rules
    from scat_env.rules import PRESETS
    from scat_session.seating import default_opponent

    data = json.loads((REPO / "policies" / "presets.json").read_text())
    assert set(data["cells"]) == set(PRESETS) and data["opponent"] == "expert"
    for preset, row in data["cells"].items():
        for size, cell in row.items():
            found = cell["candidates"]
            best = max(found, key=lambda s: found[s]["x_fair"])
            want = best if found[best]["x_fair"] >= 1.0 else "expert"
            assert cell["spec"] == want, (preset, size)
            assert min(c["games"] for c in found.values()) >= 2000
            assert default_opponent(int(size), Rules.preset(preset)) == want, (preset, size)


def test_a_table_no_policy_beats_seats_expert():
    """Where no candidate beats its fair share against ``expert``, ``expert`` sits (its
    figure against itself is 1x by construction, not measured)."""
    cells = {"compact:a": {"x_fair": 0.53, "x_fair_ci95": [0.47, 0.6], "games": 2004},
             "compact:b": {"x_fair": 0.9, "x_fair_ci95": [0.8, 1.0], "games": 2004}}
    seat = _script().seat_best(cells)
    assert seat["spec"] == "expert" and seat["games"] == 0 and seat["x_fair"] == 1.0
    assert set(seat["candidates"]) == {"compact:a", "compact:b"}


def test_a_confirmed_figure_the_bar_falls_inside_is_measured_once_more(tmp_path, capsys):
    """``--confirm-more``: a seated cell whose confirmed interval holds the bar is measured
    again on more games of the confirmation's seed (its deals the first among them), the
    figure it had kept under ``first_confirm``; one clearly above or below, or measured so
    already, is left as it is."""
    from argparse import Namespace

    script = _script()
    jobs = []

    def measure(batch, workers):
        jobs.extend(batch)
        return [dict(games=job[3], deals=job[3] // 3, win_rate=0.4, ci95=[0.39, 0.41],
                     x_fair=1.2, x_fair_ci95=[1.19, 1.21], seconds=1.0) for job in batch]

    def seated(lo, hi, games=10002):
        return {"spec": "compact:p", "learned": True, "games": games, "x_fair": (lo + hi) / 2,
                "x_fair_ci95": [lo, hi], "screened": {"games": 2001}}

    table = {"a": {"3": seated(1.24, 1.30), "6": seated(1.26, 1.30)},
             "b": {"3": seated(1.10, 1.20), "6": seated(1.20, 1.27, games=40002)}}
    script.measure_cells = measure
    args = Namespace(confirm_more=[40000], seed=7, opponent="expert", workers=2)
    script.confirm_more(table, args, 1.25)
    assert jobs == [("compact:p", "a", 3, 40000, 8, "expert")]
    assert table["a"]["3"]["games"] == 40000 and table["a"]["3"]["x_fair"] == 1.2
    assert table["a"]["3"]["first_confirm"] == {"games": 10002, "x_fair": 1.27,
                                                "x_fair_ci95": [1.24, 1.30]}
    assert "first_confirm" not in table["a"]["6"] and table["b"]["6"]["games"] == 40002
    text = script.markdown(table, [3, 6], "cmd")
    assert ("Each seated figure was measured again on 10,002 or more games" in text
            and "The 1 whose interval then held 1.25x were measured once more, on 40,000 "
            "games or more" in text)
    capsys.readouterr()


def test_the_second_stage_updates_a_file_written_without_it(tmp_path, capsys):
    """A figures file written without ``--confirm-more`` is the first stage of the command
    with it: ``--update`` with the option measures the presets named, and takes every
    undecided cell of the file, kept or new, to the second stage (and, given a second count,
    from a file written with the first alone, to the third); its file names the whole
    command. The option must follow a confirmation with fewer games."""
    script = _script()
    out = tmp_path / "cells.json"
    base = ["--players", "3", "--games", "12", "--seed", "5", "--candidates",
            "compact:scat_rules", "--opponent", "greedy", "--confirm-games", "15", "--json",
            str(out)]
    assert script.main(["--presets", "standard,hammer", *base]) == 0
    first = json.loads(out.read_text())
    whole = first["command"].replace(" --presets standard,hammer", "")
    out.write_text(json.dumps({**first, "command": whole}))
    held = {p for p, row in first["cells"].items()
            if row["3"]["x_fair_ci95"][0] <= 1.0 <= row["3"]["x_fair_ci95"][1]}
    assert held == {"standard", "hammer"}  # 15 games decide nothing (bar: 1x against greedy)
    assert script.main(["--update", "--presets", "hammer", *base, "--confirm-more", "30"]) == 0
    again = json.loads(out.read_text())
    assert again["command"] == whole + " --confirm-more 30" and again["confirm_more"] == [30]
    for preset in ("standard", "hammer"):
        cell = again["cells"][preset]["3"]
        assert cell["games"] == 30 and cell["first_confirm"]["games"] == 15, preset
    # a third stage: the file just written is the command without it
    assert script.main(["--update", "--presets", "hammer", *base, "--confirm-more", "30,60"]) == 0
    third = json.loads(out.read_text())
    assert third["command"] == whole + " --confirm-more 30,60"
    for preset in ("standard", "hammer"):
        cell = third["cells"][preset]["3"]
        assert cell["games"] == 60 and cell["second_confirm"]["games"] == 30, preset
        assert cell["first_confirm"]["games"] == 15, preset
    plain = tmp_path / "plain.json"
    assert script.main(["--presets", "standard", "--players", "3", "--games", "30", "--seed",
                        "6", "--spec", "compact:scat_rules", "--opponent", "greedy", "--json",
                        str(plain)]) == 0
    want = json.loads(plain.read_text())["cells"]["standard"]["3"]
    assert again["cells"]["standard"]["3"]["win_rate"] == want["win_rate"]
    capsys.readouterr()
    for bad in (["--confirm-more", "30"], ["--confirm-games", "30", "--confirm-more", "30"]):
        assert script.main(["--presets", "standard", *bad]) == 2
        err = capsys.readouterr().err
        assert "--confirm-more must be 0, or more than --confirm-games" in err
        assert err.count("\n") == 1
    for bad in ("40000,40000", "40000,10000", "1,2,3", "x", "-4", "0,160000"):
        with pytest.raises(SystemExit) as exit_:
            script.main(["--presets", "standard", "--confirm-games", "15", "--confirm-more", bad])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert "--confirm-more wants one or two rising game counts" in err, bad


def test_a_cell_the_second_stage_left_undecided_goes_to_the_third(capsys):
    """``--confirm-more M,L``: a cell whose interval still holds the bar after M games is
    measured on L, the M-game figure kept under ``second_confirm``; a cell the second stage
    decided stays as it is, and so does one measured on L already."""
    from argparse import Namespace

    script = _script()
    jobs = []
    figures = {40000: (1.26, [1.24, 1.28]), 160000: (1.262, [1.252, 1.272])}

    def measure(batch, workers):
        jobs.extend(batch)
        return [dict(games=job[3], deals=job[3] // 3, win_rate=0.4, ci95=[0.39, 0.41],
                     x_fair=figures[job[3]][0], x_fair_ci95=figures[job[3]][1], seconds=1.0)
                for job in batch]

    def seated(lo, hi, games=10002, **kept):
        return {"spec": "compact:p", "learned": True, "games": games, "x_fair": (lo + hi) / 2,
                "x_fair_ci95": [lo, hi], "screened": {"games": 2001}, **kept}

    first = {"games": 10002, "x_fair": 1.26, "x_fair_ci95": [1.23, 1.29]}
    table = {"a": {"3": seated(1.23, 1.29)},
             "b": {"3": seated(1.26, 1.30, games=40002, first_confirm=first)},
             "c": {"3": seated(1.24, 1.27, games=160002, first_confirm=first,
                               second_confirm={**first, "games": 40002})}}
    script.measure_cells = measure
    args = Namespace(confirm_more=[40000, 160000], seed=7, opponent="expert", workers=2)
    script.confirm_more(table, args, 1.25)
    assert jobs == [("compact:p", "a", 3, 40000, 8, "expert"),
                    ("compact:p", "a", 3, 160000, 8, "expert")]
    a = table["a"]["3"]
    assert a["games"] == 160000 and a["x_fair_ci95"] == [1.252, 1.272]
    assert a["first_confirm"]["games"] == 10002 and a["second_confirm"] == {
        "games": 40000, "x_fair": 1.26, "x_fair_ci95": [1.24, 1.28]}
    assert "second_confirm" not in table["b"]["3"] and table["c"]["3"]["games"] == 160002
    text = script.markdown(table, [3], "cmd")
    assert "The 3 whose interval then held 1.25x were measured once more, on 40,000" in text
    assert "The 2 whose interval still held it, once more on 160,000 games or more." in text
    assert "Looks at 10,002, 40,000, 160,000 games bold a cell" in text
    assert "6.5% of the time, one look 2.5%" in text
    capsys.readouterr()


def test_each_look_more_bolds_a_cell_at_the_bar_more_often():
    """One 95% interval bolds a cell exactly at the bar one time in forty; looks at more
    games of the same deals, each taken where the one before could not decide, add to that
    (the figure after g games: a random walk's mean over g steps). Two looks at g and 4g:
    P(Z1 > 1.96) + P(|Z1| <= 1.96, Z2 > 1.96) for two normals correlated 0.5, 4.54%."""
    rate = _script().false_bold_rate
    one, two, three = rate([10000]), rate([10000, 40000]), rate([10000, 40000, 160000])
    assert one == pytest.approx(0.025, abs=1e-4)
    assert two == pytest.approx(0.0454, abs=2e-4)
    assert two < three < 0.08
    assert rate([10, 40, 160]) == pytest.approx(three, abs=1e-5)  # only the ratios count
    assert rate([10000, 10000]) == pytest.approx(one, abs=0.001)  # the same look twice
