"""Saved games and replays: one JSON format for both.

A game is fully determined by its setup (players, rules, seed) and the list of decisions
taken: the engine's own random generator, seeded, deals every hand, and opponents are
seeded agents. So a file stores exactly that, plus the public result of every hand as a
checksum. Loading a file *re-simulates* the game and checks every recorded hand result
against the engine's, so a replay cannot silently show a different game than the one
played, and a resumed game continues exactly where it stopped (opponents included: they
are rebuilt with the same seeds and asked for their moves again, which must match).

The format (``"format": "scat-replay", "version": 2``)::

    {
      "format": "scat-replay", "version": 2,
      "status": "in_progress" | "finished",
      "created": "2025-01-01T12:00:00", "updated": "...",
      "num_players": 3, "seed": 7, "first_dealer": 2,
      "rules": {... every field of scat_env.Rules ...},
      "human_seat": 0,                      # null for a game between agents
      "players": [{"name": "You", "agent": "human", "seed": null},
                  {"name": "Bob", "agent": "expert", "seed": 7001}, ...],
      "actions": [[1, "stock"], [1, "d:7C"], [2, "take"], [0, "knock"], ...],
      "results": [{"hand_number": 1, "reason": "knock", "rule": "lowest",
                   "hands": {"player_0": ["KH", "8H", "5H"], ...}, ...}],
      "winner": 0                           # null until the game is over
    }

Actions are written with :func:`scat_env.actions.action_short` so a person can read a file;
each hand result is :meth:`scat_env.HandResult.to_dict`, the form the env reports it in.
Version 1 files (whose hand results had a form of their own) still load and resume: their
decisions are re-simulated and checked as always, and their results are rewritten in the
version 2 form, since there is nothing left to compare the old form with.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scat_env import GameState, HandResult, Rules, make_view, parse_card
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK, action_short, action_str

FORMAT = "scat-replay"
VERSION = 2
#: Versions this module reads; see the module docstring for version 1.
READS = (1, 2)
HUMAN = "human"
#: Environment variable that moves the default replay folder (tests point it at a tmp dir).
REPLAY_DIR_ENV = "SCAT_REPLAY_DIR"

_SHORT_ACTIONS = {"stock": DRAW_STOCK, "take": DRAW_DISCARD, "knock": KNOCK, "end": END_PLAY}


class ReplayError(ValueError):
    """A saved game that cannot be read or does not re-simulate to what it records."""


def replay_dir() -> Path:
    """Where games are saved by default: ``$SCAT_REPLAY_DIR`` or ``~/.scat/replays``."""
    env = os.environ.get(REPLAY_DIR_ENV)
    return Path(env).expanduser() if env else Path.home() / ".scat" / "replays"


def default_path(seed: int, num_players: int) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return replay_dir() / f"scat-{stamp}-{num_players}p-seed{seed}.json"


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of the agent at ``seat``: the same rule as :func:`agents.match.play_game`, so
    a game saved here and the same seat line-up in the match runner play alike."""
    return game_seed * 1000 + seat


def new_seed() -> int:
    """A fresh game seed when the user gives none: every game must be replayable."""
    return random.SystemRandom().randrange(1, 2**31)


#: The longest player name kept (a table row has room for about this much).
MAX_NAME = 24


