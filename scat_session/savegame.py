"""Saved games and replays: one JSON format for both.

A game is fully determined by its setup (players, rules, seed) and the list of decisions
taken: the engine's own random generator, seeded, deals every hand, and opponents are
seeded agents. So a file stores exactly that, plus the public result of every hand as a
checksum. Loading a file *re-simulates* the game and checks every recorded hand result
against the engine's, so a replay cannot silently show a different game than the one
played, and a resumed game continues exactly where it stopped (opponents included: they
are rebuilt with the same seeds and asked for their moves again, which must match).

**A game in progress keeps its cards hidden.** The seed alone gives every hand and the whole
stock order, and each opponent's seed is derived from it, so while a person's game is in
progress no seed is written in clear: the seeds are *sealed* (:mod:`scat_session.keystore`: XOR
with an HMAC-SHA256 keystream under the user's secret key and a random nonce, new at every
save) and the whole document carries an HMAC under the same key. A seed scat draws itself
has :data:`SEED_BITS` bits (:func:`new_seed`), so it cannot be found by trying seeds against
what the person has seen either. The file name holds the date, the number of players and a
random game id, never the seed; nothing on screen shows it until the game is over. Opening
such a save needs the key, so another account or machine cannot resume or read it, and any
edit (``human_seat``, players, decisions cut or changed) breaks the HMAC and is refused in
one line. A ledger beside the key records, per game id, how far the latest save got; a save
behind it (cut short, or an older copy put back) does not resume: no take-backs. When the
game is over the file is rewritten with everything in clear: anyone can replay and verify
it, no key needed.

**Nor does the move list say more than the table did.** An opponent keeping a new 31 quiet
(``declare_31: choice``) makes a decision nobody else sees, and a ``pass`` in the clear list
(or one more decision counted) would tell the person that it holds 31. So while the game is
in progress the clear ``actions`` are the *public record*, the decisions the person has seen
(:func:`is_private` names the others), and where the private ones lie is sealed with the
seeds (``quiet``: for each place in the public record, before its first decision and after
each one, how many private decisions came there; one character per place, so its length
follows the public record and says nothing). The ledger counts and hashes the public record
too, and ``scat play`` does not write a save while an opponent's private decision is
pending, so neither the file, its size, the ledger nor the moment a save is written changes
with a decision the person has not seen.

The limit: the machine's owner can read the key file and the process's memory (and delete
the ledger). The seal keeps cards off the screen, out of the file name and out of a save
shared with someone else; it does not defend a game against the owner of the machine.

The format (``"format": "scat-replay", "version": 4``)::

    {
      "format": "scat-replay", "version": 4,
      "status": "in_progress" | "finished",
      "game_id": "3f9c01ab",
      "created": "2025-01-01T12:00:00", "updated": "...",
      "num_players": 3, "seed": 7, "first_dealer": 2,   # seed null while sealed
      "rules": {... every field of scat_env.Rules ...},
      "human_seat": 0,                      # null for a game between agents
      "players": [{"name": "You", "agent": "human", "seed": null},
                  {"name": "Bob", "agent": "expert", "seed": 7001}, ...],  # null while sealed
      "replacements": [{"seat": 1, "from_action": 40, "agent": "expert"}],  # [] while sealed
      "actions": [[1, "stock"], [1, "d:7C"], [2, "take"], [0, "knock"], ...],  # public only
      "results": [{"hand_number": 1, "reason": "knock", "rule": "lowest",
                   "hands": {"player_0": ["KH", "8H", "5H"], ...}, ...}],
      "winner": 0,                          # null until the game is over
      "sealed": {"nonce": "...", "key_id": "...", "hidden": "..."},  # only while in progress
      "mac": "..."                          # only while in progress
    }

``replacements`` lists the seats whose agent broke (an illegal move or an exception) and
the agent that played the seat from that decision on (counted in the whole move list), so a
resume or a replay re-simulates the game exactly; while the game is in progress they are
sealed (``hidden`` opens to ``{"seed", "agents", "quiet", "replacements"}``), since a
decision number counts private decisions too. While the game is in progress, ``results``
hold each hand as the person saw it (:meth:`scat_env.HandResult.seen_by`: after a declared
31 the other hands stay hidden); a finished game holds the full records.

Actions are written with :func:`scat_env.actions.action_short` so a person can read a file;
each hand result is :meth:`scat_env.HandResult.to_dict`, the form the env reports it in.
Version 3 files (only the seeds sealed, ``"seeds"``, under one nonce per game; the whole
move list in clear), version 2 files (no game id, no seal, the seed in clear) and version 1
files (whose hand results had a form of their own) still load and resume: their decisions
are re-simulated and checked as always, and they are written back as version 4.

A file is at most :data:`MAX_FILE_BYTES` and nested at most :data:`MAX_DEPTH` deep; both
are checked before the JSON is parsed, so a hostile file costs one line, not a crash.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from scat_env import DEFAULT_MAX_TURNS, GameState, HandResult, Phase, Rules, make_view, parse_card
from scat_env.actions import NUM_ACTIONS, PASS, action_short, action_str
from scat_env.names import check_shown
from scat_env.yamlfile import one_line

from . import keystore
from .keystore import SealError, os_error_text

FORMAT = "scat-replay"
VERSION = 4
#: Versions this module reads; see the module docstring for versions 1 to 3.
READS = (1, 2, 3, 4)
#: The size of a seed scat draws itself (:func:`new_seed`); docs/SECURITY.md, "Seeds", says
#: why: a smaller one can be searched from what the person sees of the first deal.
SEED_BITS = 128
HUMAN = "human"
#: Environment variable that moves the default replay folder (tests point it at a tmp dir).
REPLAY_DIR_ENV = "SCAT_REPLAY_DIR"
#: The largest file read as a saved game (a long game is a few hundred KiB).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: The deepest nesting of lists and objects a saved game may have (a real one has 5).
MAX_DEPTH = 32
#: The agent that takes over a broken agent's seat, and the one after it if that breaks too.
REPLACEMENT_AGENTS = ("expert", "random")

#: Every non-discard action by its short name ("stock", "take", "knock", "end", ...).
_SHORT_ACTIONS = {action_short(a): a for a in range(52, NUM_ACTIONS)}
_GAME_ID = re.compile(r"[0-9a-z-]{1,40}")
_STRING = re.compile(rb'"[^"]*"')  # once escaped quotes and backslashes are gone
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


class ReplayError(ValueError):
    """A saved game that cannot be read or does not re-simulate to what it records: one
    line, bounded (:func:`scat_env.yamlfile.one_line`), whatever the file holds."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class SaveError(ReplayError):
    """A saved game that cannot be written (a folder in the way, no permission, a full disk)."""


