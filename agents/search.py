"""``search:W``: the shipped policy, searched at decision time on the batched engine.

At each decision that matters, the player samples ``W`` worlds consistent with its own
view and plays each legal move out in every world, everyone playing the shipped policy
(``compact:scat_batch_set``), all worlds and moves at once on the batched engine
(:meth:`scat_env.batch.BatchEnv.set_games`). The move with the best mean outcome is played
when it beats the policy's own choice by :data:`SWITCH_Z` paired standard errors;
otherwise the policy's choice stands.

- **Worlds from the view alone.** The unseen cards are dealt as :func:`agents.ismcts.
  determinise` deals them: each opponent's unknown cards are what it *kept* from what it
  drew (its stock draws replayed as a greedy drawer would), and a world is accepted with
  the likelihood of the opponents' public play. Nothing but the :class:`PlayerView` is read,
  so two deals that look the same to the player give the same choice
  (``tests/test_search.py``).
- **Common random numbers.** Every move is played out in the same worlds, and a world's
  later hands are dealt from one stream for all its moves: the comparison between moves is
  not drowned by the luck of the deal.
- **The policy as prior and rollout.** A move the policy gives less than
  :data:`MIN_PRIOR` is not searched, and a decision where the policy is sure of its move
  (:data:`SURE`) is not searched at all: most decisions of a hand are clear, and the time
  goes to the close ones.
- **Outcome.** ``horizon="hand"`` (play): the rest of the hand is played out and scored as
  the player's chance of winning the game from the lives it leaves
  (:func:`scat_env.rewards.win_chance`), which the game review also reads
  (:mod:`scat_session.review`); ``horizon="game"``: the game is played to its end and
  scored 1 for a win (a true win chance under the policy's play, but each playout is ten
  times longer and its outcome far noisier than a hand's).

It plays the tables the set plays (:meth:`SearchAgent.check_table` refuses the others: the
calls, the points races) and searches the draw-and-discard games without calls among them
(22 presets, the standard game among them); a decision it does not search is the set's
move. Golf it plays with the golf policy (:data:`GOLF_POLICY`) as prior and rollout, and
searches every decision with two kinds of move open (draw or take; place or turn a slot
up), whatever the policy's prior: that policy learned to copy ``expert``, which judges a
golf hand by its expected value, while a hand costs a quarter only to the lowest, and the
search's outcome, the win chance after the hand, is that cost. Golf's worlds are exact
(:func:`agents.ismcts.determinise_golf`): nobody has seen a face-down card.
``scat bench agents --agent search --opponents expert`` measures its cost; the model card
(policies/README.md, "The search player") its strength.

Spec: ``search`` (W = :data:`DEFAULT_WORLDS`) or ``search:W``, 1 <= W <= :data:`MAX_WORLDS`.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from scat_env import PlayerView, Rules
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, GOLF_SLOTS, PLACE_SLOT, TURN_UP
from scat_env.rewards import lives_win_chance

from .base import Agent, parse_budget
from .compact import SHIPPED_SET, CompactAgent, load_compact_player, policy_path
from .ismcts import determinise
from .registry import register

DEFAULT_WORLDS = 64
#: The policy golf is searched with (prior and rollout): the one trained on golf.
GOLF_POLICY = "scat_golf"
#: Golf's kinds of move and their actions: the slot of a place or a turn-up is one of the
#: face-down ones, which nobody has seen, so the search weighs one slot of each kind.
GOLF_KINDS: dict[str, tuple[int, ...]] = {
    "stock": (DRAW_STOCK,), "take": (DRAW_DISCARD,),
    "place": tuple(range(PLACE_SLOT, PLACE_SLOT + GOLF_SLOTS)),
    "turn": tuple(range(TURN_UP, TURN_UP + GOLF_SLOTS))}
#: Each golf action's kind.
_GOLF_KIND = {a: kind for kind, acts in GOLF_KINDS.items() for a in acts}
MAX_WORLDS = 4096
#: Moves the policy gives less than this are not searched.
MIN_PRIOR = 0.02
#: A decision whose likeliest move has at least this probability is not searched.
SURE = 0.97
#: The search leaves the policy's move for one better by this many paired standard errors.
SWITCH_Z = 1.5
#: One playout at a time in a process: numba's fallback threading layer (``workqueue``,
#: where neither OpenMP nor TBB is installed) aborts the process when two threads launch its
#: parallel kernels at once, and a server runs reviews and searching opponents in threads.
_PLAYOUTS = threading.Lock()
#: Most steps of a playout (a hand is far shorter; a game at ten players is not).
MAX_STEPS = {"hand": 200, "game": 4000}


@dataclass(frozen=True)
class MoveValue:
    """One move's outcome over the sampled worlds: ``mean`` the win chance (``horizon
    "hand"``: the model's chance after the hand; ``"game"``: the share of worlds won),
    ``se`` its standard error, ``prior`` the policy's probability of the move."""

    action: int
    mean: float
    se: float
    prior: float


