"""A tournament survives what the operating system does to it.

- Killed at random moments (``kill -9`` of ``scat tournament``, one worker or two) and
  resumed each time, it ends with the same bytes of ``games.jsonl``, ``results.json``,
  ``results.md`` and the plots as a run that was never interrupted.
- A full disk (a real per-file size limit, and a byte budget on every write) or a read-only
  folder ends in one line and exit status 2, with nothing half-written: no temporary file,
  no torn log line, no partial report; a resume then finishes the run exactly.

Each kill run prints how many kills interrupted a run (``pytest -s`` shows it).
"""

from __future__ import annotations

import builtins
import errno
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hang_limits import hang_limit

from scat_cli.main import main

REPO = Path(__file__).resolve().parents[1]
FIELD = "greedy,random,threshold:20"
#: The files a finished run leaves that do not depend on timing (timing.json does).
SAME_FILES = ("config.json", "games.jsonl", "results.json", "results.md", "winrate.png",
              "ratings.png")


def _args(out: Path, games: int, workers: int, *extra: str) -> list[str]:
    return ["tournament", "--field", FIELD, "--games", str(games), "--seed", "3",
            "--workers", str(workers), "--quiet", "--out", str(out), *extra]


def _files(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in SAME_FILES}


def _assert_whole(out: Path) -> None:
    """Nothing half-written: no temporary file, every log line whole and a record, every
    JSON file complete."""
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    log = out / "games.jsonl"
    if log.exists() and log.stat().st_size:
        data = log.read_text()
        assert data.endswith("\n")
        assert all(json.loads(line)["table"] == 0 for line in data.splitlines())
    for name in ("config.json", "results.json", "timing.json"):
        if (out / name).exists():
            json.loads((out / name).read_text())


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[int, tuple[dict[str, bytes], float]]:
    """Uninterrupted runs (as a subprocess, like the killed ones): files and seconds taken,
    by number of games."""
    made: dict[int, tuple[dict[str, bytes], float]] = {}

    def get(games: int) -> tuple[dict[str, bytes], float]:
        if games not in made:
            out = tmp_path_factory.mktemp(f"reference{games}")
            start = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "scat_cli", *_args(out, games, 1)],
                                  cwd=REPO, capture_output=True, text=True, timeout=hang_limit(600))
            assert done.returncode == 0, done.stderr
            made[games] = (_files(out), time.monotonic() - start)
        return made[games]

    return get  # type: ignore[return-value]


# -- kills -------------------------------------------------------------------------------------
def _wait_until_gone(group: int) -> None:
    """Every process of the killed run's group (its pool workers) is gone within seconds:
    the workers die with the tournament process, so they free the folder's lock."""
    deadline = time.monotonic() + hang_limit(120)
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, "pool workers outlived the killed tournament"
        time.sleep(0.01)


def _kill_and_resume(out: Path, games: int, workers: int, kills: int, span: float,
                     rng: random.Random) -> int:
    """Start ``scat tournament --resume`` and kill it (SIGKILL, the tournament process only)
    after a random delay up to ``span`` seconds, again and again until a run finishes before
    its kill comes, or ``kills`` kills are spent (then one run goes to the end). Returns how
    many runs were killed."""
    killed = 0
    while True:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scat_cli", *_args(out, games, workers, "--resume")],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )
        try:
            _, err = proc.communicate(
                timeout=rng.uniform(0.0, span) if killed < kills else hang_limit(600))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            _wait_until_gone(proc.pid)
            killed += 1
            continue
        assert proc.returncode == 0, err
        assert not err  # no traceback from a resumed run, nor from a worker
        return killed


def _survive(tmp_path: Path, reference, games: int, workers: int, target: int,
             seed: int) -> tuple[int, int]:
    """Tournaments of ``games`` played from an empty folder to the end under random kills,
    one after another, until ``target`` kills have been survived; each ends with the bytes
    of an uninterrupted run. Returns (kills, tournaments)."""
    files, seconds = reference(games)
    rng = random.Random(seed)
    killed = cycles = 0
    while killed < target:
        out = tmp_path / f"out{cycles}"
        killed += _kill_and_resume(out, games, workers, kills=target - killed, span=seconds,
                                   rng=rng)
        cycles += 1
        _assert_whole(out)
        assert _files(out) == files
    print(f"workers={workers}: {killed} kills survived in {cycles} tournaments of {games} games")
    return killed, cycles


@pytest.mark.parametrize("workers", [1, 2])
def test_killed_at_random_moments_and_resumed_it_ends_byte_identical(
        tmp_path, reference, workers):
    _survive(tmp_path, reference, 300, workers, target=5, seed=workers)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_killed_many_times_it_ends_byte_identical(tmp_path, reference, workers):
    _survive(tmp_path, reference, 3000, workers, target=60, seed=100 + workers)


# -- a full disk -------------------------------------------------------------------------------
def _file_size_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # then a write fails with EFBIG
    return apply


