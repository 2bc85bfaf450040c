"""Every compiled function of the batched engine and the batched expert compiles for one
set of argument types (``scat_env.batch.kernels``' docstring, "Compile time").

numba compiles a function once per distinct argument types, and a helper called with a
literal constant or with a parallel loop's unsigned index is compiled again: each one more
is seconds to tens of seconds of every cold cache (a fresh clone's test suite, a user's
first ``scat train``), and nothing else would notice it. The check compiles from an empty
cache in a process of its own, since a kernel loaded from the cache does not load its
helpers, so it is a benchmark-length check (``pytest -m slow``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Drives every kernel under each kind of rules the engine steps differently (the plain
# draw-and-discard game, the calls, golf's slots, a points race, the Italian pack) and the
# expert under each, then names every function compiled for more than one set of types.
DRIVER = r"""
import numpy as np
from numba.core.dispatcher import Dispatcher

import agents.batch_expert as expert_module
import scat_env.batch.kernels as kernels
from agents.batch_expert import BatchExpert
from scat_env import Rules
from scat_env.batch import BatchEnv, compile_kernels

compile_kernels()
for preset in ("standard", "hammer", "golf", "french_canadian", "italian"):
    env = BatchEnv(4, 3, rules=Rules.preset(preset), seed=1)
    env.reset()
    expert = BatchExpert(preset)
    out = np.zeros(4, np.int64)
    for _ in range(40):
        expert.actions(env, out)
        env.step(out)
        env.step(env.threshold_actions())
        env.step(env.random_actions())
    env.observe_all()
    env.restart(np.ones(4, np.bool_))
many = [f"{module.__name__}.{name}: {len(obj.signatures)}"
        for module in (kernels, expert_module) for name, obj in vars(module).items()
        if isinstance(obj, Dispatcher) and len(obj.signatures) > 1]
print("\n".join(many) if many else "one each")
"""


@pytest.mark.slow
def test_every_kernel_and_helper_compiles_once(tmp_path: Path) -> None:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_NUM_THREADS="1")
    run = subprocess.run([sys.executable, "-c", DRIVER], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "one each", (
        "compiled for more than one set of argument types (constants go through np.int64, "
        f"a parallel loop's index through np.uint64):\n{run.stdout}")
