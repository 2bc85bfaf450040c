"""The games a server holds: each a ``scat play`` save on disk, played in memory.

A game is a :class:`WebSave` (a :class:`scat_session.savegame.SavedGame`, sealed while it is
played, in clear once over, so ``scat replay`` opens a finished one) in the data folder,
named by its game id. :class:`GameStore` loads a game lazily by id, so a restarted server
resumes every game on the next request: the decisions are re-simulated, the agents asked
again (:meth:`SavedGame.resimulate`), and the ledger refuses a save put back behind the
game's last one (no take-backs), as ``scat play --resume`` does.

One process plays a game at a time: the store holds its data folder (a second server on it
is refused at start) and each game it has in memory (:mod:`scat_session.gamelock`), so ``scat
play --resume`` of a game a browser has open is refused in one line, and a game the terminal
is playing answers 409 here, each naming where the game is played. The locks go with the
game when it leaves memory, and with the process however it ends.

One request changes a game at a time (a lock per game); the person's move, the agents'
moves up to the person's next decision and the save happen under it, and the save is
written before the answer goes out. A move that cannot be saved drops the game from memory,
so the next request reloads the last good save: nothing acknowledged is ever lost, and a
refused request leaves the game and its file exactly as they were.

Hidden information: the person's browser gets :mod:`scat_web.serialize` payloads, built
from their :class:`~scat_env.PlayerView`. Counters the page sees count the person's own
decisions (``seq``), not the game's: an opponent asked whether to declare a new 31 makes a
decision nobody else sees, and a count of all decisions would give it away. For the same
reason a seat whose agent breaks is announced just before that seat's next public move.

A finished game's review (:meth:`GameStore.review`) plays each of the person's decisions
out on deals sampled from their own view at the time; it takes seconds, so it is computed
once per game and kept in memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from agents.base import Agent
from agents.registry import make_agent
from scat_env import GameState, Phase, Rules, make_view
from scat_env.actions import KNOCK, action_str
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS
from scat_session import gamelock, keystore
from scat_session.levels import LEVEL_NAMES, level, level_spec
from scat_session.savegame import (
    HUMAN,
    MAX_FILE_BYTES,
    ReplayError,
    SavedGame,
    SaveError,
    check_depth,
    check_name,
    new_seed,
)
from scat_session.seating import (
    FALLBACK_OPPONENT,
    HUMAN_SEAT,
    RETIRED_WHAT,
    AgentError,
    agent_label,
    build_agents,
    default_candidates,
    default_choice,
    default_names,
    hand_over_retired,
    new_game,
)
from scat_session.turns import NoReplacement, Takeover, agent_move

from . import serialize

#: Opponents a browser may choose (spec, label). A spec is checked against this list: a
#: spec naming a file or a search of any size would let a browser make the server read
#: files or spend minutes per move.
AGENTS: tuple[tuple[str, str], ...] = (
    ("compact:scat_batch_set", "Trained policy set (batched PPO, 2-10 players, reads expert)"),
    ("compact:scat_rules", "Trained policy for every preset (batched PPO, reads the rules "
                           "and expert)"),
    ("compact:scat_golf", "Trained policy for golf (batched PPO, reads the rules and "
                          "expert)"),
    ("compact:scat_gin", "Trained policy for gin (batched PPO, reads the rules and "
                         "expert)"),
    ("compact:scat_calls", "Trained policy for the calls (hammer, throw-down, second "
                           "knock, declared 31; batched PPO, reads the rules and expert)"),
    ("compact:scat_points", "Trained policy for the points races (French Canadian, "
                            "Jacobs; batched PPO, reads the rules and expert)"),
    ("compact:scat_lives_set", "Trained policy set for the knock and lives options "
                               "(Cadillac, Ride the Bus, second knock...; batched PPO)"),
    ("compact:scat_calls_b", "Trained policy for the calls, second run (hammer, "
                             "throw-down, second knock, declared 31; batched PPO, reads "
                             "the rules and expert)"),
    ("compact:scat_calls_c", "Trained policy for the calls, second run one leg further "
                             "(the stronger at 3 players; batched PPO, reads the rules and "
                             "expert)"),
    ("compact:scat_gin_italian", "Trained policy for gin and the Italian pack (batched PPO, "
                                 "reads the rules and expert)"),
    ("compact:scat_calls_avg", "Trained policy for the calls, averaged runs (the strongest "
                               "at 3 players; batched PPO, reads the rules and expert)"),
    ("compact:scat_calls_set", "Trained policy set for the calls (the averaged runs, and a "
                               "member for 4 or more players in; batched PPO, reads the "
                               "rules and expert)"),
    ("compact:scat_calls_play", "Trained policy set for the calls: the standard game's set "
                                "plays, the calls' set makes every call (batched PPO)"),
    ("compact:scat_batch_7_10", "Trained policy (batched PPO, 7-10 players, reads expert)"),
    ("compact:scat_batch", "Trained policy (batched PPO, 2-10 players)"),
    ("expert", "Expert (card counting, rule-based)"),
    ("ismcts:100", "Search (ISMCTS, 100 deals a move; slower)"),
    ("search", "Trained policy set with search (64 deals a close call; the level "
               "strongest)"),
    ("greedy", "Greedy (knocks at 25+)"),
    ("threshold:21", "Knocks early (at 21+; the level easy)"),
    ("random", "Random (any legal move)"),
)
_GAME_ID = re.compile(r"[0-9a-f]{8}")
#: Games kept in memory at once; the least recently used are dropped (and reloaded from
#: their save when asked for again).
MAX_LIVE = 256
#: Decisions an uploaded replay may hold, checked before it is re-simulated. A long game
#: at ten players (a race to 31 points between random players) is about 5,000; a hand is
#: cut after :data:`~scat_env.DEFAULT_MAX_TURNS` turns, but a file need not come from here.
MAX_REPLAY_DECISIONS = 20_000
#: Sampled deals each of the person's decisions is played out on in a game's review: a
#: third of ``scat replay --review``'s, so a whole game is reviewed within seconds while
#: the page waits (the estimates' noise grows by a factor of about 1.7).
REVIEW_WORLDS = 32
#: Reviews kept in memory (a finished game's review never changes: it is computed once).
MAX_REVIEWS = 64
#: The heaviest answer the server sends. A replay is built step by step and refused (413)
#: as soon as its steps weigh more, before the rest is built: every step carries the whole
#: table (about 0.75 KB at two players, 2.2 KB at ten).
MAX_ANSWER_BYTES = 16 * 1024 * 1024


class WebError(Exception):
    """A request refused: its HTTP status and one line naming the problem."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class WebSave(SavedGame):
    """A ``scat play`` save with two more fields: ``teaching`` (the person asked to see the
    opponents' hands) and ``level`` (the level picked for every opponent, ``None`` when
    the opponents were chosen by spec). Both are written into the file, under the seal's
    MAC while the game is on, so a teaching game cannot pass for a fair one in the
    statistics, and a game says what it was played against by the name the person picked."""

    teaching: bool = False
    level: str | None = None

    def to_json(self, key: bytes | None = None) -> dict[str, Any]:
        data = super().to_json(key)
        web: dict[str, Any] = {}
        if self.teaching:
            web["teaching"] = True
        if self.level is not None:
            web["level"] = self.level
        if not web:
            return data
        data["web"] = web
        if "mac" in data:  # sealed: sign the fields too
            key = key if key is not None else keystore.load_key(create=True)
            assert key is not None
            data["mac"] = keystore.mac(key, {k: v for k, v in data.items() if k != "mac"})
        return data

    @classmethod
    def from_json(cls, data: Any, source: str = "replay", key: bytes | None = None) -> WebSave:
        game = super().from_json(data, source, key)
        assert isinstance(game, WebSave)
        web = data.get("web") if isinstance(data, dict) else None
        game.teaching = isinstance(web, dict) and web.get("teaching") is True
        game.level = _level_of(web)
        return game


