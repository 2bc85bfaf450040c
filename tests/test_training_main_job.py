"""The main job (``scat train --config configs/train/default.yaml``) on any machine.

- Its config is a sample budget run on one torch and one numba thread, checked every minute:
  the policy does not depend on the machine's pace, and a busy machine does not stall it.
- A run with a time limit stops before an update that would end past it.
- The in-training check runs on a clock (``eval_every_s``) and records 95% intervals; the
  run folder gets ``learning_curve.png``, linked from ``report.md``.
- Progress shows on a terminal as a bar and elsewhere as plain lines with the time left.
- Without torch, ``scat train`` says in one line which extra to install and leaves no folder.

Time is faked where it matters (``training.batch_ppo.time``): no test depends on the pace of
the machine it runs on.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numba
import pytest

from scat_cli.main import main
from training import batch_ppo
from training.batch_ppo import out_of_time, train_network
from training.config import BatchPPOConfig, load_config
from training.progress import BudgetBar, ProgressLines, budget_progress, time_left

ROOT = Path(__file__).resolve().parent.parent
TINY = dict(player_counts=[2], envs_per_table=64, rollout_steps=16, minibatch_samples=512,
            epochs=1, hidden=32, eval_every_updates=0, final_eval_games=0, torch_threads=1,
            eval_games=20)


class _FakeTime:
    """``time`` as :mod:`training.batch_ppo` sees it: a clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


def _slow_clock(monkeypatch: pytest.MonkeyPatch) -> _FakeTime:
    """Every table's rollout takes 40 s of a faked clock (a busy machine's pace)."""
    clock = _FakeTime()
    collect = batch_ppo.collect

    def slow_collect(*args: Any, **kwargs: Any) -> Any:
        clock.now += 40.0
        return collect(*args, **kwargs)

    monkeypatch.setattr(batch_ppo, "time", clock)
    monkeypatch.setattr(batch_ppo, "collect", slow_collect)
    return clock


@pytest.fixture
def slow_updates(monkeypatch: pytest.MonkeyPatch) -> _FakeTime:
    return _slow_clock(monkeypatch)


def test_the_main_job_is_a_sample_budget_on_one_thread_each_checked_every_minute():
    trainer, cfg = load_config(ROOT / "configs/train/default.yaml")
    assert trainer == "batch"
    assert cfg.time_limit_s is None and cfg.total_samples == 10_000_000
    assert (cfg.torch_threads, cfg.numba_threads) == (1, 1)
    assert cfg.eval_every_s is not None and cfg.eval_every_s <= 120


def test_a_run_stops_before_an_update_that_would_end_past_its_time_limit(slow_updates):
    cfg = BatchPPOConfig(**TINY, total_samples=10**9, time_limit_s=100.0, progress=False)
    _, summary = train_network(cfg, log=lambda m: None)
    assert summary["updates"] == 2  # 40 s each: a third would end at 120 s
    assert summary["elapsed_s"] <= cfg.time_limit_s


def test_out_of_time_looks_one_update_ahead():
    assert not out_of_time(50.0, 40.0, 100.0)
    assert out_of_time(61.0, 40.0, 100.0)
    assert not out_of_time(10**6, 40.0, None)


def test_the_check_runs_every_eval_every_s_seconds_with_95_percent_intervals(slow_updates):
    cfg = BatchPPOConfig(**TINY, total_samples=10**9, time_limit_s=250.0, eval_every_s=70.0,
                         eval_opponent="expert")
    lines: list[str] = []
    _, summary = train_network(cfg, log=lines.append)
    points = summary["history"]
    # the untrained network at 0 s, then the first update ending at least 70 s after the
    # last check (updates end at 40, 80, ..., 240 s: a seventh would end past 250 s)
    assert [p["update"] for p in points] == [0, 2, 4, 6]
    for point in points:
        lo, hi = point["ci95"]["expert_x2"]
        assert lo <= point["win_rate"]["expert_x2"] <= hi
        assert point["games"]["expert_x2"] == 20
        assert point["vs_expert"][2] == pytest.approx(2 * point["win_rate"]["expert_x2"])
    checks = [line for line in lines if line.startswith("[eval]")]
    assert len(checks) == 4 and "2p" in checks[-1] and "fair share" in checks[-1]


def test_a_run_shows_plain_progress_lines_with_the_time_left_when_stderr_is_not_a_terminal(
        slow_updates):
    cfg = BatchPPOConfig(**TINY, total_samples=10**9, time_limit_s=250.0)
    lines: list[str] = []
    train_network(cfg, log=lines.append)
    progress = [line for line in lines if line.startswith("progress")]
    # one after the first update (40 s), then one every 30 s of the run: an update ends
    # every 40 s, so at 80, 120, 160, 200 and 240 s
    assert len(progress) == 6
    assert "samples/s" in progress[0] and "left (the run ends at the time limit, 250 s)" in (
        progress[0])


