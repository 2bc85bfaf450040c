"""``scat bench --batch``: the batched engine's speed per preset, and its page."""

from __future__ import annotations

import pytest

from scat_env.batch.bench import main


def test_presets_are_measured_one_row_each_and_written_as_a_page(tmp_path, capsys):
    out = tmp_path / "speed.md"
    argv = ["--presets", "standard,golf,undeclared_31", "--seconds", "0.05", "--envs", "16",
            "--no-pgx", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    rows = [line.split() for line in printed.splitlines() if line.split()[:1] in
            (["standard"], ["golf"], ["undeclared_31"])]
    assert [r[0] for r in rows] == ["standard", "golf", "undeclared_31"]
    assert all(r[1] == "3" and float(r[2].replace(",", "")) > 0 for r in rows)  # 3 players
    page = out.read_text()
    assert "scat bench --batch --presets standard,golf,undeclared_31" in page
    assert page.count("| `") == 3 and "`--no-pgx`" in page


@pytest.mark.parametrize("argv,words", [
    (["--presets", "nope"], "'nope' is not a preset"),
    (["--rules", "gollf"], "'gollf' is not a preset"),
    (["--out", "x.md"], "--out writes the table of --presets"),
    (["--players", "11"], "--players must be between 2 and 10"),
    (["--repeat", "0"], "--repeat must be positive"),
    (["--threads", "0"], "--threads must be from 1"),
])
def test_bad_arguments_are_one_line_and_exit_status_2(argv, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1
