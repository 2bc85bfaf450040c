"""Policy sets: one policy (or an averaged ensemble) per number of players still in.

A policy set is a small YAML manifest beside its member files (:func:`load_policy_set`);
``compact:SET.yaml`` plays it (:class:`agents.compact.CompactSet`).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from scat_env.rules import preset_names
from scat_env.yamlfile import one_line, read_yaml

#: The one format tag a policy-set manifest carries, so any other YAML file is refused.
SET_FORMAT = "scat-policy-set"


class PolicySetManifest(NamedTuple):
    """What a policy-set manifest says (:func:`load_policy_set`)."""

    members: dict[int, list[str]]  # players in -> files whose logits are averaged
    default: list[str] | None  # every other size
    #: the presets the set was put together for (``presets:``), or None: then the presets
    #: its members learned
    presets: tuple[str, ...] | None = None
    #: the policy file or set manifest that makes every call (``calls:``), or None
    calls: str | None = None


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
          2: scat_batch_2p.npz                  # plays whenever two players are in
          3: [net_a.npz, net_b.npz, net_c.npz]  # a list: their logits averaged (an ensemble)
          default: scat_batch_7_10.npz          # every other size
        presets: [cadillac, ride_the_bus]       # optional: what the set is for
        calls: scat_calls_set.yaml              # optional: who decides the calls

    File names are relative to the manifest's folder. ``presets`` names the presets the set
    was put together for, where it is measured and seated: without it, the presets its
    members learned. Why: a set may borrow a member that learned every preset (to play the
    positions its family's member does not) without becoming a candidate at every table.
    ``calls`` names a policy file or another set (without a ``calls`` of its own) that plays
    every decision where a call is on offer (a hammer, a throw-down, sudden death, declaring
    31), while the members play the rest of the game as they learned it. Why: after its calls
    a calls preset is the standard game, and the standard game's set plays that better than
    a policy that learned the calls (policies/README.md, "Calls by one policy, play by
    another").
    Any problem is one ``ValueError`` naming the manifest and what is wrong; the member
    files are checked when loaded.
    """
    raw = read_yaml(path, "policy set")
    if not isinstance(raw, dict) or raw.get("format") != SET_FORMAT:
        raise ValueError(f"policy set {path!r} must be a mapping with 'format: {SET_FORMAT}'")
    unknown = sorted(str(k) for k in set(raw) - {"format", "policies", "presets", "calls"})
    if unknown:
        raise ValueError(f"policy set {path!r}: unknown field(s) {', '.join(unknown)} "
                         "(known: format, policies, presets, calls)")
    presets = _presets(path, raw.get("presets")) if "presets" in raw else None
    calls = raw.get("calls")
    if "calls" in raw and not (isinstance(calls, str) and calls.strip()):
        raise ValueError(f"policy set {path!r}: 'calls' must name a policy file or a set "
                         f"manifest, got {calls!r}")
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
    calls_path = None if calls is None else os.path.join(folder, calls.strip())
    if calls_path is not None and os.path.realpath(calls_path) == os.path.realpath(path):
        raise ValueError(f"policy set {path!r}: 'calls' names the set itself")
    return PolicySetManifest(members, default, presets, calls_path)


def _presets(path: str, value: object) -> tuple[str, ...]:
    """A manifest's ``presets``: preset names, each once (:func:`scat_env.rules.preset_names`,
    as a training config's ``rules_mix``), and at least one."""
    field = f"policy set {path!r}: 'presets'"
    if value == []:
        raise ValueError(f"{field} must be a list of preset names, got []")
    return preset_names(value, field)