def replay_dir() -> Path:
    """Where games are saved by default: ``$SCAT_REPLAY_DIR``, else ``replays`` in
    :func:`scat_session.keystore.scat_home` (``~/.scat/replays``)."""
    env = os.environ.get(REPLAY_DIR_ENV)
    return Path(env).expanduser() if env else keystore.scat_home() / "replays"


def new_game_id() -> str:
    """A short random id: names the game in its file name and in the ledger, and says
    nothing about its cards."""
    return secrets.token_hex(4)


def default_path(game_id: str, num_players: int) -> Path:
    """``scat-DATE-TIME-Np-ID.json`` in :func:`replay_dir`: no seed in the name."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return replay_dir() / f"scat-{stamp}-{num_players}p-{game_id}.json"


def agent_seed(game_seed: int, seat: int) -> int:
    """The seed of the agent at ``seat``: the same rule as :func:`agents.match.play_game`, so
    a game saved here and the same seat line-up in the match runner play alike. It gives the
    game seed away, so it is sealed like the seed while the game is in progress."""
    return game_seed * 1000 + seat


def new_seed() -> int:
    """A fresh game seed when the user gives none (every game must be replayable):
    :data:`SEED_BITS` bits from the operating system's random source.

    Why so many: the seed deals every hand and orders the stock, so a seed that can be
    searched gives the hidden cards away. With 2**31 seeds, the person's first hand, the
    dealer and the upcard leave a few hundred candidates after about 1,000 CPU-seconds, and
    the opponents' first moves leave one. 2**128 seeds cannot be tried. The whole value
    reaches every generator: :class:`random.Random` seeds from every bit of an int (the
    deal, and each agent through :func:`agent_seed`), and nothing on the way truncates it.
    """
    return secrets.randbits(SEED_BITS)


def is_private(state: GameState, seat: int, action: int, human: int | None) -> bool:
    """Whether ``action`` by ``seat`` in ``state`` (before it) is a decision the person at
    ``human`` does not see: another seat keeping a new 31 quiet (``declare_31: choice``). The
    engine leaves it out of the public log and the other seats' views show the turn as if
    nothing was asked; a save in progress keeps it out of its clear move list."""
    return state.phase is Phase.DECLARE and action == PASS and seat != human


#: One character per place in the public record: how many private decisions came there.
_COUNT_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def quiet_places(private: list[bool]) -> str:
    """Where the private decisions lie among the public ones: for each place, before the
    first public decision and after each one, how many private decisions came there. Its
    length is the public record's plus one, so sealed it says nothing about how many there
    were. (At one place there are at most as many as players: a 31 made and kept quiet, then,
    if that ended the hand, each opponent dealt a 31 ahead of the person.)"""
    counts = [0]
    for hidden in private:
        if hidden:
            counts[-1] += 1
        else:
            counts.append(0)
    if max(counts) >= len(_COUNT_DIGITS):
        raise ValueError(f"{max(counts)} private decisions in a row")
    return "".join(_COUNT_DIGITS[c] for c in counts)


def _quiet_counts(quiet: object, public: int) -> list[int]:
    """The counts of a sealed ``quiet`` string that goes with ``public`` public decisions;
    ``ValueError`` if it does not fit them."""
    if (not isinstance(quiet, str) or len(quiet) != public + 1
            or not set(quiet) <= set(_COUNT_DIGITS)):
        raise ValueError("its sealed record does not fit its decisions")
    return [_COUNT_DIGITS.index(c) for c in quiet]


def check_writable(path: Path) -> None:
    """``SaveError`` in one line unless a save can be written at ``path``: checked before
    the first move, so a game is never played into a file that cannot hold it."""
    if path.is_dir():
        raise SaveError(f"cannot save to {path}: it is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise SaveError(f"cannot save to {path}: {os_error_text(exc)}") from None


def check_depth(text: str, source: str) -> None:
    """Refuse JSON nested deeper than :data:`MAX_DEPTH` before parsing it (the parser
    recurses once per level). Strings are blanked first, so brackets inside names do not
    count; then every innermost ``[]`` and ``{}`` pair is removed at once, which takes off
    one level: well-nested brackets are gone after as many passes as the nesting is deep.
    Each pass runs at C speed, at most :data:`MAX_DEPTH` of them over a file of at most
    :data:`MAX_FILE_BYTES`: the cost is bounded before anything recurses. Brackets that do
    not pair up are invalid JSON, which the parser refuses (:meth:`SavedGame.load` also
    stops it if it would recurse too deep on the way)."""
    plain = text.encode().replace(b"\\\\", b"").replace(b'\\"', b"")  # no escapes left
    brackets = _STRING.sub(b"", plain).translate(None, _NOT_BRACKETS)
    for _ in range(MAX_DEPTH):
        if not brackets:
            return
        fewer = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if fewer == brackets:
            return
        brackets = fewer
    if brackets:
        raise ReplayError(f"{source}: nested more than {MAX_DEPTH} levels deep; "
                          "not a saved game")


#: The longest player name kept (a table row has room for about this much).
MAX_NAME = 24


def check_name(name: object) -> str:
    """``name`` if it can be shown at a table, else ``ValueError``: at most
    :data:`MAX_NAME` printable characters, no square brackets (the rule every shown name
    follows, :func:`scat_env.names.check_shown`: a name is printed to a terminal, where a
    control character would act instead of naming anyone)."""
    return check_shown(name, "player name", MAX_NAME)


def parse_action(token: str) -> int:
    """Inverse of :func:`action_short`: ``"stock"``, ``"take"``, ``"knock"``, ``"end"``,
    ``"d:KH"``."""
    if not isinstance(token, str):
        raise ValueError(f"not an action token: {str(token)[:30]!r}")
    if token in _SHORT_ACTIONS:
        return _SHORT_ACTIONS[token]
    if token.startswith("d:"):
        return parse_card(token[2:])
    raise ValueError(f"not an action token: {str(token)[:30]!r}")


def result_record(result: HandResult) -> dict[str, Any]:
    """The JSON form of a hand result (:meth:`HandResult.to_dict`, the form the env reports);
    also what re-simulated results are compared by."""
    return result.to_dict()


def portable_spec(spec: str, base: Path | None = None) -> str:
    """``spec`` as a saved game should name it, so that it names the same agent from any
    folder: a shipped policy file by its name (``compact:policies/scat_batch_set.yaml`` in a
    checkout becomes ``compact:scat_batch_set``), any other file given by a path relative to
    ``base`` (default: the current folder) by its absolute path (``compact:runs/x/policy.npz``
    becomes ``compact:/home/me/runs/x/policy.npz``). Specs that name no existing file
    (``expert``, ``threshold:25``, ``compact:scat_batch_set``) are returned unchanged; options
    (``:sample``) stay after the path."""
    kind, sep, arg = spec.partition(":")
    if not sep:
        return spec
    base = base or Path.cwd()
    parts = arg.split(":")  # a spec's options follow its path after ':'
    for i in range(len(parts), 0, -1):
        path = Path(":".join(parts[:i])).expanduser()
        try:
            found = not path.is_absolute() and (base / path).exists()
        except (OSError, ValueError):  # a name too long for the system, a NUL: no file
            continue
        if found and (path.suffix or len(path.parts) > 1):
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


@dataclass(frozen=True)
class Replacement:
    """From decision ``from_action`` on, ``agent`` plays ``seat`` (its agent broke there)."""

    seat: int
    from_action: int
    agent: str


def retired(spec: str) -> bool:
    """Whether ``spec`` names an agent kind this scat-env no longer has (it says which one
    replaced it): saves made before still resume, the seat handed to its successor."""
    from agents.registry import RETIRED

    return spec.partition(":")[0] in RETIRED


def make_replacement(spec: str, seed: int | None) -> Any:
    """The agent that takes over a broken seat, built the same way on every re-simulation:
    seeded with the seat's own seed, reset, and asked from the decision it took over."""
    from agents.registry import make_agent

    agent = make_agent(spec, seed=seed)
    agent.reset(seed)
    return agent


