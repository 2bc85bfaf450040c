"""The policy network in torch, warm starts, and the training checkpoint.

Training only: playing a trained policy needs :mod:`agents.neural` (the padded input, the
numpy forward pass, the policy file format), which this module builds on.

Files:

- *policy file* (``kind = "scat-policy"``, format version 2): the ``.npz`` of
  :mod:`agents.neural.policy_file`, read with numpy alone; :func:`export_policy` writes it.
  Version-1 policy files (torch ``.pt``) still load here (:func:`load_file`), and
  ``python -m training.policy_net convert OLD.pt NEW.npz`` rewrites one.
- *training checkpoint* (``kind = "scat-ppo-checkpoint"``, a torch file written atomically
  and read with ``torch.load(weights_only=True)``): the policy fields plus the optimizer,
  RNG states, step counters and the rollout state (for ``--resume``). A checkpoint is also
  a valid policy for ``ppo:PATH`` where torch is installed. Neither playing nor resuming
  runs code from it: the rollout state is tensors and plain values too
  (:meth:`training.rollout.Runner.state_dict`), checked field by field on resume.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.expert import ADVICE_SIZE
from agents.neural.encoding import (
    DEFAULT_MAX_PLAYERS,
    advice_offset,
    skip_indices,
)
from agents.neural.policy_file import (
    POLICY_KIND,
    check_arch,
    check_state_dict,
    is_policy_file,
    load_policy,
    safe_torch_load,
    save_policy,
)
from scat_env.actions import CORE_ACTIONS, DRAW_DISCARD, KNOCK, NUM_ACTIONS
from scat_env.rules import Rules

#: Format version of the torch files: checkpoints, and policy files before the ``.npz``.
FORMAT_VERSION = 1
CHECKPOINT_KIND = "scat-ppo-checkpoint"


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class PolicyNet(nn.Module):
    """Actor-critic MLP: a shared trunk, a masked policy head and a value head, plus three
    learned scalar "skip" terms that carry the scoring features straight to the actions
    they are about (an inductive bias, not a rule: both gains are trained); the same network in numpy,
    for play, is :class:`agents.neural.forward.NumpyPolicy`:

    - discard ``c``: ``+ card_gain * (points left after discarding c)``;
    - take the top discard: ``+ draw_gain * (points with it - points now)``;
    - knock: ``+ knock_gain * (points now - knock_at)`` (starts like ``greedy``'s threshold;
      without it early, badly timed knocks cost 2 lives and the policy learned never to
      knock at all, measured: knock rate 0% after 2M samples).

    Without them the MLP must learn 52 separate input-to-output mappings from one-hots
    before it even discards like ``greedy``; with them it starts there and learns the rest.
    With ``advice`` (the input ends with the expert's move and numbers, see
    :class:`agents.neural.encoding.PaddedEncoder`) a fourth term adds ``advice_gain`` to the expert's move, so a
    new network starts close to the expert and PPO learns where to play otherwise.
    Illegal actions get logit ``-1e9`` (not ``-inf``) so an all-illegal row stays finite.
    """

    def __init__(self, obs_size: int, hidden: int = 256, layers: int = 2,
                 max_players: int = DEFAULT_MAX_PLAYERS, advice: bool = False,
                 advice_gain: float = 3.0, extra: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.extra = tuple(extra)  # the family's observation pieces at the input's end
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
        if self.advice:  # the expert's action one-hot covers the draw-and-discard actions
            at = self.advice_at
            skip[:, :CORE_ACTIONS] += self.advice_gain * obs[:, at:at + CORE_ACTIONS]
        logits = (logits + skip).masked_fill(~mask, -1e9)
        return logits, self.v(h).squeeze(-1)

    def arch(self) -> dict[str, int]:
        arch = {"obs_size": self.obs_size, "hidden": self.hidden, "layers": self.layers,
                "max_players": self.max_players}
        if self.advice:  # only when set: files written before the option stay identical
            arch["advice"] = 1
        if self.extra:  # likewise: a lives game's file has no such field
            arch["extra"] = list(self.extra)
        return arch


# -- files ---------------------------------------------------------------------------------
def atomic_save(obj: Any, path: str | os.PathLike[str]) -> None:
    """``torch.save`` to a temp file in the same folder, then ``os.replace``: a crash or a
    full disk mid-write leaves the previous file intact and no temp file behind. An
    operating-system error (read-only folder, no space) is one ``ValueError`` line."""
    path = Path(path)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        os.close(fd)
        torch.save(obj, tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a policy file is for sharing
        os.replace(tmp, path)
    except OSError as exc:
        raise ValueError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    except RuntimeError:  # torch reports a short write (a full disk) as "enforce fail ..."
        raise ValueError(f"cannot write {str(path)!r}: the write failed (is the disk "
                         "full?)") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def remove_stale_temps(folder: str | os.PathLike[str], names: tuple[str, ...]) -> list[str]:
    """Delete the temp files that a killed writer left beside ``names`` in ``folder``
    (``NAME.<random>.tmp...``, as :func:`atomic_save` and the policy-file writer name them);
    returns what was removed. Only for a folder this process holds
    (:func:`training.runlock.exclusive_folder`): no other writer can be mid-write there."""
    removed = []
    for name in names:
        for path in Path(folder).glob(f"{name}.*.tmp*"):
            if path.is_file():
                path.unlink()
                removed.append(path.name)
    return removed


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
    """Write just the policy part of a checkpoint or policy payload as a policy file
    (:mod:`agents.neural.policy_file`: small, read with numpy alone, safe to ship)."""
    keep = ("arch", "max_players", "num_actions", "rules", "config", "metrics")
    save_policy(path, payload["state_dict"], {k: payload[k] for k in keep})


def load_file(path: str | os.PathLike[str], kinds: tuple[str, ...] = (POLICY_KIND, CHECKPOINT_KIND)) -> dict[str, Any]:
    """Load and validate a policy file (either format) or a checkpoint, as a payload dict
    with a torch ``state_dict``; any problem is one ValueError line naming the file and
    what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"policy file {str(path)!r} does not exist")
    if is_policy_file(path):
        if POLICY_KIND not in kinds:
            raise ValueError(f"{str(path)!r} is a {POLICY_KIND} file, not a "
                             f"{' or '.join(kinds)} file")
        loaded = load_policy(path)
        state = {k: torch.from_numpy(v) for k, v in loaded.arrays.items()}
        return {**loaded.metadata, "state_dict": state}
    data = safe_torch_load(path, repr(str(path)))  # old torch, a flipped byte: refused
    if not isinstance(data, dict) or data.get("kind") not in kinds:
        found = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{str(path)!r} is not a {' or '.join(kinds)} file (found {found!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{str(path)!r} has format version {data.get('format_version')!r}; "
                         f"this scat-env reads version {FORMAT_VERSION}")
    check_arch(data, repr(str(path)))
    data["state_dict"] = check_state_dict(data.get("state_dict"), repr(str(path)))
    return data


def build_net(data: dict[str, Any], path: str = "?") -> PolicyNet:
    arch = data["arch"]
    net = PolicyNet(arch["obs_size"], arch["hidden"], arch["layers"], data["max_players"],
                    advice=bool(arch.get("advice", 0)), extra=tuple(arch.get("extra", ())))
    _load_weights(net, data["state_dict"], repr(path))
    return net


def _load_weights(net: PolicyNet, state: dict[str, Any], what: str) -> None:
    """``net.load_state_dict`` with a mismatch reported as one ValueError line naming ``what``.

    A file from before the calls of the variations has the 56 outputs of the draw-and-discard
    game: the outputs of the calls start at zero (they are masked out wherever the rules do
    not offer them), so the network plays as the file did."""
    pi = state.get("pi.weight")
    if isinstance(pi, torch.Tensor) and pi.ndim == 2 and CORE_ACTIONS <= pi.shape[0] < NUM_ACTIONS:
        missing = NUM_ACTIONS - pi.shape[0]
        state = dict(state)
        state["pi.weight"] = torch.cat([pi, torch.zeros(missing, pi.shape[1], dtype=pi.dtype)])
        bias = state["pi.bias"]
        state["pi.bias"] = torch.cat([bias, torch.zeros(missing, dtype=bias.dtype)])
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


def convert(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Rewrite a torch policy file or checkpoint ``src`` as a policy file ``dst``."""
    export_policy(dst, load_file(src))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m training.policy_net",
                                     description="Policy file tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    conv = sub.add_parser("convert", help="rewrite a torch .pt policy or checkpoint as .npz")
    conv.add_argument("src")
    conv.add_argument("dst")
    args = parser.parse_args()
    try:
        convert(args.src, args.dst)
    except ValueError as exc:
        raise SystemExit(f"error: {exc}") from None
