"""Agents by spec string: ``random``, ``greedy``, ``threshold:25``, ``expert``, ``ismcts:200``...

One registry resolves every spec so the tournament, ``scat watch``, ``scat play`` and the
trainers all name agents the same way. A spec is ``NAME`` or ``NAME:ARG``; each factory
receives the argument string (or ``None``) and a seed, and raises ``ValueError`` with a
clear message for a bad argument. Other packages extend it with :func:`register`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from scat_env.yamlfile import one_line

from .base import Agent
from .neural.policy_file import RETIRED as RETIRED_NATIVE

Factory = Callable[[str | None, int | None], Agent]

#: The shipped policies a table gets when nobody names its opponents, in order of preference:
#: ``scat play`` and ``scat serve`` seat the first one trained on the table's rules, else the
#: first that plays them (:func:`scat_session.seating.first_to_play`): the standard game's
#: set (each position to its member for the players in, 2 to 10 players), then the policy
#: that learned every preset and reads the rules, then the members per family (each the
#: every-preset policy trained on its family's presets alone: a table of those presets
#: seats one where the model card measured it the strongest). One list, here, so that the
#: front ends and the trainers never disagree on who the default is.
DEFAULT_POLICIES: tuple[str, ...] = ("compact:scat_batch_set", "compact:scat_rules",
                                     "compact:scat_golf", "compact:scat_gin",
                                     "compact:scat_calls", "compact:scat_points",
                                     "compact:scat_lives_set", "compact:scat_calls_b",
                                     "compact:scat_calls_c", "compact:scat_gin_italian",
                                     "compact:scat_calls_avg", "compact:scat_calls_set",
                                     "compact:scat_calls_play")

_FACTORIES: dict[str, tuple[Factory, str]] = {}
#: Agent kinds no longer played, by what their specs are told instead: the replacement, in
#: one line, rather than "unknown agent spec".
RETIRED: dict[str, str] = {"ppo": RETIRED_NATIVE}
_LOADED = False
_LOAD_LOCK = threading.RLock()


def register(name: str, factory: Factory, help: str = "") -> None:
    """Add (or replace) an agent kind under ``name``."""
    _FACTORIES[name] = (factory, help)


def _load_builtin() -> None:
    """Import the built-in agent modules once (each registers itself on import). Guarded by
    a lock, the flag set only after the imports: threads that ask at once (a server's first
    requests) must all see every agent, not a half-filled table."""
    global _LOADED
    if _LOADED:
        return
    with _LOAD_LOCK:
        if _LOADED:
            return
        import importlib

        for mod in ("agents.random_agent", "agents.greedy", "agents.expert", "agents.ismcts",
                    "agents.adapters.sb3", "agents.compact", "agents.adapters.rllib",
                    "agents.adapters.torchrl", "agents.search"):
            importlib.import_module(mod)
        _LOADED = True


def available() -> dict[str, str]:
    """Registered agent names with a one-line description."""
    _load_builtin()
    return {name: help for name, (_, help) in sorted(_FACTORIES.items())}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from its spec string. A bad spec raises ``ValueError``: one line of at
    most :data:`scat_env.yamlfile.MAX_MESSAGE` characters, whatever the spec holds (specs
    come from command lines, saved games and configs, and factories quote their argument,
    so a megabyte-long spec would otherwise become a megabyte-long error)."""
    _load_builtin()
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(one_line(f"agent spec must be a non-empty string, got {spec!r}"))
    spec = spec.strip()
    name, sep, arg = spec.partition(":")
    if name in RETIRED:
        raise ValueError(RETIRED[name])
    if name not in _FACTORIES:
        raise ValueError(one_line(
            f"unknown agent spec {spec[:60]!r}{'...' if len(spec) > 60 else ''}; "
            f"known agents: {', '.join(sorted(_FACTORIES))}"))
    try:
        agent = _FACTORIES[name][0](arg if sep else None, seed)
    except ValueError as exc:
        raise ValueError(one_line(str(exc))) from None
    except OSError as exc:  # a file the spec names that the system will not read
        shown = spec if len(spec) <= 60 else spec[:57] + "..."
        raise ValueError(one_line(f"agent spec {shown!r}: cannot read its file: "
                                  f"{exc.strerror or type(exc).__name__}")) from None
    agent.spec = spec
    return agent
