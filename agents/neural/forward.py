"""The policy network's forward pass in numpy, for play.

It computes the logits of :class:`training.policy_net.PolicyNet` (an MLP trunk, the policy
head, and the learned "skip" terms that carry the scoring features straight to the actions
they are about) from the same weights, without torch: a player needs no torch installed, and
one observation at a time pays no torch call overhead (``scat bench agents --agent
ppo:scat_ppo`` times a decision). Play needs no value head, so it is not computed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from scat_env.actions import CORE_ACTIONS, DRAW_DISCARD, KNOCK

from .encoding import DEFAULT_MAX_PLAYERS, advice_offset, skip_indices


def _array(value: Any) -> np.ndarray:
    """A float32 numpy array from a numpy array or a torch tensor (duck-typed: no torch
    import here)."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value).astype(np.float32)


class NumpyPolicy:
    """The policy network in numpy: ``logits(obs, mask)`` (play needs no value head).

    ``state_dict`` holds the weights under :class:`~training.policy_net.PolicyNet`'s names
    (``trunk.0.weight``, ``pi.bias``, ``card_gain``...), as numpy arrays (a policy file) or
    torch tensors (a network being trained); ``advice_gain`` present means the input ends
    with the expert-advice block.
    """

    def __init__(self, state_dict: Mapping[str, Any], layers: int,
                 max_players: int = DEFAULT_MAX_PLAYERS, extra: tuple[str, ...] = ()) -> None:
        def arr(key: str) -> np.ndarray:
            return _array(state_dict[key])

        self.weights = [(arr(f"trunk.{2 * i}.weight").T.copy(), arr(f"trunk.{2 * i}.bias"))
                        for i in range(layers)]
        self.pi_w, self.pi_b = arr("pi.weight").T.copy(), arr("pi.bias")
        # A network trained before the calls of the variations existed has the 56 outputs
        # of the draw-and-discard game; its logits are padded (agents.policy refuses it
        # rules that offer a call).
        self.num_actions = int(self.pi_b.shape[0])
        self.card_gain = float(arr("card_gain"))
        self.draw_gain = float(arr("draw_gain"))
        self.knock_gain = float(arr("knock_gain"))
        self.knock_at = float(arr("knock_at"))
        self.dv, self.hv, self.vwd = skip_indices(max_players)
        self.advice = "advice_gain" in state_dict
        self.advice_gain = float(arr("advice_gain")) if self.advice else 0.0
        self.advice_at = advice_offset(max_players)
        # The pieces a family of rules adds that the input ends with (encoding.EXTRA_PIECES):
        # agents.policy refuses rules whose family adds others.
        self.extra = tuple(extra)

    def skip(self, obs: np.ndarray) -> np.ndarray:
        """The skip terms of the network for a batch ``(B, obs)``."""
        out = np.zeros((obs.shape[0], self.num_actions), dtype=np.float32)
        out[:, :52] = self.card_gain * obs[:, self.dv:self.dv + 52]
        vwd = obs[:, self.vwd]
        out[:, DRAW_DISCARD] = self.draw_gain * (vwd - obs[:, self.hv]) * (vwd > 0)
        out[:, KNOCK] = self.knock_gain * (obs[:, self.hv] - self.knock_at)
        if self.advice:
            at = self.advice_at
            out[:, :CORE_ACTIONS] += self.advice_gain * obs[:, at:at + CORE_ACTIONS]
        return out

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits for a batch ``(B, obs)`` or one observation."""
        single = obs.ndim == 1
        x = obs[None] if single else obs
        h = x
        for w, b in self.weights:
            h = np.maximum(h @ w + b, 0.0)
        out = h @ self.pi_w + self.pi_b + self.skip(x)
        pad = mask.shape[-1] - self.num_actions  # a 56-output network asked for every action
        if pad > 0:
            out = np.concatenate([out, np.full((out.shape[0], pad), -1e9, out.dtype)], 1)
        out = out[0] if single else out
        return np.where(mask, out, np.float32(-1e9))
