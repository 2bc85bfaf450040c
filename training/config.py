"""Training configs: one YAML file per run, validated on load.

A config names its trainer and holds that trainer's hyper-parameters at the top level::

    name: default
    trainer: native          # native (training.ppo) | sb3 (training.sb3_train)
    seed: 1
    total_steps: 2000000
    ...                      # any field of PPOConfig / SB3Config

Unknown keys are an error (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

TRAINERS = ("native", "sb3")


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> tuple[str, Any]:
    """Read ``path`` -> ``(trainer, config dataclass)``; raises ValueError naming the file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"training config {str(path)!r} does not exist")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{str(path)!r} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{str(path)!r}: expected a mapping of config fields")
    raw = {**raw, **(overrides or {})}
    trainer = raw.pop("trainer", "native")
    if trainer not in TRAINERS:
        raise ValueError(f"{str(path)!r}: trainer must be one of {TRAINERS}, got {trainer!r}")
    raw.setdefault("name", path.stem)
    if trainer == "native":
        from .ppo import PPOConfig as cls
    else:
        from .sb3_train import SB3Config as cls
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"{str(path)!r}: unknown field(s) for trainer {trainer!r}: "
                         f"{', '.join(unknown)} (known: {', '.join(sorted(known))})")
    try:
        return trainer, cls(**raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None
