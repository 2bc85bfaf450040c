"""``sb3:PATH``: a stable-baselines3 / sb3-contrib MaskablePPO zip as an agent.

It plays through :class:`agents.adapters.padded.PolicyAgent` (same padded input, same options
``:sample``, ``:full``, ``:sym``); a model trained on
:class:`training.batch_vec_env.BatchVecEnv` reads another vector and plays through
:class:`SB3CompactAgent` (option ``:sample``): the input's width says which. Loading needs
torch and sb3-contrib, imported only when such a spec is built.

The zip is read here, never by SB3's own loader: SB3's ``data`` member holds cloudpickled
objects (the policy class, the spaces, schedules) that its loader unpickles, so a crafted
zip would run code. :func:`read_sb3_zip` reads only ``policy.pth`` (and, to resume training,
``policy.optimizer.pth`` and two counters of ``data`` parsed as plain JSON) with
``torch.load(weights_only=True)``, checks every weight's name, dtype and shape, and builds the
policy from what those shapes say (an MLP of known layout over the scat observation of a
known table size) rather than from anything the file asks for.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from scat_env.actions import NUM_ACTIONS

from ..base import Agent
from ..compact import VectorAgent, vector_size
from ..neural.archive import MAX_PARAMETERS, check_parameters, check_zip_directory, parameters_text
from ..neural.encoding import FAMILY_PIECES, pieces_named, policy_observation_size
from ..neural.policy_file import (
    ACTION_WIDTHS,
    MAX_HIDDEN,
    MAX_LAYERS,
    PLAYERS_RANGE,
    safe_torch_load,
)
from ..registry import register
from .padded import PolicyAgent, parse_policy_spec

#: Largest ``policy.pth`` read: the weights of a policy of :data:`MAX_PARAMETERS` and 1 MiB
#: of torch's framing; a larger member is refused unread.
MAX_WEIGHTS_BYTES = 4 * MAX_PARAMETERS + 2**20
#: Largest ``policy.optimizer.pth`` read: Adam keeps two moments per weight.
MAX_OPTIMIZER_BYTES = 2 * MAX_WEIGHTS_BYTES
#: Largest ``data`` member read (it is JSON; ours are a few kB).
MAX_DATA_BYTES = 4 * 2**20
#: The most entries an SB3 zip may have (it saves 6).
MAX_SB3_ENTRIES = 64


@dataclass
class SB3File:
    """What :func:`read_sb3_zip` takes from an SB3 zip: the policy weights, the layer
    sizes they imply, the table size of their input, and for a resume the optimizer state
    and step counters."""

    weights: dict[str, Any]
    pi_arch: list[int]
    vf_arch: list[int]
    max_players: int
    actions: int = NUM_ACTIONS
    extra: tuple[str, ...] = ()  # the pieces a family of rules adds (encoding.EXTRA_PIECES)
    #: The input is :func:`agents.compact.vector_inputs` of ``max_players`` seats (a model
    #: trained on :class:`training.batch_vec_env.BatchVecEnv`), not the env's observation.
    compact: bool = False
    optimizer: dict[str, Any] | None = None
    num_timesteps: int = 0
    n_updates: int = 0

    def build_policy(self) -> Any:
        """A ``MaskableActorCriticPolicy`` of this layout holding these weights (eval mode)."""
        import gymnasium as gym
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

        size = (vector_size(self.max_players) if self.compact else
                policy_observation_size(self.max_players, extra=pieces_named(self.extra)))
        obs = gym.spaces.Box(0.0, 1.0, (size,), dtype=np.float32)
        policy = MaskableActorCriticPolicy(obs, gym.spaces.Discrete(self.actions), lambda _: 0.0,
                                           net_arch={"pi": self.pi_arch, "vf": self.vf_arch})
        policy.load_state_dict(self.weights)
        policy.eval()
        return policy


def _member(zf: zipfile.ZipFile, name: str, where: str, limit: int, why: str = "") -> bytes:
    """One member of the zip, refused unread when it says it is larger than ``limit`` and
    cut off there whatever it says (``why``: the bound's reason, for the error)."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"{where} is not a stable-baselines3 model zip (no {name!r})") from None
    if info.file_size > limit:
        raise ValueError(f"{where}: {name} is too large ({info.file_size:,} bytes){why}")
    with zf.open(info) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{where}: {name} is too large{why}")
    return data


def _torch_member(zf: zipfile.ZipFile, name: str, where: str, limit: int) -> Any:
    blob = _member(zf, name, where, limit, f"; {parameters_text()}")
    return safe_torch_load(io.BytesIO(blob), f"{where} ({name})")


def _layers(weights: dict[str, Any], prefix: str, size: int, where: str) -> list[int]:
    """The hidden sizes of the MLP under ``prefix`` (``Linear`` at even indices, each fed by
    the one before), checked against the bounds policy files have."""
    sizes: list[int] = []
    while f"{prefix}.{2 * len(sizes)}.weight" in weights and len(sizes) <= MAX_LAYERS:
        w = weights[f"{prefix}.{2 * len(sizes)}.weight"]
        if w.dim() != 2 or w.shape[1] != size or not 1 <= w.shape[0] <= MAX_HIDDEN:
            raise ValueError(f"{where}: {prefix}.{2 * len(sizes)}.weight has shape "
                             f"{list(w.shape)}; expected [1..{MAX_HIDDEN}, {size}]")
        size = int(w.shape[0])
        sizes.append(size)
    if not 1 <= len(sizes) <= MAX_LAYERS:
        raise ValueError(f"{where}: {prefix} has {len(sizes)} layers, expected 1 to {MAX_LAYERS}")
    return sizes


def _expected_shapes(obs: int, pi: list[int], vf: list[int], actions: int
                     ) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for prefix, sizes in (("mlp_extractor.policy_net", pi), ("mlp_extractor.value_net", vf)):
        fan_in = obs
        for i, h in enumerate(sizes):
            shapes[f"{prefix}.{2 * i}.weight"] = (h, fan_in)
            shapes[f"{prefix}.{2 * i}.bias"] = (h,)
            fan_in = h
    shapes.update({"action_net.weight": (actions, pi[-1]), "action_net.bias": (actions,),
                   "value_net.weight": (1, vf[-1]), "value_net.bias": (1,)})
    return shapes


def input_layout(obs: int) -> tuple[int, tuple[str, ...]] | None:
    """(table size, extra pieces) of an SB3 policy's input size, or None. An SB3 zip records
    no architecture of ours, so the input size tells both: each player more adds far more
    entries (a 52-card block per opponent) than any family's pieces, so no two readings
    share a size (a test checks every pair)."""
    lo, hi = PLAYERS_RANGE
    for extra in FAMILY_PIECES:
        for n in range(lo, hi + 1):
            if policy_observation_size(n, extra=pieces_named(extra)) == obs:
                return n, extra
    return None


def compact_layout(obs: int) -> int | None:
    """The table size of a :class:`training.batch_vec_env.BatchVecEnv` vector ``obs``
    wide, or None. No such width is also an env observation's (a test checks every pair),
    so the input size alone says which reading a zip needs."""
    lo, hi = PLAYERS_RANGE
    for m in range(lo, hi + 1):
        if vector_size(m) == obs:
            return m
    return None


def _check_weights(weights: Any, where: str
                   ) -> tuple[list[int], list[int], int, int, tuple[str, ...], bool]:
    """(policy layers, value layers, table size, actions, extra pieces, whether the input is
    a BatchVecEnv vector) of SB3 MLP weights, every tensor
    checked: names, float32, shapes that chain, a scat observation in, scat actions out (the
    draw-and-discard game's, or the whole action space), finite."""
    import torch

    if not isinstance(weights, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()):
        raise ValueError(f"{where}: policy.pth is not a table of named tensors")
    first = weights.get("mlp_extractor.policy_net.0.weight")
    if first is None or first.dim() != 2:
        raise ValueError(f"{where}: policy.pth holds no MlpPolicy weights "
                         "(mlp_extractor.policy_net.0.weight)")
    obs = int(first.shape[1])
    found = input_layout(obs)
    compact = found is None and compact_layout(obs) is not None
    if compact:
        found = (compact_layout(obs) or 0, ())
    if found is None:
        raise ValueError(f"{where}: observation size {obs} matches no scat table size")
    players, extra = found
    pi = _layers(weights, "mlp_extractor.policy_net", obs, where)
    vf = _layers(weights, "mlp_extractor.value_net", obs, where)
    out = weights.get("action_net.bias")
    actions = int(out.shape[0]) if out is not None and out.dim() == 1 else NUM_ACTIONS
    if actions not in ACTION_WIDTHS:
        actions = NUM_ACTIONS  # reported below as a shape that does not fit
    shapes = _expected_shapes(obs, pi, vf, actions)
    check_parameters(shapes, where)
    if set(weights) != set(shapes):
        missing, extra = sorted(set(shapes) - set(weights)), sorted(set(weights) - set(shapes))
        raise ValueError(f"{where}: policy.pth does not fit an MlpPolicy (missing "
                         f"{missing[:3] or 'none'}, unexpected {[e[:40] for e in extra[:3]] or 'none'})")
    for name, shape in shapes.items():
        t = weights[name]
        if t.dtype != torch.float32 or tuple(t.shape) != shape:
            raise ValueError(f"{where}: {name} is {t.dtype}{list(t.shape)}, expected "
                             f"float32{list(shape)}")
        if not bool(torch.isfinite(t).all()):
            raise ValueError(f"{where}: {name} holds a value that is not finite")
    return pi, vf, players, actions, extra, compact


def _counter(data: dict[str, Any], key: str, where: str) -> int:
    value = data.get(key, 0)
    if type(value) is not int or not 0 <= value < 2**62:
        raise ValueError(f"{where}: data field {key!r} must be a whole number, got "
                         f"{str(value)[:40]!r}")
    return value


def read_sb3_zip(path: str | os.PathLike[str], optimizer: bool = False) -> SB3File:
    """Read an SB3 (Maskable)PPO zip without SB3's loader, so nothing in it runs.

    Reads ``policy.pth`` (and with ``optimizer``: ``policy.optimizer.pth`` and the
    ``num_timesteps`` / ``_n_updates`` counters of ``data``, parsed as JSON; its pickled
    entries are never decoded). Any problem is one ``ValueError`` line naming the file."""
    where = repr(str(path))
    if not os.path.isfile(path):
        raise ValueError(f"sb3 policy file {where} does not exist")
    try:
        check_zip_directory(path, where, MAX_SB3_ENTRIES)
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        raise ValueError(f"{where} is not a stable-baselines3 zip (corrupt or truncated?)") from None
    with zf:
        try:
            weights = _torch_member(zf, "policy.pth", where, MAX_WEIGHTS_BYTES)
            pi, vf, players, actions, extra, compact = _check_weights(weights, where)
            out = SB3File(weights, pi, vf, players, actions, extra, compact=compact)
            if optimizer:
                out.optimizer = _torch_member(zf, "policy.optimizer.pth", where,
                                              MAX_OPTIMIZER_BYTES)
                if not isinstance(out.optimizer, dict):
                    raise ValueError(f"{where}: policy.optimizer.pth is not an optimizer state")
                try:
                    data = json.loads(_member(zf, "data", where, MAX_DATA_BYTES))
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    raise ValueError(f"{where}: its data member is not JSON") from None
                if not isinstance(data, dict):
                    raise ValueError(f"{where}: its data member is not a JSON object")
                out.num_timesteps = _counter(data, "num_timesteps", where)
                out.n_updates = _counter(data, "_n_updates", where)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ValueError(f"{where} is not a readable stable-baselines3 zip (corrupt or "
                             f"truncated?): {str(exc)[:120]}") from None
    return out


class SB3Policy:
    """Adapter giving an SB3 (Maskable) actor-critic policy the ``logits(obs, mask)``
    interface."""

    def __init__(self, policy: Any, num_actions: int = NUM_ACTIONS,
                 extra: tuple[str, ...] = (), compact: bool = False) -> None:
        import torch

        self.policy = policy
        self.torch = torch
        # How many actions the network scores: read by agents.adapters.padded.known_actions, which
        # refuses a preset whose calls a draw-and-discard (56-output) network cannot make.
        self.num_actions = num_actions
        self.extra = extra  # read by agents.adapters.padded.read_pieces
        self.compact = compact  # a BatchVecEnv vector in (SB3File.compact)

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.no_grad():
            single = obs.ndim == 1
            t = torch.as_tensor(obs[None] if single else obs, dtype=torch.float32)
            dist = self.policy.get_distribution(t)
            logits = dist.distribution.logits.numpy()
            logits = logits[0] if single else logits
        missing = mask.shape[-1] - logits.shape[-1]
        if missing > 0:  # a policy of the draw-and-discard actions only: it never calls
            pad = np.full((*logits.shape[:-1], missing), -1e9, dtype=logits.dtype)
            logits = np.concatenate([logits, pad], axis=-1)
        return np.where(mask, logits, np.float32(-1e9))


class SB3CompactAgent(VectorAgent):
    """An SB3 policy trained on :class:`training.batch_vec_env.BatchVecEnv`, played from
    the view: the view's compact observation (:func:`scat_env.batch.reference.compact_observation`),
    its scoring features and :func:`agents.compact.vector_inputs`, the encoding the env
    trained it on; the most likely legal move, or ``:sample``."""

    def __init__(self, policy: SB3Policy, max_players: int, sample: bool = False,
                 seed: int | None = None, name: str = "sb3") -> None:
        super().__init__(policy, max_players, sample, seed, name)


@lru_cache(maxsize=8)
def _load_sb3(path: str) -> tuple[SB3Policy, int]:
    try:
        import sb3_contrib  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        raise ValueError(f"sb3:{path} needs stable-baselines3 and sb3-contrib "
                         "(pip install 'scat-env[train]')") from None
    loaded = read_sb3_zip(path)
    return (SB3Policy(loaded.build_policy(), loaded.actions, loaded.extra, loaded.compact),
            loaded.max_players)


def _make_sb3(arg: str | None, seed: int | None) -> Agent:
    path, options = parse_policy_spec(arg, "sb3")
    policy, max_players = _load_sb3(path)
    if policy.compact:
        if not options["active_only"] or "symmetry" in options:
            raise ValueError(f"sb3:{path} was trained on BatchVecEnv's vector: it takes "
                             "only the option 'sample'")
        return SB3CompactAgent(policy, max_players, sample=options["sample"], seed=seed,
                               name=f"sb3:{path}")
    return PolicyAgent(policy, max_players, seed=seed, name=f"sb3:{path}", **options)


register("sb3", _make_sb3, "trained stable-baselines3 MaskablePPO policy: "
         "sb3:PATH.zip[:sample][:full][:sym[=N]]")

__all__ = ["SB3CompactAgent", "SB3File", "SB3Policy", "read_sb3_zip"]
