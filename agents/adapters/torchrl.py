"""``torchrl:PATH``: a policy trained with TorchRL (:mod:`training.adapters.torchrl`) as an agent.

PATH is the exported policy folder (``runs/torchrl/policy``) or the run folder holding it
under ``policy/``. The export is two plain files, as for ``rllib:``:

- ``weights.pt``: the actor's and the critic's weights as a plain state dict (``pi.0.weight``
  ... the ReLU MLP to 67 logits, ``vf.*`` to the value), read with
  ``torch.load(weights_only=True)`` and checked name by name, shape by shape;
- ``meta.json``: format, architecture, table size, rules.

The policy reads the batched engine's learner vector (:func:`agents.compact.vector_inputs`
of its table size), rebuilt here from the player's view (:func:`agents.compact.view_inputs`):
the vector it was trained on, from what the seat may see and nothing else. It plays the
draw-and-discard observation (rules whose observation has pieces are refused) at tables of
at most the size it was trained for. Moves are the most likely legal action, or sampled
with ``torchrl:PATH:sample``. Inference is numpy; loading needs torch, not TorchRL.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS

from ..base import Agent
from ..compact import VectorAgent, vector_size
from ..registry import register
from . import rllib
from .rllib import POLICY_PREFIX, RLlibPolicy

FORMAT = "scat-torchrl-policy"


def write_export(weights: dict[str, Any], folder: str | os.PathLike[str],
                 meta: dict[str, Any]) -> None:
    """``weights`` and ``meta`` as a TorchRL export: the plain files of
    :func:`agents.adapters.rllib.write_export`, under this format's name."""
    rllib.write_export(weights, folder, meta, fmt=FORMAT)


def read_meta(folder: Path) -> dict[str, Any]:
    """``meta.json`` of an export, every field the loader uses checked."""
    where = repr(str(folder / rllib.META_FILE))
    if (folder / rllib.META_FILE).stat().st_size > rllib.MAX_META_BYTES:
        raise ValueError(f"{where} is too large for a policy's metadata")
    try:
        meta = json.loads((folder / rllib.META_FILE).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{where} is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{where} is not a TorchRL policy export (format {FORMAT!r})")
    if meta.get("version") != rllib.FORMAT_VERSION:
        raise ValueError(f"{where}: format version {str(meta.get('version'))[:20]!r}; this "
                         f"scat-env reads version {rllib.FORMAT_VERSION}")
    arch = meta.get("architecture")
    if not isinstance(arch, dict) or arch.get("kind") != "mlp" or arch.get("activation") != "relu":
        raise ValueError(f"{where}: architecture must be a ReLU mlp, got {str(arch)[:80]}")
    rllib._whole(arch, "hidden", 1, rllib.MAX_HIDDEN, where)
    rllib._whole(arch, "layers", 1, rllib.MAX_LAYERS, where)
    players = rllib._whole(meta, "max_players", MIN_PLAYERS, MAX_PLAYERS, where)
    if arch.get("observation_size") != vector_size(players):
        raise ValueError(f"{where}: observation_size must be {vector_size(players)}, the "
                         f"learner vector of {players} seats, got "
                         f"{str(arch.get('observation_size'))[:20]!r}")
    if not isinstance(meta.get("rules"), str):
        raise ValueError(f"{where}: rules must name the rules it was trained with")
    return meta


class TorchRLAgent(VectorAgent):
    """Plays a TorchRL export from the view, on the batched engine's learner vector; a
    sampling agent draws only where more than one move is legal."""

    FORCED_MOVE_DRAWS = False

    def __init__(self, policy: RLlibPolicy, max_players: int, *, sample: bool = False,
                 seed: int | None = None, name: str = "torchrl") -> None:
        super().__init__(policy, max_players, sample, seed, name)


def policy_of(weights: dict[str, np.ndarray], layers: int) -> RLlibPolicy:
    """The numpy policy head of ``weights`` (the ``pi.*`` stack)."""
    return RLlibPolicy({k: v for k, v in weights.items() if k.startswith(POLICY_PREFIX + ".")},
                       layers)


@lru_cache(maxsize=8)
def _load(folder: str, stamp: tuple[int, int]) -> tuple[RLlibPolicy, int]:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ValueError(f"torchrl:{folder} needs torch (pip install torch)") from None
    meta = read_meta(Path(folder))
    weights = rllib.read_weights(Path(folder), meta)
    return policy_of(weights, meta["architecture"]["layers"]), meta["max_players"]


def load_export(path: str) -> tuple[RLlibPolicy, int]:
    """(policy, table size) of the export at ``path``, cached by the weights file's time
    and size (a run that writes a new export is read again)."""
    folder = rllib.resolve_export(path, "torchrl")
    weights = folder / rllib.WEIGHTS_FILE
    st = weights.stat() if weights.is_file() else None
    return _load(str(folder), (st.st_mtime_ns, st.st_size) if st else (0, 0))


def _make_torchrl(arg: str | None, seed: int | None) -> Agent:
    path, sample = arg or "", False
    if path.endswith(":sample"):
        path, sample = path[: -len(":sample")], True
    if not path:
        raise ValueError("torchrl: needs the exported policy, e.g. torchrl:runs/torchrl/policy")
    policy, players = load_export(path)
    return TorchRLAgent(policy, players, sample=sample, seed=seed, name=f"torchrl:{path}")


register("torchrl", _make_torchrl, "policy trained with TorchRL (training.adapters.torchrl): "
         "torchrl:PATH[:sample]")

__all__ = ["TorchRLAgent", "load_export", "write_export"]
