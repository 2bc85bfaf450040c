"""Agents by spec string: ``random``, ``greedy``, ``threshold:25``, ``expert``, ``ismcts:200``...

One registry resolves every spec so the tournament, ``scat watch``, ``scat play`` and the
trainers all name agents the same way. A spec is ``NAME`` or ``NAME:ARG``; each factory
receives the argument string (or ``None``) and a seed, and raises ``ValueError`` with a
clear message for a bad argument. Other packages extend it with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Agent

Factory = Callable[[str | None, int | None], Agent]

_FACTORIES: dict[str, tuple[Factory, str]] = {}
_LOADED = False


def register(name: str, factory: Factory, help: str = "") -> None:
    """Add (or replace) an agent kind under ``name``."""
    _FACTORIES[name] = (factory, help)


def _load_builtin() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib

    # Each module registers itself on import.
    for mod in ("agents.random_agent", "agents.greedy", "agents.expert", "agents.ismcts",
                "agents.policy", "agents.sb3"):
        importlib.import_module(mod)


def available() -> dict[str, str]:
    """Registered agent names with a one-line description."""
    _load_builtin()
    return {name: help for name, (_, help) in sorted(_FACTORIES.items())}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from its spec string. Unknown specs raise ``ValueError``."""
    _load_builtin()
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    name, sep, arg = spec.partition(":")
    if name not in _FACTORIES:
        raise ValueError(
            f"unknown agent spec {spec!r}; known agents: {', '.join(sorted(_FACTORIES))}"
        )
    agent = _FACTORIES[name][0](arg if sep else None, seed)
    agent.spec = spec
    return agent
