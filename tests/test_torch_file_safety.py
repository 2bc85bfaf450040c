"""Torch files are read only where reading them is safe, and a bad field is one line.

- ``torch.load(weights_only=True)`` can run code from a crafted file on torch older than
  2.10 (CVE-2025-32434 before 2.6, CVE-2026-24747 before 2.10): such a torch is refused
  before any file is opened (docs/SECURITY.md).
- A torch policy file or checkpoint whose ``state_dict`` is not a table of names to finite
  float32 tensors is one line naming the field, through every reader: ``ppo:PATH`` (and so
  ``scat play --opponents``), ``training.policy_net.load_file`` (resume, ``init_from``).
- An SB3 zip says how many actions its network scores, so a draw-and-discard (56-output)
  network is refused for a preset with calls when the agent is built, not left to pick a
  move it cannot score.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from agents.neural import policy_file
from agents.registry import make_agent
from scat_env import Rules
from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS


def _obs_size() -> int:
    from agents.neural.encoding import policy_observation_size

    return policy_observation_size(6)


BAD_STATES = [
    ("a list", {"state_dict": [1, 2, 3]}, "state_dict is list"),
    ("a string weight", {"pi.bias": "zero"}, "state_dict['pi.bias'] is str"),
    ("an int64 weight", {"pi.bias": torch.zeros(NUM_ACTIONS, dtype=torch.int64)},
     "state_dict['pi.bias'] is torch.int64"),
    ("a NaN weight", {"pi.bias": torch.full((NUM_ACTIONS,), float("nan"))},
     "state_dict['pi.bias'] holds a value that is not finite"),
    ("an empty table", {"state_dict": {}}, "state_dict is dict"),
]










@pytest.mark.parametrize("version, refused", [("2.9.1", True), ("2.10.0", False),
                                              ("2.13.0+cpu", False), ("3.0.0", False),
                                              ("1.13.1", True)])
def test_the_torch_version_floor(monkeypatch, version, refused):
    monkeypatch.setattr(torch, "__version__", version)
    assert (policy_file.torch_version_error() is not None) == refused


def _sb3_zip(tmp_path: Path) -> Path:
    from sb3_contrib import MaskablePPO

    from training.single_agent import ScatSingleAgentEnv

    path = tmp_path / "tiny.zip"
    MaskablePPO("MlpPolicy", ScatSingleAgentEnv([2]), n_steps=64, batch_size=32, seed=0,
                policy_kwargs={"net_arch": [16]}).save(path)
    return path


def _rewrite_head(path: Path, width: int) -> None:
    """Rewrite the zip's action head to ``width`` outputs: cut (an SB3 model trained when the
    action space was the draw-and-discard game's) or padded with zeros."""
    import io
    import zipfile

    with zipfile.ZipFile(path) as zf:
        blobs = {n: zf.read(n) for n in zf.namelist()}
    weights = torch.load(io.BytesIO(blobs["policy.pth"]), weights_only=True)
    for name in ("action_net.weight", "action_net.bias"):
        t = weights[name][:width]
        weights[name] = torch.cat([t, torch.zeros((width - len(t), *t.shape[1:]))])
    buf = io.BytesIO()
    torch.save(weights, buf)
    blobs["policy.pth"] = buf.getvalue()
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in blobs.items():
            zf.writestr(name, blob)


def test_an_sb3_model_of_the_draw_and_discard_actions_is_refused_where_calls_are_offered(
        tmp_path):
    from agents.adapters.sb3 import _load_sb3

    path = _sb3_zip(tmp_path)
    _rewrite_head(path, CORE_ACTIONS)
    _load_sb3.cache_clear()
    agent = make_agent(f"sb3:{path}")
    assert agent.policy.num_actions == CORE_ACTIONS
    agent.check_table(2, Rules.preset("standard"))  # plays the game it knows
    with pytest.raises(ValueError, match="hammer|calls|actions"):
        agent.check_table(2, Rules.preset("hammer"))


@pytest.mark.parametrize("width", [CORE_ACTIONS - 1, CORE_ACTIONS + 1, NUM_ACTIONS + 1])
def test_sb3_action_heads_of_no_known_width_are_refused(tmp_path, width):
    from agents.adapters.sb3 import _load_sb3

    path = _sb3_zip(tmp_path)
    _rewrite_head(path, width)
    _load_sb3.cache_clear()
    with pytest.raises(ValueError, match="action_net") as err:
        make_agent(f"sb3:{path}")
    assert "\n" not in str(err.value)


def test_an_old_torch_is_refused_before_any_file_is_read(tmp_path, monkeypatch):
    from agents.neural.policy_file import safe_torch_load

    path = tmp_path / "weights.pt"
    torch.save({"w": torch.zeros(2)}, path)
    opened: list[object] = []
    monkeypatch.setattr(torch, "__version__", "2.5.1+cpu")
    monkeypatch.setattr(torch, "load", lambda *a, **k: opened.append(a))
    with pytest.raises(ValueError, match=r"torch 2\.5\.1\+cpu is too old.*torch>=2\.10"):
        safe_torch_load(path, repr(str(path)))
    assert opened == []