def searchable(view: PlayerView) -> bool:
    """Whether ``view``'s decision is one the search plays out: a draw or a discard of the
    draw-and-discard games without calls, or either of golf's choices, with two or more
    legal moves."""
    if view.phase not in ("draw", "discard", "golf_draw", "golf_place"):
        return False
    return len(view.legal_actions) >= 2 and searched_rules(view.rules)


def search_policy(rules: Rules) -> str:
    """The shipped policy the search plays out under ``rules`` (prior and rollout): the
    golf policy in golf, the standard game's set everywhere else."""
    return GOLF_POLICY if rules.play == "golf" else SHIPPED_SET


def searched_rules(rules: Rules) -> bool:
    """Whether the search plays out decisions under ``rules``: the batched engine's
    draw-and-discard games without calls, and golf, whose whole state a view's sampled
    world gives (:meth:`scat_env.batch.BatchEnv.set_games`)."""
    from scat_env.batch import plain

    return rules.play == "golf" or plain(rules)


class _Rollouts:
    """A batched engine sized for ``games`` playouts of one table, with the policy (and the
    batched expert whose move it reads) that plays every seat."""

    def __init__(self, policy, num_players: int, rules: Rules, games: int,  # noqa: ANN001
                 seed: int) -> None:
        from agents.batch_expert import BatchExpert
        from scat_env.batch import BatchEnv

        self.env = BatchEnv(games, num_players, rules, seed)
        self.env.reset()
        self.policy = policy
        self.expert = BatchExpert(rules) if policy.advice else None
        self.advice = np.zeros(games, np.int64)
        self.acts = np.zeros(games, np.int64)

    def policy_actions(self, live: np.ndarray) -> np.ndarray:
        """The policy's move in games ``live`` (indices; the others' entries are stale):
        a playout that has ended costs nothing more, its expert's move included."""
        env = self.env
        out = env.current()
        obs = out["observation"][live]
        feats = env.hand_features(obs)
        advice = None
        if self.expert is not None:
            advice = self.expert.actions(env, self.advice, live)[live]
        logits = self.policy.play_logits(obs, feats, env.num_players, env.rules.start_lives,
                                         out["action_mask"][live], advice, env.rules)
        self.acts[live] = np.argmax(logits, axis=1)
        return self.acts


