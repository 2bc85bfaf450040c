"""Kill a training run at random moments, resume it each time: the result is byte for byte
the uninterrupted run's.

``scat train`` runs in a subprocess with a tiny config that writes a checkpoint after every
update; the test kills it (SIGKILL: no clean-up of any kind) after a random number (2-4) of
checkpoint writes and a random share of one update's time, which lands in rollouts, updates
and checkpoint writes alike, then starts it again with ``--resume``. At the end the final
weights (sha256 of the state dict), the exported policy, the summary (less its timings), the
evaluation history, every TensorBoard figure of the losses and training tables, and the list
of files in the folder (no temp file of a cut-short write left) must equal those of one run
that was never stopped. The default suite survives 2 kills; ``-m slow`` 12.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hang_limits import hang_limit

from agents.neural.policy_file import load_policy

CONFIG = """\
trainer: native
seed: 11
player_counts: [2, 3]
opponents: {self: 0.6, snapshot: 0.2, greedy: 0.2}
parallel_games: 8
rollout_samples: 128
minibatch_samples: 128
epochs: 1
hidden: 16
snapshot_every_updates: 2
eval_every_updates: 0
final_eval_games: 0
checkpoint_every_updates: 1
torch_threads: 1
total_samples: SAMPLES
"""

#: Timing figures: the only parts of a run that may differ between two runs.
TIMINGS = ("elapsed_s", "samples_per_s_since_start")


def _scat_train(config: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    return subprocess.Popen([sys.executable, "-m", "scat_cli", "train", "--config", str(config),
                             "--out", str(out), "--no-progress", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def _checkpoint_mtime(out: Path) -> int:
    try:
        return (out / "checkpoint.pt").stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def _run_with_kills(config: Path, out: Path, kills: int, rng: random.Random,
                    deadline_s: float) -> int:
    """Run to the end, killing the process ``kills`` times, each 2-4 checkpoint writes after
    it starts plus a random share of one update's time (so the kill lands anywhere in the cycle
    of rollout, update and checkpoint write); returns the kills made."""
    made, start = 0, time.monotonic()
    while True:
        proc = _scat_train(config, out, *(["--resume"] if (out / "checkpoint.pt").exists() else []))
        if made < kills:
            want, seen, last = rng.randint(1, 3), [], _checkpoint_mtime(out)
            while proc.poll() is None and len(seen) < want + 1:
                time.sleep(0.005)
                now = _checkpoint_mtime(out)
                if now != last:
                    seen.append(time.monotonic())
                    last = now
            cycle = seen[-1] - seen[-2] if len(seen) > 1 else 0.05
            time.sleep(rng.uniform(0.0, 1.2 * cycle))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                made += 1
                assert time.monotonic() - start < deadline_s, f"too slow after {made} kills"
                continue
        _, err = proc.communicate(timeout=deadline_s)
        assert proc.returncode == 0, err.decode()[-2000:]
        return made


def _weights_sha256(out: Path) -> str:
    state = torch.load(out / "checkpoint.pt", weights_only=True)["state_dict"]
    digest = hashlib.sha256()
    for key in sorted(state):
        digest.update(key.encode())
        digest.update(state[key].contiguous().numpy().tobytes())
    return digest.hexdigest()


def _figures(out: Path) -> dict[str, dict[int, float]]:
    """Every loss and training-table figure in TensorBoard, by tag and step (the last one
    written wins: a resumed run writes again what the killed one wrote after its last
    checkpoint)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    figures: dict[str, dict[int, float]] = {}
    for path in sorted((out / "tb").glob("events.*")):  # one file per process, oldest first
        acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            if tag.startswith(("loss/", "train/")):
                figures.setdefault(tag, {}).update({e.step: e.value for e in acc.Scalars(tag)})
    return figures


def _result(out: Path) -> dict[str, object]:
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    summary = json.loads((out / "summary.json").read_text())
    policy = load_policy(out / "policy.npz")
    return {
        "weights_sha256": _weights_sha256(out),
        "policy_sha256": policy.metadata["sha256"],
        "summary": {k: v for k, v in summary.items() if k not in TIMINGS},
        "counters": {k: v for k, v in ckpt["counters"].items() if k not in TIMINGS},
        "history": ckpt["history"],
        "figures": _figures(out),
        # The same files: no temp file of a write that a kill cut short is left behind.
        "files": sorted(p.name for p in out.iterdir()),
    }


def _fault_run(tmp_path: Path, samples: int, kills: int, seed: int, deadline_s: float) -> None:
    config = tmp_path / "tiny.yaml"
    config.write_text(CONFIG.replace("SAMPLES", str(samples)))
    straight = _scat_train(config, tmp_path / "straight")
    _, err = straight.communicate(timeout=deadline_s)
    assert straight.returncode == 0, err.decode()[-2000:]
    made = _run_with_kills(config, tmp_path / "killed", kills, random.Random(seed), deadline_s)
    want, got = _result(tmp_path / "straight"), _result(tmp_path / "killed")
    assert want["figures"] and want["summary"]["samples"] >= samples
    for key in want:
        assert got[key] == want[key], f"{key} differs after {made} kills"
    assert made == kills, f"survived {made} kills of {kills} planned (the run ended first)"
    print(f"survived {made} kills; weights sha256 {want['weights_sha256'][:16]}...")


def test_a_killed_training_run_resumes_to_the_same_bytes(tmp_path):
    _fault_run(tmp_path, samples=128 * 14, kills=2, seed=1, deadline_s=hang_limit(900))


@pytest.mark.slow
def test_a_training_run_killed_many_times_resumes_to_the_same_bytes(tmp_path):
    _fault_run(tmp_path, samples=128 * 80, kills=12, seed=2, deadline_s=hang_limit(3600))
