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
import types
import typing
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
    for name, value in raw.items():
        problem = _type_problem(value, typing.get_type_hints(cls)[name])
        if problem:
            raise ValueError(f"{str(path)!r}: field {name!r} {problem} (got {value!r})")
    try:
        return trainer, cls(**raw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{str(path)!r}: {exc}") from None


def _type_problem(value: Any, hint: Any) -> str | None:
    """Why ``value`` does not fit the annotation ``hint`` (None when it fits).

    Checked here, before the trainer starts, so ``lr: fast`` is refused with the field's
    name instead of failing deep inside torch or SB3 minutes later.
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        problems = [_type_problem(value, h) for h in options if h is not type(None)]
        return None if any(p is None for p in problems) else problems[0]
    if hint is Any:
        return None
    if hint is bool:
        return None if isinstance(value, bool) else "must be true or false"
    if hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else "must be an integer"
    if hint is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else "must be a number"
    if hint is str:
        return None if isinstance(value, str) else "must be a string"
    if origin is list or hint is list:
        if not isinstance(value, list):
            return "must be a list"
        args = typing.get_args(hint)
        for item in value if args else ():
            problem = _type_problem(item, args[0])
            if problem:
                return f"has an item that {problem}"
        return None
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            return "must be a mapping"
        args = typing.get_args(hint)
        for item in value.values() if len(args) == 2 else ():
            problem = _type_problem(item, args[1])
            if problem:
                return f"has a value that {problem}"
        return None
    return None
