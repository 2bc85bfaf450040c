"""The player of networks that read the padded observation: ``sb3:PATH`` models trained on
:class:`training.single_agent.ScatSingleAgentEnv` play through :class:`PolicyAgent`.

The agent sees only the :class:`~scat_env.PlayerView`, like every baseline: it encodes it
with the padded observation the policy was trained on (:mod:`agents.neural.encoding`),
masks illegal actions and plays the most likely action (deterministic, the default) or
samples from the policy with its own seeded rng (``:sample``). Once a player is out it
reads the smaller game among the players still in (:func:`agents.neural.encoding.policy_view`;
``:full`` plays as trained); ``:sym[=N]`` averages the logits over card relabellings
(:mod:`agents.symmetry`). A policy that cannot play a table is refused by
:meth:`PolicyAgent.check_table` before the first move.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np

from scat_env import PlayerView, Rules
from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS, PLACE_SLOT
from scat_env.observation import extra_pieces

from ..base import Agent, likeliest_moves_text
from ..neural.encoding import PaddedEncoder, policy_view, symmetry_layout
from ..neural.policy_file import shipped_path

#: The most card relabellings ``:sym=N`` averages over: 24 suit orders x 24 orders of the
#: ten-point ranks (agents.symmetry).
SYM_MAX = 576

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
            from ..symmetry import SymmetryAverage, relabellings

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
        """Its three likeliest legal moves with their probabilities, in words."""
        return likeliest_moves_text(self.name, view, self.logits(view))


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
        raise ValueError(f"{kind}: needs a file, e.g. {kind}:runs/x/checkpoint.zip")
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
