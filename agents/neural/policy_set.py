"""Policy sets: one policy (or an averaged ensemble) per number of players still in.

A policy set is a small YAML manifest beside its member files (:func:`load_policy_set`);
``ppo:SET`` plays it (:class:`agents.policy.PolicySetAgent`).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np

from scat_env.yamlfile import one_line, read_yaml

#: The one format tag a policy-set manifest carries, so any other YAML file is refused.
SET_FORMAT = "scat-policy-set"
SYM_MAX = 576  # 24 suit orders x 24 orders of the ten-point ranks (agents.symmetry)


class PolicySetManifest(NamedTuple):
    """What a policy-set manifest says (:func:`load_policy_set`)."""

    members: dict[int, list[str]]  # players in -> files whose logits are averaged
    default: list[str] | None  # every other size
    symmetry: int  # card relabellings each member averages over (agents.symmetry); 1 = off


def load_policy_set(path: str) -> PolicySetManifest:
    """Read a policy-set manifest -> :class:`PolicySetManifest` (the format is below, in
    :func:`_load_policy_set`); every error is one bounded line naming the manifest."""
    try:
        return _load_policy_set(path)
    except ValueError as exc:
        raise ValueError(one_line(str(exc))) from None


def _load_policy_set(path: str) -> PolicySetManifest:
    """Read a policy-set manifest -> :class:`PolicySetManifest`.

    The manifest is YAML::

        format: scat-policy-set
        policies:
          2: scat_ppo_2p.npz                    # plays whenever two players are in
          3: [net_a.npz, net_b.npz, net_c.npz]  # a list: their logits averaged (an ensemble)
          default: scat_ppo.npz                 # every other size
        symmetry: 8                             # optional: average over 8 card relabellings

    File names are relative to the manifest's folder. Any problem is one ``ValueError``
    naming the manifest and what is wrong; the member files are checked when loaded.
    """
    raw = read_yaml(path, "policy set")
    if not isinstance(raw, dict) or raw.get("format") != SET_FORMAT:
        raise ValueError(f"policy set {path!r} must be a mapping with 'format: {SET_FORMAT}'")
    unknown = sorted(str(k) for k in set(raw) - {"format", "policies", "symmetry"})
    if unknown:
        raise ValueError(f"policy set {path!r}: unknown field(s) {', '.join(unknown)} "
                         "(known: format, policies, symmetry)")
    symmetry = raw.get("symmetry", 1)
    if (not isinstance(symmetry, int) or isinstance(symmetry, bool)
            or not 1 <= symmetry <= SYM_MAX):
        raise ValueError(f"policy set {path!r}: 'symmetry' must be a whole number of card "
                         f"relabellings from 1 to {SYM_MAX}, got {symmetry!r}")
    entries = raw.get("policies")
    if not isinstance(entries, dict) or not entries:
        raise ValueError(f"policy set {path!r}: 'policies' must map player counts (2-10) "
                         "or 'default' to policy files")
    folder = os.path.dirname(path)
    members: dict[int, list[str]] = {}
    default = None
    for key, files in entries.items():
        listed = files if isinstance(files, list) else [files]
        if not listed or not all(isinstance(f, str) and f.strip() for f in listed):
            raise ValueError(f"policy set {path!r}: entry {key!r} must name a policy file "
                             f"or a list of them, got {files!r}")
        listed = [os.path.join(folder, f.strip()) for f in listed]
        if key == "default":
            default = listed
        elif isinstance(key, int) and not isinstance(key, bool) and 2 <= key <= 10:
            members[key] = listed
        else:
            raise ValueError(f"policy set {path!r}: key {key!r} is not a player count "
                             "(2-10) or 'default'")
    return PolicySetManifest(members, default, symmetry)


class EnsemblePolicy:
    """Several policies of one input layout, playing as one: the mean of their logits.

    Why: independently trained nets make partly independent mistakes, and averaging their
    logits (a product of their policies) measured stronger than any one of them at some
    table sizes (``docs/EXPERIMENTS.md``, entry 32). Only policies that read the same
    observation can be averaged, so the inputs must match.
    """

    def __init__(self, policies: list[Any], name: str) -> None:
        advice = {bool(getattr(p, "advice", False)) for p in policies}
        if len(advice) > 1:
            raise ValueError(f"{name}: an ensemble cannot mix policies with and without "
                             "the expert-advice inputs")
        extra = {tuple(getattr(p, "extra", ())) for p in policies}
        if len(extra) > 1:
            raise ValueError(f"{name}: an ensemble cannot mix policies that read different "
                             f"observations (pieces {sorted(extra)})")
        self.policies = policies
        self.advice = advice.pop()
        self.extra = extra.pop()

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        total = self.policies[0].logits(obs, mask)
        for policy in self.policies[1:]:
            total = total + policy.logits(obs, mask)
        return total / len(self.policies)
