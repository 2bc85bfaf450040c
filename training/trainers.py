"""The trainers ``scat train`` knows, by the name a config gives in ``trainer:``.

Like the agent registry (:mod:`agents.registry`), one table: a trainer is its name, its
config class (:mod:`training.config`, validated on load), its train function, named as
``"module:function"`` so that reading a config imports no torch, SB3 or Ray, the agent spec
of the policy its run folder holds, and a line of help. Another package adds one with
:func:`register_trainer`; ``scat train`` looks the config's trainer up here and nowhere else.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import BatchPPOConfig, RLlibConfig, SB3Config, TorchRLConfig

#: Trainers no longer offered, by what a config naming them is told instead.
RETIRED: dict[str, str] = {
    "native": ("trainer 'native' was retired; use trainer: batch (configs/train/default.yaml), "
               "whose policies compact: plays (the shipped one: compact:scat_batch_set)"),
}


@dataclass(frozen=True)
class Trainer:
    """One trainer: what :func:`register_trainer` was given."""

    name: str
    config_cls: type
    train: Callable[..., dict[str, Any]] | str  # or "module:function", imported when run
    help: str
    #: The agent spec of the policy a finished run leaves in its folder.
    policy_spec: Callable[[Path], str]
    #: What to install when the train function's libraries are missing.
    install: str = "pip install -e '.[train]' (or pip install 'scat-env[train]')"
    #: Libraries the run needs that its module imports only when training starts: imported
    #: by :meth:`train_function`, so that a missing one is named before the run folder
    #: exists rather than after.
    needs: tuple[str, ...] = ()

    def train_function(self) -> Callable[..., dict[str, Any]]:
        """The train function, imported with the libraries it needs (an ``ImportError``
        names a missing library)."""
        for library in self.needs:
            importlib.import_module(library)
        if callable(self.train):
            return self.train
        module, _, name = self.train.partition(":")
        return getattr(importlib.import_module(module), name)


_TRAINERS: dict[str, Trainer] = {}


def register_trainer(name: str, config_cls: type, train_fn: Callable[..., dict[str, Any]] | str,
                     help: str, policy_spec: Callable[[Path], str] | None = None,
                     install: str | None = None, needs: tuple[str, ...] = ()) -> None:
    """Add (or replace) the trainer ``name``: ``train_fn(cfg, out, resume=, log=)`` returns
    the run's summary; ``config_cls`` is a dataclass whose fields are the YAML's keys."""
    extra = {} if install is None else {"install": install}
    _TRAINERS[name] = Trainer(name, config_cls, train_fn, help,
                              policy_spec or (lambda out: f"compact:{out / 'policy.npz'}"),
                              needs=needs, **extra)


def trainer(name: Any) -> Trainer:
    """The trainer ``name``; anything else is one ``ValueError`` line listing the known
    ones (a retired one names its replacement)."""
    if isinstance(name, str) and name in RETIRED:
        raise ValueError(RETIRED[name])
    if not isinstance(name, str) or name not in _TRAINERS:
        raise ValueError(f"unknown trainer {str(name)[:60]!r}; known trainers: "
                         f"{', '.join(_TRAINERS)}")
    return _TRAINERS[name]


def trainers() -> dict[str, str]:
    """The known trainers' names and help lines, in registration order."""
    return {name: t.help for name, t in _TRAINERS.items()}


register_trainer("batch", BatchPPOConfig, "training.batch_ppo:train",
                 "PPO on the batched engine (training.batch_ppo): the shipped policies' trainer",
                 lambda out: f"compact:{out / 'policy.npz'}")
register_trainer("sb3", SB3Config, "training.adapters.sb3:train",
                 "stable-baselines3 MaskablePPO on the single-agent env (training.adapters.sb3)",
                 lambda out: f"sb3:{out / 'checkpoint.zip'}", needs=("torch", "sb3_contrib"))
register_trainer("rllib", RLlibConfig, "training.adapters.rllib:train",
                 "RLlib PPO on the multi-agent env (training.adapters.rllib)",
                 lambda out: f"rllib:{out / 'policy'}", install="pip install -e '.[rllib]'",
                 needs=("torch", "ray.rllib"))
register_trainer("torchrl", TorchRLConfig, "training.adapters.torchrl:train",
                 "TorchRL PPO on the batched engine (training.adapters.torchrl)",
                 lambda out: f"torchrl:{out / 'policy'}",
                 install="pip install -e '.[torchrl]'", needs=("torch", "torchrl"))