@dataclass
class _Pending:
    """A takeover to announce before the seat's next public move."""

    spec: str
    what: str


@dataclass
class LiveGame:
    """One game in memory: its save, the engine's state, the agents, and the current
    hand's public events (what a reconnecting page rebuilds the table from)."""

    save: WebSave
    path: Path
    state: GameState
    agents: list[Agent | None]
    #: Each seat's agent as the person has been told: a takeover shows once announced.
    announced: list[str]
    hand_events: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[int, _Pending] = field(default_factory=dict)
    hint_policy: Agent | None = None
    explainers: dict[int, Agent] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: This process's hold on the game (:mod:`scat_session.gamelock`), let go with the game:
    #: by its id, and by its file's name where that names another id.
    held: list[gamelock.HeldLock] = field(default_factory=list)

    def let_go(self) -> None:
        for hold in self.held:
            hold.release()

    @property
    def game_id(self) -> str:
        return self.save.game_id

    @property
    def human(self) -> int:
        return self.save.human_seat if self.save.human_seat is not None else HUMAN_SEAT

    @property
    def seq(self) -> int:
        """The person's decisions so far (see the module docstring for why not all)."""
        return sum(1 for s, _ in self.save.actions if s == self.human)

    def specs(self) -> list[str]:
        """Each seat's agent now (a replacement after a takeover)."""
        return [self.save.agent_now(seat) for seat in range(self.save.num_players)]

    def shown_specs(self) -> list[str]:
        """Each seat's agent as the page shows it: a replacement from its announcement on."""
        return [HUMAN if s == self.human else spec for s, spec in enumerate(self.announced)]


