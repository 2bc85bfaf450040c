"""Trained policies as agents: ``ppo:PATH`` (native policy file or checkpoint) and
``sb3:PATH`` (a stable-baselines3 / sb3-contrib MaskablePPO zip).

The agent sees only the :class:`~scat_env.PlayerView`, like every baseline: it encodes it
with the padded observation the policy was trained on (:mod:`training.policy_net`), masks
illegal actions and plays the most likely action (deterministic, the default) or samples
from the policy with its own seeded rng (``ppo:PATH:sample``). Once a player is out it
encodes :func:`scat_env.active_view`, the smaller game among the players still in
(``ppo:PATH:full``: the whole table, how every figure before that view was measured).

Inference runs in numpy (one view: ~50 us, ~85 us with the expert-advice inputs of the
shipped policy, measured on the 2-core VM), fast enough for 2,000-game tournaments.
A missing, corrupt or incompatible file raises ``ValueError`` naming the file.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from scat_env import PlayerView, active_view

from .base import Agent
from .registry import register


class PolicyAgent(Agent):
    """Plays a numpy policy (anything with ``logits(obs, mask)``) on padded observations."""

    def __init__(self, policy: Any, max_players: int, rules: Any = None, *,
                 sample: bool = False, seed: int | None = None, name: str = "policy",
                 active_only: bool = True) -> None:
        super().__init__(seed)
        from training.policy_net import PaddedEncoder

        self.policy = policy
        self.max_players = max_players
        self.sample = sample
        # Once a player is out, read the table as the smaller game it now is
        # (scat_env.active_view); ``ppo:PATH:full`` turns this off.
        self.active_only = active_only
        self.name = name
        self._rules = rules
        self._encoders: dict[Any, PaddedEncoder] = {}
        self._obs = None

    def _encoder(self, view: PlayerView) -> Any:
        from training.policy_net import PaddedEncoder

        enc = self._encoders.get(view.rules)
        if enc is None:
            # A policy trained with expert advice inputs (see training.policy_net) needs them.
            enc = PaddedEncoder(view.rules, self.max_players,
                                advice=bool(getattr(self.policy, "advice", False)))
            self._encoders[view.rules] = enc
        return enc

    def logits(self, view: PlayerView) -> np.ndarray:
        if view.num_players > self.max_players:
            raise ValueError(f"{self.name} was trained for at most {self.max_players} players, "
                             f"this table has {view.num_players}")
        if self.active_only and view.active[view.seat]:
            view = active_view(view)
        obs = self._encoder(view).encode(view)
        mask = np.zeros(56, dtype=bool)
        mask[list(view.legal_actions)] = True
        return self.policy.logits(obs, mask)

    def act(self, view: PlayerView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        logits = self.logits(view)
        if not self.sample:
            return int(legal[int(np.argmax(logits[list(legal)]))])
        z = [float(logits[a]) for a in legal]
        top = max(z)
        weights = [math.exp(v - top) for v in z]
        return self.rng.choices(legal, weights=weights)[0]

    def explain(self, view: PlayerView) -> str:
        from scat_env import action_str

        legal = list(view.legal_actions)
        logits = self.logits(view)[legal]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        order = np.argsort(-p)[:3]
        return f"{self.name}: " + ", ".join(f"{action_str(legal[i])} {p[i]:.0%}" for i in order)


@lru_cache(maxsize=16)
def _load_native(path: str) -> tuple[Any, int]:
    from training.policy_net import NumpyPolicy, build_net, load_file

    data = load_file(path)
    net = build_net(data, path)
    return (NumpyPolicy(net.state_dict(), data["arch"]["layers"], data["max_players"]),
            data["max_players"])


#: Options after a policy file: ``sample`` (sample instead of the most likely action),
#: ``argmax`` (the default), ``full`` (encode the whole table, out seats included, instead
#: of :func:`scat_env.active_view`: how the figures measured before that view were taken).
_OPTIONS = ("sample", "argmax", "full")


def _split(arg: str | None, kind: str) -> tuple[str, dict[str, bool]]:
    """``(path, PolicyAgent keyword arguments)`` from ``PATH[:option...]``."""
    spec = arg = arg or ""
    options: set[str] = set()
    # Peel known options off the end (a path may itself contain ':').
    while True:
        head, sep, tail = arg.rpartition(":")
        if not sep or tail not in _OPTIONS:
            break
        if tail in options:
            raise ValueError(f"{kind}: option {tail!r} given twice in {kind}:{spec}")
        options.add(tail)
        arg = head
    if {"sample", "argmax"} <= options:
        raise ValueError(f"{kind}: 'sample' and 'argmax' contradict each other")
    if not arg:
        raise ValueError(f"{kind}: needs a file, e.g. {kind}:policies/scat_ppo.pt")
    return arg, {"sample": "sample" in options, "active_only": "full" not in options}


def _make_ppo(arg: str | None, seed: int | None) -> Agent:
    path, options = _split(arg, "ppo")
    policy, max_players = _load_native(path)
    return PolicyAgent(policy, max_players, seed=seed, name=f"ppo:{path}", **options)


class _SB3Policy:
    """Adapter giving an SB3 (Maskable)PPO model the ``logits(obs, mask)`` interface."""

    def __init__(self, model: Any) -> None:
        import torch

        self.model = model
        self.torch = torch

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.no_grad():
            t = torch.as_tensor(obs[None], dtype=torch.float32)
            dist = self.model.policy.get_distribution(t)
            logits = dist.distribution.logits[0].numpy()
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

        model = MaskablePPO.load(path, device="cpu")
    except Exception as exc:
        raise ValueError(f"{path!r}: cannot load as a MaskablePPO model ({exc})") from None
    from training.policy_net import policy_observation_size

    size = model.observation_space.shape[0]
    max_players = next((n for n in range(2, 11) if policy_observation_size(n) == size), None)
    if max_players is None:
        raise ValueError(f"{path!r}: observation size {size} matches no scat table size")
    return _SB3Policy(model), max_players


def _make_sb3(arg: str | None, seed: int | None) -> Agent:
    path, options = _split(arg, "sb3")
    policy, max_players = _load_sb3(path)
    return PolicyAgent(policy, max_players, seed=seed, name=f"sb3:{path}", **options)


register("ppo", _make_ppo, "trained native PPO policy: ppo:PATH[.pt][:sample][:full]")
register("sb3", _make_sb3, "trained stable-baselines3 MaskablePPO policy: sb3:PATH.zip[:sample][:full]")