@pytest.mark.parametrize("limit, refused", [(6_000, "games.jsonl"), (20_000, "winrate.png")])
def test_a_file_size_limit_is_one_line_and_a_resume_finishes_exactly(
        tmp_path, reference, limit, refused):
    """A real operating-system refusal (RLIMIT_FSIZE: no file may grow past ``limit``
    bytes) hits the log while games are played (12 games log ~15.5 kB), or the first plot
    (~23 kB), after the log and results.json (~7 kB) are written."""
    files, _ = reference(12)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "scat_cli", *_args(out, 12, 1)], cwd=REPO,
                          capture_output=True, text=True, timeout=hang_limit(300),
                          preexec_fn=_file_size_limit(limit))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert f"error: cannot write {out / refused}: File too large" in done.stderr
    assert "--resume" in done.stderr
    _assert_whole(out)
    if refused == "winrate.png":
        assert not (out / refused).exists()  # not half a plot
        assert (out / "results.json").read_bytes() == files["results.json"]
    else:
        assert 0 < (out / refused).stat().st_size <= limit  # whole lines, as many as fit
    assert main(_args(out, 12, 1, "--resume")) == 0
    assert _files(out) == files


def _full_disk_after(monkeypatch, budget: int) -> None:
    """Every ``os.write`` from now on shares ``budget`` bytes, then fails with ENOSPC (a
    write that straddles the limit is cut short first, as a filling disk does)."""
    real = os.write
    left = {"bytes": budget}

    def write(fd: int, data) -> int:
        if left["bytes"] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real(fd, bytes(data)[: left["bytes"]])
        left["bytes"] -= n
        return n

    monkeypatch.setattr(os, "write", write)


def _bytes_written(monkeypatch, out: Path, argv: list[str]) -> int:
    real = os.write
    total = {"bytes": 0}

    def write(fd: int, data) -> int:
        n = real(fd, data)
        total["bytes"] += n
        return n

    with monkeypatch.context() as m:
        m.setattr(os, "write", write)
        assert main(argv) == 0
    return total["bytes"]


def test_a_disk_that_fills_at_any_point_leaves_whole_files_and_resumes_exactly(
        tmp_path, reference, monkeypatch, capsys):
    files, _ = reference(24)
    total = _bytes_written(monkeypatch, tmp_path / "count", _args(tmp_path / "count", 24, 1))
    # Budgets from the config through the log, its canonical rewrite, the reports, the plots.
    for i, share in enumerate((0.0, 0.01, 0.1, 0.25, 0.4, 0.55, 0.65, 0.75, 0.9, 0.99)):
        out = tmp_path / f"full{i}"
        with monkeypatch.context() as m:
            _full_disk_after(m, int(share * total))
            capsys.readouterr()
            assert main(_args(out, 24, 1)) == 2, share
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "No space left on device" in err, (share, err)
        assert f"cannot write {out}" in err
        _assert_whole(out)
        assert main(_args(out, 24, 1, "--resume")) == 0
        assert _files(out) == files, share


# -- a read-only folder ------------------------------------------------------------------------
def _read_only(monkeypatch, folder: Path) -> None:
    """Opening anything in ``folder`` for writing fails as in a folder made read-only with
    ``chmod -R a-w`` (running as root, the test cannot rely on the permission bits)."""
    real_open, real_os_open = builtins.open, os.open
    inside = str(folder.resolve()) + os.sep

    def denied(path) -> bool:
        return os.path.abspath(os.fspath(path)).startswith(inside)

    def fake_open(file, mode="r", *args, **kwargs):
        if isinstance(file, str | os.PathLike) and denied(file) and set(mode) & set("wax+"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(file))
        return real_open(file, mode, *args, **kwargs)

    def fake_os_open(path, flags, *args, **kwargs):
        if denied(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(os, "open", fake_os_open)


@pytest.mark.parametrize("finished", [False, True])
def test_a_read_only_folder_is_one_line_and_left_untouched(tmp_path, monkeypatch, capsys,
                                                           finished):
    out = tmp_path / "out"
    out.mkdir()
    if finished:
        assert main(_args(out, 24, 1)) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    with monkeypatch.context() as m:
        _read_only(m, out)
        assert main(_args(out, 24, 1, "--resume")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Permission denied" in err and f"cannot write {out}" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_folder_without_write_permission_is_one_line(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(_args(out, 24, 1)) == 0
    out.chmod(0o555)
    try:
        assert main(_args(out, 24, 1, "--overwrite")) == 2
    finally:
        out.chmod(0o755)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write" in err


def test_an_out_that_is_a_file_is_one_line(tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("mine")
    assert main(_args(out, 24, 1)) == 2
    err = capsys.readouterr().err
    assert err == f"scat tournament: error: --out {out}: a file, not a folder\n"
    assert out.read_text() == "mine"
