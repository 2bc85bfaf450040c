"""The policy network, its padded observation, and the policy file format.

Shared by the native trainer (:mod:`training.ppo`), the SB3 path and the ``ppo:PATH``
agent, so a policy trained anywhere plays everywhere the same way.

Why padding: :class:`~scat_env.observation.ObservationEncoder` sizes the vector by the
number of players (per-opponent known cards, per-seat lives...). One policy for every
table size needs one size, so :class:`PaddedEncoder` lays an ``n``-player observation into
the ``max_players`` layout: the pieces that do not depend on ``n`` stay as they are, the
per-seat pieces fill relative seats ``0..n-1`` and the missing seats stay zero. A missing
seat then looks exactly like an opponent who is out of the game (lives 0, not active, no
known cards), which is what it is for play: turn order skips it. The default
``max_players`` is 6 (obs size 556, plus the 52 ``discard_values`` below); tables larger than ``max_players`` raise ValueError.

File formats (both written atomically, both read with ``torch.load(weights_only=True)``,
so loading a policy never runs pickled code):

- *policy file* (``kind = "scat-policy"``): weights + architecture + the config and
  metrics that produced it; small (< 1 MB for the default net). :func:`export_policy`.
- *training checkpoint* (``kind = "scat-ppo-checkpoint"``): the policy fields plus the
  optimizer, RNG states, step counters and the pickled rollout state (for ``--resume``).
  A checkpoint is also a valid policy file for ``ppo:PATH``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.expert import ADVICE_SIZE, ExpertAgent
from scat_env.actions import DRAW_DISCARD, KNOCK, NUM_ACTIONS
from scat_env.observation import POINT_SCALE, ObservationEncoder, observation_size, pieces
from scat_env.rules import Rules
from scat_env.scoring import value_table
from scat_env.view import PlayerView

FORMAT_VERSION = 1
POLICY_KIND = "scat-policy"
CHECKPOINT_KIND = "scat-ppo-checkpoint"
DEFAULT_MAX_PLAYERS = 6

#: Pieces whose size grows with the number of players: name -> per-seat block size.
_PER_SEAT = {"known_cards": 52, "lives": 1, "active": 1, "knocked": 1, "dealer": 1}


def padding_index(num_players: int, max_players: int) -> np.ndarray:
    """Positions in the ``max_players`` layout of each entry of the ``num_players`` vector."""
    if not 2 <= num_players <= max_players:
        raise ValueError(
            f"this policy plays 2..{max_players} players (observation padded to "
            f"{max_players} seats), got {num_players}"
        )
    big = {}
    start = 0
    for name, size in pieces(max_players):
        big[name] = start
        start += size
    index = []
    for name, size in pieces(num_players):
        index.extend(range(big[name], big[name] + size))
    return np.asarray(index, dtype=np.int64)


#: Extra piece appended after the padded observation: ``discard_values``, per card of the
#: hand in the discard phase, the value of the three cards left if I discard it (/41; 0 for
#: the card taken from the pile, which may not be discarded). The engine's encoder gives
#: the best value only; this says what every discard costs, the question the discard phase
#: asks, so the network need not learn the scoring table from one-hots (it learned much
#: faster with it in early runs).
EXTRA_SIZE = 52


def advice_offset(max_players: int) -> int:
    """Where the advice inputs start: after the padded observation and ``discard_values``."""
    return observation_size(max_players) + EXTRA_SIZE


def policy_observation_size(max_players: int, advice: bool = False) -> int:
    """Size of the policy input: the padded observation plus :data:`EXTRA_SIZE`, plus
    :data:`~agents.expert.ADVICE_SIZE` expert-advice inputs when ``advice``."""
    return advice_offset(max_players) + (ADVICE_SIZE if advice else 0)


#: Pieces of the observation indexed by card, the one indexed by suit, and those a renaming
#: of the cards leaves as they are. A new piece must be put in one of them (checked below).
_CARD_PIECES = ("hand", "drawn_card", "top_discard", "discard_pile", "known_cards", "unseen")
_SUIT_PIECES = ("suit_sums",)
_PLAIN_PIECES = ("hand_value", "value_with_discard", "lives", "active", "knocked", "dealer",
                 "stock_size", "phase", "flags", "turn")


def symmetry_layout(max_players: int, advice: bool = False) -> tuple[list[int], list[int]]:
    """``(card_blocks, suit_blocks)``: the offsets in the policy input of every 52-entry
    block indexed by card and every 4-entry block indexed by suit, for
    :class:`agents.symmetry.SymmetryAverage`. Every other input is unchanged when the cards
    are renamed (lives, phase, hand value, the expert's probabilities...)."""
    cards, suits, start = [], [], 0
    for name, size in pieces(max_players):
        if name in _CARD_PIECES:
            cards.extend(range(start, start + size, 52))
        elif name in _SUIT_PIECES:
            suits.append(start)
        elif name not in _PLAIN_PIECES:
            raise ValueError(f"observation piece {name!r}: say how a renaming of the cards "
                             "moves it (training.policy_net._CARD_PIECES and its siblings)")
        start += size
    cards.append(start)  # discard_values
    if advice:
        at = advice_offset(max_players)
        cards += [at, at + NUM_ACTIONS]  # the expert's action one-hot, its per-card scores
    return cards, suits


class PaddedEncoder:
    """Encodes views of any table size ``2..max_players`` into one fixed-size vector.

    With ``advice=True`` the vector ends with :meth:`agents.expert.ExpertAgent.advice`: the
    expert's move and the card-counting numbers behind it (exact stock-draw expectations
    over the unseen cards, the chance a knock leaves me lowest). A network must otherwise
    learn those sums from one-hots; given them, it starts from the expert's judgement and
    learns where to depart from it. They are computed from the view, so nothing hidden
    enters. Costs about 20 us per observation.
    """

    def __init__(self, rules: Rules, max_players: int = DEFAULT_MAX_PLAYERS,
                 advice: bool = False) -> None:
        self.rules = rules
        self.max_players = max_players
        self.base_size = observation_size(max_players)
        self.advice_at = advice_offset(max_players)
        self.size = policy_observation_size(max_players, advice)
        self._advisor = ExpertAgent() if advice else None
        self._table = value_table(rules)
        self._encoders: dict[int, tuple[ObservationEncoder, np.ndarray]] = {}

    def _for(self, n: int) -> tuple[ObservationEncoder, np.ndarray]:
        entry = self._encoders.get(n)
        if entry is None:
            entry = (ObservationEncoder(n, self.rules), padding_index(n, self.max_players))
            self._encoders[n] = entry
        return entry

    def encode(self, view: PlayerView, out: np.ndarray | None = None) -> np.ndarray:
        enc, index = self._for(view.num_players)
        if out is None:
            out = np.zeros(self.size, dtype=np.float32)
        else:
            out[:] = 0.0
        out[index] = enc.encode(view)
        hand = view.hand
        if len(hand) == 4:
            t, base, taken = self._table, self.base_size, view.taken_card
            for c in hand:
                if c != taken:
                    a, b, d = (x for x in hand if x != c)
                    out[base + c] = t[a * 2704 + b * 52 + d] * POINT_SCALE
        if self._advisor is not None:
            self._advisor.advice(view, out[self.advice_at:])
        return out


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def skip_indices(max_players: int) -> tuple[int, int, int]:
    """Offsets of ``discard_values``, ``hand_value`` and ``value_with_discard`` in the input."""
    offsets, start = {}, 0
    for name, size in pieces(max_players):
        offsets[name] = start
        start += size
    return observation_size(max_players), offsets["hand_value"], offsets["value_with_discard"]


class PolicyNet(nn.Module):
    """Actor-critic MLP: a shared trunk, a masked policy head and a value head, plus three
    learned scalar "skip" terms that carry the scoring features straight to the actions
    they are about (an inductive bias, not a rule: both gains are trained):

    - discard ``c``: ``+ card_gain * (points left after discarding c)``;
    - take the top discard: ``+ draw_gain * (points with it - points now)``;
    - knock: ``+ knock_gain * (points now - knock_at)`` (starts like ``greedy``'s threshold;
      without it early, badly timed knocks cost 2 lives and the policy learned never to
      knock at all, measured: knock rate 0% after 2M samples).

    Without them the MLP must learn 52 separate input-to-output mappings from one-hots
    before it even discards like ``greedy``; with them it starts there and learns the rest.
    With ``advice`` (the input ends with the expert's move and numbers, see
    :class:`PaddedEncoder`) a fourth term adds ``advice_gain`` to the expert's move, so a
    new network starts close to the expert and PPO learns where to play otherwise.
    Illegal actions get logit ``-1e9`` (not ``-inf``) so an all-illegal row stays finite.
    """

    def __init__(self, obs_size: int, hidden: int = 256, layers: int = 2,
                 max_players: int = DEFAULT_MAX_PLAYERS, advice: bool = False,
                 advice_gain: float = 3.0) -> None:
        super().__init__()
        self.obs_size, self.hidden, self.layers = obs_size, hidden, layers
        self.max_players = max_players
        self.advice = advice
        self.advice_at = advice_offset(max_players)
        self.dv, self.hv, self.vwd = skip_indices(max_players)
        mods: list[nn.Module] = []
        size = obs_size
        for _ in range(layers):
            mods += [layer_init(nn.Linear(size, hidden)), nn.ReLU()]
            size = hidden
        self.trunk = nn.Sequential(*mods)
        self.pi = layer_init(nn.Linear(hidden, NUM_ACTIONS), std=0.01)
        self.v = layer_init(nn.Linear(hidden, 1), std=1.0)
        # per point (inputs are points / 41): 10 points of difference start at ~5 logits
        self.card_gain = nn.Parameter(torch.tensor(0.5 * 41))
        self.draw_gain = nn.Parameter(torch.tensor(0.3 * 41))
        self.knock_gain = nn.Parameter(torch.tensor(0.5 * 41))
        self.knock_at = nn.Parameter(torch.tensor(26 / 41))
        if advice:
            self.advice_gain = nn.Parameter(torch.tensor(float(advice_gain)))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(obs)
        logits = self.pi(h)
        skip = torch.zeros_like(logits)
        skip[:, :52] = self.card_gain * obs[:, self.dv:self.dv + 52]
        skip[:, DRAW_DISCARD] = self.draw_gain * (obs[:, self.vwd] - obs[:, self.hv]) * (obs[:, self.vwd] > 0)
        skip[:, KNOCK] = self.knock_gain * (obs[:, self.hv] - self.knock_at)
        if self.advice:
            skip = skip + self.advice_gain * obs[:, self.advice_at:self.advice_at + NUM_ACTIONS]
        logits = (logits + skip).masked_fill(~mask, -1e9)
        return logits, self.v(h).squeeze(-1)

    def arch(self) -> dict[str, int]:
        arch = {"obs_size": self.obs_size, "hidden": self.hidden, "layers": self.layers,
                "max_players": self.max_players}
        if self.advice:  # only when set: files written before the option stay identical
            arch["advice"] = 1
        return arch


class NumpyPolicy:
    """The same network in numpy, for fast single-view inference in agents and opponents
    (a torch call costs ~50 us of overhead per sample; this costs ~15 us)."""

    def __init__(self, state_dict: dict[str, Any], layers: int,
                 max_players: int = DEFAULT_MAX_PLAYERS) -> None:
        def arr(key: str) -> np.ndarray:
            v = state_dict[key]
            return (v.detach().cpu().numpy() if isinstance(v, torch.Tensor) else np.asarray(v)).astype(np.float32)

        self.weights = [(arr(f"trunk.{2 * i}.weight").T.copy(), arr(f"trunk.{2 * i}.bias"))
                        for i in range(layers)]
        self.pi_w, self.pi_b = arr("pi.weight").T.copy(), arr("pi.bias")
        self.v_w, self.v_b = arr("v.weight").T.copy(), arr("v.bias")
        self.card_gain = float(arr("card_gain"))
        self.draw_gain = float(arr("draw_gain"))
        self.knock_gain = float(arr("knock_gain"))
        self.knock_at = float(arr("knock_at"))
        self.dv, self.hv, self.vwd = skip_indices(max_players)
        self.advice = "advice_gain" in state_dict
        self.advice_gain = float(arr("advice_gain")) if self.advice else 0.0
        self.advice_at = advice_offset(max_players)

    def skip(self, obs: np.ndarray) -> np.ndarray:
        """The skip terms of :class:`PolicyNet` for a batch ``(B, obs)``."""
        out = np.zeros((obs.shape[0], NUM_ACTIONS), dtype=np.float32)
        out[:, :52] = self.card_gain * obs[:, self.dv:self.dv + 52]
        vwd = obs[:, self.vwd]
        out[:, DRAW_DISCARD] = self.draw_gain * (vwd - obs[:, self.hv]) * (vwd > 0)
        out[:, KNOCK] = self.knock_gain * (obs[:, self.hv] - self.knock_at)
        if self.advice:
            out += self.advice_gain * obs[:, self.advice_at:self.advice_at + NUM_ACTIONS]
        return out

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits for a batch ``(B, obs)`` or one observation."""
        single = obs.ndim == 1
        x = obs[None] if single else obs
        h = x
        for w, b in self.weights:
            h = np.maximum(h @ w + b, 0.0)
        out = h @ self.pi_w + self.pi_b + self.skip(x)
        out = out[0] if single else out
        return np.where(mask, out, np.float32(-1e9))

    def value(self, obs: np.ndarray) -> np.ndarray:
        h = obs
        for w, b in self.weights:
            h = np.maximum(h @ w + b, 0.0)
        return (h @ self.v_w + self.v_b)[..., 0]


# -- files ---------------------------------------------------------------------------------
def atomic_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save`` to a temp file in the same folder, then ``os.replace``: a crash
    mid-write leaves the previous file intact."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        torch.save(obj, tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a policy file is for sharing
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def policy_payload(net: PolicyNet, max_players: int, rules: Rules, config: dict[str, Any],
                   metrics: dict[str, Any] | None = None) -> dict[str, Any]:
    """The fields every policy file and checkpoint share."""
    import dataclasses

    return {
        "kind": POLICY_KIND,
        "format_version": FORMAT_VERSION,
        "arch": net.arch(),
        "max_players": max_players,
        "num_actions": NUM_ACTIONS,
        "rules": {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)},
        "state_dict": {k: v.detach().clone() for k, v in net.state_dict().items()},
        "config": config,
        "metrics": metrics or {},
    }


def export_policy(path: str | os.PathLike[str], payload: dict[str, Any]) -> None:
    """Write just the policy part of a checkpoint (small, safe to ship)."""
    keep = ("format_version", "arch", "max_players", "num_actions", "rules", "state_dict",
            "config", "metrics")
    atomic_save({"kind": POLICY_KIND, **{k: payload[k] for k in keep}}, path)


def load_file(path: str | os.PathLike[str], kinds: tuple[str, ...] = (POLICY_KIND, CHECKPOINT_KIND)) -> dict[str, Any]:
    """Load and validate a policy file or checkpoint; any problem is one ValueError line
    naming the file and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"policy file {str(path)!r} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, not a torch file, foreign pickle...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{str(path)!r} is not a readable scat policy/checkpoint "
                         f"(corrupt or truncated?): {first[:200]}") from None
    if not isinstance(data, dict) or data.get("kind") not in kinds:
        found = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{str(path)!r} is not a {' or '.join(kinds)} file (found {found!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{str(path)!r} has format version {data.get('format_version')!r}; "
                         f"this scat-env reads version {FORMAT_VERSION}")
    if data.get("num_actions") != NUM_ACTIONS:
        raise ValueError(f"{str(path)!r} was trained for {data.get('num_actions')} actions, "
                         f"this scat-env has {NUM_ACTIONS}")
    arch, maxp = data.get("arch") or {}, data.get("max_players")
    advice = bool(arch.get("advice", 0))
    if not isinstance(maxp, int) or arch.get("obs_size") != policy_observation_size(maxp, advice):
        raise ValueError(f"{str(path)!r}: observation size {arch.get('obs_size')!r} does not "
                         f"match this scat-env's encoder for {maxp!r} players "
                         f"({policy_observation_size(maxp, advice) if isinstance(maxp, int) else '?'})")
    return data


def build_net(data: dict[str, Any], path: str = "?") -> PolicyNet:
    arch = data["arch"]
    net = PolicyNet(arch["obs_size"], arch["hidden"], arch["layers"], data["max_players"],
                    advice=bool(arch.get("advice", 0)))
    _load_weights(net, data["state_dict"], repr(path))
    return net


def _load_weights(net: PolicyNet, state: dict[str, Any], what: str) -> None:
    """``net.load_state_dict`` with a mismatch reported as one ValueError line naming ``what``."""
    try:
        net.load_state_dict(state)
    except (RuntimeError, KeyError) as exc:
        raise ValueError(f"{what}: weights do not fit the network "
                         f"({str(exc).splitlines()[0][:200]})") from None


def warm_start(net: PolicyNet, data: dict[str, Any], path: str = "?", seed: int = 0) -> None:
    """Load the weights of a policy file into ``net`` to continue training from them.

    The file must have the same ``max_players``. A file without advice inputs may start a
    network with them: the new input columns start at zero, so the network plays exactly
    like the file's policy plus ``advice_gain`` on the expert's move (the network's own
    initial value) -- an ensemble of the two from the first update.

    A network wider or deeper than the file's starts as the same function
    (:func:`grow_state`), so a larger network continues from a trained one instead of
    starting over: fine-tuning the 256x2 policy plateaued, and the question whether
    capacity is what holds it back needs a larger network that starts no weaker.
    """
    arch = data["arch"]
    if arch.get("max_players") != net.max_players:
        raise ValueError(f"init_from {path!r}: max_players is {arch.get('max_players')!r} in the "
                         f"file, {net.max_players!r} in the config")
    for key in ("hidden", "layers"):
        if not isinstance(arch.get(key), int) or arch[key] > getattr(net, key):
            raise ValueError(f"init_from {path!r}: {key} is {arch.get(key)!r} in the file, "
                             f"{getattr(net, key)!r} in the config (a network can grow from a "
                             f"file, not shrink)")
    had_advice = bool(arch.get("advice", 0))
    if had_advice and not net.advice:
        raise ValueError(f"init_from {path!r} was trained with advice inputs; set advice: true")
    state = {k: v.clone() for k, v in data["state_dict"].items()}
    if net.advice and not had_advice:
        w = state["trunk.0.weight"]
        state["trunk.0.weight"] = torch.cat([w, torch.zeros(w.shape[0], ADVICE_SIZE)], dim=1)
        state["advice_gain"] = net.advice_gain.detach().clone()
    if (arch["hidden"], arch["layers"]) != (net.hidden, net.layers):
        state = grow_state(state, arch["layers"], net.hidden, net.layers, seed)
    _load_weights(net, state, f"init_from {path!r}")


def grow_state(state: dict[str, torch.Tensor], layers: int, hidden: int, new_layers: int,
               seed: int = 0) -> dict[str, torch.Tensor]:
    """A :class:`PolicyNet` state dict grown to ``hidden`` units and ``new_layers`` trunk
    layers, computing the same logits and value (Net2Net, Chen et al. 2016).

    - Wider: each new unit copies a random old unit's incoming weights, and the old unit's
      outgoing weights are shared among its copies in random positive proportions that sum
      to one. Unequal shares give the copies different gradients, so they drift apart in
      training instead of staying twins (Net2Net adds noise instead, which changes the
      function).
    - Deeper: new layers go on top of the trunk with identity weights: the layer below ends
      in a ReLU, so its output is non-negative and ``relu(I h) = h``.
    """
    gen = torch.Generator().manual_seed(seed)
    state = dict(state)
    old = state["trunk.0.weight"].shape[0]
    if hidden > old:
        for i in range(layers):
            w_in, b_in = state[f"trunk.{2 * i}.weight"], state[f"trunk.{2 * i}.bias"]
            src = torch.cat([torch.arange(old), torch.randint(0, old, (hidden - old,), generator=gen)])
            share = torch.rand(hidden, generator=gen) + 0.5
            total = torch.zeros(old).index_add_(0, src, share)
            share = share / total[src]
            state[f"trunk.{2 * i}.weight"] = w_in[src].clone()
            state[f"trunk.{2 * i}.bias"] = b_in[src].clone()
            outs = [f"trunk.{2 * i + 2}.weight"] if i + 1 < layers else ["pi.weight", "v.weight"]
            for key in outs:
                state[key] = (state[key][:, src] * share).contiguous()
    for i in range(layers, new_layers):
        state[f"trunk.{2 * i}.weight"] = torch.eye(hidden)
        state[f"trunk.{2 * i}.bias"] = torch.zeros(hidden)
    return state


def rules_from_payload(data: dict[str, Any]) -> Rules:
    fields = dict(data.get("rules") or {})
    fields.pop("name", None)
    return Rules(**fields)