class SearchAgent(Agent):
    """The shipped policy with determinised playouts on the batched engine (module
    docstring). Deterministic for a given seed. ``policy`` (a shipped name or file) is
    the prior and rollout at every table; by default the shipped set, and
    :data:`GOLF_POLICY` in golf."""

    def __init__(self, worlds: int = DEFAULT_WORLDS, seed: int | None = None,
                 policy: str | None = None) -> None:
        super().__init__(seed)
        self.worlds = worlds
        self._policy = policy
        self._loaded: dict[str, tuple] = {}
        self._rollouts: dict[tuple, _Rollouts] = {}

    def _player(self, rules: Rules) -> tuple:
        """(policy, its agent) that is prior and rollout under ``rules``, loaded once."""
        name = self._policy or search_policy(rules)
        if name not in self._loaded:
            policy = load_compact_player(policy_path(name))
            self._loaded[name] = (policy, CompactAgent(policy, name=f"compact:{name}"))
        return self._loaded[name]

    def check_table(self, num_players: int, rules: Rules) -> None:
        self._player(rules)[1].check_table(num_players, rules)

    def trained_on(self, rules: Rules) -> bool:
        return self._player(rules)[1].trained_on(rules)

    def priors(self, view: PlayerView) -> dict[int, float]:
        """The policy's probability of each legal move."""
        logits = self._player(view.rules)[1].logits(view)
        legal = list(view.legal_actions)
        z = logits[legal] - logits[legal].max()
        p = np.exp(z)
        p /= p.sum()
        return dict(zip(legal, p.tolist(), strict=True))

    def evaluate(self, view: PlayerView, actions: list[int] | None = None,
                 worlds: int | None = None, horizon: str = "hand") -> list[MoveValue]:
        """Each of ``actions`` (default: every legal move) played out in the same sampled
        worlds of ``view`` (``worlds`` of them, default the agent's), best first. Only for
        a :func:`searchable` view."""
        moves = list(view.legal_actions) if actions is None else list(actions)
        outcomes = self.play_out(view, moves, worlds or self.worlds, horizon)
        return move_values(moves, outcomes, self.priors(view))

    def play_out(self, view: PlayerView, moves: list[int], worlds: int,
                 horizon: str = "hand") -> np.ndarray:
        """Outcomes [worlds, len(moves)]: move ``k`` played in world ``w``, then everyone
        playing the policy to the horizon (``[w, k] - [w, j]`` compares two moves on the
        same deal, paired). Only for a :func:`searchable` view. The engine's kernels run on
        this thread alone: a few hundred games a step take microseconds, and waking numba's
        threads beside numpy's matrix products cost 50 times that (``scat bench agents``)."""
        import numba

        if not searchable(view):
            raise ValueError("the search plays out draws and discards of the "
                             "draw-and-discard games without calls, and golf's choices")
        if horizon not in MAX_STEPS:
            raise ValueError(f"horizon must be 'hand' or 'game', got {horizon!r}")
        with _PLAYOUTS:
            threads = numba.get_num_threads()
            numba.set_num_threads(1)
            try:
                return self._play_out_here(view, moves, worlds, horizon)
            finally:
                numba.set_num_threads(threads)

    def _play_out_here(self, view: PlayerView, moves: list[int], worlds: int,
                       horizon: str) -> np.ndarray:
        n, me, rules = view.num_players, view.seat, view.rules
        games = worlds * len(moves)
        key = (n, rules, games)
        ro = self._rollouts.get(key)
        if ro is None:
            ro = self._rollouts[key] = _Rollouts(self._player(rules)[0], n, rules, games, 0)
        env = ro.env
        k = len(moves)
        states, streams = [], []
        for _ in range(worlds):
            states.append(determinise(view, self.rng))
            streams.append(self.rng.randrange(2**31))
        first = np.arange(worlds) * k  # world w's copy of move j is row w k + j
        env.set_games(first, states, streams)
        for j in range(1, k):  # the same world and stream for every move
            env.copy_games(env, first, first + j)
        acts = np.tile(np.asarray(moves, np.int64), worlds)
        lives = env.state.lives.copy()
        finished = np.zeros(games, np.bool_)
        score = np.zeros(games)
        for _ in range(MAX_STEPS[horizon]):
            out = env.step(acts, skip=finished)
            if horizon == "hand":
                # a hand cut by the turn cap ends the game with no hand scored: the lives
                # stand as they were. A dealt 31 scored in the same step (the next deal)
                # counts too: a deal the move does not change, so noise, not bias
                ended = ((out["hands_ended"] > 0) | out["done"]) & ~finished
                for g in np.flatnonzero(ended).tolist():
                    after = (lives[g] - out["lives_lost"][g]).tolist()
                    score[g] = lives_win_chance(after, me)
            else:
                ended = out["done"] & ~finished
                score[ended] = out["winner"][ended] == me
            finished |= ended
            if finished.all():
                break
            acts = ro.policy_actions(np.flatnonzero(~finished))
        else:  # a playout cut at the cap scores the chance the lives then give
            for g in np.flatnonzero(~finished).tolist():
                now = env.state.lives[g].tolist()
                score[g] = lives_win_chance(now, me)
        return score.reshape(worlds, len(moves))

    def choose(self, view: PlayerView) -> tuple[int, list[MoveValue]]:
        """The move to play and the searched moves' values (empty when not searched)."""
        priors = self.priors(view)
        best = max(priors, key=priors.__getitem__)
        if not searchable(view):
            return best, []
        if view.rules.play == "golf":  # each kind of move, at the policy's likeliest slot
            kinds: dict[str, int] = {}
            for a in sorted(priors, key=lambda a: -priors[a]):
                kinds.setdefault(_GOLF_KIND[a], a)
            moves = list(kinds.values())
        elif priors[best] >= SURE:
            return best, []
        else:
            moves = [a for a, p in priors.items() if p >= MIN_PRIOR or a == best]
        if len(moves) < 2:
            return best, []
        outcomes = self.play_out(view, moves, self.worlds, "hand")
        b = moves.index(best)
        choice, top = best, 0.0
        for k, a in enumerate(moves):
            gain, z = paired_gain(outcomes[:, k], outcomes[:, b])
            if a != best and z > SWITCH_Z and gain > top:
                choice, top = a, gain
        return choice, move_values(moves, outcomes, priors)

    def act(self, view: PlayerView) -> int:
        return self.choose(view)[0]

    def explain(self, view: PlayerView) -> str:
        from scat_env.actions import action_str

        choice, values = self.choose(view)
        if not values:
            return f"{action_str(choice, True)}: the policy's move, not searched"
        rest = "; ".join(f"{action_str(v.action, True)} {100 * v.mean:.0f}%" for v in values)
        return (f"{action_str(choice, True)} (win chance over {self.worlds} sampled deals: "
                f"{rest})")