def _legacy_game_id(data: dict[str, Any]) -> str:
    """A stable id for a version 1 or 2 file (they had none), from what names the game: so
    the ledger also refuses an older copy of such a game once it has been resumed."""
    ident = keystore.canonical([data.get("created"), data.get("seed"), data.get("players")])
    return "v2-" + keystore.actions_hash([ident.decode()])[:16]


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
    game_id: str = field(default_factory=new_game_id)
    replacements: list[Replacement] = field(default_factory=list)
    #: Read from a version 1 file: results are counted, then rewritten in today's form.
    old_results: bool = False
    #: Read from a file that holds full results while in progress (version 1 or 2).
    full_results: bool = False
    #: Which decisions are private (:meth:`private_flags`), kept up to date as moves come.
    _private: _PrivateFlags | None = field(default=None, repr=False, compare=False)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.players]

    @property
    def sealed(self) -> bool:
        """Whether the file keeps the seeds sealed: a person's game still in progress."""
        return self.status == "in_progress" and self.human_seat is not None

    def result_form(self, result: HandResult) -> dict[str, Any]:
        """How ``result`` is recorded: as the person saw it while their game is in
        progress (a declared 31 hides the other hands), in full once it is over."""
        if self.sealed and not self.full_results:
            return result_record(result.seen_by(self.human_seat))
        return result_record(result)

    # -- what the person has seen -----------------------------------------------------
    def private_flags(self) -> list[bool]:
        """Per decision, whether it is private (:func:`is_private`): found by playing the
        decisions on a state of its own, carried on from where the last call stopped, so a
        save costs one engine step per new decision, not a replay of the game."""
        known = self._private
        if known is None or self.actions[:len(known.actions)] != known.actions:
            known = self._private = _PrivateFlags(self.new_state())
        for seat, action in self.actions[len(known.actions):]:
            known.step(seat, action, self.human_seat)
        return known.flags

    def public_actions(self) -> list[tuple[int, int]]:
        """The decisions the person has seen, in order: all but the private ones."""
        return [a for a, hidden in zip(self.actions, self.private_flags(), strict=True)
                if not hidden]

    def ledger_actions(self) -> list[list[Any]]:
        """The decisions the ledger counts and hashes: what the file holds in clear (the
        public record while the game is sealed), so the ledger says no more than the file."""
        if not self.sealed:
            return self.actions_json()
        return [[s, action_short(a)] for s, a in self.public_actions()]

    # -- building the state -----------------------------------------------------------
    def new_state(self) -> GameState:
        """The game's first position, exactly as it was dealt. A hand that reaches
        :data:`~scat_env.DEFAULT_MAX_TURNS` turns ends the game with no winner (the
        engine's turn cap), so no saved game, and no replay of one, is endless."""
        state = GameState(self.num_players, self.rules, seed=self.seed,
                          max_turns_per_hand=DEFAULT_MAX_TURNS)
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

    def replace_agent(self, seat: int, spec: str) -> None:
        """Note that ``spec`` plays ``seat`` from the next decision on."""
        self.replacements.append(Replacement(seat, len(self.actions), spec))

    def agent_now(self, seat: int) -> str:
        """The spec that plays ``seat`` from the next decision: its last takeover's, else
        its own."""
        spec = self.players[seat].agent
        for r in self.replacements:
            if r.seat == seat:
                spec = r.agent
        return spec

    def hand_over_retired(self, successor: Callable[[int], str]) -> list[int]:
        """Seats whose agent is of a retired kind (:data:`agents.registry.RETIRED`: a game
        saved against the native ``ppo:`` policies) go to ``successor(seat)`` from the next
        decision, recorded as a takeover like any other, so later resumes and replays build
        the same agent at the same decision. Their moves so far stand as the sealed save has
        them: a retired agent cannot be asked for them again (:func:`retired`). Returns the
        seats handed over; a finished game has none (nobody moves again)."""
        if self.status == "finished":
            return []
        seats = [seat for seat, p in enumerate(self.players)
                 if p.agent != HUMAN and retired(self.agent_now(seat))]
        for seat in seats:
            self.replace_agent(seat, successor(seat))
        return seats

    def next_replacement(self, seat: int) -> str | None:
        """The first of :data:`REPLACEMENT_AGENTS` not yet tried at ``seat`` (the seat's
        own agent counts as tried), or ``None`` when every one has broken there."""
        tried = {self.players[seat].agent}
        tried |= {r.agent for r in self.replacements if r.seat == seat}
        return next((spec for spec in REPLACEMENT_AGENTS if spec not in tried), None)

    def sync(self, state: GameState) -> None:
        """Bring results, status and winner up to date with ``state``."""
        if state.is_terminal() and self.status != "finished":
            self.status = "finished"
            self.winner = state.winner
            self.full_results = False
            self.results = [result_record(r) for r in state.results]  # now in full
            return
        for result in state.results[len(self.results):]:
            self.results.append(self.result_form(result))

    def resimulate(
        self,
        agents: list[Any | None] | None = None,
        on_step: Callable[[GameState, int, int], None] | None = None,
        upto: int | None = None,
    ) -> GameState:
        """Play the recorded decisions again from the first deal and check every hand result.

        With ``agents`` (one per seat, ``None`` for the human), each agent is asked for its
        move at its turn and must choose the recorded one: that both checks the file and
        leaves the agents exactly as they were when the game was saved. A seat listed in
        ``replacements`` gets its new agent in ``agents`` (the list is changed in place) at
        the decision it took over. ``upto`` stops after that many decisions (result checks
        cover the hands finished by then). Raises :class:`ReplayError` naming the first
        disagreement, and never a card: an agent's move names cards of its hand.
        """
        state = self.new_state()
        actions = self.actions if upto is None else self.actions[:upto]
        takeovers = {(r.from_action, r.seat): r.agent for r in self.replacements}
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
            if agents is not None and (i, seat) in takeovers:
                agents[seat] = make_replacement(takeovers[i, seat], self.players[seat].seed)
            agent = agents[seat] if agents is not None else None
            if agent is not None:
                self._ask_again(agent, state, seat, action, where)
            state.apply_action(action)
            while checked < len(state.results):
                self._check_result(state.results[checked], checked)
                checked += 1
            if on_step is not None:
                on_step(state, seat, action)
        if upto is None:
            self._check_end(state, checked)
            if agents is not None:  # a takeover saved before its agent's first move
                for (i, seat), spec in takeovers.items():
                    if i == len(actions):
                        agents[seat] = make_replacement(spec, self.players[seat].seed)
        return state

    def _ask_again(self, agent: Any, state: GameState, seat: int, action: int,
                   where: str) -> None:
        """The agent at ``seat`` must choose the recorded ``action`` again. The message
        names no move: while the game is in progress an agent's discard names its cards."""
        spec = self.players[seat].agent
        try:
            chosen = agent.act(make_view(state, seat))
        except Exception as exc:  # an agent's error text may name its cards
            raise ReplayError(f"{where}: {spec} failed ({type(exc).__name__}) where the saved "
                              "game has its move; the agent changed since it was saved") from None
        if chosen != action:
            raise ReplayError(f"{where}: {spec} now plays differently from the saved game; "
                              "the agent changed since the game was saved")

    def _check_end(self, state: GameState, checked: int) -> None:
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
        if self.full_results and self.sealed:  # an old file in progress: today's form now
            self.full_results = False
            self.results = [self.result_form(r) for r in state.results]

    def _check_result(self, result: HandResult, index: int) -> None:
        if index >= len(self.results):
            raise ReplayError(
                f"hand {result.hand_number} ends in the re-simulation but not in the file"
            )
        got, want = self.result_form(result), self.results[index]
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
    def actions_json(self) -> list[list[Any]]:
        return [[s, action_short(a)] for s, a in self.actions]

    def to_json(self, key: bytes | None = None) -> dict[str, Any]:
        """The file's JSON. A person's game in progress is sealed under ``key`` (default:
        the user's key, created on first use) and signed; anything else is in clear."""
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "status": self.status,
            "game_id": self.game_id,
            "created": self.created,
            "updated": datetime.now().isoformat(timespec="seconds"),
            "num_players": self.num_players,
            "seed": self.seed,
            "first_dealer": self.first_dealer,
            "rules": self.rules.to_dict(),
            "human_seat": self.human_seat,
            "players": [{"name": p.name, "agent": p.agent, "seed": p.seed} for p in self.players],
            "replacements": [{"seat": r.seat, "from_action": r.from_action, "agent": r.agent}
                             for r in self.replacements],
            "actions": self.actions_json(),
            "results": self.results,
            "winner": self.winner,
        }
        if not self.sealed:
            return data
        key = key if key is not None else keystore.load_key(create=True)
        assert key is not None
        private = self.private_flags()
        hidden = {"seed": self.seed, "agents": [p.seed for p in self.players],
                  "quiet": quiet_places(private), "replacements": data["replacements"]}
        data["seed"] = None
        for p in data["players"]:
            p["seed"] = None
        data["actions"] = [a for a, h in zip(data["actions"], private, strict=True) if not h]
        data["replacements"] = []
        # A new nonce at every save: the sealed record changes as the game goes on, and one
        # keystream over two of its versions would show where they differ.
        nonce = keystore.new_nonce()
        data["sealed"] = {"nonce": nonce, "key_id": keystore.key_id(key),
                          "hidden": keystore.seal(key, nonce, hidden)}
        data["mac"] = keystore.mac(key, data)
        return data

    @classmethod
    def from_json(cls, data: Any, source: str = "replay", key: bytes | None = None) -> SavedGame:
        """Parse and validate the JSON form; any problem is one :class:`ReplayError` line.
        A sealed game is opened with ``key`` (default: the user's key)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReplayError(f"{source}: not a scat replay (no \"format\": \"{FORMAT}\")")
        version = data.get("version")
        if version not in READS or isinstance(version, bool):
            raise ReplayError(
                f"{source}: replay version {str(version)[:20]} is not supported "
                f"(this scat reads versions {', '.join(map(str, READS))})"
            )
        quiet = None
        if "sealed" in data or "mac" in data:
            data, quiet = _unsealed(data, source, key)
        elif version >= 3 and data.get("status") == "in_progress" and (
                data.get("human_seat") is not None):
            raise ReplayError(f"{source}: a game in progress must be sealed, and this one is "
                              "not: the file was changed")
        return cls._parse(data, source, quiet)

    @classmethod
    def _parse(cls, data: dict[str, Any], source: str, quiet: object = None) -> SavedGame:
        """The game ``data`` describes. ``quiet``: where the private decisions lie among
        the clear (public) ones, from the seal of a version 4 save in progress."""
        def need(key: str, types: type | tuple[type, ...]) -> Any:
            if key not in data:
                raise ReplayError(f"{source}: missing field {key!r}")
            value = data[key]
            if not isinstance(value, types) or isinstance(value, bool) and bool not in (
                types if isinstance(types, tuple) else (types,)
            ):
                raise ReplayError(f"{source}: field {key!r} has the wrong type "
                                  f"({str(value)[:40]!r})")
            return value

        n = need("num_players", int)
        try:
            rules = Rules.from_dict(need("rules", dict), source="rules")
            created = _shown_text(data.get("created", ""), "created date", 40)
            players = [_player(p) for p in need("players", list)]
            actions = []
            for item in need("actions", list):
                seat, token = item
                if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
                    raise ValueError(f"bad seat {str(seat)[:20]!r}")
                actions.append((seat, parse_action(token)))
            counts = None if quiet is None else _quiet_counts(quiet, len(actions))
            replacements = [_replacement(r, n, len(actions) + sum(counts or ()))
                            for r in data.get("replacements") or []]
        except (ValueError, TypeError, KeyError) as exc:
            raise ReplayError(f"{source}: {exc}") from None
        if len(players) != n:
            raise ReplayError(f"{source}: {len(players)} players listed for {n} seats")
        human = data.get("human_seat")
        humans = [s for s, p in enumerate(players) if p.agent == HUMAN]
        if humans != ([] if human is None else [human]):
            raise ReplayError(f"{source}: human_seat {str(human)[:20]!r} does not match the "
                              "players (the person's seat is the one whose agent is 'human')")
        if any(r.seat == human for r in replacements):
            raise ReplayError(f"{source}: the person's seat cannot have been taken over")
        status = need("status", str)
        if status not in ("in_progress", "finished"):
            raise ReplayError(f"{source}: unknown status {status[:20]!r}")
        results = need("results", list)
        if not all(isinstance(r, dict) for r in results):
            raise ReplayError(f"{source}: results must be a list of objects")
        version = data["version"]
        game_id = data.get("game_id") if version >= 3 else _legacy_game_id(data)
        if not isinstance(game_id, str) or not _GAME_ID.fullmatch(game_id):
            raise ReplayError(f"{source}: bad game_id {str(game_id)[:20]!r}")
        winner = data.get("winner")
        if winner is not None and (not isinstance(winner, int) or isinstance(winner, bool)
                                   or not 0 <= winner < n):
            raise ReplayError(f"{source}: bad winner {str(winner)[:20]!r}")
        game = cls(
            num_players=n,
            rules=rules,
            seed=need("seed", int),
            first_dealer=need("first_dealer", int),
            players=players,
            human_seat=human,
            actions=actions,
            results=results,
            status=status,
            winner=winner,
            created=created,
            game_id=game_id,
            replacements=replacements,
            old_results=version == 1,
            full_results=version < 3,
        )
        if counts is not None:
            game._open_private(counts, source)
        return game

    def _open_private(self, counts: list[int], source: str) -> None:
        """Put the private decisions back among the public ones (``self.actions``): at each
        place, ``counts`` of them, each the pass of the seat the engine then asks to decide
        on a new 31. The file's MAC vouches for both lists; a place where they do not fit is
        an engine that changed since the save, refused in one line that names no card."""
        public, self.actions = self.actions, []
        known = self._private = _PrivateFlags(self.new_state())
        for place, count in enumerate(counts):
            for _ in range(count):
                state = known.state
                if known.stuck or state.is_terminal() or not is_private(
                        state, state.current_player, PASS, self.human_seat):
                    raise ReplayError(f"{source}: its sealed record does not fit its decisions "
                                      "(the engine differs from the one that saved it)")
                self.actions.append((state.current_player, PASS))
                known.step(state.current_player, PASS, self.human_seat)
            if place < len(public):
                self.actions.append(public[place])
                known.step(*public[place], self.human_seat)

    def save(self, path: str | Path) -> Path:
        """Write atomically (a unique temp file, renamed) so a crash or a full disk never
        leaves half a save: the previous save stays whole. A person's game is then noted in
        the ledger (:func:`scat_session.keystore.ledger_record`). Errors: :class:`SaveError`."""
        p = Path(path).expanduser()
        data = self.to_json()
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        try:
            if p.is_dir():
                raise IsADirectoryError(21, "it is a folder; give a file name")
            p.parent.mkdir(parents=True, exist_ok=True)
            keystore.atomic_write(p, text.encode("utf-8"))
        except OSError as exc:
            raise SaveError(f"cannot save the game to {p}: {os_error_text(exc)}") from None
        if self.human_seat is not None:
            try:
                keystore.ledger_record(self.game_id, data["actions"],
                                       self.status == "finished")
            except OSError as exc:
                raise SaveError(f"cannot update the ledger {keystore.ledger_path()}: "
                                f"{os_error_text(exc)}") from None
        return p

    def check_resume(self, source: str) -> None:
        """Refuse a save behind the game's latest one (``SealError``): no take-backs. The
        ledger counts the public record; an entry an older scat wrote counts every decision,
        and a save that continues that is not behind either."""
        try:
            keystore.ledger_check(self.game_id, self.ledger_actions(), source)
        except SealError as behind:
            if not self.sealed:
                raise
            try:
                keystore.ledger_check(self.game_id, self.actions_json(), source)
            except SealError:
                raise behind from None

    @classmethod
    def load(cls, path: str | Path, key: bytes | None = None) -> SavedGame:
        """Read a saved game, bounded: at most :data:`MAX_FILE_BYTES`, nested at most
        :data:`MAX_DEPTH` deep, both checked before parsing."""
        p = Path(path).expanduser()
        if not p.is_file():
            raise ReplayError(f"no saved game at {p}")
        try:
            size = p.stat().st_size
            if size > MAX_FILE_BYTES:
                raise ReplayError(f"{p} is {size / 2**20:.1f} MiB; a saved game is at most "
                                  f"{MAX_FILE_BYTES // 2**20} MiB")
            text = p.read_bytes()[:MAX_FILE_BYTES + 1].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ReplayError(f"{p} is not valid JSON: {exc}") from None
        except OSError as exc:
            raise ReplayError(f"cannot read {p}: {os_error_text(exc)}") from None
        check_depth(text, str(p))
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{p} is not valid JSON: {exc}") from None
        except RecursionError:  # unpaired brackets, deep: invalid JSON all the same
            raise ReplayError(f"{p} is not valid JSON (nested too deep)") from None
        return cls.from_json(data, source=str(p), key=key)


def _player(p: Any) -> PlayerEntry:
    if not isinstance(p, dict):
        raise ValueError("a player must be an object")
    seed = p.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise ValueError(f"bad agent seed {str(seed)[:20]!r}")
    agent = p["agent"]
    if not isinstance(agent, str) or not agent or len(agent) > 500 or not agent.isprintable():
        raise ValueError(f"bad agent spec {str(agent)[:30]!r}")
    return PlayerEntry(check_name(p["name"]), agent, seed)


def _shown_text(value: object, what: str, limit: int) -> str:
    """``value`` if it may be printed as it is (:func:`scat_env.names.check_shown`): a
    finished save is in clear and anyone may edit it, and these fields reach the terminal."""
    return check_shown(value, what, limit, blank_ok=True)


def _successors() -> tuple[str, ...]:
    """The agents a seat of a retired kind is handed to: the default opponents
    (:data:`agents.registry.DEFAULT_POLICIES`, else the fallback ``expert``)."""
    from agents.registry import DEFAULT_POLICIES

    return (*DEFAULT_POLICIES, "expert")


def _replacement(r: Any, num_players: int, num_actions: int) -> Replacement:
    if not isinstance(r, dict):
        raise ValueError("a replacement must be an object")
    seat, start, agent = r.get("seat"), r.get("from_action"), r.get("agent")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < num_players:
        raise ValueError(f"replacement: bad seat {str(seat)[:20]!r}")
    if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start <= num_actions:
        raise ValueError(f"replacement: bad from_action {str(start)[:20]!r}")
    if agent not in REPLACEMENT_AGENTS and agent not in _successors():
        raise ValueError(f"replacement: agent {str(agent)[:30]!r} is not one scat puts in")
    return Replacement(seat, start, agent)


def _unsealed(data: dict[str, Any], source: str,
              key: bytes | None) -> tuple[dict[str, Any], object]:
    """``data`` with its seeds (and, from version 4, its replacements) opened, once the key
    and the MAC say it is this user's own save, unchanged; and where its private decisions
    lie (``None`` for version 3, whose move list is whole in clear). Any refusal is one line
    that says why."""
    sealed = data.get("sealed")
    blob = "hidden" if data.get("version") >= 4 else "seeds"
    if data.get("status") != "in_progress" or not isinstance(sealed, dict) or not all(
            isinstance(sealed.get(k), str) for k in ("nonce", "key_id", blob)):
        raise ReplayError(f"{source}: its seal is damaged (only a game in progress is sealed)")
    try:
        key = key if key is not None else keystore.load_key(create=False)
    except SealError as exc:
        raise ReplayError(f"{source}: {exc}") from None
    if key is None or keystore.key_id(key) != sealed["key_id"]:
        raise ReplayError(f"{source}: this game in progress was saved under another key "
                          "(another account or machine); it can be resumed only where it was "
                          f"started (key: {keystore.key_path()})")
    body = {k: v for k, v in data.items() if k != "mac"}
    if not keystore.mac_ok(key, body, data.get("mac")):
        raise ReplayError(f"{source}: this save was changed after it was written (its MAC "
                          "does not match: seats, players, decisions or results were edited)")
    try:
        hidden = keystore.unseal(key, sealed["nonce"], sealed[blob])
        seed, agent_seeds = hidden["seed"], hidden["agents"]
        players = [dict(p, seed=s) for p, s in zip(data["players"], agent_seeds, strict=True)]
        if blob == "seeds":
            return dict(data, seed=seed, players=players), None
        opened = dict(data, seed=seed, players=players, replacements=hidden["replacements"])
        return opened, hidden["quiet"]
    except (ValueError, TypeError, KeyError):
        raise ReplayError(f"{source}: its seal does not open") from None


@dataclass
class _PrivateFlags:
    """A state that has played ``actions``, and which of them were private. A decision the
    state cannot take (a file not yet checked) stops it: the ones after count as public, and
    :meth:`SavedGame.resimulate` names the first that does not fit."""

    state: GameState
    actions: list[tuple[int, int]] = field(default_factory=list)
    flags: list[bool] = field(default_factory=list)
    stuck: bool = False

    def step(self, seat: int, action: int, human: int | None) -> None:
        state = self.state
        fits = (not self.stuck and not state.is_terminal() and seat == state.current_player
                and state.is_legal(action))
        self.flags.append(fits and is_private(state, seat, action, human))
        self.actions.append((seat, action))
        if fits:
            state.apply_action(action)
        else:
            self.stuck = True