class GameStore:
    """Every game of one data folder; thread-safe (one lock per game, one for the map).

    The store holds its folder from construction to :meth:`close`: a second store (a second
    ``scat serve``) on it raises :class:`scat_session.gamelock.Busy` naming the first's
    ``holder``. Construction also sweeps up the temporary files and lock files a killed
    process left."""

    def __init__(
        self,
        data_dir: str | Path,
        *,
        agents: Sequence[tuple[str, str]] = AGENTS,
        agent_factory: Callable[[str, int | None], Agent] = make_agent,
        seed_source: Callable[[], int] = new_seed,
        max_live: int = MAX_LIVE,
        holder: str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser()
        #: How this process is named to another that wants one of its games.
        self.holder = holder or f"scat serve (pid {os.getpid()})"
        self._folder = _hold_folder(self.data_dir, self.holder)
        keystore.sweep_temp_files(self.data_dir)
        keystore.sweep_temp_files(keystore.scat_home(), [keystore.KEY_FILE, keystore.LEDGER_FILE])
        gamelock.sweep_stale()
        # Register every agent kind now, from one thread: the registry loads its modules
        # on first use and is not safe to load from several requests at once.
        from agents.registry import available

        available()
        self.agents = tuple(agents)
        self.agent_factory = agent_factory
        self.seed_source = seed_source
        self.max_live = max_live
        self._live: OrderedDict[str, LiveGame] = OrderedDict()
        self._loading: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self._summaries: dict[str, tuple[tuple[int, int], dict[str, Any] | None]] = {}
        self._defaults: dict[tuple[int, Rules], str] = {}
        #: Reviews of finished games by game id (:meth:`review`), the most recent last, and
        #: the lock each review is computed under, so two requests compute it once.
        self._reviews: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._reviewing: dict[str, threading.Lock] = {}
        #: Seconds per move request (the person's move, the agents' replies and the
        #: save), newest last, bounded: what ``scat serve`` reports and the load test reads.
        self.move_times: list[float] = []

    # -- options -------------------------------------------------------------------------
    def default_opponent(self, players: int, rules: Rules) -> str:
        """The terminal's default opponent for this table
        (:func:`scat_session.seating.default_choice`) among the agents this server offers,
        else the expert."""
        allowed = {spec for spec, _ in self.agents}
        key = (players, rules)
        found = self._defaults.get(key)
        if found is None:
            found = default_choice(players, rules,
                                   [s for s in default_candidates() if s in allowed],
                                   lambda spec: self.agent_factory(spec, 0))
            if found == FALLBACK_OPPONENT and found not in allowed:
                found = None
            if found is None:
                found = FALLBACK_OPPONENT if FALLBACK_OPPONENT in allowed else self.agents[0][0]
            self._defaults[key] = found
        return found

    def has_finished_game(self) -> bool:
        """Whether any game of the data folder is over: a person's first game is played at
        the first-game level, every later one at the default level."""
        return any(g["status"] == "over" for g in self.summaries())

    # -- creating and finding games -----------------------------------------------------
    def path_of(self, game_id: str) -> Path:
        return self.data_dir / f"{game_id}.json"

    def create(self, players: int, opponents: list[str] | None, rules_name: str, name: str,
               teaching: bool, level: str | None = None,
               ) -> tuple[LiveGame, list[dict[str, Any]]]:
        """A new game with the person at seat 0, the agents' moves up to the person's first
        decision played and saved; returns it with the events so far. Arguments are
        checked by :func:`check_new_game`. ``level`` (a name of
        :data:`scat_session.levels.LEVEL_NAMES`, exclusive with ``opponents``) seats that
        level's agent for this table in every opponent seat."""
        rules = Rules.preset(rules_name)
        if level is not None:  # the level's agent, this server's trained choice as "hard"
            spec = level_spec(level, players, rules, self.default_opponent(players, rules))
            opponents = [spec] * (players - 1)
        specs = opponents or [self.default_opponent(players, rules)] * (players - 1)
        seed = self.seed_source()
        base = new_game(players, specs, rules, seed, name)
        save = WebSave(**{f: getattr(base, f) for f in (
            "num_players", "rules", "seed", "first_dealer", "players", "human_seat")},
            teaching=teaching, level=level)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        while self.path_of(save.game_id).exists():
            save.game_id = keystore.new_nonce()[:8]
        agents = self._build_agents(save)
        live = LiveGame(save, self.path_of(save.game_id), save.new_state(), agents,
                        [p.agent for p in save.players], held=[self._hold(save.game_id)])
        events = [serialize.deal_event(live.state.hand_number, live.state.dealer, save.names)]
        live.hand_events = list(events)
        try:
            with live.lock:
                self._play_agents(live, events)
                self._save(live)
        except BaseException:
            live.let_go()
            raise
        with self._lock:
            self._remember(live)
        return live, events

    def _build_agents(self, save: SavedGame) -> list[Agent | None]:
        try:
            return build_agents(save, self.agent_factory)
        except AgentError as exc:
            raise WebError(400, f"opponent {exc.spec}: {exc}") from None

    def _hold(self, game_id: str) -> gamelock.HeldLock:
        """This process's hold on ``game_id``: 409 naming where it is played if another
        process (the terminal, another server) has it."""
        try:
            return gamelock.hold_game(game_id, self.holder)
        except gamelock.Busy as exc:
            raise WebError(409, f"game {game_id} is being played in {exc.holder}; a game is "
                                "played in one place at a time: quit it there, then reload "
                                "this page") from None
        except gamelock.LockError as exc:
            raise WebError(500, str(exc)) from None

    def close(self) -> None:
        """Let go of every game and of the data folder (a server that stops). A store used
        again afterwards loads each game again, taking its lock again."""
        with self._lock:
            live, self._live = list(self._live.values()), OrderedDict()
            for game in live:
                game.let_go()
            self._folder.release()

    def _remember(self, live: LiveGame) -> None:
        self._live[live.game_id] = live
        self._live.move_to_end(live.game_id)
        # Least recently used first; a game being played right now stays (see locked()).
        for game_id in list(self._live):
            if len(self._live) <= self.max_live:
                break
            if not self._live[game_id].lock.locked():
                self._live.pop(game_id).let_go()

    @contextlib.contextmanager
    def locked(self, game_id: str) -> Iterator[LiveGame]:
        """The game ``game_id``, held for this request alone. A game dropped from memory
        while the request waited for it (a failed save, or room made for others) is loaded
        again from its save, so a request never works on a copy that is not the game's."""
        while True:
            live = self.get(game_id)
            live.lock.acquire()
            with self._lock:
                current = self._live.get(game_id) is live
            if current:
                break
            live.lock.release()
        try:
            yield live
        finally:
            live.lock.release()

    def forget(self, game_id: str) -> None:
        """Drop a game from memory (its save stays): the next request reloads it."""
        with self._lock:
            live = self._live.pop(game_id, None)
            if live is not None:
                live.let_go()

    def get(self, game_id: str) -> LiveGame:
        """The game ``game_id``, loaded from its save if it is not in memory (404 if none)."""
        if not isinstance(game_id, str) or not _GAME_ID.fullmatch(game_id):
            raise WebError(404, f"no game {game_id[:40]!r} (a game id is 8 hex digits)")
        with self._lock:
            live = self._live.get(game_id)
            if live is not None:
                self._live.move_to_end(game_id)
                return live
            loading = self._loading.setdefault(game_id, threading.Lock())
        with loading:
            with self._lock:
                live = self._live.get(game_id)
            if live is None:
                live = self._load(game_id)
                with self._lock:
                    self._remember(live)
            with self._lock:
                self._loading.pop(game_id, None)
        return live

    def _load(self, game_id: str) -> LiveGame:
        """The game from its save, held by this process (taken before the save is read, so
        what is read is the game's latest state); nothing held when it fails."""
        path = self.path_of(game_id)
        if not path.is_file():
            raise WebError(404, f"no game {game_id!r} on this server")
        held = [self._hold(game_id)]
        try:
            live = self._read(game_id, path)
            if live.game_id != game_id:  # a file named otherwise (an older save's id)
                held.append(self._hold(live.game_id))
        except BaseException:
            for hold in held:
                hold.release()
            raise
        live.held = held
        return live

    def _read(self, game_id: str, path: Path) -> LiveGame:
        try:
            save = WebSave.load(path)
            if save.human_seat is None:
                raise ReplayError(f"{path}: a game between agents, not one to play here")
            if save.status != "finished":
                save.check_resume(str(path))
        except (ReplayError, keystore.SealError) as exc:
            raise WebError(409, f"cannot resume game {game_id}: {exc}") from None
        assert isinstance(save, WebSave)
        retired = hand_over_retired(save)
        agents = self._build_agents(save)
        live = LiveGame(save, path, save.new_state(), agents, [p.agent for p in save.players])
        try:
            live.state = self._rebuild(live)
        except ReplayError as exc:
            raise WebError(409, f"cannot resume game {game_id}: {exc}") from None
        for seat in retired:  # said before the seat's next move, like a takeover
            live.pending[seat] = _Pending(save.agent_now(seat), RETIRED_WHAT)
        return live

    def _rebuild(self, live: LiveGame) -> GameState:
        """Re-simulate the save with its agents, rebuilding the current hand's events."""
        save = live.save
        first = save.new_state()
        before = _Before.of(first)
        hand: list[dict[str, Any]] = [serialize.deal_event(first.hand_number, first.dealer,
                                                           save.names)]
        takeovers: dict[int, list[Any]] = {}
        for r in save.replacements:
            takeovers.setdefault(r.from_action, []).append(r)

        def note_takeovers(step: int) -> None:
            for r in takeovers.get(step, []):
                live.pending[r.seat] = _Pending(r.agent, "broke (an illegal move or an error)")

        step = [0]
        note_takeovers(0)

        def on_step(state: GameState, seat: int, action: int) -> None:
            nonlocal before, hand
            events: list[dict[str, Any]] = []
            self._events_of(live, state, seat, action, before, events)
            before = _Before.of(state)
            for event in events:
                if event["kind"] == "deal":
                    hand = []
                hand.append(event)
            step[0] += 1
            note_takeovers(step[0])

        state = save.resimulate(agents=live.agents, on_step=on_step)
        live.hand_events = hand
        return state

    # -- playing -------------------------------------------------------------------------
    def move(self, live: LiveGame, action: object, seq: object) -> list[dict[str, Any]]:
        """The person's ``action``, then the agents' moves up to the person's next
        decision; saved before returning the events. Refusals change nothing."""
        started = time.perf_counter()
        state = live.state
        if state.is_terminal():
            raise WebError(409, f"game {live.game_id} is over; no more moves "
                                f"(GET /api/games/{live.game_id}/replay shows it)")
        if seq != live.seq:
            raise WebError(409, f"stale move: seq {seq} is not the game's seq {live.seq} "
                                "(the game moved on, e.g. in another tab); reload the game")
        if state.current_player != live.human:
            raise WebError(409, "it is not your turn")
        if not state.is_legal(action):  # type: ignore[arg-type]
            legal = ", ".join(f"{a} ({action_str(a)})" for a in state.legal_actions())
            raise WebError(400, f"action {action} ({_action_name(action)}) is not legal now; "
                                f"legal now: {legal}")
        events: list[dict[str, Any]] = []
        try:
            self._apply(live, live.human, action, events)  # type: ignore[arg-type]
            self._play_agents(live, events)
            self._save(live)
        except BaseException:
            self.forget(live.game_id)  # memory may be ahead of the last good save
            raise
        elapsed = time.perf_counter() - started
        self.move_times.append(elapsed)
        if len(self.move_times) > 100_000:
            del self.move_times[:50_000]
        return events

    def _save(self, live: LiveGame) -> None:
        try:
            live.save.save(live.path)
        except SaveError as exc:
            raise WebError(500, f"{exc}; the last good save is kept") from None

    def _play_agents(self, live: LiveGame, events: list[dict[str, Any]]) -> None:
        state = live.state
        while not state.is_terminal() and state.current_player != live.human:
            seat = state.current_player
            self._apply(live, seat, self._agent_move(live, seat), events)

    def _agent_move(self, live: LiveGame, seat: int) -> int:
        """The move of the agent at ``seat`` (:func:`scat_session.turns.agent_move`, as in
        ``scat play``): an agent that breaks is replaced and the takeover saved; the page is
        told of it just before that seat's next public move."""

        def taken_over(takeover: Takeover) -> None:
            live.explainers.pop(takeover.seat, None)
            live.pending[takeover.seat] = _Pending(takeover.spec, takeover.what)

        try:
            return agent_move(live.save, live.state, live.agents, seat, taken_over)
        except NoReplacement as exc:
            raise WebError(500, str(exc)) from None

    def _apply(self, live: LiveGame, seat: int, action: int,
               events: list[dict[str, Any]]) -> None:
        state = live.state
        before = _Before.of(state)
        if live.save.teaching and seat != live.human:
            why = self._explain(live, seat)
        else:
            why = None
        state.apply_action(action)
        live.save.record(state, seat, action)
        new: list[dict[str, Any]] = []
        self._events_of(live, state, seat, action, before, new)
        if why is not None and new and new[0]["seat"] == seat and new[0]["kind"] != "takeover":
            new[0]["why"] = why
        for event in new:
            if event["kind"] == "deal":
                live.hand_events = []
            live.hand_events.append(event)
        events.extend(new)

    def _explain(self, live: LiveGame, seat: int) -> str | None:
        """Teaching games: why the seat's agent plays its move, from its own view, asked of
        a second agent of the same kind so the playing agent's state is not touched."""
        agent = live.explainers.get(seat)
        try:
            if agent is None:
                spec = live.specs()[seat]
                agent = make_agent(spec, seed=live.save.players[seat].seed)
                live.explainers[seat] = agent
            return agent.explain(make_view(live.state, seat))
        except Exception:  # an explanation never ends a game
            return None

    def _events_of(self, live: LiveGame, state: GameState, seat: int, action: int,
                   before: _Before, out: list[dict[str, Any]]) -> None:
        """The events one decision made (``state`` is after it): the move if it is
        public, then each hand it ended, the next deal, the game's end."""
        save = live.save
        names = save.names
        event = serialize.move_event(
            seat, action, you=live.human, names=names, rules=save.rules, phase=before.phase,
            top_before=before.top, second_knock=action == KNOCK and before.knocker is not None,
            hand_number=before.hand_number, golf_cards=before.golf_cards)
        if event is not None:
            pending = live.pending.pop(seat, None)
            if pending is not None:
                out.append(serialize.takeover_event(seat, names,
                                                    agent_label(live.announced[seat]),
                                                    pending.spec, pending.what,
                                                    before.hand_number))
                live.announced[seat] = pending.spec
            out.append(event)
        out.extend(_ending_events(state, before, save.rules, names, live.human,
                                  seen_by=None if save.teaching else live.human))

    # -- what the page is sent -------------------------------------------------------------
    def state_of(self, live: LiveGame, events: list[dict[str, Any]] | None = None,
                 ) -> dict[str, Any]:
        """STATE for the person; ``events`` default to the current hand's."""
        state = live.state
        view = make_view(state, live.human)
        save = live.save
        over = state.is_terminal()
        summary = None
        if over:
            knocks = [s for s, a in save.actions if a == KNOCK]
            summary = serialize.summary_payload(state.results, live.human, save.num_players,
                                                state.winner, knocks)
        payload = serialize.state_payload(
            view, game_id=live.game_id, seq=live.seq, names=save.names,
            specs=live.shown_specs(),
            events=list(live.hand_events if events is None else events),
            teaching=save.teaching,
            hands=state.hands if save.teaching else None,
            full_result=state.results[-1] if save.teaching and state.results else None,
            winner=state.winner, summary=summary)
        payload["level"] = save.level
        return payload

    def hint(self, live: LiveGame) -> dict[str, Any]:
        """The expert's move for the person's view and why, and a trained opponent's top
        moves with their probabilities, computed from the person's own view."""
        from agents.expert import ExpertAgent
        from scat_session.hints import hint as hint_text

        state = live.state
        if state.is_terminal() or state.current_player != live.human:
            raise WebError(409, "a hint is given only at your turn")
        view = make_view(state, live.human)
        # Seeded by the view itself: the same position gives the same hint, and nothing
        # the person has not seen (the game's seed) goes into it.
        expert = make_agent("expert", seed=zlib.crc32(repr(view).encode()))
        assert isinstance(expert, ExpertAgent)
        action = expert.act(view)
        if view.phase in ("draw", "discard") and action < 56:
            why = hint_text(expert, view)
        else:
            why = f"The expert would {action_str(action)}: {expert.explain(view)}."
        return {"action": action, "label": serialize.action_label(view, action), "why": why,
                "top": self._policy_top(live, view)}

    def _policy_top(self, live: LiveGame, view: Any) -> list[dict[str, Any]]:
        """The first trained opponent's three likeliest moves in the person's seat."""
        import numpy as np

        if live.hint_policy is None:
            for spec in live.specs():
                if spec.split(":")[0] in ("sb3", "compact"):
                    try:
                        agent = make_agent(spec, seed=0)
                        agent.check_table(live.save.num_players, live.save.rules)
                    except ValueError:
                        continue
                    if hasattr(agent, "logits"):
                        live.hint_policy = agent
                        break
        policy = live.hint_policy
        legal = list(view.legal_actions)
        if policy is None or not legal:
            return []
        try:
            logits = np.asarray(policy.logits(view), dtype=np.float64)[legal]  # type: ignore[attr-defined]
        except Exception:  # a hint never ends a game
            return []
        p = np.exp(logits - logits.max())
        p /= p.sum()
        order = np.argsort(-p, kind="stable")[:3]
        return [{"action": legal[i], "label": serialize.action_label(view, legal[i]),
                 "p": round(float(p[i]), 4)} for i in order]

    def replay(self, live: LiveGame) -> dict[str, Any]:
        """The whole game face up: finished games, or a teaching game at any time."""
        if not live.state.is_terminal() and not live.save.teaching:
            raise WebError(409, f"game {live.game_id} is still being played; its replay "
                                "(every hand face up) opens once it is over")
        return replay_payload(live.save)

    def review(self, game_id: str, worlds: int | None = None) -> dict[str, Any]:
        """The review of the person's decisions in the finished game ``game_id``
        (:func:`scat_session.review.review_game` over ``worlds`` sampled deals, default
        :data:`REVIEW_WORLDS`, as JSON), computed once and then kept.

        It takes seconds, so it is computed outside the game's lock (a finished game's
        save no longer changes; the replay of the same game is not kept waiting) and under
        a lock of its own, so a second request for it waits for the first and reads what
        it computed instead of computing it again."""
        from scat_session.review import review_game

        worlds = REVIEW_WORLDS if worlds is None else worlds
        with self._lock:
            cached = self._reviews.get(game_id)
        if cached is not None:
            return cached
        with self.locked(game_id) as live:
            if not live.state.is_terminal():
                raise WebError(409, f"game {live.game_id} is still being played; its review "
                                    "(each of your decisions played out) opens once it is "
                                    "over")
            save, seat = live.save, live.human
        with self._lock:
            computing = self._reviewing.setdefault(game_id, threading.Lock())
        with computing:
            with self._lock:
                cached = self._reviews.get(game_id)
            if cached is not None:
                return cached
            try:
                data = review_game(save, seat=seat, worlds=worlds).to_json()
            except ValueError as exc:
                raise WebError(422, f"game {game_id} cannot be reviewed: {exc}") from None
            else:
                with self._lock:
                    self._reviews[game_id] = data
                    while len(self._reviews) > MAX_REVIEWS:
                        self._reviews.popitem(last=False)
            finally:
                with self._lock:
                    self._reviewing.pop(game_id, None)
        return data

    # -- lists and statistics ----------------------------------------------------------------
    def _summary(self, path: Path) -> dict[str, Any] | None:
        """A game's list entry, read without unsealing (names, rules and status are in
        clear in every save); cached by file size and time."""
        try:
            st = path.stat()
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._summaries.get(path.stem)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        summary = _read_summary(path, st.st_size)
        self._summaries[path.stem] = (stamp, summary)
        return summary

    def summaries(self) -> list[dict[str, Any]]:
        if not self.data_dir.is_dir():
            return []
        found = [self._summary(p) for p in self.data_dir.glob("*.json")
                 if _GAME_ID.fullmatch(p.stem)]
        games = [g for g in found if g is not None]
        games.sort(key=lambda g: (g["created"], g["id"]), reverse=True)
        return games

    def stats(self) -> dict[str, Any]:
        """Per opponent kind, over the finished games that were not teaching games: games,
        the person's wins, hands played and lives lost (per hand)."""
        table: dict[str, dict[str, Any]] = {}
        teaching = {"games": 0, "finished": 0}
        for g in self.summaries():
            if g["teaching"]:
                teaching["games"] += 1
                teaching["finished"] += g["status"] == "over"
                continue
            if g["status"] != "over":
                continue
            for spec in sorted(set(g["opponents"])):
                row = table.setdefault(spec, {"spec": spec, "games": 0, "wins": 0,
                                              "hands": 0, "lives_lost": 0})
                row["games"] += 1
                row["wins"] += g["you_won"]
                row["hands"] += g["hands"]
                row["lives_lost"] += g["lives_lost"]
        rows = sorted(table.values(), key=lambda r: (-r["games"], r["spec"]))
        for row in rows:
            row["win_rate"] = round(row["wins"] / row["games"], 4)
            row["lives_lost_per_hand"] = (round(row["lives_lost"] / row["hands"], 4)
                                          if row["hands"] else None)
        return {"opponents": rows, "teaching": teaching}


@dataclass(frozen=True)
class _Before:
    """What was public just before a decision: the phase it was taken in, the top of the
    pile (the card a take takes), whether someone had knocked, the hands scored so far.

    ``golf_cards`` is the one exception, and it is read only after the decision: in golf's
    place phase, the mover's three slots and the card it holds. A placement turns two of
    them face up for everyone (the card put in a slot or the slot turned up, and the card
    sent to the pile), and the event names those two; the hand may be over and dealt
    again by then, so they are taken before."""

    phase: Phase
    top: int | None
    knocker: int | None
    hand_number: int
    results: int
    terminal: bool
    golf_cards: tuple[int, ...] = ()

    @classmethod
    def of(cls, state: GameState) -> _Before:
        golf = (tuple(state.hands[state.current_player])
                if state.phase is Phase.GOLF_PLACE else ())
        return cls(state.phase, state.discard[-1] if state.discard else None, state.knocker,
                   state.hand_number, len(state.results), state.is_terminal(), golf)


def _hold_folder(folder: Path, holder: str) -> gamelock.HeldLock:
    """The store's hold on its data folder (created if missing): one server per folder, or
    each would hold and save its own copy of the same games."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise gamelock.LockError(f"cannot use the data folder {folder}: "
                                 f"{exc.strerror or exc}") from None
    try:
        return gamelock.hold_folder(folder, holder, f"the data folder {folder}")
    except gamelock.Busy as exc:
        raise gamelock.Busy(f"the data folder {folder} is in use by {exc.holder}; stop it "
                            "or give another --data", exc.holder) from None


def _action_name(action: object) -> str:
    try:
        return action_str(action)  # type: ignore[arg-type]
    except ValueError:
        return "not an action"


class NewGame(NamedTuple):
    """The checked fields of ``POST /api/games``: ``specs`` ``None`` for the server's
    default opponent or a level's (``level``, when one was picked)."""

    players: int
    specs: list[str] | None
    rules_name: str
    name: str
    teaching: bool
    level: str | None


def check_new_game(body: Any, store: GameStore) -> NewGame:
    """The fields of ``POST /api/games``, checked; 400 naming the first bad one."""
    if not isinstance(body, dict):
        raise WebError(400, "the body must be a JSON object")
    known = {"players", "opponents", "rules", "name", "teaching", "level"}
    extra = sorted(set(body) - known)
    if extra:
        raise WebError(400, f"unknown field {extra[0][:40]!r}; fields: {', '.join(sorted(known))}")
    players = body.get("players", 3)
    if not _is_int(players) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise WebError(400, f"players must be an integer from {MIN_PLAYERS} to {MAX_PLAYERS}, "
                            f"got {_short(players)}")
    rules_name = body.get("rules", "standard")
    if not isinstance(rules_name, str) or rules_name not in PRESETS:
        raise WebError(400, f"rules must be a preset name (GET /api/options lists them), "
                            f"got {_short(rules_name)}")
    opponents = body.get("opponents")
    picked = body.get("level")
    if picked is not None and opponents is not None:
        raise WebError(400, "give a level or opponents, not both: a level names the agent "
                            "that plays every opponent seat")
    if picked is not None:
        if not isinstance(picked, str):
            raise WebError(400, f"level must be one of {', '.join(LEVEL_NAMES)}, got "
                                f"{_short(picked)}")
        try:
            level(picked)
        except ValueError as exc:
            raise WebError(400, str(exc)) from None
    allowed = [spec for spec, _ in store.agents]
    specs: list[str] | None
    if opponents is None:
        specs = None
    elif isinstance(opponents, str):
        specs = [opponents] * (players - 1)
    elif isinstance(opponents, list) and all(isinstance(s, str) for s in opponents):
        specs = list(opponents)
        if len(specs) != players - 1:
            raise WebError(400, f"opponents lists {len(specs)} agents for {players - 1} "
                                "opponents; give one spec for all or one per opponent")
    else:
        raise WebError(400, f"opponents must be a spec or a list of specs, got "
                            f"{_short(opponents)}")
    for spec in specs or []:
        if spec not in allowed:
            raise WebError(400, f"unknown opponent {_short(spec)}; choose from "
                                f"{', '.join(allowed)}")
    name = body.get("name", "You")
    try:
        if not isinstance(name, str) or name.strip() == HUMAN:
            raise ValueError(f"a name, got {_short(name)}")
        name = check_name(name.strip())
    except ValueError as exc:
        raise WebError(400, f"name: {exc}") from None
    teaching = body.get("teaching", False)
    if not isinstance(teaching, bool):
        raise WebError(400, f"teaching must be true or false, got {_short(teaching)}")
    return NewGame(players, specs, rules_name, name, teaching, picked)


def _level_of(web: object) -> str | None:
    """The level a save's ``web`` record names, ``None`` for none (or a name no longer a
    level: the game still opens, its opponents are in its specs)."""
    found = web.get("level") if isinstance(web, dict) else None
    return found if isinstance(found, str) and found in LEVEL_NAMES else None


def check_move(body: Any) -> tuple[int, int]:
    """The fields of a move: ``{"action": int, "seq": int}``; 400 naming the bad one."""
    if not isinstance(body, dict):
        raise WebError(400, "the body must be a JSON object {\"action\": int, \"seq\": int}")
    extra = sorted(set(body) - {"action", "seq"})
    if extra:
        raise WebError(400, f"unknown field {extra[0][:40]!r}; a move has action and seq")
    for key in ("action", "seq"):
        if key not in body:
            raise WebError(400, f"missing field {key!r}")
        if not _is_int(body[key]) or abs(body[key]) > 10**9:
            raise WebError(400, f"{key} must be an integer, got {_short(body[key])}")
    if body["seq"] < 0:  # a count of the person's decisions: never stale, simply wrong
        raise WebError(400, f"seq must be the game's seq, 0 or more, got {_short(body['seq'])}")
    return body["action"], body["seq"]


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _read_summary(path: Path, size: int) -> dict[str, Any] | None:
    """The list entry of one save; ``None`` for a file that is not a web game's save."""
    if size > MAX_FILE_BYTES:
        return None
    try:
        text = path.read_text(encoding="utf-8")
        check_depth(text, str(path))
        data = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    try:
        players = data["players"]
        human = data["human_seat"]
        names = [str(p["name"]) for p in players]
        specs = [str(p["agent"]) for p in players]
        over = data["status"] == "finished"
        winner = data.get("winner") if over else None
        results = data.get("results") or []
        me = f"player_{human}"
        web = data.get("web")
        return {
            "id": path.stem,
            "created": str(data.get("created", "")),
            "updated": str(data.get("updated", "")),
            "players": len(players),
            "names": names,
            "rules": str(data["rules"]["name"]),
            "opponents": [s for i, s in enumerate(specs) if i != human],
            "status": "over" if over else "playing",
            "teaching": isinstance(web, dict) and web.get("teaching") is True,
            "level": _level_of(web),
            "winner": [names[winner]] if isinstance(winner, int) else None,
            "you_won": over and winner == human,
            "hands": sum(1 for r in results if me in r.get("hands", {})),
            "lives_lost": sum(int(r.get("lives_lost", {}).get(me, 0)) for r in results),
        }
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


def replay_payload(save: SavedGame, max_bytes: int | None = None) -> dict[str, Any]:
    """Every decision of ``save`` with the whole table face up after it (the replay
    schema of ``docs/WEB_API.md``); the file is re-simulated and checked on the way.
    413 as soon as the steps weigh more than ``max_bytes`` (:data:`MAX_ANSWER_BYTES`) as
    JSON, so a long game costs the server at most that much time and memory."""
    max_bytes = MAX_ANSWER_BYTES if max_bytes is None else max_bytes
    names = save.names
    weight = [0]
    first = save.new_state()
    deal = serialize.deal_event(first.hand_number, first.dealer, names)
    you = save.human_seat
    steps: list[dict[str, Any]] = [{"index": 0, "seat": None, "action": None, "label": None,
                                    "text": deal["text"],
                                    "state": _replay_state(first, names, you),
                                    "results": [], "events": [deal]}]
    before = [_Before.of(first)]

    def on_step(state: GameState, seat: int, action: int) -> None:
        b = before[0]
        new = state.results[b.results:]
        events = _replay_events(save, state, seat, action, b)
        steps.append({
            "index": len(steps), "seat": seat, "action": action,
            "label": action_str(action),
            "text": events[0]["text"],
            "state": _replay_state(state, names, you),
            "results": [serialize.result_payload(r, save.rules, names) for r in new],
            "events": events,
        })
        weight[0] += len(json.dumps(steps[-1], separators=(",", ":")))
        if weight[0] > max_bytes:
            raise WebError(413, f"this replay weighs more than {max_bytes} bytes by decision "
                                f"{len(steps) - 1} of {len(save.actions)}; it is too long "
                                "to show here (scat replay FILE shows it in the terminal)")
        before[0] = _Before.of(state)

    state = save.resimulate(on_step=on_step)
    return {
        "game_id": save.game_id,
        # the agent's spec, and its label as the table shows it ("Alice (PPO)")
        "players": [{"seat": s, "name": p.name, "agent": serialize.YOU if p.agent == HUMAN
                     else p.agent, "label": agent_label(p.agent)}
                    for s, p in enumerate(save.players)],
        "you": save.human_seat,
        "rules": serialize.rules_payload(save.rules),
        "seed": save.seed if save.status == "finished" else None,
        "winner": state.winner,
        "replacements": [{"seat": r.seat, "from_step": r.from_action, "agent": r.agent,
                          "label": agent_label(r.agent)} for r in save.replacements],
        "steps": steps,
    }


def _replay_state(state: GameState, names: Sequence[str], you: int | None) -> dict[str, Any]:
    """A replay step's table: every hand face up (:func:`serialize.full_state`), and for
    each seat ``known``, what the person at seat ``you`` saw of its cards at this step (an
    opponent's cards taken from the pile and still held, golf's face-up slots; the person's
    own hand as they saw it), so the page can also show the step as the person saw it.
    Empty for a game between agents."""
    table = serialize.full_state(state, names)
    if you is None:
        for p in table["players"]:
            p["known"] = []
        return table
    view = make_view(state, you)
    golf = state.rules.play == "golf"
    for s, p in enumerate(table["players"]):
        own = view.hand if golf else sorted(view.hand)  # sorted as the table shows it
        p["known"] = serialize.cards(own if s == you else view.known_cards[s])
    return table


def _replay_events(save: SavedGame, state: GameState, seat: int, action: int,
                   b: _Before) -> list[dict[str, Any]]:
    """The events of one decision of a replay, as the table shows a live game's: the move
    (a 31 kept quiet too: the replay is face up), each hand it ended in full, the next
    deal, the game's end. ``state`` is after the decision, ``b`` the table before it."""
    names = save.names
    event = serialize.move_event(seat, action, you=-1, names=names, rules=save.rules,
                                 phase=b.phase, top_before=b.top,
                                 second_knock=action == KNOCK and b.knocker is not None,
                                 hand_number=b.hand_number, golf_cards=b.golf_cards)
    if event is None:
        # nobody at the table saw this decision: marked, so the page can leave it out of
        # the replay as the person saw it
        event = {"kind": "call", "seat": seat, "action": action, "card": None,
                 "hand_number": b.hand_number, "text": f"{names[seat]} kept the 31 quiet.",
                 "unseen": True}
    you = save.human_seat if save.human_seat is not None else -1
    return [event, *_ending_events(state, b, save.rules, names, you, seen_by=None)]


def _ending_events(state: GameState, before: _Before, rules: Rules, names: Sequence[str],
                   you: int, *, seen_by: int | None) -> list[dict[str, Any]]:
    """What follows a decision's move: each hand it ended (as ``seen_by`` saw it, in full
    when ``None``), the deal of the next, and the game's end. ``state`` is after the
    decision, ``before`` the table before it."""
    out = []
    for result in state.results[before.results:]:
        shown = result if seen_by is None else result.seen_by(seen_by)
        out.append(serialize.hand_over_event(shown, rules, names))
        if result.hand_number < state.hand_number:
            later = [r for r in state.results if r.hand_number == result.hand_number + 1]
            dealer = later[0].dealer if later else state.dealer
            out.append(serialize.deal_event(result.hand_number + 1, dealer, names))
    if state.is_terminal() and not before.terminal:
        out.append(serialize.game_over_event(state.winner, you, names, state.hand_number))
    return out


def replay_upload(data: Any) -> dict[str, Any]:
    """``POST /api/replays``: a ``scat play`` file of a finished game, checked by
    re-simulation, as a replay payload."""
    if not isinstance(data, dict) or data.get("format") != "scat-replay":
        raise WebError(400, "not a scat replay (no \"format\": \"scat-replay\")")
    actions = data.get("actions")
    if isinstance(actions, list) and len(actions) > MAX_REPLAY_DECISIONS:
        raise WebError(422, f"this replay holds {len(actions)} decisions; at most "
                            f"{MAX_REPLAY_DECISIONS} are shown here (scat replay FILE shows "
                            "it in the terminal)")
    if data.get("status") != "finished" or "sealed" in data:
        raise WebError(400, "this game is still in progress (its seed is sealed): a replay "
                            "shows every hand face up, so it opens only once the game is over")
    try:
        save = SavedGame.from_json(data, source="the uploaded replay")
        return replay_payload(save)
    except ReplayError as exc:
        raise WebError(400, str(exc)) from None


__all__ = ["AGENTS", "MAX_ANSWER_BYTES", "MAX_REPLAY_DECISIONS", "REVIEW_WORLDS", "GameStore",
           "LiveGame", "NewGame", "WebError", "WebSave", "check_move", "check_new_game", "default_names",
           "replay_payload", "replay_upload"]
