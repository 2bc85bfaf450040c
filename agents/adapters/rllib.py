"""``rllib:PATH``: a policy trained with RLlib (:mod:`training.adapters.rllib`) as an agent.

PATH is the exported policy folder (``runs/rllib/policy``), or the run folder that holds it
under ``policy/``. The export is two plain files, the run's checkpoint too (a resume reads it
back the same way):

- ``weights.pt``: the RL module's ``state_dict`` (:data:`POLICY_PREFIX` layers for the action
  logits, :data:`VALUE_PREFIX` for the value), read with ``torch.load(weights_only=True)``;
- ``meta.json``: the architecture, the table size and the rules it was trained for.

Nothing RLlib pickles (``class_and_ctor_args.pkl``, the algorithm state) is ever read: the
network is built here from the metadata, and every weight's name, dtype and shape is
checked against it before a single number is used. Loading needs torch and nothing of ray.
Inference runs in numpy on the weights read (one decision: a few tens of microseconds).

The policy reads the env's own observation (``scat_env.env(num_players=n)``: the view of a
table of exactly ``n`` seats, the seats put out included), so it plays tables of the size it
was trained for; any other size is refused before the first move. An export trained on the
batched engine (``meta.json`` ``"input": "batch_vector"``) reads the learner vector of
:func:`agents.compact.vector_inputs` instead, rebuilt from the view, and plays the
draw-and-discard rules at tables of up to its size. Moves are the most
likely legal action (``rllib:PATH:sample`` samples from the masked policy instead).
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from scat_env import NUM_ACTIONS, PlayerView, Rules
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

from ..base import Agent
from ..registry import register

#: What ``meta.json`` says it is; a file naming another format is refused.
FORMAT = "scat-rllib-policy"
FORMAT_VERSION = 1
WEIGHTS_FILE = "weights.pt"
META_FILE = "meta.json"
#: The layers of the action logits and of the value in the module's ``state_dict``: a stack
#: of ``Linear`` at even indices with ReLU between them (``pi.0``, ``pi.2``, ... ``vf.N``).
POLICY_PREFIX = "pi"
VALUE_PREFIX = "vf"
#: Bounds of the architecture a file may ask for (the training config's bounds).
MAX_HIDDEN = 4096
MAX_LAYERS = 16
MAX_WEIGHTS_BYTES = 256 * 2**20
MAX_META_BYTES = 1 * 2**20
#: Rules fields that change what an action does or what a card id means: a table whose
#: rules differ from the training rules in one of them is refused.
RULES_THE_POLICY_MUST_KNOW = ("deck", "knock_mode")
#: What the policy reads, by the trainer config's ``env``: the env's own observation of a
#: table of ``num_players`` seats (``aec``), or the batched engine's learner vector
#: (:func:`agents.compact.vector_inputs`, ``batched``), rebuilt here from the view.
INPUT_OF = {"aec": "env", "batched": "batch_vector"}


def observation_size(reads: str, num_players: int, rules: Rules) -> int:
    """The width of what a policy reading ``reads`` takes at ``num_players`` seats."""
    if reads == "batch_vector":
        from ..compact import vector_size

        return vector_size(num_players)
    from scat_env.observation import ObservationEncoder

    return ObservationEncoder(num_players, rules).size


def layer_shapes(observation_size: int, hidden: int, layers: int, actions: int
                 ) -> dict[str, tuple[int, ...]]:
    """Every weight of the module and its shape: two ReLU MLPs of ``layers`` hidden layers of
    ``hidden`` units over the observation, one to ``actions`` logits, one to the value."""
    shapes: dict[str, tuple[int, ...]] = {}
    for prefix, out in ((POLICY_PREFIX, actions), (VALUE_PREFIX, 1)):
        fan_in = observation_size
        for i, width in enumerate([hidden] * layers + [out]):
            shapes[f"{prefix}.{2 * i}.weight"] = (width, fan_in)
            shapes[f"{prefix}.{2 * i}.bias"] = (width,)
            fan_in = width
    return shapes


def build_mlp(observation_size: int, hidden: int, layers: int, out: int) -> Any:
    """The torch stack both heads use (``Linear``, ``ReLU``, ..., ``Linear``): the trainer's
    RL module and this loader build the same names from it."""
    from torch import nn

    mods: list[Any] = []
    fan_in = observation_size
    for _ in range(layers):
        mods += [nn.Linear(fan_in, hidden), nn.ReLU()]
        fan_in = hidden
    mods.append(nn.Linear(fan_in, out))
    return nn.Sequential(*mods)


def resolve_export(path: str | os.PathLike[str], library: str = "rllib") -> Path:
    """The export folder ``path`` names: itself when it holds ``meta.json``, else its
    ``policy/`` (a run folder). ``library`` names the kind of policy in messages."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{library} policy {str(path)!r} does not exist")
    if p.is_file():
        if p.name in (META_FILE, WEIGHTS_FILE):
            p = p.parent
        else:
            raise ValueError(f"{library} policy {str(path)!r} is a file; expected the exported "
                             "policy folder (meta.json, weights.pt) or a run folder")
    for candidate in (p, p / "policy"):
        if (candidate / META_FILE).is_file():
            return candidate
    raise ValueError(f"{library} policy {str(path)!r} holds no exported policy ({META_FILE}, "
                     f"or policy/{META_FILE} in a run folder)")


