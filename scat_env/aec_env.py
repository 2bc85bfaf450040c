"""Scat as a PettingZoo AEC environment.

| | |
| --- | --- |
| Import | ``import scat_env; env = scat_env.env(num_players=3)`` |
| Agents | ``player_0`` .. ``player_{n-1}``, seated clockwise in that order, n = 2..10 |
| Actions | ``Discrete(67)`` (``scat_env.actions.NUM_ACTIONS``) |
| Observations | ``Dict(observation=Box(0, 1, (D,), float32), action_mask=Box(0, 1, (67,), int8))`` |
| D | ``52 * (n + 4) + 4n + 12``: 332 for 2 players, 388 for 3, 556 for 6, 780 for 10; a points game adds ``n``, golf ``3n`` |
| Rewards | ``"game"``: winner +1, others -1/(n-1) (zero-sum); ``"hand"``: minus lives lost |

**Actions.** ``0..51`` discard that card (``discard_action(card)``); ``52`` ``DRAW_STOCK``;
``53`` ``DRAW_DISCARD`` (take the top discard); ``54`` ``KNOCK`` (instead of drawing); ``55``
``END_PLAY`` (stock exhausted: decline the discard, which ends the play). A turn is a draw
decision then a discard decision by the same agent, or a single knock. The calls of the
variations follow; the standard game never offers them, so its first 56 actions
(``CORE_ACTIONS``) are the whole game: ``56`` ``HAMMER`` (the first player's showdown
instead of a draw), ``57`` ``THROW_DOWN`` (a showdown called before looking), ``58``
``SUDDEN_DEATH`` (the dealer's call after one card each), ``59`` ``DECLARE`` (show a new
31 where declaring is a choice), ``60`` ``PASS`` (decline the call on offer). Golf's slot
choices come last: ``61..63`` ``PLACE_SLOT + i`` (put the card drawn or taken face up in
face-down slot ``i``; a taken card must go there), ``64..66`` ``TURN_UP + i`` (discard the
card drawn from the stock and turn slot ``i`` face up).

**Action mask.** ``obs["action_mask"]`` marks the legal actions of the agent to move and is
all zeros for every other agent. The card just taken from the discard pile is never legal
to discard; knocking follows the rules' limits (one knock a hand, minimum score, flush).

**Observation** (seat-relative: index 0 of per-seat pieces is me, 1 my left neighbour...).
With ``n`` players and ``K = 52 * (n - 1)``:

| indices | piece | meaning |
| --- | --- | --- |
| 0..51 | ``hand`` | one-hot of my cards (3, or 4 after drawing) |
| 52..103 | ``drawn_card`` | the card I drew this turn (discard phase) |
| 104..155 | ``top_discard`` | the top card of the discard pile |
| 156..207 | ``discard_pile`` | every card in the discard pile (all were seen face up) |
| 208..208+K-1 | ``known_cards`` | 52 per opponent (relative seat 1..n-1): cards it took from the pile and still holds |
| 208+K..259+K | ``unseen`` | cards I have not seen (in the stock or hidden in a hand) |
| 260+K..263+K | ``suit_sums`` | points of my clubs, diamonds, hearts, spades / 41 |
| 264+K | ``hand_value`` | my hand value / 41 (best three of four mid-turn) |
| 265+K | ``value_with_discard`` | my value if I take the top discard / 41 (draw phase) |
| 266+K.. (n) | ``lives`` | lives left / starting lives, per relative seat |
| next n | ``active`` | seat still in the game |
| next n | ``knocked`` | seat knocked this hand |
| next n | ``dealer`` | seat dealt this hand |
| next 1 | ``stock_size`` | cards in the stock / 52 |
| next 2 | ``phase`` | one-hot: draw, discard |
| next 2 | ``flags`` | someone knocked; stock empty |
| last 1 | ``turn`` | turns this hand / 100, capped at 1 |

Points games append ``points`` (n entries: points / points to win, per relative seat), golf
``face_down`` (3n entries: 1 per slot still face down, per relative seat);
``scat_env.observation.pieces_for(rules)`` lists a preset's pieces and
``scat_env.observation.layout_table(n, pieces_for(rules))`` prints the exact ranges; the
observation encodes ``env.unwrapped.view(agent)`` and nothing else.

**State.** ``env.state()`` (``state_space``) is the full position for a centralised
critic, seats absolute: every hand, the stock, the discard pile and its top card (52 entries
each), then per seat who is to move, lives / starting lives, who knocked, who dealt, and the
stock size and discard phase: ``56n + 158`` entries (326 at 3 players) in every game. The
variations append what decides them (:func:`scat_env.state.state_pieces`): points races
``points`` (n); golf ``face_up`` (3n) and ``golf_phase`` (2); throw-down and sudden death
``looked`` (n) and ``call_phase`` (2); a 31 declared by choice ``quiet``, ``pending``,
``declared`` (n each) and ``declare_phase`` (1); the second knock, the hammer and the
computer turn ``knock_open``, ``hammer_open`` and ``turn`` (1 each).
``scat_env.observation.layout_table(n, state_pieces(rules))`` prints the exact ranges. The
state holds hidden cards: never give it to an actor.

**Rewards.** ``reward="game"``: an eliminated player receives ``-1/(n-1)`` at the step that
eliminates it and the last player standing ``+1`` when the game ends, so every episode sums
to zero. If the turn cap truncates the game, the players still in share the eliminated
players' payments equally (still zero-sum). ``reward="hand"``: each hand, minus the lives it
cost. Hands decided by the deal before any decision of an episode (dealt 31 during
``reset``) pay their rewards at the first step. ``single_hand=True`` ends the episode when
the first hand is scored (it requires ``reward="hand"``).

**Turn cap.** ``max_turns`` (default ``DEFAULT_MAX_TURNS`` = 300) turns in one hand truncate
the episode: two players who keep taking each other's discards could otherwise play forever.

**Private decisions.** Whether to declare a new 31 (``declare_31: choice``) is the holder's
own: while it decides, every other agent's observation, mask and infos are those of the
position it would see without the 31 (``scat_env.view.screen``), and a 31 kept quiet leaves
nothing in any of them. What no AEC env can hide is whose decision it is:
``agent_selection`` names the holder, so a harness that watches it (not an agent, which reads
only its observation) sees one extra decision.

**Infos.** ``infos[agent]["lives"]`` is always present; in a points game, where nobody
loses a life, it stays at the starting lives and ``infos[agent]["points"]`` holds the points. After a step that ends a hand (and
after a ``reset`` whose deal was decided at once), every agent's info holds ``"hand_result"``
and ``"hand_results"`` (all hands that step ended, in order), each the
:meth:`HandResult.to_dict <scat_env.engine.HandResult.to_dict>` of a scored hand, seats named
by agent: ``hand_number``, ``reason`` (how the hand ended: ``"knock"``, ``"second_knock"``,
``"thirty_one"``, ``"dealt_thirty_one"``, ``"stock_exhausted"``, ``"hammer"``,
``"throw_down"``, ``"sudden_death"`` or golf's ``"face_up"``), ``rule`` (which scoring rule decided who
paid, one of ``scat_env.showdown.RULES``; ``scat_env.showdown.rule_text(rule)`` says it in
words), ``dealer``, ``values``, ``lives_lost``, ``knocker``, ``declarers``, ``hands`` (card
strings), ``eliminated``, ``replayed`` and ``lives_after``. ``hands`` and ``values`` hold only
what that agent saw: every hand after a showdown, but after a declared or dealt 31 only the
declarers' hands and the agent's own (:meth:`HandResult.seen_by
<scat_env.engine.HandResult.seen_by>`).

**Infos for tensor libraries** (``infos="flat"``; the default ``"rich"`` is the above).
Libraries that stack infos into tensors (TorchRL reads their keys and shapes at ``reset``)
need every info to hold the same keys from ``reset`` on, numbers only. With
``infos="flat"`` each holds exactly :data:`FLAT_INFO_KEYS`: ``lives``, ``points`` (0
outside a points race), ``active`` (1 while the seat is in the game), ``hand_number`` (hands
dealt so far, the one being played included), then what the last step scored:
``hands_ended`` (hands it ended, usually 0 or 1), ``lives_lost`` and ``points_won`` (this
seat's, summed over those hands), and ``illegal_move`` (the offender's seat after an
illegal move under ``env()``, else -1). A truncation adds no key: the truncation flags say
it. The rich record is always one call away, in either mode:
``env.unwrapped.hand_results(agent)`` lists every hand scored since ``reset``, each the
``"hand_result"`` dict above as that agent saw it.

**Eliminated seats** (``eliminated="leave"`` by default, or ``"stay"``). By default a seat
put out of the game is terminated at the step that eliminates it and leaves ``agents`` at
its next (dead) step, PettingZoo's convention. Libraries that hold one slot per agent for
the whole episode (TorchRL's ``PettingZooWrapper`` for AEC envs) cannot step a dead agent
off mid-game. With ``eliminated="stay"`` the seat stays in ``agents`` until the game ends:
it is never selected, its mask is all zeros, it is still paid at the step that eliminates
it, and it is terminated together with everyone when the game ends (or, at the turn cap,
terminated while the seats still in are truncated). Rewards, observations and the moves
of the seats in play are exactly those of the default.

**Illegal actions.** ``raw_env`` raises ``ValueError`` naming the action and the legal ones;
``env()`` ends the game instead, the offender receiving -1 and everyone else 0, like
PettingZoo's ``TerminateIllegalWrapper``.

**Version history.** The env's id is ``metadata["name"]`` = ``"scat_v2"``, in PettingZoo's
convention: the number is bumped whenever the rules' outcomes, the observations or the actions
change, so that a result or a trained policy names the version it was made with.

- v0: the rules of ``scat_env.PRESETS``, the observation of ``scat_env.observation.PIECES``
  (the table above) and the 56 actions above. Additions that change no vector, mask, reward
  or outcome (such as the ``rule`` and ``lives_after`` keys of ``hand_result``) keep the
  version.
- v1: the standard game follows 002/000 on an exhausted stock (take the discard or end the
  play, no knock; the old rule is the preset ``knock_when_exhausted``), and a hand that ends
  on a declared or dealt 31 shows only the declarers' hands: ``hand_result`` holds the hands
  and values each agent saw. The observation is that of v0. The actions are 61: the five
  calls of the variations (``56..60``, above) came while the id stayed v1; the standard game
  and every preset without calls offer only the first 56 (``CORE_ACTIONS``), exactly as in
  v0, so a 56-output policy plays them unchanged.
- v2: 67 actions (golf's slot choices 61..66 added; every earlier id kept) and the presets
  ``french_canadian``, ``french_canadian_jacobs`` (points races) and ``golf``. Their
  observations add pieces after the v1 layout (``points``; ``face_down``), which stays
  exactly as it was for every other preset; infos hold ``"points"`` in a points game and
  ``hand_result`` gains ``points_won``, ``points_after`` and ``race_winner`` there. A 31
  kept quiet (``undeclared_31``) no longer shows: the other seats see an ordinary turn and
  the log holds no pass. Outcomes of every v1 preset are unchanged. The options ``infos``
  and ``eliminated`` came while the id stayed v2: their defaults are the env as it was, and
  their other values change no observation, mask, reward or outcome.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import replace
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .actions import NUM_ACTIONS
from .engine import GameState, action_name, as_action, short_repr
from .observation import ObservationEncoder, action_mask
from .render import render_table
from .rewards import REWARD_MODES, hand_rewards
from .rules import DEFAULT_MAX_TURNS, MAX_PLAYERS, MIN_PLAYERS, Rules
from .state import encode_state, state_size
from .view import PlayerView, make_view

_KNOWN_OPTIONS = ("deck", "dealer")

#: ``infos=`` modes: the rich default, or the same numeric keys from ``reset`` on.
INFO_MODES = ("rich", "flat")
#: ``eliminated=`` modes: an eliminated seat leaves ``agents`` at once, or stays till the end.
ELIMINATED_MODES = ("leave", "stay")
#: The keys of every info with ``infos="flat"``, in order (see the module docstring).
FLAT_INFO_KEYS = ("lives", "points", "active", "hand_number", "hands_ended", "lives_lost",
                  "points_won", "illegal_move")

def _resolve_rules(rules: Rules | str | None) -> Rules:
    if rules is None:
        return Rules.preset("standard")
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        return Rules.preset(rules)
    raise ValueError(f"rules must be a preset name, a YAML path or a Rules, got {rules!r}")


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """The Scat AEC environment without the illegal-move safety net (see module docstring)."""

    metadata = {
        "render_modes": ["human", "ansi"],
        "name": "scat_v2",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        num_players: int = 3,
        rules: Rules | str | None = "standard",
        render_mode: str | None = None,
        reward: str = "game",
        single_hand: bool = False,
        max_turns: int = DEFAULT_MAX_TURNS,
        render_reveal: bool = False,
        illegal_action: str = "raise",
        infos: str = "rich",
        eliminated: str = "leave",
    ) -> None:
        super().__init__()
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise ValueError(f"num_players must be an int, got {num_players!r}")
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {num_players}"
            )
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if single_hand and reward == "game":
            raise ValueError(
                "reward='game' pays for winning a whole game; with single_hand=True use "
                "reward='hand'"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        if not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        if illegal_action not in ("raise", "penalty"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalty', got {illegal_action!r}")
        if not isinstance(infos, str) or infos not in INFO_MODES:
            raise ValueError(f"infos must be one of {INFO_MODES}, got {infos!r}")
        if not isinstance(eliminated, str) or eliminated not in ELIMINATED_MODES:
            raise ValueError(f"eliminated must be one of {ELIMINATED_MODES}, got {eliminated!r}")
        self.rules = _resolve_rules(rules)
        self.num_players = num_players
        self.render_mode = render_mode
        self.reward_mode = reward
        self.single_hand = single_hand
        self.max_turns = max_turns
        self.render_reveal = render_reveal
        self.illegal_action = illegal_action
        self.info_mode = infos
        self.eliminated_mode = eliminated
        # Both checked once here, not per step: the default path stays as fast as it was.
        self._flat = infos == "flat"
        self._stay = eliminated == "stay"
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._names = self.possible_agents
        self._encoder = ObservationEncoder(num_players, self.rules)
        size = self._encoder.size
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (state_size(num_players, self.rules),),
                                      np.float32)
        self._rng: random.Random | None = None
        self._state: GameState | None = None
        self._pending: dict[str, float] = {}

    # -- PettingZoo API ------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)
        elif self._rng is None:
            self._rng = random.Random()
        deck = dealer = None
        if options:
            unknown = [k for k in options if k not in _KNOWN_OPTIONS]
            if unknown:
                warnings.warn(
                    f"scat_env reset: ignoring unknown option(s) {unknown}; known: "
                    f"{list(_KNOWN_OPTIONS)}",
                    stacklevel=2,
                )
            deck = options.get("deck")
            dealer = options.get("dealer")
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._pending = {}
        self._skip_agent_selection = None
        self._rewards_dirty = False
        self._illegal_ended = False
        state = GameState(
            self.num_players,
            self.rules,
            rng=self._rng,
            deck=deck,
            dealer=dealer,
            single_hand=self.single_hand,
        )
        self._state = state
        self._seen_results = 0
        self.infos = {a: self._base_info(i) for i, a in enumerate(self.agents)}
        self._infos_have_result = False
        self.agent_selection = self._names[state.current_player]
        if state.results:
            # Hands decided by the deal: nobody acted yet, so rewards wait for the first step.
            rewards = self._score_new_results()
            for a, r in rewards.items():
                if r:
                    if self.terminations.get(a):
                        self._cumulative_rewards[a] += r
                    else:
                        self._pending[a] = self._pending.get(a, 0.0) + r
            if any(self.terminations.values()):
                self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        if self._state is None:
            raise RuntimeError("scat_env: call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            self._rewards_dirty = False
            return
        state = self._state
        try:
            a = as_action(action)
        except ValueError:
            a = -1
        if not state.is_legal(a):
            self._illegal(agent, action)
            return
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        n_results = len(state.results)
        state.apply_action(a)
        if self._pending:
            for ag, r in self._pending.items():
                if ag in self.rewards:
                    self.rewards[ag] += r
            self._pending = {}
            self._rewards_dirty = True
        if len(state.results) != n_results:
            rewards = self._score_new_results()
            for ag, r in rewards.items():
                if r and ag in self.rewards:
                    self.rewards[ag] += r
            self._rewards_dirty = True
        elif self._infos_have_result:
            for i, ag in enumerate(self._names):
                if ag in self.infos:
                    self.infos[ag] = self._base_info(i)
            self._infos_have_result = False
        if state.turn >= self.max_turns and not state.is_terminal():
            self._truncate()
        if self._rewards_dirty:
            cum = self._cumulative_rewards
            for ag, r in self.rewards.items():
                cum[ag] += r
        self.agent_selection = self._names[state.current_player]
        if self._any_done:
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self._state is None:
            raise RuntimeError("scat_env: call reset() before observe()")
        view = make_view(self._state, self.agent_name_mapping[agent])
        if self._illegal_ended:
            view = _no_moves(view)
        return {"observation": self._encoder.encode(view), "action_mask": action_mask(view)}

    def view(self, agent: str | int) -> PlayerView:
        """The read-only :class:`PlayerView` of ``agent`` (a name or a seat number)."""
        if self._state is None:
            raise RuntimeError("scat_env: call reset() before view()")
        seat = agent if isinstance(agent, int) else self.agent_name_mapping[agent]
        return make_view(self._state, seat)

    def hand_results(self, agent: str | int) -> list[dict[str, Any]]:
        """Every hand scored since ``reset``, in order, as ``agent`` (a name or a seat) saw it.

        Each is the dict that the default infos carry as ``"hand_result"`` (hands and values
        only as that seat saw them). With ``infos="flat"`` this is where the rich record is
        read; it is kept for the whole game, not only for the step that scored the hand.
        """
        if self._state is None:
            raise RuntimeError("scat_env: call reset() before hand_results()")
        seat = agent if isinstance(agent, int) else self.agent_name_mapping[agent]
        return [r.seen_by(seat).to_dict(self._names) for r in self._state.results]

    def state(self) -> np.ndarray:
        """Full state for centralised critics: every hand, the stock and the public table,
        then what the variation adds (points, face-up slots, who has looked, pending
        calls): :func:`scat_env.state.state_pieces`, seats absolute."""
        if self._state is None:
            raise RuntimeError("scat_env: call reset() before state()")
        return encode_state(self._state)

    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode='ansi'",
                          stacklevel=2)
            return None
        if self._state is None:
            text = "(no game yet: call reset())"
        else:
            text = render_table(self._state, reveal=self.render_reveal)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass

    # -- internals -------------------------------------------------------------------------
    @property
    def _any_done(self) -> bool:
        return any(self.terminations.values()) or any(self.truncations.values())

    def _score_new_results(self) -> dict[str, float]:
        """Turn newly scored hands into infos, terminations and rewards."""
        state = self._state
        assert state is not None
        n = self.num_players
        names = self._names
        new = state.results[self._seen_results :]
        self._seen_results = len(state.results)
        rewards: dict[str, float] = {}
        for res in new:
            for s, r in hand_rewards(res, n, reward=self.reward_mode).items():
                rewards[names[s]] = rewards.get(names[s], 0.0) + r
            if not self._stay:
                for s in res.eliminated:
                    self.terminations[names[s]] = True
        if state.is_terminal():  # the game is over, or the single hand is
            for a in self.agents:
                self.terminations[a] = True
        if self._flat:
            self._flat_results(new)
            return rewards
        seat_of = self.agent_name_mapping
        points = state._points
        for a in self.agents:
            # Each agent its own dicts (one agent editing its info must not edit another's),
            # holding only the hands that seat saw (after a 31, the declarers' and its own).
            results = [r.seen_by(seat_of[a]).to_dict(names) for r in new]
            seat = seat_of[a]
            self.infos[a] = {
                "lives": state.lives[seat],
                "hand_result": results[0],
                "hand_results": results,
            }
            if points:
                self.infos[a]["points"] = state.points[seat]
        self._infos_have_result = True
        return rewards

    def _flat_results(self, new: list[Any]) -> None:
        """``infos="flat"``: the hands a step scored as numbers, the keys those of every step."""
        state = self._state
        assert state is not None
        seat_of = self.agent_name_mapping
        for a in self.agents:
            seat = seat_of[a]
            info = self._base_info(seat)
            info["hands_ended"] = len(new)
            info["lives_lost"] = sum(r.lives_lost.get(seat, 0) for r in new)
            info["points_won"] = sum(r.points_won.get(seat, 0) for r in new)
            self.infos[a] = info
        self._infos_have_result = True

    def _base_info(self, seat: int) -> dict[str, Any]:
        """What every info holds: the seat's lives, and in a points game its points (its
        lives never change there: nobody is put out of a points race)."""
        state = self._state
        assert state is not None
        if self._flat:
            # Every key from reset on, numbers only: a library that stacks infos into
            # tensors (TorchRL) reads their layout from the first reset.
            return {
                "lives": state.lives[seat],
                "points": state.points[seat] if state._points else 0,
                "active": int(state.active[seat]),
                "hand_number": state.hand_number,
                "hands_ended": 0,
                "lives_lost": 0,
                "points_won": 0,
                "illegal_move": -1,
            }
        if state._points:
            return {"lives": state.lives[seat], "points": state.points[seat]}
        return {"lives": state.lives[seat]}

    def _truncate(self) -> None:
        """Turn cap reached: everyone still in is truncated; game rewards stay zero-sum."""
        if self._stay:
            # Seats eliminated earlier stayed in agents: their games ended, they are not cut.
            active = self._state.active  # type: ignore[union-attr]
            for a in self.agents:
                if not active[self.agent_name_mapping[a]]:
                    self.terminations[a] = True
        for a in self.agents:
            if not self.terminations[a]:
                self.truncations[a] = True
        if self.reward_mode == "game":
            n = self.num_players
            live = [a for a in self.agents if not self.terminations[a]]
            k = len(live)
            share = (n - k) / ((n - 1) * k)
            for a in live:
                self.rewards[a] += share
            self._rewards_dirty = True
        if self._flat:
            return  # the truncation flags say it; flat infos keep their keys
        for a in self.agents:
            self.infos[a] = dict(self.infos[a], truncated_by="max_turns")

    def _illegal(self, agent: str, action: Any) -> None:
        state = self._state
        assert state is not None
        if self.illegal_action == "raise":
            try:
                state._raise_illegal(action)
            except ValueError as exc:
                raise ValueError(f"{agent}: {exc}") from None
        # PettingZoo's TerminateIllegalWrapper semantics, done here without the wrapper cost.
        warnings.warn(
            f"[WARNING]: Illegal move made ({agent} played {short_repr(action)}: "
            f"{action_name(action)}), game terminating with current player losing.",
            stacklevel=2,
        )
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = -1.0
        offender = self.agent_name_mapping[agent] if self._flat else agent
        for a in self.agents:
            self._cumulative_rewards[a] += self.rewards[a]
            self.infos[a] = dict(self.infos[a], illegal_move=offender)
        self._rewards_dirty = True
        self._illegal_ended = True
        self._deads_step_first()


def _no_moves(view: PlayerView) -> PlayerView:
    return replace(view, legal_actions=())


def env(**kwargs: Any) -> raw_env:
    """The recommended environment: ``raw_env`` that ends the game on an illegal move.

    Takes the same keyword arguments as :class:`raw_env`.
    """
    kwargs.setdefault("illegal_action", "penalty")
    return raw_env(**kwargs)
