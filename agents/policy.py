"""Trained policies as agents: ``ppo:PATH`` (native policy file or checkpoint) and
``sb3:PATH`` (a stable-baselines3 / sb3-contrib MaskablePPO zip).

The agent sees only the :class:`~scat_env.PlayerView`, like every baseline: it encodes it
with the padded observation the policy was trained on (:mod:`training.policy_net`), masks
illegal actions and plays the most likely action (deterministic, the default) or samples
from the policy with its own seeded rng (``ppo:PATH:sample``). Once a player is out it
encodes :func:`scat_env.active_view`, the smaller game among the players still in
(``ppo:PATH:full``: the whole table, how every figure before that view was measured).

``ppo:SET.yaml`` plays a *policy set*: one policy file per number of players still in (a
specialist for heads-up play, one for three players...) and a default for the other table
sizes, listed in a small YAML manifest (:func:`load_policy_set`). Once a player is out the
set hands the smaller game to the specialist for that size, which reads it through
:func:`scat_env.active_view` exactly as the real game of that size.

Inference runs in numpy (one view: ~50 us, ~85 us with the expert-advice inputs of the
shipped policy, measured on the 2-core VM), fast enough for 2,000-game tournaments.
A missing, corrupt or incompatible file raises ``ValueError`` naming the file.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from scat_env import PlayerView, active_view

from .base import Agent
from .registry import register

#: ``sym`` alone: this many card relabellings (the identity and 23 drawn; agents.symmetry).
SYM_DEFAULT = 24
SYM_MAX = 576  # 24 suit orders x 24 orders of the ten-point ranks


class PolicyAgent(Agent):
    """Plays a numpy policy (anything with ``logits(obs, mask)``) on padded observations."""

    def __init__(self, policy: Any, max_players: int, rules: Any = None, *,
                 sample: bool = False, seed: int | None = None, name: str = "policy",
                 active_only: bool = True, symmetry: int = 1) -> None:
        super().__init__(seed)
        from training.policy_net import PaddedEncoder

        self.policy = policy
        self.max_players = max_players
        self.sample = sample
        # Once a player is out, read the table as the smaller game it now is
        # (scat_env.active_view); ``ppo:PATH:full`` turns this off.
        self.active_only = active_only
        self.name = name
        self._rules = rules
        self._encoders: dict[Any, PaddedEncoder] = {}
        self._obs = None
        # Average the logits over this many card relabellings (agents.symmetry); 1 = off.
        self.symmetry = symmetry
        self._symmetries: dict[Any, Any] = {}

    def _encoder(self, view: PlayerView) -> Any:
        from training.policy_net import PaddedEncoder

        enc = self._encoders.get(view.rules)
        if enc is None:
            # A policy trained with expert advice inputs (see training.policy_net) needs them.
            enc = PaddedEncoder(view.rules, self.max_players,
                                advice=bool(getattr(self.policy, "advice", False)))
            self._encoders[view.rules] = enc
        return enc

    def logits(self, view: PlayerView) -> np.ndarray:
        if view.num_players > self.max_players:
            raise ValueError(f"{self.name} was trained for at most {self.max_players} players, "
                             f"this table has {view.num_players}")
        if self.active_only and view.active[view.seat]:
            view = active_view(view)
        obs = self._encoder(view).encode(view)
        mask = np.zeros(56, dtype=bool)
        mask[list(view.legal_actions)] = True
        if self.symmetry > 1:
            return self._symmetry(view.rules, obs.size).logits(self.policy, obs, mask)
        return self.policy.logits(obs, mask)

    def _symmetry(self, rules: Any, size: int) -> Any:
        # One per rule set: whether ranks may be renamed depends on the scoring.
        sym = self._symmetries.get(rules)
        if sym is None:
            from training.policy_net import symmetry_layout

            from .symmetry import SymmetryAverage, relabellings

            layout = symmetry_layout(self.max_players, bool(getattr(self.policy, "advice", False)))
            sym = SymmetryAverage(size, layout, relabellings(rules, self.symmetry))
            self._symmetries[rules] = sym
        return sym

    def act(self, view: PlayerView) -> int:
        legal = view.legal_actions
        if len(legal) == 1:
            return legal[0]
        logits = self.logits(view)
        if not self.sample:
            return int(legal[int(np.argmax(logits[list(legal)]))])
        z = [float(logits[a]) for a in legal]
        top = max(z)
        weights = [math.exp(v - top) for v in z]
        return self.rng.choices(legal, weights=weights)[0]

    def explain(self, view: PlayerView) -> str:
        from scat_env import action_str

        legal = list(view.legal_actions)
        logits = self.logits(view)[legal]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        order = np.argsort(-p)[:3]
        return f"{self.name}: " + ", ".join(f"{action_str(legal[i])} {p[i]:.0%}" for i in order)


class PolicySetAgent(Agent):
    """One :class:`PolicyAgent` per number of players still in, and a default for the rest.

    Why by players *still in* and not by the table's size: with :func:`scat_env.active_view`
    a three-player game with one player out is read as a two-player game, so the two-player
    specialist is the right player for it. With ``active_only=False`` (``:full``) the table's
    size picks the member instead.
    """

    def __init__(self, members: dict[int, PolicyAgent], default: PolicyAgent | None, *,
                 active_only: bool = True, seed: int | None = None,
                 name: str = "policy set") -> None:
        super().__init__(seed)
        if not members and default is None:
            raise ValueError(f"{name}: a policy set needs at least one policy")
        self.members = dict(members)
        self.default = default
        self.active_only = active_only
        self.name = name

    def member(self, view: PlayerView) -> PolicyAgent:
        """The policy that plays ``view``: the specialist for its size, else the default."""
        if self.active_only and view.active[view.seat]:
            n = sum(1 for a in view.active if a)
        else:
            n = view.num_players
        agent = self.members.get(n, self.default)
        if agent is None:
            sizes = ", ".join(str(k) for k in sorted(self.members))
            raise ValueError(f"{self.name} has policies for {sizes} players and no default; "
                             f"this table has {n} players in")
        return agent

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for agent in self._all():
            agent.reset(seed)

    def _all(self) -> list[PolicyAgent]:
        return [*self.members.values(), *([self.default] if self.default is not None else [])]

    def logits(self, view: PlayerView) -> np.ndarray:
        return self.member(view).logits(view)

    def act(self, view: PlayerView) -> int:
        return self.member(view).act(view)

    def explain(self, view: PlayerView) -> str:
        return self.member(view).explain(view)


#: The one format tag a policy-set manifest carries, so any other YAML file is refused.
SET_FORMAT = "scat-policy-set"


class PolicySetManifest(NamedTuple):
    """What a policy-set manifest says (:func:`load_policy_set`)."""

    members: dict[int, list[str]]  # players in -> files whose logits are averaged
    default: list[str] | None  # every other size
    symmetry: int  # card relabellings each member averages over (agents.symmetry); 1 = off


def load_policy_set(path: str) -> PolicySetManifest:
    """Read a policy-set manifest -> :class:`PolicySetManifest`.

    The manifest is YAML::

        format: scat-policy-set
        policies:
          2: scat_ppo_2p.pt                  # plays whenever two players are in
          3: [net_a.pt, net_b.pt, net_c.pt]  # a list: their logits averaged (an ensemble)
          default: scat_ppo.pt               # every other size
        symmetry: 8                          # optional: average over 8 card relabellings

    File names are relative to the manifest's folder. Any problem is one ``ValueError``
    naming the manifest and what is wrong; the member files are checked when loaded.
    """
    import os

    import yaml

    if not os.path.isfile(path):
        raise ValueError(f"policy set {path!r} does not exist")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"policy set {path!r} is not valid YAML: "
                         f"{str(exc).splitlines()[0]}") from None
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
    table sizes (policies/README.md). Only policies that read the same observation can be
    averaged, so the inputs must match.
    """

    def __init__(self, policies: list[Any], name: str) -> None:
        advice = {bool(getattr(p, "advice", False)) for p in policies}
        if len(advice) > 1:
            raise ValueError(f"{name}: an ensemble cannot mix policies with and without "
                             "the expert-advice inputs")
        self.policies = policies
        self.advice = advice.pop()

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        total = self.policies[0].logits(obs, mask)
        for policy in self.policies[1:]:
            total = total + policy.logits(obs, mask)
        return total / len(self.policies)