def write_export(weights: dict[str, Any], folder: str | os.PathLike[str],
                 meta: dict[str, Any], fmt: str = FORMAT) -> None:
    """Write an export: ``weights`` (name -> array or tensor) as a plain torch state dict in
    ``folder/weights.pt`` and ``meta`` (``format`` and ``version`` added) as
    ``folder/meta.json``. Each file goes to a temp name first and is moved into place, so a
    reader never sees half a file; the weights are checked against the metadata first."""
    import tempfile

    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"format": fmt, "version": FORMAT_VERSION, **meta}
    state = {k: torch.as_tensor(np.asarray(v, dtype=np.float32)).contiguous()
             for k, v in weights.items()}
    arch = meta["architecture"]
    want = layer_shapes(arch["observation_size"], arch["hidden"], arch["layers"], NUM_ACTIONS)
    if {k: tuple(v.shape) for k, v in state.items()} != want:
        raise ValueError(f"write_export: the weights do not fit the architecture {arch}")
    for name, write in ((WEIGHTS_FILE, lambda tmp: torch.save(state, tmp)),
                        (META_FILE, lambda tmp: Path(tmp).write_text(
                            json.dumps(meta, indent=2), encoding="utf-8"))):
        fd, tmp = tempfile.mkstemp(prefix=name + ".", suffix=".tmp", dir=folder)
        os.close(fd)
        try:
            write(tmp)
            os.replace(tmp, folder / name)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def _whole(meta: dict[str, Any], key: str, low: int, high: int, where: str) -> int:
    value = meta.get(key)
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{where}: {key} must be a whole number from {low} to {high}, "
                         f"got {str(value)[:40]!r}")
    return value


def read_meta(folder: Path) -> dict[str, Any]:
    """``meta.json`` of an export, every field the loader uses checked."""
    where = repr(str(folder / META_FILE))
    try:
        if (folder / META_FILE).stat().st_size > MAX_META_BYTES:
            raise ValueError(f"{where} is too large for a policy's metadata")
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{where} is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{where} is not an RLlib policy export (format {FORMAT!r})")
    if meta.get("version") != FORMAT_VERSION:
        raise ValueError(f"{where}: format version {str(meta.get('version'))[:20]!r}; this "
                         f"scat-env reads version {FORMAT_VERSION}")
    arch = meta.get("architecture")
    if not isinstance(arch, dict) or arch.get("kind") != "mlp" or arch.get("activation") != "relu":
        raise ValueError(f"{where}: architecture must be a ReLU mlp, got {str(arch)[:80]}")
    _whole(arch, "observation_size", 1, 100_000, where)
    _whole(arch, "hidden", 1, MAX_HIDDEN, where)
    _whole(arch, "layers", 1, MAX_LAYERS, where)
    if arch.get("actions") != NUM_ACTIONS:
        raise ValueError(f"{where}: actions must be {NUM_ACTIONS}, got "
                         f"{str(arch.get('actions'))[:20]!r}")
    _whole(meta, "num_players", MIN_PLAYERS, MAX_PLAYERS, where)
    if meta.setdefault("input", "env") not in INPUT_OF.values():
        raise ValueError(f"{where}: input must be one of {', '.join(INPUT_OF.values())}, got "
                         f"{str(meta.get('input'))[:30]!r}")
    if not isinstance(meta.get("rules"), str) or not isinstance(meta.get("rules_fields", {}), dict):
        raise ValueError(f"{where}: rules must name the rules it was trained with")
    return meta


