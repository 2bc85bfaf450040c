"""Trained policies as agents: ``ppo:POLICY`` (a policy file or a policy set). The
stable-baselines3 agent ``sb3:PATH`` (:mod:`agents.sb3`) plays through :class:`PolicyAgent` too.

``POLICY`` is a path (``ppo:runs/x/policy.npz``, ``ppo:policies/scat_ppo_set.yaml``) or the
name of a shipped policy, found from any folder (``ppo:scat_ppo_set``, the shipped set:
:data:`DEFAULT_OPPONENT`; ``ppo:scat_ppo``, its general member).

The agent sees only the :class:`~scat_env.PlayerView`, like every baseline: it encodes it
with the padded observation the policy was trained on (:mod:`agents.neural.encoding`),
masks illegal actions and plays the most likely action (deterministic, the default) or
samples from the policy with its own seeded rng (``:sample``). Once a player is out it
reads the smaller game among the players still in (:func:`agents.neural.encoding.policy_view`,
where that choice and its measured effect are documented; ``:full`` plays as trained).

``ppo:SET`` plays a *policy set* (:mod:`agents.neural.policy_set`): one policy per number of
players still in (a specialist for heads-up play, one for three players...) and a default
for the other sizes.

Inference runs in numpy (one view: ~50 us, ~85 us with the expert-advice inputs of the
shipped policy, on a 2-core machine: ``scat bench agents --agent ppo:scat_ppo``), fast
enough for 2,000-game tournaments, and needs no torch. A missing, corrupt or incompatible
file raises one ``ValueError`` line naming the file; a policy that cannot play a table is
refused by :meth:`check_table` before the first move.
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache
from typing import Any

import numpy as np

from scat_env import PlayerView, Rules
from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS, PLACE_SLOT
from scat_env.observation import extra_pieces

from .base import Agent
from .neural.encoding import PaddedEncoder, policy_view, symmetry_layout
from .neural.policy_file import SHIPPED_SET, load_any, shipped_path
from .neural.policy_set import SYM_MAX, EnsemblePolicy, load_policy_set
from .registry import register

#: The spec of the shipped policy set: the default opponent of ``scat play``.
DEFAULT_OPPONENT = f"ppo:{SHIPPED_SET}"

#: ``sym`` alone: this many card relabellings (the identity and 23 drawn; agents.symmetry).
SYM_DEFAULT = 24

#: Rules fields that change what an action does or what a card id means; a policy is refused
#: at a table whose rules differ from its training rules in one of them (a gin knock promises
#: the highest hand, not a safe one). Scoring options need no check: the policy reads hand
#: values through the encoder, computed by the table's own scoring.
RULES_THE_POLICY_MUST_KNOW = ("deck", "knock_mode")


def known_actions(policy: Any) -> int:
    """How many actions a policy (or the weakest member of a set) has outputs for."""
    members = getattr(policy, "policies", None)
    if members:
        return min(known_actions(p) for p in members)
    return int(getattr(policy, "num_actions", NUM_ACTIONS))


def read_pieces(policy: Any) -> tuple[str, ...]:
    """The observation pieces beyond the lives game's that a policy reads (every member of a
    set reads the same input)."""
    members = getattr(policy, "policies", None)
    if members:
        return read_pieces(members[0])
    return tuple(getattr(policy, "extra", ()))


class PolicyAgent(Agent):
    """Plays a numpy policy (anything with ``logits(obs, mask)``) on padded observations."""

    def __init__(self, policy: Any, max_players: int, rules: dict[str, Any] | None = None, *,
                 sample: bool = False, seed: int | None = None, name: str = "policy",
                 active_only: bool = True, symmetry: int = 1) -> None:
        super().__init__(seed)
        self.policy = policy
        self.max_players = max_players
        self.trained_rules = rules or {}  # the rules the policy file says it was trained on
        self.sample = sample
        # Once a player is out, read the table as the smaller game it now is
        # (agents.neural.encoding.policy_view); ``:full`` turns this off.
        self.active_only = active_only
        self.name = name
        self._encoders: dict[Rules, PaddedEncoder] = {}
        # Average the logits over this many card relabellings (agents.symmetry); 1 = off.
        self.symmetry = symmetry
        self._symmetries: dict[Rules, Any] = {}

    def check_table(self, num_players: int, rules: Rules) -> None:
        self.check_table_as(self.name, num_players, rules)

    def check_table_as(self, who: str, num_players: int, rules: Rules) -> None:
        """:meth:`check_table`, its refusal naming ``who``: a policy set's member is refused
        in the set's name, the spec the user gave, not by the files the set lists."""
        if num_players > self.max_players:
            raise ValueError(f"{who} was trained for at most {self.max_players} players, "
                             f"this table has {num_players}")
        extra = tuple(p.name for p in extra_pieces(rules))
        reads = read_pieces(self.policy)
        if extra != reads:
            # The pieces a family adds after the lives game's observation (points, face-down
            # slots) are part of the input: another family's input is another size and sense.
            def words(names: tuple[str, ...]) -> str:
                return ", ".join(names) if names else "nothing"
            trained = ("the observation of the draw-and-discard game with lives" if not reads
                       else f"the observation with {words(reads)} added")
            raise ValueError(f"{who} reads {trained}; these rules ({rules.name}) add "
                             f"{words(extra)}" + (", which it has never read" if extra else ""))
        if rules.play == "golf" and known_actions(self.policy) < NUM_ACTIONS:
            raise ValueError(f"{who} knows {known_actions(self.policy)} actions; golf "
                             f"needs all {NUM_ACTIONS} (its slot choices are {PLACE_SLOT}.."
                             f"{NUM_ACTIONS - 1})")
        if rules.calls and known_actions(self.policy) <= CORE_ACTIONS:
            raise ValueError(f"{who} knows only the {CORE_ACTIONS} actions of the "
                             f"draw-and-discard game; these rules ({rules.name}) offer "
                             f"{', '.join(rules.calls)}, calls it was never trained to make")
        for key in RULES_THE_POLICY_MUST_KNOW:
            trained = self.trained_rules.get(key)
            if trained is not None and trained != getattr(rules, key):
                raise ValueError(f"{who} was trained with {key} {trained!r}; these rules "
                                 f"({rules.name}) have {getattr(rules, key)!r}")

    def _encoder(self, rules: Rules) -> PaddedEncoder:
        enc = self._encoders.get(rules)
        if enc is None:
            # A policy trained with expert advice inputs needs them.
            enc = PaddedEncoder(rules, self.max_players,
                                advice=bool(getattr(self.policy, "advice", False)))
            self._encoders[rules] = enc
        return enc

    def logits(self, view: PlayerView) -> np.ndarray:
        if view.num_players > self.max_players:
            raise ValueError(f"{self.name} was trained for at most {self.max_players} players, "
                             f"this table has {view.num_players}")
        view = policy_view(view, self.active_only)
        obs = self._encoder(view.rules).encode(view)
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        mask[list(view.legal_actions)] = True
        if self.symmetry > 1:
            return self._symmetry(view.rules, obs.size).logits(self.policy, obs, mask)
        return self.policy.logits(obs, mask)

    def _symmetry(self, rules: Rules, size: int) -> Any:
        # One per rule set: whether ranks may be renamed depends on the scoring.
        sym = self._symmetries.get(rules)
        if sym is None:
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

    Why by players *still in* and not by the table's size: read through
    :func:`~agents.neural.encoding.policy_view`, a three-player game with one player out is a
    two-player game, so the two-player specialist is the right player for it. With
    ``active_only=False`` (``:full``) the table's size picks the member instead.
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

    def _for(self, players: int) -> PolicyAgent:
        agent = self.members.get(players, self.default)
        if agent is None:
            sizes = ", ".join(str(k) for k in sorted(self.members))
            raise ValueError(f"{self.name} has policies for {sizes} players and no default; "
                             f"this table has {players} players in")
        if agent.max_players < players:
            raise ValueError(f"{self.name} plays at most {agent.max_players} players, "
                             f"this table has {players}")
        return agent

    def member(self, view: PlayerView) -> PolicyAgent:
        """The policy that plays ``view``: the specialist for its size, else the default."""
        return self._for(policy_view(view, self.active_only).num_players)

    def check_table(self, num_players: int, rules: Rules) -> None:
        # Players drop out as the game goes on: every count a game can reach needs a member.
        counts = range(num_players, 1, -1) if self.active_only else [num_players]
        for players in counts:
            self._for(players).check_table_as(self.name, players, rules)
        if self.default is not None and num_players <= self.default.max_players:
            self.default.check_table_as(self.name, num_players, rules)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for agent in self._all():
            agent.reset(seed)

    def _all(self) -> list[PolicyAgent]:
        return [*self.members.values(), *([self.default] if self.default is not None else [])]

    def logits(self, view: PlayerView) -> np.ndarray:
        view = policy_view(view, self.active_only)
        return self._for(view.num_players).logits(view)

    def act(self, view: PlayerView) -> int:
        view = policy_view(view, self.active_only)
        return self._for(view.num_players).act(view)

    def explain(self, view: PlayerView) -> str:
        view = policy_view(view, self.active_only)
        return self._for(view.num_players).explain(view)