def check_name(name: object) -> str:
    """``name`` if it can be shown at a table, else ``ValueError``: a string of printable
    characters, at most :data:`MAX_NAME` of them, no square brackets. A name is printed to
    a terminal, so a control character in it (an escape sequence that clears the screen, a
    carriage return that overwrites a line) would act on the player's terminal instead of
    naming anyone, and brackets would read as the screen's own markup."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a player name must be a non-empty string, got {str(name)[:30]!r}")
    if not name.isprintable():
        raise ValueError(f"player name {name[:30]!r} holds control characters")
    if "[" in name or "]" in name:  # the screen's markup: "[bold]" would restyle the table
        raise ValueError(f"player name {name[:30]!r} holds a square bracket")
    if len(name) > MAX_NAME:
        raise ValueError(f"player name {name[:30]!r}... is longer than {MAX_NAME} characters")
    return name


def parse_action(token: str) -> int:
    """Inverse of :func:`action_short`: ``"stock"``, ``"take"``, ``"knock"``, ``"end"``,
    ``"d:KH"``."""
    if not isinstance(token, str):
        raise ValueError(f"not an action token: {token!r}")
    if token in _SHORT_ACTIONS:
        return _SHORT_ACTIONS[token]
    if token.startswith("d:"):
        return parse_card(token[2:])
    raise ValueError(f"not an action token: {token!r}")


def result_record(result: HandResult) -> dict[str, Any]:
    """The JSON form of a hand result (:meth:`HandResult.to_dict`, the form the env reports);
    also what re-simulated results are compared by."""
    return result.to_dict()


def portable_spec(spec: str, base: Path | None = None) -> str:
    """``spec`` as a saved game should name it, so that it names the same agent from any
    folder: a shipped policy file by its name (``ppo:policies/scat_ppo_set.yaml`` in a
    checkout becomes ``ppo:scat_ppo_set``), any other file given by a path relative to
    ``base`` (default: the current folder) by its absolute path (``ppo:runs/x/policy.npz``
    becomes ``ppo:/home/me/runs/x/policy.npz``). Specs that name no existing file
    (``expert``, ``threshold:25``, ``ppo:scat_ppo_set``) are returned unchanged; options
    (``:sample``) stay after the path."""
    kind, sep, arg = spec.partition(":")
    if not sep:
        return spec
    base = base or Path.cwd()
    parts = arg.split(":")  # a spec's options follow its path after ':'
    for i in range(len(parts), 0, -1):
        path = Path(":".join(parts[:i])).expanduser()
        if not path.is_absolute() and (base / path).exists() and (
                path.suffix or len(path.parts) > 1):
            return ":".join([kind, _shipped_name((base / path).resolve()), *parts[i:]])
    return spec


def _shipped_name(path: Path) -> str:
    """The shipped policy ``path`` is, by name (``scat_ppo_set``); else ``path`` itself."""
    from agents.neural.policy_file import shipped_path

    shipped = shipped_path(path.stem)
    return path.stem if shipped and Path(shipped).resolve() == path else str(path)


@dataclass
class PlayerEntry:
    name: str
    agent: str  # an agents.registry spec, or "human"
    seed: int | None = None


@dataclass
class SavedGame:
    """Setup plus decisions of one game; see the module docstring for the file format."""

    num_players: int
    rules: Rules
    seed: int
    first_dealer: int
    players: list[PlayerEntry]
    human_seat: int | None = 0
    actions: list[tuple[int, int]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    status: str = "in_progress"
    winner: int | None = None
    created: str = field(default_factory=lambda: datetime.now().isoformat(timespec="seconds"))
    #: Read from a version 1 file: results are counted, then rewritten in today's form.
    old_results: bool = False

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.players]

    # -- building the state -----------------------------------------------------------
    def new_state(self) -> GameState:
        """The game's first position, exactly as it was dealt."""
        state = GameState(self.num_players, self.rules, seed=self.seed)
        if state.dealer != self.first_dealer:
            raise ReplayError(
                f"the first dealer re-simulates as seat {state.dealer}, the file says "
                f"{self.first_dealer}: the file was changed or the engine's shuffle differs"
            )
        return state

    def record(self, state: GameState, seat: int, action: int) -> None:
        """Note one decision just applied to ``state`` (and any hand it ended)."""
        self.actions.append((seat, action))
        self.sync(state)

    def sync(self, state: GameState) -> None:
        """Bring results, status and winner up to date with ``state``."""
        for result in state.results[len(self.results):]:
            self.results.append(result_record(result))
        if state.is_terminal():
            self.status = "finished"
            self.winner = state.winner

    def resimulate(
        self,
        agents: Sequence[Any | None] | None = None,
        on_step: Callable[[GameState, int, int], None] | None = None,
        upto: int | None = None,
    ) -> GameState:
        """Play the recorded decisions again from the first deal and check every hand result.

        With ``agents`` (one per seat, ``None`` for the human), each agent is asked for its
        move at its turn and must choose the recorded one: that both checks the file and
        leaves the agents exactly as they were when the game was saved. ``upto`` stops after
        that many decisions (result checks cover the hands finished by then). Raises
        :class:`ReplayError` naming the first disagreement.
        """
        state = self.new_state()
        actions = self.actions if upto is None else self.actions[:upto]
        checked = 0
        for i, (seat, action) in enumerate(actions):
            where = f"decision {i + 1} (hand {state.hand_number}, {self.names[seat]})"
            if state.is_terminal():
                raise ReplayError(f"{where}: the game was already over")
            if seat != state.current_player:
                raise ReplayError(
                    f"{where}: it is {self.names[state.current_player]}'s turn, "
                    f"not {self.names[seat]}'s"
                )
            if not state.is_legal(action):
                raise ReplayError(f"{where}: {action_str(action)} is not legal here")
            agent = agents[seat] if agents is not None else None
            if agent is not None:
                chosen = agent.act(make_view(state, seat))
                if chosen != action:
                    raise ReplayError(
                        f"{where}: {self.players[seat].agent} now plays {action_str(chosen)} "
                        f"where the saved game has {action_str(action)}; the agent changed "
                        "since the game was saved"
                    )
            state.apply_action(action)
            while checked < len(state.results):
                self._check_result(state.results[checked], checked)
                checked += 1
            if on_step is not None:
                on_step(state, seat, action)
        if upto is None:
            if checked != len(self.results):
                raise ReplayError(
                    f"the file records {len(self.results)} finished hands, the decisions "
                    f"re-simulate to {checked}"
                )
            if self.status == "finished" and not state.is_terminal():
                raise ReplayError("the file says the game is finished, but it is not over")
            if self.status != "finished" and state.is_terminal():
                raise ReplayError("the file says the game is in progress, but it is over")
            if state.is_terminal() and state.winner != self.winner:
                raise ReplayError(
                    f"the winner re-simulates as seat {state.winner}, the file says {self.winner}"
                )
        return state

    def _check_result(self, result: HandResult, index: int) -> None:
        if index >= len(self.results):
            raise ReplayError(
                f"hand {result.hand_number} ends in the re-simulation but not in the file"
            )
        got, want = result_record(result), self.results[index]
        if self.old_results:
            self.results[index] = got
            return
        if got != want:
            diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            raise ReplayError(
                f"hand {result.hand_number} re-simulates differently from the file "
                f"(fields {', '.join(diff)} differ): the file was changed or the engine differs"
            )

    # -- JSON -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "status": self.status,
            "created": self.created,
            "updated": datetime.now().isoformat(timespec="seconds"),
            "num_players": self.num_players,
            "seed": self.seed,
            "first_dealer": self.first_dealer,
            "rules": self.rules.to_dict(),
            "human_seat": self.human_seat,
            "players": [{"name": p.name, "agent": p.agent, "seed": p.seed} for p in self.players],
            "actions": [[s, action_short(a)] for s, a in self.actions],
            "results": self.results,
            "winner": self.winner,
        }

    @classmethod
    def from_json(cls, data: Any, source: str = "replay") -> SavedGame:
        """Parse and validate the JSON form; any problem is one :class:`ReplayError` line."""
        def need(key: str, types: type | tuple[type, ...]) -> Any:
            if key not in data:
                raise ReplayError(f"{source}: missing field {key!r}")
            value = data[key]
            if not isinstance(value, types) or isinstance(value, bool) and bool not in (
                types if isinstance(types, tuple) else (types,)
            ):
                raise ReplayError(f"{source}: field {key!r} has the wrong type ({value!r})")
            return value

        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReplayError(f"{source}: not a scat replay (no \"format\": \"{FORMAT}\")")
        if data.get("version") not in READS:
            raise ReplayError(
                f"{source}: replay version {data.get('version')!r} is not supported "
                f"(this scat reads versions {', '.join(map(str, READS))})"
            )
        n = need("num_players", int)
        try:
            rules = Rules.from_dict(need("rules", dict), source=f"{source}: rules")
            players = [
                PlayerEntry(check_name(p["name"]), str(p["agent"]), p.get("seed"))
                for p in need("players", list)
            ]
            actions = []
            for item in need("actions", list):
                seat, token = item
                if not isinstance(seat, int) or not 0 <= seat < n:
                    raise ValueError(f"bad seat {seat!r}")
                actions.append((seat, parse_action(token)))
        except (ValueError, TypeError, KeyError) as exc:
            raise ReplayError(f"{source}: {exc}") from None
        if len(players) != n:
            raise ReplayError(f"{source}: {len(players)} players listed for {n} seats")
        human = data.get("human_seat")
        if human is not None and (not isinstance(human, int) or not 0 <= human < n):
            raise ReplayError(f"{source}: bad human_seat {human!r}")
        status = need("status", str)
        if status not in ("in_progress", "finished"):
            raise ReplayError(f"{source}: unknown status {status!r}")
        results = need("results", list)
        if not all(isinstance(r, dict) for r in results):
            raise ReplayError(f"{source}: results must be a list of objects")
        return cls(
            num_players=n,
            rules=rules,
            seed=need("seed", int),
            first_dealer=need("first_dealer", int),
            players=players,
            human_seat=human,
            actions=actions,
            results=results,
            status=status,
            winner=data.get("winner"),
            created=str(data.get("created", "")),
            old_results=data["version"] == 1,
        )

    def save(self, path: str | Path) -> Path:
        """Write atomically (temp file + rename) so a crash never leaves half a save."""
        p = Path(path).expanduser()
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
        os.replace(tmp, p)
        return p

    @classmethod
    def load(cls, path: str | Path) -> SavedGame:
        p = Path(path).expanduser()
        if not p.is_file():
            raise ReplayError(f"no saved game at {p}")
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ReplayError(f"{p} is not valid JSON: {exc}") from None
        return cls.from_json(data, source=str(p))