#: Tournaments build their agents anew for every game; the manifest is read once per process,
#: as :func:`_load_native` reads each policy file once. Its result is never mutated.
_read_policy_set = lru_cache(maxsize=16)(load_policy_set)


def _make_set(path: str, options: dict[str, Any], seed: int | None) -> Agent:
    members, default_files, symmetry = _read_policy_set(path)
    # The spec's ``sym`` option overrides the manifest's count (``:sym=1`` turns it off).
    options = {"symmetry": symmetry, **options}

    def agent(files: list[str]) -> PolicyAgent:
        loaded = [_load_native(f) for f in files]
        max_players = {m for _, m in loaded}
        if len(max_players) > 1:
            raise ValueError(f"policy set {path!r}: an ensemble cannot mix observation "
                             f"layouts for {sorted(max_players)} players ({', '.join(files)})")
        policy = (loaded[0][0] if len(loaded) == 1
                  else EnsemblePolicy([p for p, _ in loaded], f"policy set {path!r}"))
        return PolicyAgent(policy, max_players.pop(), seed=seed,
                           name="ppo:" + "+".join(files), **options)

    specialists = {}
    for n, files in members.items():
        specialists[n] = agent(files)
        if specialists[n].max_players < n:
            raise ValueError(f"policy set {path!r}: {'+'.join(files)!r} plays at most "
                             f"{specialists[n].max_players} players, listed for {n}")
    default = agent(default_files) if default_files is not None else None
    return PolicySetAgent(specialists, default, active_only=options["active_only"],
                          seed=seed, name=f"ppo:{path}")