def move_values(moves: list[int], outcomes: np.ndarray,
                priors: dict[int, float]) -> list[MoveValue]:
    """Each move's mean outcome over the worlds (column ``k`` of ``outcomes`` is
    ``moves[k]``), its standard error and prior, best first."""
    values = []
    for k, a in enumerate(moves):
        col = outcomes[:, k]
        se = float(col.std(ddof=1) / math.sqrt(len(col))) if len(col) > 1 else 0.0
        values.append(MoveValue(a, float(col.mean()), se, priors.get(a, 0.0)))
    return sorted(values, key=lambda v: -v.mean)


def paired_gain(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The mean of ``a - b`` over the same worlds and its z-score (0 when undecided): how
    much one move beats another, and how sure the worlds are of it."""
    d = a - b
    sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
    mean = float(d.mean())
    return mean, (mean / (sd / math.sqrt(len(d))) if sd > 0 else 0.0)


def parse_worlds(arg: str | None) -> int:
    return parse_budget("search", arg, DEFAULT_WORLDS, MAX_WORLDS, "sampled worlds")


def _make(arg: str | None, seed: int | None) -> Agent:
    return SearchAgent(parse_worlds(arg), seed)


register("search", _make,
         "the shipped policy searched at decision time: W sampled worlds, every move "
         f"played out on the batched engine (search:W, default {DEFAULT_WORLDS})")

__all__ = ["DEFAULT_WORLDS", "GOLF_KINDS", "GOLF_POLICY", "MoveValue", "SearchAgent", "move_values",
           "paired_gain", "parse_worlds", "search_policy", "searchable", "searched_rules"]