def resolve(path: str) -> str:
    """A policy path as given when it names a file, else the shipped policy it names
    (``scat_ppo_set``), else the path unchanged (loading then says it does not exist)."""
    if os.path.exists(path):
        return path
    return shipped_path(path) or path


#: Tournaments build their agents anew for every game; the manifest is read once per process,
#: as :func:`_load_native` reads each policy file once. Its result is never mutated.
_read_policy_set = lru_cache(maxsize=16)(load_policy_set)


@lru_cache(maxsize=16)
def _load_native(path: str) -> tuple[Any, int, dict[str, Any]]:
    """``(numpy policy, max_players, training rules)`` of a policy file, read once."""
    loaded = load_any(path)
    rules = loaded.metadata.get("rules")
    return loaded.policy(), loaded.max_players, rules if isinstance(rules, dict) else {}


def _make_set(path: str, options: dict[str, Any], seed: int | None, name: str) -> Agent:
    members, default_files, symmetry = _read_policy_set(path)
    # The spec's ``sym`` option overrides the manifest's count (``:sym=1`` turns it off).
    options = {"symmetry": symmetry, **options}

    def agent(files: list[str]) -> PolicyAgent:
        loaded = [_load_native(f) for f in files]
        max_players = {m for _, m, _ in loaded}
        if len(max_players) > 1:
            raise ValueError(f"policy set {path!r}: an ensemble cannot mix observation "
                             f"layouts for {sorted(max_players)} players ({', '.join(files)})")
        policy = (loaded[0][0] if len(loaded) == 1
                  else EnsemblePolicy([p for p, _, _ in loaded], f"policy set {path!r}"))
        rules = loaded[0][2]
        for _, _, other in loaded[1:]:
            # An ensemble knows the rules all its members know.
            rules = {k: v for k, v in rules.items() if other.get(k) == v}
        return PolicyAgent(policy, max_players.pop(), rules, seed=seed,
                           name="ppo:" + "+".join(os.path.basename(f) for f in files),
                           **options)

    specialists = {}
    for n, files in members.items():
        specialists[n] = agent(files)
        if specialists[n].max_players < n:
            raise ValueError(f"policy set {path!r}: {'+'.join(files)!r} plays at most "
                             f"{specialists[n].max_players} players, listed for {n}")
    default = agent(default_files) if default_files is not None else None
    return PolicySetAgent(specialists, default, active_only=options["active_only"],
                          seed=seed, name=name)