@lru_cache(maxsize=16)
def _load_native(path: str) -> tuple[Any, int]:
    from training.policy_net import NumpyPolicy, build_net, load_file

    data = load_file(path)
    net = build_net(data, path)
    return (NumpyPolicy(net.state_dict(), data["arch"]["layers"], data["max_players"]),
            data["max_players"])


#: Options after a policy file: ``sample`` (sample instead of the most likely action),
#: ``argmax`` (the default), ``full`` (encode the whole table, out seats included, instead
#: of :func:`scat_env.active_view`: how the figures measured before that view were taken).
#: ``sym`` / ``sym=N``: average the logits over N card relabellings (:mod:`agents.symmetry`).
_OPTIONS = ("sample", "argmax", "full")


def _split(arg: str | None, kind: str) -> tuple[str, dict[str, Any]]:
    """``(path, PolicyAgent keyword arguments)`` from ``PATH[:option...]``."""
    spec = arg = arg or ""
    options: set[str] = set()
    symmetry = None
    # Peel known options off the end (a path may itself contain ':').
    while True:
        head, sep, tail = arg.rpartition(":")
        name = tail.partition("=")[0]
        if not sep or (tail not in _OPTIONS and name != "sym"):
            break
        if name in options:
            raise ValueError(f"{kind}: option {name!r} given twice in {kind}:{spec}")
        options.add(name)
        if name == "sym":
            symmetry = _symmetry_count(tail, kind, spec)
        arg = head
    if {"sample", "argmax"} <= options:
        raise ValueError(f"{kind}: 'sample' and 'argmax' contradict each other")
    if not arg:
        raise ValueError(f"{kind}: needs a file, e.g. {kind}:policies/scat_ppo.pt")
    kwargs: dict[str, Any] = {"sample": "sample" in options, "active_only": "full" not in options}
    if symmetry is not None:
        kwargs["symmetry"] = symmetry
    return arg, kwargs


def _symmetry_count(option: str, kind: str, spec: str) -> int:
    """The count of ``sym`` (:data:`SYM_DEFAULT`) or ``sym=N`` (N renamings, identity first)."""
    _, eq, value = option.partition("=")
    if not eq:
        return SYM_DEFAULT
    if not value.isdigit() or not 1 <= int(value) <= SYM_MAX:
        raise ValueError(f"{kind}: 'sym={value}' in {kind}:{spec} must be a whole number of "
                         f"card relabellings from 1 to {SYM_MAX}")
    return int(value)


def _make_ppo(arg: str | None, seed: int | None) -> Agent:
    path, options = _split(arg, "ppo")
    if path.endswith((".yaml", ".yml")):
        return _make_set(path, options, seed)
    policy, max_players = _load_native(path)
    return PolicyAgent(policy, max_players, seed=seed, name=f"ppo:{path}", **options)


class _SB3Policy:
    """Adapter giving an SB3 (Maskable)PPO model the ``logits(obs, mask)`` interface."""

    def __init__(self, model: Any) -> None:
        import torch

        self.model = model
        self.torch = torch

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.no_grad():
            single = obs.ndim == 1
            t = torch.as_tensor(obs[None] if single else obs, dtype=torch.float32)
            dist = self.model.policy.get_distribution(t)
            logits = dist.distribution.logits.numpy()
            logits = logits[0] if single else logits
        return np.where(mask, logits, np.float32(-1e9))


@lru_cache(maxsize=8)
def _load_sb3(path: str) -> tuple[Any, int]:
    import os
    import zipfile

    if not os.path.isfile(path):
        raise ValueError(f"sb3 policy file {path!r} does not exist")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path!r} is not a stable-baselines3 zip (corrupt or truncated?)")
    try:
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(path, device="cpu")
    except Exception as exc:
        raise ValueError(f"{path!r}: cannot load as a MaskablePPO model ({exc})") from None
    from training.policy_net import policy_observation_size

    size = model.observation_space.shape[0]
    max_players = next((n for n in range(2, 11) if policy_observation_size(n) == size), None)
    if max_players is None:
        raise ValueError(f"{path!r}: observation size {size} matches no scat table size")
    return _SB3Policy(model), max_players


def _make_sb3(arg: str | None, seed: int | None) -> Agent:
    path, options = _split(arg, "sb3")
    policy, max_players = _load_sb3(path)
    return PolicyAgent(policy, max_players, seed=seed, name=f"sb3:{path}", **options)


register("ppo", _make_ppo, "trained native PPO policy, or a policy set by player count: "
         "ppo:PATH[.pt|.yaml][:sample][:full][:sym[=N]]")
register("sb3", _make_sb3, "trained stable-baselines3 MaskablePPO policy: "
         "sb3:PATH.zip[:sample][:full][:sym[=N]]")
