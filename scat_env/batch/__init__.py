"""The batched engine: ``num_envs`` games of Scat stepped at once in compiled code.

Training is bound by how fast games are played. :class:`GameState` plays one game in
Python, a decision at a time; :class:`BatchEnv` plays thousands side by side with
numba-compiled kernels (:mod:`scat_env.batch.kernels`), one call per decision of every
game, in parallel over the machine's cores. The rules are the engine's: a differential test
(``tests/test_batch_engine.py``) plays both on the same deals and compares hands, piles,
lives, results and rewards after every step.

Why numba: the game is branchy integer code over small arrays (a few cards per hand, a pile
of 52), which numba compiles to tight loops with a ``prange`` over games; it installs as a
wheel from PyPI with no compiler. A JAX port (pgx's way) vectorises every branch, paying
for all of them at every step, and needs JAX; numpy alone would need the same masking.

    >>> from scat_env.batch import BatchEnv
    >>> env = BatchEnv(num_envs=1024, num_players=3, rules="standard", seed=0)
    >>> out = env.reset()
    >>> out["observation"].shape, out["action_mask"].shape, out["current_player"].shape
    ((1024, 63), (1024, 67), (1024,))
    >>> out = env.step(env.random_actions())
    >>> sorted(out)  # doctest: +NORMALIZE_WHITESPACE
    ['action_mask', 'current_player', 'done', 'hands_ended', 'lives', 'lives_lost',
     'observation', 'rewards', 'truncated', 'winner']

**What a step returns** (arrays owned by the env and overwritten by the next step: copy
what you keep): ``observation`` [B, D] int8 and ``action_mask`` [B, A] bool of the player
to move (``A`` = :data:`scat_env.actions.NUM_ACTIONS`, the env's action space);
``current_player`` [B]; ``rewards`` [B, num_players] float32, each seat's reward from this
step (as ``env()`` pays it: ``reward="game"`` or ``"hand"``); ``done`` [B] and
``truncated`` [B] (the turn cap, ``max_turns`` turns in one hand, as ``env()``);
``winner`` [B] (-1 unless the game was won this step); ``hands_ended`` [B] and
``lives_lost`` [B, num_players] (what the hands that ended this step cost; a step may end
two hands when a dealt 31 follows); ``lives`` [B, num_players]. A game that ends restarts
at once: its ``done`` is set and its observation is already the new game's first decision
(the auto-reset of EnvPool and gymnasium's same-step mode). Seats are absolute in
``rewards``, ``lives`` and ``lives_lost``; the observation is relative to the player to move.

**The observation** is compact, documented in :func:`scat_env.batch.reference.compact_observation`:
one code per card (unseen, in my hand, drawn, taken, top discard, in the pile, known in
opponent r's hand), lives and flags per relative seat, five counters: ``52 + 2n + 5`` int8
for every draw-and-discard game without calls. Rules with calls, golf and points races
append pieces after it (the phase as a code and how many of my cards I see; a quiet 31;
points per seat; golf's face-up slots): :func:`observation_size` with the rules gives the width.
It holds what the player's :class:`~scat_env.view.PlayerView` holds and nothing else (the
tests build it from the view and compare).

**Rules covered**: every preset (:func:`covered_presets` lists all of
:data:`scat_env.rules.PRESETS`) and every option of :class:`Rules` at 2 to 10 players: the
draw-and-discard games, the calls (hammer, throw-down by the first player or any, sudden
death, declaring 31 by choice with a quiet 31 counting 30), the points races (French
Canadian, with or without the poker tie-break) and golf (face-down slots, one on the bus).
:func:`uncovered` names what is not played: only more lives than a hand's packed losses
hold.

**The state** is one record of arrays, :class:`BatchState` (``BatchEnv.state``), whose
fields the kernels take in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..actions import NUM_ACTIONS
from ..rules import DEFAULT_MAX_TURNS, MAX_PLAYERS, MIN_PLAYERS, PRESETS, Rules
from ..scoring import value_table
from . import kernels as K
from .reference import game_seed, observation_pieces, observation_size, piece_starts

if TYPE_CHECKING:
    from ..engine import GameState

__all__ = ["BatchEnv", "BatchState", "beyond_base_observation", "compile_kernels",
           "covered_presets", "covers", "observation_size", "plain", "uncovered"]


class BatchState(NamedTuple):
    """The whole state of a batch of games, as plain arrays (pgx's ``State`` way): ``B``
    games (``g``), ``n`` seats (``s``, absolute). The kernels take these fields, in this
    order, as positional arguments (numba compiles a call over plain arrays; a record
    passed whole would be unpacked by every kernel anyway). Piles list their top card
    LAST; ``-1`` means "none" wherever a card or seat is meant."""

    params: np.ndarray  #: [NUM_PARAMS] int64: the rules and options (``kernels.P_*``)
    values: np.ndarray  #: [140608] float64: hand values (``scoring.value_table``)
    deck: np.ndarray  #: [k] int8: the pack's card ids, shuffled at each deal
    hands: np.ndarray  #: [B, n, 4] int8: cards in hand, in the engine's order
    hand_len: np.ndarray  #: [B, n] int8: cards held
    known: np.ndarray  #: [B, n] uint64: a bit per card taken from the pile and held
    public: np.ndarray  #: [B, n, PUB_SIZE] int64: the hand's public record of each seat
    stock: np.ndarray  #: [B, 52] int8: the stock
    stock_len: np.ndarray  #: [B] int64
    discard: np.ndarray  #: [B, 52] int8: the discard pile
    discard_len: np.ndarray  #: [B] int64
    lives: np.ndarray  #: [B, n] int64: lives left (0 = out)
    active: np.ndarray  #: [B, n] uint8: still in the game
    per_seat: np.ndarray  #: [B, n, NUM_SEAT_SLOTS] int64: looked, quiet 31, face-up, points
    scalars: np.ndarray  #: [B, NUM_SCALARS] int64: dealer, player to move, phase... (``sc``)
    rng: np.ndarray  #: [B] uint64: each game's SplitMix64 state (every random draw)
    deal_rewards: np.ndarray  #: [B, n] float32: paid by a new game's dealt hands, next step
    deal_lost: np.ndarray  #: [B, n] int64: lives those hands cost
    deal_ended: np.ndarray  #: [B] int64: how many hands they were


#: Where :class:`BatchState`'s per-game fields begin (the rules, values and pack before
#: them are the table's).
_PER_GAME = BatchState._fields.index("hands")

#: The rule fields the kernels play. A field added to :class:`Rules` for another game must
#: keep its default, or the rules are refused naming it, until the kernels learn it.
_PLAYED = frozenset({
    "name", "deck", "pennies", "county", "lives_name", "knock_mode", "knocker_tie",
    "knocker_loss", "knocker_loss_on_31", "three_of_a_kind", "three_aces", "straight_flush",
    "min_knock", "knock_needs_flush", "knock_when_stock_exhausted", "all_out", "trips_beat_31",
    "declare_31", "first_turn_knock", "knock_then_draw", "second_knock", "extra_stops",
    "hammer", "throw_down", "sudden_death", "scoring", "points_to_win", "poker_tiebreak",
    "play", "one_on_the_bus"})


def uncovered(rules: Rules) -> str | None:
    """What of ``rules`` the batched engine does not play, or ``None`` when it plays them
    all. Every valid :class:`Rules` of today is played (every preset, every option), so
    this names only a field added since, and more lives than a hand's packed losses hold
    (:data:`~scat_env.batch.kernels.LOSS_BITS` bits a seat). What a policy that reads the
    base observation cannot know is :func:`beyond_base_observation`."""
    if rules.start_lives >= 1 << K.LOSS_BITS:
        return f"more than {(1 << K.LOSS_BITS) - 1} lives a player"
    for name, spec in Rules.__dataclass_fields__.items():
        if name not in _PLAYED and getattr(rules, name) != spec.default:
            return f"{name}={getattr(rules, name)!r}"
    return None


def beyond_base_observation(rules: Rules) -> str | None:
    """What of ``rules`` the base compact observation (``52 + 2n + 5``: the draw-and-discard
    games without calls) has no word for, or ``None``: the calls, golf and points races
    append pieces to it (:func:`~scat_env.batch.reference.observation_pieces`), so a policy
    trained on the base observation cannot play them."""
    for call, words in (("hammer", "the hammer call"), ("throw_down", "the throw-down call"),
                        ("sudden_death", "sudden death"),
                        ("declare", "declaring 31 by choice")):
        if call in rules.calls:
            return words
    if rules.play == "golf":
        return "golf"
    if rules.scoring == "points":
        return "a points race"
    return uncovered(rules)


def covers(rules: Rules | str) -> bool:
    """Whether :class:`BatchEnv` plays ``rules`` (a :class:`Rules` or a preset name)."""
    return uncovered(Rules.preset(rules) if isinstance(rules, str) else rules) is None


def plain(rules: Rules) -> bool:
    """Whether ``rules`` are one of the draw-and-discard games without calls (``P_PLAIN``:
    the engine's lean path), whose whole state is the cards, the lives and the turn's
    scalars: what :meth:`BatchEnv.set_games` writes."""
    return covers(rules) and bool(_params(rules, 1, "game")[K.P_PLAIN])


def covered_presets() -> list[str]:
    """The presets :class:`BatchEnv` plays, in :data:`scat_env.rules.PRESETS` order."""
    return [name for name in PRESETS if covers(name)]


def _params(rules: Rules, max_turns: int, reward: str) -> np.ndarray:
    P = np.zeros(K.NUM_PARAMS, np.int64)
    P[K.P_GIN] = rules.knock_mode == "gin"
    P[K.P_TIE] = {"safe": K.TIE_SAFE, "all": K.TIE_ALL,
                  "knocker_only": K.TIE_KNOCKER_ONLY}[rules.knocker_tie]
    P[K.P_KNOCKER_LOSS] = rules.knocker_loss
    P[K.P_KNOCKER_LOSS_31] = rules.knocker_loss_on_31
    P[K.P_MIN_KNOCK] = rules.min_knock
    P[K.P_FLUSH] = rules.knock_needs_flush
    P[K.P_KNOCK_EXHAUSTED] = rules.knock_when_stock_exhausted
    P[K.P_ALL_OUT_LAST_LIFE] = rules.all_out == "last_life"
    P[K.P_DECLARES] = rules.declare_31 == "auto"
    P[K.P_FIRST_TURN_KNOCK] = rules.first_turn_knock
    P[K.P_KNOCK_THEN_DRAW] = rules.knock_then_draw
    P[K.P_SECOND_KNOCK] = rules.second_knock
    P[K.P_START_LIVES] = rules.start_lives
    P[K.P_MAX_TURNS] = max_turns
    P[K.P_REWARD_HAND] = reward == "hand"
    P[K.P_HAMMER] = rules.hammer
    P[K.P_THROW] = {"none": K.THROW_NONE, "first": K.THROW_FIRST,
                    "any": K.THROW_ANY}[rules.throw_down]
    P[K.P_SUDDEN] = rules.sudden_death
    P[K.P_CHOOSES] = rules.declare_31 == "choice"
    P[K.P_POINTS] = rules.scoring == "points"
    P[K.P_POINTS_TO_WIN] = rules.points_to_win
    P[K.P_GOLF] = rules.play == "golf"
    P[K.P_BUS] = rules.one_on_the_bus
    P[K.P_SHOWN] = rules.sudden_death or rules.declare_31 == "choice"
    P[K.P_OBS_PHASE] = "phase" in observation_pieces(2, rules)
    P[K.P_POKER] = rules.poker_tiebreak
    P[K.P_PLAIN] = not observation_pieces(2, rules)  # the draw-and-discard games, no calls
    return P


class BatchEnv:
    """``num_envs`` games of ``num_players`` under ``rules`` (a preset name or a
    :class:`Rules`), game ``i`` seeded from ``(seed, i)``, or from ``(seed, deal_ids[i])``
    when given. Games with the same deal id are dealt the same cards: the same first dealer
    and the same shuffled pack every hand, whatever is played (each hand's shuffle takes
    the same draws from the game's generator), as duplicate bridge deals the same boards
    to every table; an evaluation seats its agent in every seat of one deal. See the module
    docstring."""

    def __init__(self, num_envs: int, num_players: int, rules: str | Rules = "standard",
                 seed: int = 0, *, max_turns: int = DEFAULT_MAX_TURNS,
                 reward: str = "game", deal_ids: Any = None) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if (isinstance(num_players, bool) or not isinstance(num_players, int)
                or not MIN_PLAYERS <= num_players <= MAX_PLAYERS):
            raise ValueError(f"num_players must be an int from {MIN_PLAYERS} to {MAX_PLAYERS}, "
                             f"got {num_players!r}")
        if isinstance(rules, str):
            rules = Rules.preset(rules)
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a preset name or a Rules, got {rules!r}")
        why = uncovered(rules)
        if why is not None:
            raise ValueError(f"the batched engine does not play the {rules.name!r} rules yet "
                             f"({why}); it plays: {', '.join(covered_presets())}")
        if len(rules.deck_cards) < 3 * num_players + 1:
            raise ValueError(f"the {rules.deck} pack has too few cards for {num_players} "
                             "players")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an int, got {seed!r}")
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        if reward not in ("game", "hand"):
            raise ValueError(f"reward must be 'game' or 'hand', got {reward!r}")
        if deal_ids is None:
            deal_ids = range(num_envs)
        else:
            ids = np.asarray(deal_ids)
            if (ids.shape != (num_envs,) or not np.issubdtype(ids.dtype, np.integer)
                    or (ids < 0).any()):
                raise ValueError(f"deal_ids must be {num_envs} ints >= 0 (one per game), got "
                                 f"an array of shape {ids.shape} and dtype {ids.dtype}")
            deal_ids = ids.tolist()
        self.num_envs, self.num_players, self.rules = num_envs, num_players, rules
        self.seed, self.max_turns, self.reward = seed, max_turns, reward
        B, n = num_envs, num_players
        self.observation_size = observation_size(n, rules)
        self.num_actions = NUM_ACTIONS
        self._P = _params(rules, max_turns, reward)
        self._plain = bool(self._P[K.P_PLAIN])  # the plain games step on their own kernel
        self._T = np.asarray(value_table(rules), np.float64)
        self._deck = np.asarray(rules.deck_cards, np.int8)
        self._hands = np.zeros((B, n, 4), np.int8)
        self._hlen = np.zeros((B, n), np.int8)
        self._known = np.zeros((B, n), np.uint64)
        self._pub = np.zeros((B, n, K.PUB_SIZE), np.int64)
        self._stock = np.zeros((B, 52), np.int8)
        self._slen = np.zeros(B, np.int64)
        self._disc = np.zeros((B, 52), np.int8)
        self._dlen = np.zeros(B, np.int64)
        self._lives = np.zeros((B, n), np.int64)
        self._active = np.zeros((B, n), np.uint8)
        self._per_seat = np.zeros((B, n, K.NUM_SEAT_SLOTS), np.int64)
        self._sc = np.zeros((B, K.NUM_SCALARS), np.int64)
        self._rng = np.array([game_seed(seed, i) for i in deal_ids], np.uint64)
        self._act_rng = np.array([game_seed(seed ^ 0x5CA7, i) for i in range(B)], np.uint64)
        self._prew = np.zeros((B, n), np.float32)  # paid with a new game's first step
        self._plost = np.zeros((B, n), np.int64)
        self._pended = np.zeros(B, np.int64)
        self._rew = np.zeros((B, n), np.float32)
        self._lost = np.zeros((B, n), np.int64)
        self._ended = np.zeros(B, np.int64)
        self._done = np.zeros(B, np.bool_)
        self._trunc = np.zeros(B, np.bool_)
        self._winner = np.full(B, -1, np.int64)
        self._obs = np.zeros((B, self.observation_size), np.int8)
        self._mask = np.zeros((B, NUM_ACTIONS), np.bool_)
        self._no_skip = np.zeros(B, np.bool_)
        self._started = False
        #: Every game's state, one record; the ``_`` attributes above name the same arrays.
        self.state = BatchState(
            self._P, self._T, self._deck, self._hands, self._hlen, self._known, self._pub,
            self._stock, self._slen, self._disc, self._dlen, self._lives, self._active,
            self._per_seat, self._sc, self._rng, self._prew, self._plost, self._pended)

    def reset(self) -> dict[str, np.ndarray]:
        """A new game in every slot (the generators carry on: a second reset deals new
        games); the observation, mask and player to move of each."""
        K.reset_all(self.num_players, *self.state, self._obs, self._mask)
        self._done[:] = False
        self._trunc[:] = False
        self._winner[:] = -1
        self._started = True
        return self._out(first=True)

    def step(self, actions: Any, skip: Any = None) -> dict[str, np.ndarray]:
        """One decision in every game: ``actions[i]`` for the player to move in game ``i``.
        An illegal action raises ``ValueError`` naming the game and the action, and no game
        moves. ``skip`` (optional, [B] bool): games that wait this step (their action is
        not read; they report no reward and no end): how an adapter lets the games where
        its learner is to move wait while the others' opponents play."""
        if not self._started:
            raise RuntimeError("BatchEnv: call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers (one per game), got "
                             f"an array of shape {acts.shape} and dtype {acts.dtype}")
        acts = acts.astype(np.int64, copy=False)
        if skip is None:
            skip = self._no_skip
        else:
            skip = np.asarray(skip)
            if skip.shape != (self.num_envs,) or skip.dtype != np.bool_:
                raise ValueError(f"skip must be {self.num_envs} booleans, got an array of shape "
                                 f"{skip.shape} and dtype {skip.dtype}")
        bad = K.first_illegal(acts, self._mask, skip)
        if bad >= 0:
            legal = np.flatnonzero(self._mask[bad]).tolist()
            raise ValueError(f"game {bad}: action {int(acts[bad])} is not legal for "
                             f"player_{int(self._sc[bad, K.CUR])} now (legal: {legal})")
        step = K.step_all_plain if self._plain else K.step_all
        step(self.num_players, acts, skip, *self.state, self._rew, self._lost, self._ended,
             self._done, self._trunc, self._winner, self._obs, self._mask)
        return self._out()

    def restart(self, games: Any) -> None:
        """Abandon the games where ``games`` ([B] bool) is set and deal each a new one (its
        generator carries on): for an adapter whose learner was knocked out, so the rest of
        that game, which nobody learns from, costs nothing. Observations and masks of those
        games are the new games'; the others are untouched."""
        which = np.asarray(games)
        if which.shape != (self.num_envs,) or which.dtype != np.bool_:
            raise ValueError(f"games must be {self.num_envs} booleans")
        if not self._started:
            raise RuntimeError("BatchEnv: call reset() before restart()")
        K.restart_some(self.num_players, which, *self.state, self._obs, self._mask)

    def set_games(self, rows: Any, states: Sequence[GameState],
                  streams: Sequence[int] | None = None) -> None:
        """Write ``states[k]`` (mid-hand :class:`~scat_env.engine.GameState` s of this
        table's rules and size) into game ``rows[k]``, and observe them again: how a search
        plays out the worlds it samples for a view (``GameState.from_parts``) at the batched
        engine's speed. The draw-and-discard games without calls (``P_PLAIN``, the phases
        ``draw`` and ``discard``) and golf (its phases and face-up slots) only: their whole
        state is the cards, the lives, golf's slots and the scalars below, which these parts
        fix (golf's bus is the lives). A game played past its hand deals from its
        generator: ``streams[k]`` (a seed, :func:`~scat_env.batch.reference.game_seed`'s
        input) restarts game ``rows[k]``'s, so that games given the same seed are dealt the
        same later hands (a search compares its moves on the same future deals); without
        ``streams`` each generator carries on. ``ValueError`` for anything else."""
        if not self._started:
            raise RuntimeError("BatchEnv: call reset() before set_games()")
        golf = self.rules.play == "golf"
        if not (self._plain or golf):
            raise ValueError(f"set_games plays the draw-and-discard rules without calls and "
                             f"golf; the {self.rules.name!r} rules have more state than a "
                             "GameState's parts give here")
        phases = ("golf_draw", "golf_place") if golf else ("draw", "discard")
        idx = np.asarray(rows, np.int64)
        if idx.shape != (len(states),) or ((idx < 0) | (idx >= self.num_envs)).any():
            raise ValueError(f"rows must be {len(states)} game indices below {self.num_envs}")
        if streams is not None:
            if len(streams) != len(states):
                raise ValueError(f"streams must be {len(states)} seeds, one per state")
            self._rng[idx] = [game_seed(self.seed, int(v)) for v in streams]
        n = self.num_players
        for g, st in zip(idx.tolist(), states, strict=True):
            if st.num_players != n or st.rules != self.rules:
                raise ValueError(f"game {g}: the state is not of this table's rules and size")
            if st.phase not in phases:
                raise ValueError(f"game {g}: phase {st.phase!s} is not {' or '.join(phases)}")
            hands, hlen, pub = self._hands[g], self._hlen[g], self._pub[g]
            pub[:] = 0
            for s in range(n):
                h = st.hands[s]
                hands[s, :len(h)] = h
                hlen[s] = len(h)
                self._known[g, s] = st.known[s]
            for seat, kind, card in st.log:
                if kind == "discard":
                    pub[seat, K.PUB_SUITS + card // 13] += 1
                elif kind in ("draw_stock", "take"):
                    pub[seat, K.PUB_DRAWS] += 1
            self._slen[g] = len(st.stock)
            self._stock[g, :len(st.stock)] = st.stock
            self._dlen[g] = len(st.discard)
            self._disc[g, :len(st.discard)] = st.discard
            self._lives[g] = st.lives
            self._active[g] = st.active
            self._per_seat[g] = 0
            self._per_seat[g, :, K.S_LOOKED] = 0 if golf else 1  # golf: nobody sees a slot
            if golf:
                self._per_seat[g, :, K.S_FACE_UP] = st.face_up
            sc = self._sc[g]
            sc[:] = -1
            sc[K.DEALER], sc[K.CUR] = st.dealer, st.current_player
            sc[K.PHASE] = K.PHASE_NAMES.index(st.phase.value)
            for slot, v in ((K.KNOCKER, st.knocker), (K.KNOCK_TURN, st.knock_turn),
                            (K.LAST_SEAT, st.last_seat), (K.TAKEN, st.taken),
                            (K.DRAWN, st.drawn)):
                if v is not None:
                    sc[slot] = v
            sc[K.TURN], sc[K.HAND_NO] = st.turn, st.hand_number
            sc[K.PENDING] = sc[K.DECLARED] = sc[K.SCREEN_KNOWN] = 0
            self._prew[g] = 0.0
            self._plost[g] = 0
            self._pended[g] = 0
            self._done[g] = self._trunc[g] = False
            self._winner[g] = -1
        K.observe_games(idx, n, self._P, self._T, self._hands, self._hlen, self._known,
                        self._per_seat, self._slen, self._disc, self._dlen, self._lives,
                        self._active, self._sc, self._obs, self._mask)

    def copy_games(self, source: BatchEnv, from_rows: Any, rows: Any,
                   streams: Sequence[int] | None = None) -> None:
        """Copy games ``from_rows[k]`` of ``source`` (a started env of the same rules and
        size, this one or another) into games ``rows[k]``, exactly, observation included:
        how a search plays every move in the same sampled worlds (:mod:`agents.search`),
        and a labeller many continuations of one position, without a :class:`GameState`
        per copy (:mod:`training.search_labels`).
        ``streams[k]`` restarts copy ``k``'s generator as :meth:`set_games` does, so copies
        given the same seed are dealt the same later hands; without it each copy carries
        on its source's generator."""
        if not (self._started and source._started):
            raise RuntimeError("BatchEnv: call reset() on both envs before copy_games()")
        if source.num_players != self.num_players or source.rules != self.rules:
            raise ValueError("copy_games copies between envs of the same rules and size")
        src = np.asarray(from_rows, np.int64)
        dst = np.asarray(rows, np.int64)
        if (src.ndim != 1 or dst.shape != src.shape
                or ((src < 0) | (src >= source.num_envs)).any()
                or ((dst < 0) | (dst >= self.num_envs)).any()):
            raise ValueError(f"from_rows and rows must be equal-length lists of game indices "
                             f"below {source.num_envs} and {self.num_envs}")
        for mine, theirs in zip(self.state[_PER_GAME:], source.state[_PER_GAME:],
                                strict=True):  # every per-game field of the record
            mine[dst] = theirs[src]
        self._obs[dst] = source._obs[src]
        self._mask[dst] = source._mask[src]
        if streams is not None:
            if len(streams) != len(dst):
                raise ValueError(f"streams must be {len(dst)} seeds, one per copy")
            self._rng[dst] = [game_seed(self.seed, int(v)) for v in streams]
        self._done[dst] = self._trunc[dst] = False
        self._winner[dst] = -1

    def redeal_golf_unseen(self, rows: Any, rng: np.random.Generator) -> None:
        """Deal again, at random, every card nobody has seen in each of golf games
        ``rows``: the face-down slots (everyone's, the mover's too) and the stock share
        their cards anew. A world sampled from any player's view, exactly
        (:func:`agents.ismcts.determinise_golf` does the same from a view): nobody has
        seen a face-down card, so the public play says nothing of where they lie. The
        observations do not change (they show no unseen card)."""
        if self.rules.play != "golf":
            raise ValueError("redeal_golf_unseen deals golf's face-down slots and stock")
        idx = np.asarray(rows, np.int64)
        if idx.ndim != 1 or ((idx < 0) | (idx >= self.num_envs)).any():
            raise ValueError(f"rows must be a list of game indices below {self.num_envs}")
        n = self.num_players
        hands, face_up, stock = self._hands, self._per_seat[:, :, K.S_FACE_UP], self._stock
        for g in idx.tolist():
            down = [(s, i) for s in range(n) for i in range(3) if not face_up[g, s] >> i & 1]
            slen = int(self._slen[g])
            pool = np.concatenate([np.array([hands[g, s, i] for s, i in down], np.int8),
                                   stock[g, :slen]])
            rng.shuffle(pool)
            for k, (s, i) in enumerate(down):
                hands[g, s, i] = pool[k]
            stock[g, :slen] = pool[len(down):]

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action per game, from the env's own generators (the
        benchmark's player, and a cheap opponent)."""
        return K.random_actions(self._mask, self._act_rng)

    def observe_all(self, out: np.ndarray | None = None) -> np.ndarray:
        """Every seat's compact observation of every game, [B, num_players, D] (seat
        ``s``'s own view, whoever is to move): for a trainer's value of a seat waiting for
        its turn."""
        shape = (self.num_envs, self.num_players, self.observation_size)
        if out is None:
            out = np.empty(shape, np.int8)
        elif out.shape != shape or out.dtype != np.int8 or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous int8 array of shape {shape}")
        K.observe_all_seats(self.num_players, self._P, self._hands, self._hlen, self._known,
                            self._per_seat, self._slen, self._disc, self._dlen, self._lives,
                            self._active, self._sc, out.reshape(-1, self.observation_size))
        return out

    def current(self) -> dict[str, np.ndarray]:
        """The observation, mask and player to move of every game, as the last ``reset``
        or ``step`` returned them (also after :meth:`restart`): for an opponent computed
        outside the env, such as :class:`agents.batch_expert.BatchExpert`."""
        return self._out(first=True)

    def public_record(self) -> np.ndarray:
        """The current hand's public record per game and absolute seat, [B, num_players,
        5] (read-only): the cards the seat drew (stock or pile), then its discards of each
        suit (clubs, diamonds, hearts, spades: card id // 13). Every player's log shows
        these (``PlayerView.log``); the compact observation does not, and a batched
        opponent that reads the log, like ``expert``, needs them
        (:mod:`agents.batch_expert`)."""
        view = self._pub.view()
        view.flags.writeable = False
        return view

    def race_points(self) -> np.ndarray:
        """A points race's score of every game and absolute seat, [B, num_players]
        (read-only; zeros under rules of lives): the points each seat has won so far in the
        game now being played. A game that ended this step has already restarted, so its
        row reads the new game's zeros. Every player sees the score (the ``points`` piece of
        the observation, relative to the player to move); a trainer that pays a point won
        as it is won (``training.batch_learner.points_shaping``) reads it here."""
        view = self._per_seat[:, :, K.S_POINTS]
        view.flags.writeable = False
        return view

    def active_seats(self) -> np.ndarray:
        """Which seats of every game are still in it, [B, num_players] uint8 (read-only; 1
        for every seat of a points race or golf, where nobody is put out): a seat that lost
        its last life reads 0 until its game ends and restarts. Every player sees who is out
        (the lives in the observation). A trainer reads it to close an eliminated seat's
        chain of decisions: that seat will not move again in this game and is paid nothing
        more, so its return is complete (``training.batch_ppo.collect``)."""
        view = self._active.view()
        view.flags.writeable = False
        return view

    def hand_features(self, obs: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Scoring features of compact observations [B, D] -> [B, 54] float32
        (:func:`scat_env.batch.kernels.hand_features`: the value kept by each discard, the
        hand's value, the value with the top discard), computed from the observations
        alone under these rules' values."""
        if out is None:
            out = np.empty((obs.shape[0], 54), np.float32)
        K.hand_features(obs, self._T, out)
        return out

    def threshold_actions(self, knock_at: int | None = 25) -> np.ndarray:
        """The ``threshold:K`` agent's move in every game (``greedy`` at 25, ``None``
        never knocks), from the observations and masks alone: a batched opponent as cheap
        as the random one, that makes :class:`agents.greedy.ThresholdAgent`'s move under
        every preset (its calls and golf included)."""
        out = np.empty(self.num_envs, np.int64)
        starts = piece_starts(self.num_players, self.rules)
        phase_at, slots_at = starts.get("phase", -1), starts.get("slots", -1)
        K.threshold_actions(-1 if knock_at is None else knock_at, self._T, self._obs,
                            self._mask, phase_at, slots_at, out)
        return out

    def _out(self, first: bool = False) -> dict[str, np.ndarray]:
        out = {"observation": self._obs, "action_mask": self._mask,
               "current_player": self._sc[:, K.CUR]}
        if not first:
            out.update({"rewards": self._rew, "done": self._done, "truncated": self._trunc,
                        "winner": self._winner, "hands_ended": self._ended,
                        "lives_lost": self._lost, "lives": self._lives})
        return out

    # -- inspection (tests, debugging): one game's state as the engine would hold it -----
    def game(self, i: int) -> dict[str, Any]:
        """Game ``i``'s full state in the engine's terms (hands, piles top last, lives...;
        who has looked, the cards of a quiet 31, golf's face-up slots, a race's points, the
        dealt 31s still to decide and those declared, each as ``GameState`` holds it): for
        tests and debugging, never for a player."""
        n, sc, seat = self.num_players, self._sc[i], self._per_seat[i]

        def none(v: int) -> int | None:
            return None if v < 0 else int(v)

        def from_left(bits: int) -> list[int]:
            d = int(sc[K.DEALER])
            return [s for s in ((d + k) % n for k in range(1, n + 1)) if bits >> s & 1]

        return {
            "hands": [self._hands[i, s, :self._hlen[i, s]].tolist() for s in range(n)],
            "stock": self._stock[i, :self._slen[i]].tolist(),
            "discard": self._disc[i, :self._dlen[i]].tolist(),
            "lives": self._lives[i].tolist(),
            "active": [bool(a) for a in self._active[i]],
            "dealer": int(sc[K.DEALER]), "current_player": int(sc[K.CUR]),
            "phase": K.PHASE_NAMES[sc[K.PHASE]],
            "knocker": none(sc[K.KNOCKER]), "turn": int(sc[K.TURN]),
            "hand_number": int(sc[K.HAND_NO]), "taken": none(sc[K.TAKEN]),
            "drawn": none(sc[K.DRAWN]),
            "known": [[c for c in range(52) if int(self._known[i, s]) >> c & 1]
                      for s in range(n)],
            "draws": self._pub[i, :, K.PUB_DRAWS].tolist(),
            "discarded_suits": self._pub[i, :, K.PUB_SUITS:].tolist(),
            "looked": [bool(v) for v in seat[:, K.S_LOOKED]],
            "quiet": seat[:, K.S_QUIET].tolist(),
            "face_up": seat[:, K.S_FACE_UP].tolist(),
            "points": seat[:, K.S_POINTS].tolist(),
            "pending": from_left(int(sc[K.PENDING])),
            "declared": from_left(int(sc[K.DECLARED])),
        }


def compile_kernels() -> None:
    """Compile every kernel now (a tiny env driven through each entry point): numba
    compiles on first use, about a minute on a 2-core machine when its cache is cold, and a
    benchmark must not count that as play. Later processes load the cache in about a
    second."""
    env = BatchEnv(2, 2)
    env.reset()
    out = env.step(env.random_actions())
    env.hand_features(out["observation"])
    env.threshold_actions()
    env.observe_all()
    env.restart(np.ones(2, np.bool_))
    from ..engine import GameState

    env.set_games([0], [GameState(2, env.rules, seed=0)])