#: Options after a policy: ``sample`` (sample instead of the most likely action), ``argmax``
#: (the default), ``full`` (read the whole table, out seats included, as in training; see
#: :func:`agents.neural.encoding.policy_view`). ``sym`` / ``sym=N``: average the logits over N
#: card relabellings (:mod:`agents.symmetry`).
_OPTIONS = ("sample", "argmax", "full")


def parse_policy_spec(arg: str | None, kind: str) -> tuple[str, dict[str, Any]]:
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
    _check_no_unknown_option(arg, kind, spec)
    if not arg:
        example = SHIPPED_SET if kind == "ppo" else "runs/x/checkpoint.zip"
        raise ValueError(f"{kind}: needs a file, e.g. {kind}:{example}")
    kwargs: dict[str, Any] = {"sample": "sample" in options, "active_only": "full" not in options}
    if symmetry is not None:
        kwargs["symmetry"] = symmetry
    return arg, kwargs


#: The options as a user reads them, for the error that names an unknown one.
_OPTIONS_TEXT = f"{', '.join(_OPTIONS)}, sym, sym=N (N from 1 to {SYM_MAX})"


def _check_no_unknown_option(path: str, kind: str, spec: str) -> None:
    """Refuse ``PATH:word`` whose last part is a word and no file: an option misspelt, not a
    missing file. Why here: the option loop above stops at the first word it does not know
    (a path may hold ':'), and the loader would then say "policy file 'scat_ppo_set:bogus'
    does not exist", pointing the user at a file they never named."""
    head, sep, tail = path.rpartition(":")
    if not sep or not head or not _OPTION_WORD.fullmatch(tail):
        return
    if os.path.exists(path) or shipped_path(path):
        return  # a file whose name holds ':'
    raise ValueError(f"{kind}: unknown option {tail[:40]!r} in {kind}:{spec[:120]}; "
                     f"options: {_OPTIONS_TEXT}")


_OPTION_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(=[^/\\]*)?")


def _symmetry_count(option: str, kind: str, spec: str) -> int:
    """The count of ``sym`` (:data:`SYM_DEFAULT`) or ``sym=N`` (N renamings, identity first)."""
    _, eq, value = option.partition("=")
    if not eq:
        return SYM_DEFAULT
    if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= SYM_MAX:
        raise ValueError(f"{kind}: 'sym={value}' in {kind}:{spec} must be a whole number of "
                         f"card relabellings from 1 to {SYM_MAX}")
    return int(value)


def _make_ppo(arg: str | None, seed: int | None) -> Agent:
    given, options = parse_policy_spec(arg, "ppo")
    path = resolve(given)
    if path.endswith((".yaml", ".yml")):
        return _make_set(path, options, seed, f"ppo:{given}")
    policy, max_players, rules = _load_native(path)
    return PolicyAgent(policy, max_players, rules, seed=seed, name=f"ppo:{given}", **options)


register("ppo", _make_ppo, "trained policy or policy set by player count: "
         f"ppo:{SHIPPED_SET} (shipped) or ppo:PATH[.npz|.pt|.yaml][:sample][:full][:sym[=N]]")
