"""``sb3:PATH``: a stable-baselines3 / sb3-contrib MaskablePPO zip as an agent.

It plays through :class:`agents.policy.PolicyAgent` (same padded input, same options
``:sample``, ``:full``, ``:sym``); loading needs torch and sb3-contrib, imported only when
such a spec is built.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .base import Agent
from .neural.encoding import policy_observation_size
from .policy import PolicyAgent, parse_policy_spec
from .registry import register


class SB3Policy:
    """Adapter giving an SB3 (Maskable)PPO model the ``logits(obs, mask)`` interface."""

    def __init__(self, model: Any) -> None:
        import torch

        self.model = model
        self.torch = torch

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.no_grad():
            single = obs.ndim == 1
            t = torch.as_tensor(obs[None] if single else obs, dtype=torch.float32)
            dist = self.model.policy.get_distribution(t)
            logits = dist.distribution.logits.numpy()
            logits = logits[0] if single else logits
        return np.where(mask, logits, np.float32(-1e9))


@lru_cache(maxsize=8)
def _load_sb3(path: str) -> tuple[Any, int]:
    import os
    import zipfile

    if not os.path.isfile(path):
        raise ValueError(f"sb3 policy file {path!r} does not exist")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path!r} is not a stable-baselines3 zip (corrupt or truncated?)")
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ValueError(f"sb3:{path} needs stable-baselines3 and sb3-contrib "
                         "(pip install 'scat-env[train]')") from None
    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as exc:
        raise ValueError(f"{path!r}: cannot load as a MaskablePPO model ({exc})") from None

    size = model.observation_space.shape[0]
    max_players = next((n for n in range(2, 11) if policy_observation_size(n) == size), None)
    if max_players is None:
        raise ValueError(f"{path!r}: observation size {size} matches no scat table size")
    return SB3Policy(model), max_players


def _make_sb3(arg: str | None, seed: int | None) -> Agent:
    path, options = parse_policy_spec(arg, "sb3")
    policy, max_players = _load_sb3(path)
    return PolicyAgent(policy, max_players, seed=seed, name=f"sb3:{path}", **options)


register("sb3", _make_sb3, "trained stable-baselines3 MaskablePPO policy: "
         "sb3:PATH.zip[:sample][:full][:sym[=N]]")
