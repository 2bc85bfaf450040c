"""TEMPORARY: names other packages are adding (turn cap, HandResult.to_dict/rule,
showdown.rule_text, Agent.check_table, agents.policy.DEFAULT_OPPONENT). Each falls back only
while the name is missing, so the command line keeps working in the meantime; this module is
deleted once they exist."""

from __future__ import annotations

from typing import Any


def max_turns() -> int:
    import scat_env

    if hasattr(scat_env, "DEFAULT_MAX_TURNS"):
        return scat_env.DEFAULT_MAX_TURNS
    from agents.match import DEFAULT_MAX_TURNS

    return DEFAULT_MAX_TURNS


def to_dict(r: Any) -> dict[str, Any]:
    if hasattr(r, "to_dict"):
        return r.to_dict()
    from scat_env import cards_str

    return {
        "hand": r.hand_number, "dealer": r.dealer, "reason": r.reason, "knocker": r.knocker,
        "declarers": list(r.declarers),
        "hands": {str(s): cards_str(h) for s, h in sorted(r.hands.items())},
        "values": {str(s): v for s, v in sorted(r.values.items())},
        "lives_lost": {str(s): n for s, n in sorted(r.lives_lost.items())},
        "lives_after": list(r.lives_after), "eliminated": list(r.eliminated),
        "replayed": r.replayed,
    }


def rule_line(result: Any, names: Any) -> str:
    import scat_env.showdown as showdown

    if hasattr(showdown, "rule_text") and hasattr(result, "rule"):
        return showdown.rule_text(result.rule)
    return result.describe(names)


def check_table(agent: Any, num_players: int, rules: Any) -> None:
    if hasattr(agent, "check_table"):
        agent.check_table(num_players, rules)


def default_opponent() -> str:
    import agents.policy

    return getattr(agents.policy, "DEFAULT_OPPONENT", "ppo:policies/scat_ppo_set.yaml")
