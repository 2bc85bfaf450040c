"""The batched engine compiles once per machine, not once per process.

Its numba kernels (``scat_env.batch.kernels``, ``agents.batch_expert``) are ``cache=True``:
the first process to use them compiles and saves machine code beside the sources (minutes
on a fresh clone: 139 s measured for a first ``BatchVecEnv`` with every batched opponent,
2026-12-07); every later process loads it (6 s for the whole script below, imports included). This checks the second half: after one process has played
``BatchVecEnv`` with every batched opponent, a new process doing the same compiles nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PLAY = r"""
import json
import numpy as np
from numba.core.registry import CPUDispatcher
import agents.batch_expert as expert
import scat_env.batch.kernels as kernels
from training.batch_vec_env import BatchVecEnv

env = BatchVecEnv(16, [2, 3], opponents=("greedy", "expert", "random"), hand_reward=0.25)
env.reset()
for _ in range(30):
    env.step_async(env.action_masks().argmax(1))
    env.step_wait()
misses = {}
for module in (kernels, expert):
    for name, fn in vars(module).items():
        if isinstance(fn, CPUDispatcher):
            missed = sum(fn.stats.cache_misses.values())
            if missed:
                misses[f"{module.__name__}.{name}"] = missed
print(json.dumps(misses))
"""


def _play() -> dict[str, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _PLAY], env=env, capture_output=True,
                         text=True, timeout=1800, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_every_batched_kernel_from_the_disk_cache():
    _play()  # compiles whatever this machine has not compiled yet
    assert _play() == {}