def test_a_run_without_progress_prints_nothing(slow_updates):
    cfg = BatchPPOConfig(**TINY, total_samples=10**9, time_limit_s=100.0, eval_every_s=50.0,
                         progress=False)
    lines: list[str] = []
    train_network(cfg, log=lines.append)
    assert lines == []


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere():
    assert isinstance(budget_progress(100, None, print, tty=True), BudgetBar)
    assert isinstance(budget_progress(100, None, print, tty=False), ProgressLines)
    assert budget_progress(100, None, print, enabled=False, tty=False)._bar is None


def test_progress_lines_name_the_budget_that_ends_the_run_and_its_time_left():
    lines: list[str] = []
    every = ProgressLines(1_000_000, 600.0, lines.append, every_s=30.0)
    every.update(100_000, 10.0)   # 100 s left by samples, 590 by the clock
    every.update(200_000, 20.0)   # under 30 s since the last line: quiet
    every.update(400_000, 300.0)  # 450 s left by samples, 300 by the clock
    assert len(lines) == 2
    assert lines[0] == ("progress 10%: 100,000 samples in 10 s, 10,000 samples/s, about "
                        "1 min 30 s left (the run ends at 1,000,000 samples)")
    assert "about 5 min 00 s left (the run ends at the time limit, 600 s)" in lines[1]


def test_time_left_is_unknown_before_the_first_sample():
    assert time_left(0, 100, 5.0, None)[0] == float("inf")
    assert time_left(0, 100, 5.0, 60.0) == (55.0, "the time limit, 60 s")


def test_numba_threads_holds_for_the_run_only(monkeypatch):
    seen: list[int] = []
    collect = batch_ppo.collect

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(numba.get_num_threads())
        return collect(*args, **kwargs)

    monkeypatch.setattr(batch_ppo, "collect", counting)
    before = numba.get_num_threads()
    train_network(BatchPPOConfig(**TINY, total_samples=1, numba_threads=1),
                  log=lambda m: None)
    assert seen == [1]
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("field, value, message", [
    ("numba_threads", 0, "numba_threads must be a positive int"),
    ("eval_every_s", 0.0, r"eval_every_s must be in \(0, 1e\+07\]"),
])
def test_bad_thread_counts_and_check_cadences_are_refused(field, value, message):
    with pytest.raises(ValueError, match=message):
        BatchPPOConfig(**{field: value})


def test_scat_train_writes_a_learning_curve_linked_from_its_report(tmp_path):
    config = tmp_path / "tiny.yaml"
    config.write_text(textwrap.dedent("""\
        trainer: batch
        name: tiny
        player_counts: [2, 3]
        envs_per_table: 64
        rollout_steps: 16
        minibatch_samples: 512
        epochs: 1
        hidden: 32
        torch_threads: 1
        total_samples: 3000
        eval_every_updates: 1
        eval_games: 20
        final_eval_games: 0
        """))
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    assert (out / "learning_curve.png").stat().st_size > 0
    assert "![learning curve](learning_curve.png)" in (out / "report.md").read_text()


#: ``scat train`` in an interpreter where ``import torch`` fails as it does where torch is
#: not installed (the package is installed here, so a finder refuses it).
_WITHOUT_TORCH = textwrap.dedent("""\
    import sys
    from importlib.abc import MetaPathFinder

    class NoTorch(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTorch())
    from scat_cli.main import main
    sys.exit(main(sys.argv[1:]))
    """)


@pytest.mark.parametrize("config", ["default.yaml", "sb3.yaml"])
def test_scat_train_without_torch_names_the_extra_in_one_line_and_leaves_nothing(
        tmp_path, config):
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, "train", "--config",
         str(ROOT / "configs/train" / config), "--out", str(out)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "torch" in lines[0] and "pip install -e '.[train]'" in lines[0]
    assert not out.exists()


def test_a_sample_budget_trains_the_same_network_whatever_the_pace(monkeypatch):
    """The checks run on a clock, so a slower machine checks at other updates; they draw on
    no generator of the training, so the network is the same bytes."""
    cfg = BatchPPOConfig(**TINY, total_samples=6000, eval_every_s=50.0, progress=False)
    fast, _ = train_network(cfg, log=lambda m: None)
    _slow_clock(monkeypatch)
    slow, summary = train_network(cfg, log=lambda m: None)
    assert len(summary["history"]) > 2  # checked between updates on the slow clock
    for name, weight in fast.state_dict().items():
        assert (slow.state_dict()[name] == weight).all(), name
