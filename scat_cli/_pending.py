"""TEMPORARY: names the agents package is adding (Agent.check_table,
agents.policy.DEFAULT_OPPONENT). Each falls back only
while the name is missing, so the command line keeps working in the meantime; this module is
deleted once they exist."""

from __future__ import annotations

from typing import Any


def check_table(agent: Any, num_players: int, rules: Any) -> None:
    if hasattr(agent, "check_table"):
        agent.check_table(num_players, rules)


def default_opponent() -> str:
    import agents.policy

    return getattr(agents.policy, "DEFAULT_OPPONENT", "ppo:policies/scat_ppo_set.yaml")