def read_weights(folder: Path, meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """``weights.pt`` of an export as numpy arrays, checked name by name and shape by shape
    against the architecture ``meta`` declares."""
    from ..neural.archive import check_parameters
    from ..neural.policy_file import check_state_dict, safe_torch_load

    path = folder / WEIGHTS_FILE
    where = repr(str(path))
    if not path.is_file():
        raise ValueError(f"{where} does not exist")
    if path.stat().st_size > MAX_WEIGHTS_BYTES:
        raise ValueError(f"{where} is too large ({path.stat().st_size:,} bytes)")
    arch = meta["architecture"]
    want = layer_shapes(arch["observation_size"], arch["hidden"], arch["layers"], NUM_ACTIONS)
    check_parameters(want, where)  # before torch allocates what the file holds
    state = check_state_dict(safe_torch_load(path, where), where)
    if set(state) != set(want):
        missing, extra = sorted(set(want) - set(state)), sorted(set(state) - set(want))
        raise ValueError(f"{where} does not fit the architecture of {META_FILE} (missing "
                         f"{missing[:3] or 'none'}, unexpected "
                         f"{[e[:40] for e in extra[:3]] or 'none'})")
    for name, shape in want.items():
        if tuple(state[name].shape) != shape:
            raise ValueError(f"{where}: {name} has shape {list(state[name].shape)}, expected "
                             f"{list(shape)}")
    return {name: state[name].numpy().copy() for name in want}


class RLlibPolicy:
    """The policy head of an export, in numpy: masked logits of one observation."""

    def __init__(self, weights: dict[str, np.ndarray], layers: int) -> None:
        self.layers = [(weights[f"{POLICY_PREFIX}.{2 * i}.weight"],
                        weights[f"{POLICY_PREFIX}.{2 * i}.bias"]) for i in range(layers + 1)]

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = obs.astype(np.float32, copy=False)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return np.where(mask, x, np.float32(-1e9))


class RLlibExport:
    """One export read and checked: metadata and policy."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.folder = resolve_export(path)
        self.meta = read_meta(self.folder)
        arch = self.meta["architecture"]
        self.weights = read_weights(self.folder, self.meta)
        self.policy = RLlibPolicy(self.weights, arch["layers"])
        self.num_players: int = self.meta["num_players"]
        self.observation_size: int = arch["observation_size"]
        self.input: str = self.meta["input"]


class RLlibAgent(Agent):
    """Plays an exported RLlib policy on the env's own observation of its seat."""

    def __init__(self, export: RLlibExport, *, sample: bool = False, seed: int | None = None,
                 name: str = "rllib") -> None:
        super().__init__(seed)
        self.export = export
        self.sample = sample
        self.name = name
        self._encoders: dict[Rules, Any] = {}

    def _encoder(self, rules: Rules) -> Any:
        enc = self._encoders.get(rules)
        if enc is None:
            from scat_env.observation import ObservationEncoder

            enc = ObservationEncoder(self.export.num_players, rules)
            self._encoders[rules] = enc
        return enc

    def check_table(self, num_players: int, rules: Rules) -> None:
        trained = self.export.num_players
        if getattr(self.export, "input", "env") == "batch_vector":
            from ..compact import check_vector_table

            check_vector_table(self.name, num_players, trained, rules)
            return
        if num_players != trained:
            raise ValueError(f"{self.name} was trained for tables of {trained} players (it reads "
                             f"that table's observation); this table has {num_players}")
        size = self._encoder(rules).size
        if size != self.export.observation_size:
            raise ValueError(f"{self.name} reads an observation of {self.export.observation_size} "
                             f"numbers; these rules ({rules.name}) give {size}")
        fields = self.export.meta.get("rules_fields", {})
        for key in RULES_THE_POLICY_MUST_KNOW:
            if key in fields and fields[key] != getattr(rules, key):
                raise ValueError(f"{self.name} was trained with {key} {fields[key]!r}; these "
                                 f"rules ({rules.name}) have {getattr(rules, key)!r}")

    def act(self, view: PlayerView) -> int:
        legal = list(view.legal_actions)
        if len(legal) == 1:
            return legal[0]
        if getattr(self.export, "input", "env") == "batch_vector":
            from ..compact import view_vector

            obs = view_vector(view, self.export.num_players)
        else:
            if view.num_players != self.export.num_players:
                self.check_table(view.num_players, view.rules)
            obs = self._encoder(view.rules).encode(view)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[legal] = True
        z = self.export.policy.logits(obs, mask)[legal]
        if not self.sample:
            return int(legal[int(np.argmax(z))])
        top = float(z.max())
        weights = [math.exp(float(v) - top) for v in z]
        return self.rng.choices(legal, weights=weights)[0]


@lru_cache(maxsize=8)
def _load(path: str, stamp: tuple[int, int]) -> RLlibExport:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ValueError(f"rllib:{path} needs torch (pip install torch)") from None
    return RLlibExport(path)


def load_export(path: str) -> RLlibExport:
    """The export at ``path`` (cached by the weights file's size and time: a run that writes
    a new export is read again)."""
    folder = resolve_export(path)
    st = (folder / WEIGHTS_FILE).stat() if (folder / WEIGHTS_FILE).is_file() else None
    return _load(str(folder), (st.st_mtime_ns, st.st_size) if st else (0, 0))


def _make_rllib(arg: str | None, seed: int | None) -> Agent:
    path = arg or ""
    sample = False
    if path.endswith(":sample"):
        path, sample = path[: -len(":sample")], True
    if not path:
        raise ValueError("rllib: needs the exported policy, e.g. rllib:runs/rllib/policy")
    return RLlibAgent(load_export(path), sample=sample, seed=seed, name=f"rllib:{path}")


register("rllib", _make_rllib, "policy trained with RLlib (training.adapters.rllib): "
         "rllib:PATH[:sample] (the export folder, or its run or checkpoint folder)")

__all__ = ["RLlibAgent", "RLlibExport", "RLlibPolicy", "build_mlp", "layer_shapes",
           "load_export", "resolve_export", "write_export"]
