"""A tournament's log, ``games.jsonl``: reading it, checking it, and what a resume trusts.

Finished games are appended to ``games.jsonl`` (one whole line per game) as they complete, so
an interrupted run loses at most the games in flight; a resume plays only the missing keys,
cutting off a torn last line. A run killed at any moment and resumed, as often as it takes,
ends with the same bytes of ``games.jsonl`` and ``results.json`` as one that ran straight
through (``tests/test_tournament_fault.py`` kills ``scat tournament`` at random moments).

Trusting the log on resume. ``games.jsonl`` is read back, so it is input like any other
file: it may come from another tournament, another version of the code, or an editor.
A resume therefore refuses, in one line naming the file and line, a log that does not
belong:

- no ``config.json`` beside the games, or one that differs from this configuration (a
  configuration rebuilt from a partial log could not be proven the same: ``games``,
  ``max_turns`` and the rules leave no trace in it);
- a record that fails :class:`RecordCheck`: a key outside the schedule or seen twice, a
  deal seed, seat line-up or player count other than the schedule's for its key, a field
  missing, unknown, of the wrong type or out of range, hands whose losses do not add up to
  the lives at the end or whose deal does not pass left, a winner other than the one seat
  left (or a winner in a game that was truncated or is not over);
- a re-played game that does not come out as logged (:func:`check_replayed`). The engine
  and the agents are deterministic given the deal seed and the per-game agent seeds, so
  playing a logged key again must give the same record, byte for byte; a consistently
  forged record, or one written by other rules, agents or code, does not. By default
  (``verify="auto"``) a resume re-plays a sample first: :data:`VERIFY_FRACTION` (5%) of the
  logged games, at least :data:`VERIFY_MIN` (64), or all of them when there are fewer,
  picked by the system's random source so that whoever edits the log cannot know which
  lines are checked; then, timed per game, the rest too when they are estimated to take at
  most :data:`VERIFY_SECONDS` (5 s). Only a log whose full re-play would cost more than
  that keeps to the sample (of 2,000 logged games 100 are re-played: editing 20 of them is
  caught with probability 1 - C(1980, 100) / C(2000, 100) = 64%, editing 100 with 99.5%).
  ``verify="sample"`` keeps to the sample; ``verify="all"`` re-plays every one.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scat_env.engine import short_repr

from .schedule import TournamentConfig, deal_seed

GAMES_FILE = "games.jsonl"
CONFIG_FILE = "config.json"

#: How many logged games a resume re-plays to prove the log genuine (see the module notes):
#: ``"auto"`` (the default) every one when that is estimated to cost at most
#: :data:`VERIFY_SECONDS` more than the sample, else the sample; ``"sample"``
#: :data:`VERIFY_FRACTION` of them, at least :data:`VERIFY_MIN`, picked unpredictably;
#: ``"all"`` every one.
VERIFY_MODES = ("auto", "sample", "all")
VERIFY_FRACTION = 0.05
VERIFY_MIN = 64
#: What ``"auto"`` may spend re-playing the games the sample left out (estimated from the
#: time the sample took, per game).
VERIFY_SECONDS = 5.0

#: The fields of a game record and of each of its hands, exactly as :func:`play_key` writes
#: them: a record with a field more or less is not one of ours.
RECORD_FIELDS = ("table", "deal", "seating", "seed", "seats", "lineup_index", "first_dealer",
                 "winner", "truncated", "decisions", "lives_end", "hands")
HAND_FIELDS = ("reason", "dealer", "knocker", "declarers", "lives_lost", "values",
               "eliminated", "replayed")
#: How a hand ended (``"knock"``, ``"thirty_one"``...: :class:`scat_env.HandResult`'s
#: ``reason``): a short lower-case word; the set grows with the rules, the re-play checks it.
HAND_REASON = re.compile(r"[a-z][a-z0-9_]{0,39}")
#: A line longer than this is refused unread (a real record holds a few hundred bytes a hand).
MAX_RECORD_BYTES = 1 << 20


def game_key(record: dict[str, Any]) -> tuple[int, int, int]:
    return (record["table"], record["deal"], record["seating"])


def _is_int(value: Any) -> bool:
    return type(value) is int  # JSON integers only: not bool, not 1.0


def _seat_list(value: Any, n: int, what: str, *, optional: bool = False) -> list[Any]:
    """``value`` as a list of ``n`` entries (``optional``: or empty), else ValueError."""
    if not isinstance(value, list) or (len(value) != n and not (optional and not value)):
        raise ValueError(f"{what} must be a list of {n} entries, got {short_repr(value)}")
    return value


def _seats(value: Any, n: int, what: str, among: Sequence[int] | None = None) -> list[int]:
    """A list of distinct seat numbers (in ``among`` when given)."""
    ok = range(n) if among is None else among
    if (not isinstance(value, list) or len(set(map(repr, value))) != len(value)
            or any(not _is_int(s) or s not in ok for s in value)):
        raise ValueError(f"{what} must list distinct seats of the game, got {short_repr(value)}")
    return value


class RecordCheck:
    """Checks that a ``games.jsonl`` record is one this tournament could have written.

    Every check is on the record alone, against the configuration: its key is in the
    schedule; its deal seed, seats and line-up are the ones the schedule gives that key;
    every field has its type and range; the hands add up (each seat dealt in exactly while
    it has lives, losses within what it had, the eliminated seats exactly those that reached
    zero, lives at the end equal to the start less every loss, the deal passing left among
    the seats still in); and the outcome follows from
    the lives (a finished game's winner is the one seat left; a truncated game has no winner
    and two or more seats left). What it cannot see, a record edited consistently, the
    re-play in :func:`run_tournament` catches.
    """

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.n = config.num_players
        self.seatings = config.seatings()
        self.deals = config.deals_per_table()
        rules = config.load_rules()
        self.start_lives = rules.start_lives
        # A race to points ends on points, which the hand summaries do not carry: its
        # records are checked for the schedule and the lives, the winner only for form.
        self.points_race = getattr(rules, "scoring", "lives") == "points"

    def __call__(self, rec: Any) -> tuple[int, int, int]:
        """The record's game key; ValueError (what is wrong, one line) if it does not belong."""
        if not isinstance(rec, dict):
            raise ValueError(f"not a game record: {short_repr(rec)}")
        missing = [f for f in RECORD_FIELDS if f not in rec]
        extra = sorted(str(f) for f in rec if f not in RECORD_FIELDS)
        if missing or extra:
            raise ValueError("not a game record of this tournament: "
                             + (f"no {', '.join(missing)}" if missing else "")
                             + ("; " if missing and extra else "")
                             + (f"unknown field {short_repr(', '.join(extra))}" if extra else ""))
        key = self._schedule(rec)
        self._outcome(rec, self._hands(rec))
        return key

    def _schedule(self, rec: dict[str, Any]) -> tuple[int, int, int]:
        """The key, deal seed, seats and line-up against the schedule."""
        table, deal, seating = rec["table"], rec["deal"], rec["seating"]
        if not all(map(_is_int, (table, deal, seating))):
            raise ValueError("table, deal and seating must be integers, got "
                             f"{short_repr([table, deal, seating])}")
        if not (0 <= table < len(self.seatings) and 0 <= deal < self.deals
                and 0 <= seating < len(self.seatings[table])):
            raise ValueError(f"game {(table, deal, seating)} is not in this tournament's "
                             f"schedule ({len(self.seatings)} table(s), {self.deals} deals)")
        if rec["seed"] != deal_seed(self.config.seed, deal) or not _is_int(rec["seed"]):
            raise ValueError(f"game {(table, deal, seating)} has deal seed "
                             f"{short_repr(rec['seed'])}, but this tournament deals deal "
                             f"{deal} with seed {deal_seed(self.config.seed, deal)}")
        perm = self.seatings[table][seating]
        lineup = self.config.tables[table]
        if (rec["lineup_index"] != list(perm) or not all(map(_is_int, rec["lineup_index"]))
                or rec["seats"] != [lineup[i] for i in perm]):
            raise ValueError(f"game {(table, deal, seating)} seats "
                             f"{short_repr(rec['seats'], 80)}, but this tournament seats "
                             f"{short_repr([lineup[i] for i in perm], 80)}")
        n = self.n
        if not _is_int(rec["first_dealer"]) or not 0 <= rec["first_dealer"] < n:
            raise ValueError(f"first_dealer must be a seat 0..{n - 1}, got "
                             f"{short_repr(rec['first_dealer'])}")
        if not _is_int(rec["decisions"]) or rec["decisions"] < 0:
            raise ValueError(f"decisions must be a count, got {short_repr(rec['decisions'])}")
        return table, deal, seating

    def _hands(self, rec: dict[str, Any]) -> list[int]:
        """Replay the lives through the hands; return the lives at the end."""
        n = self.n
        hands = rec["hands"]
        if not isinstance(hands, list):
            raise ValueError(f"hands must be a list, got {short_repr(hands)}")
        lives = [self.start_lives] * n
        dealer: int | None = None
        for number, hand in enumerate(hands):
            if sum(v > 0 for v in lives) <= 1 or (self.config.single_hand and number):
                raise ValueError(f"hand {number} is played after the game was over")
            try:
                after = self._hand(hand, lives)
            except ValueError as exc:
                raise ValueError(f"hand {number}: {exc}") from None
            if dealer is None:
                # The chain starts at the first hand's dealer, not at first_dealer: a 31
                # dealt in the very first deal moves the deal on before the record reads it.
                dealer = hand["dealer"]
            if hand["dealer"] != dealer:
                raise ValueError(f"hand {number} is dealt by seat {hand['dealer']}, but the deal "
                                 f"passes to seat {dealer}")
            # The deal passes left among the seats still in; a replayed hand is dealt again
            # by the same dealer if still in (scat_env.GameState._end_hand).
            if not hand["replayed"] or after[dealer] <= 0:
                dealer = next(((dealer + k) % n for k in range(1, n + 1)
                               if after[(dealer + k) % n] > 0), dealer)
            lives = after
        return lives

    def _hand(self, hand: Any, lives: list[int]) -> list[int]:
        """One hand's summary against the lives before it; return the lives after it."""
        if not isinstance(hand, dict) or sorted(hand) != sorted(HAND_FIELDS):
            raise ValueError(f"not a hand summary: {short_repr(hand)}")
        n = self.n
        dealt = [s for s in range(n) if lives[s] > 0]
        if not isinstance(hand["reason"], str) or not HAND_REASON.fullmatch(hand["reason"]):
            raise ValueError(f"unknown reason {short_repr(hand['reason'])}")
        if not _is_int(hand["dealer"]) or hand["dealer"] not in dealt:
            raise ValueError(f"dealer {short_repr(hand['dealer'])} is not a seat still in")
        if hand["knocker"] is not None and (not _is_int(hand["knocker"])
                                            or hand["knocker"] not in dealt):
            raise ValueError(f"knocker {short_repr(hand['knocker'])} is not a seat still in")
        _seats(hand["declarers"], n, "declarers", dealt)
        if not isinstance(hand["replayed"], bool):
            raise ValueError(f"replayed must be true or false, got {short_repr(hand['replayed'])}")
        values = _seat_list(hand["values"], n, "values")
        lost = _seat_list(hand["lives_lost"], n, "lives_lost")
        after = list(lives)
        for s in range(n):
            if s not in dealt:
                if values[s] is not None or lost[s] is not None:
                    raise ValueError(f"seat {s} is out but has a value or a loss")
                continue
            v = values[s]
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v < math.inf:
                raise ValueError(f"seat {s}'s value must be a number, got {short_repr(v)}")
            if not _is_int(lost[s]) or not 0 <= lost[s] <= lives[s]:
                raise ValueError(f"seat {s} loses {short_repr(lost[s])} lives with "
                                 f"{lives[s]} left")
            if hand["replayed"] and lost[s]:
                raise ValueError(f"seat {s} loses a life in a replayed hand")
            after[s] -= lost[s]
        out = [s for s in dealt if after[s] == 0]
        if _seats(hand["eliminated"], n, "eliminated") != out:
            raise ValueError(f"eliminated {short_repr(hand['eliminated'])}, but the losses "
                             f"put out {out}")
        return after

    def _outcome(self, rec: dict[str, Any], lives: list[int]) -> None:
        """Winner, truncation and lives at the end against the hands."""
        if not isinstance(rec["truncated"], bool):
            raise ValueError(f"truncated must be true or false, got {short_repr(rec['truncated'])}")
        hands = rec["hands"]
        lives_end = _seat_list(rec["lives_end"], self.n, "lives_end", optional=True)
        if not all(map(_is_int, lives_end)) or lives_end != (lives if hands else []):
            raise ValueError(f"lives_end {short_repr(lives_end)} do not match the hands' losses "
                             f"({lives if hands else []})")
        alive = [s for s in range(self.n) if lives[s] > 0]
        if self.points_race:
            winner = rec["winner"]
            ended = winner is not None or (self.config.single_hand and len(hands) == 1)
            if rec["truncated"] == ended or not (winner is None or (
                    _is_int(winner) and 0 <= winner < self.n)):
                raise ValueError(f"winner is {short_repr(winner)} and truncated is "
                                 f"{str(rec['truncated']).lower()}: a race has one or the other")
            return
        over = len(alive) <= 1 or (self.config.single_hand and len(hands) == 1)
        if rec["truncated"] == over:
            raise ValueError("truncated is " + str(rec["truncated"]).lower() + " but the game "
                             + ("is over" if over else "is not over"))
        winner = alive[0] if len(alive) == 1 else None
        if rec["winner"] != winner or not (rec["winner"] is None or _is_int(rec["winner"])):
            raise ValueError(f"winner is {short_repr(rec['winner'])}, but the lives say "
                             f"{'seat ' + str(winner) if winner is not None else 'no winner'}")


def _read_lines(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], int, int]:
    """Parse a JSONL log: ``([(line number, record), ...], good_end, size)``; ``good_end`` is
    the byte length of the complete lines (anything after it is a torn last line)."""
    data = path.read_bytes()
    records = []
    good_end = 0  # bytes up to the end of the last complete line
    lines = data.split(b"\n")
    # Every complete line ends with a newline, so the last piece is either empty or torn
    # (even if it parses: the line was cut just before its newline); that game is replayed.
    for i, line in enumerate(lines[:-1]):
        if line.strip():
            try:
                if len(line) > MAX_RECORD_BYTES:
                    raise ValueError("line too long")
                rec = json.loads(line)
                if not isinstance(rec, dict) or "table" not in rec:
                    raise ValueError("not a game record")
            except (ValueError, RecursionError):
                if i == len(lines) - 2 and not lines[-1]:
                    break  # the last line is torn inside (a crash while writing)
                raise ValueError(f"{path}:{i + 1}: corrupt game record; not resuming") from None
            records.append((i + 1, rec))
        good_end += len(line) + 1
    return records, good_end, len(data)


def _check_lines(path: Path, lines: list[tuple[int, Any]], config: TournamentConfig) -> None:
    """Every record of ``lines`` against ``config`` (:class:`RecordCheck`), and no game
    twice; ValueError ``FILE:LINE: what is wrong`` at the first that does not belong."""
    check = RecordCheck(config)
    seen: dict[tuple[int, int, int], int] = {}
    for number, rec in lines:
        try:
            key = check(rec)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}; not resuming") from None
        if key in seen:
            raise ValueError(f"{path}:{number}: game {key} again (first on line "
                             f"{seen[key]}); not resuming")
        seen[key] = number


def read_games(
    path: Path, repair: bool = False, config: TournamentConfig | None = None
) -> list[dict[str, Any]]:
    """Game records of a JSONL log. A torn last line (the run was killed mid-write) is
    ignored, and with ``repair=True`` cut off so appending continues cleanly; a bad line
    anywhere else means the file is not ours or was edited: refuse, naming the line.

    With ``config``, every record is also checked against it (:class:`RecordCheck`, and no
    game twice): a record that does not belong is refused as ``FILE:LINE: what``, before
    anything is repaired."""
    if not path.exists():
        return []
    lines, good_end, size = _read_lines(path)
    if config is not None:
        _check_lines(path, lines, config)
    if repair and good_end < size:
        cut_torn_line(path, good_end)
    return [rec for _, rec in lines]


def cut_torn_line(path: Path, size: int) -> None:
    """Cut a torn last line off the log (bytes after the last complete line)."""
    with open(path, "r+b") as f:
        f.truncate(size)



def logged_games(
    config: TournamentConfig, out: Path
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The records already in ``out`` (line number, record), each checked against
    ``config``, and the byte length of the log's complete lines; ValueError if the folder
    holds another tournament or a log not ours."""
    games_path = out / GAMES_FILE
    config_path = out / CONFIG_FILE
    if not config_path.exists():
        # Reconstructing the configuration from the records cannot prove it was this one
        # (games, rules, max_turns leave no trace in a partial log): refuse.
        raise ValueError(f"{games_path} holds games but there is no {CONFIG_FILE} beside it: "
                         "not a tournament this command can resume; use another --out "
                         "or --overwrite")
    try:
        if config_path.stat().st_size > MAX_RECORD_BYTES:  # a real one is about 1 kB
            raise ValueError("too large")
        old = json.loads(config_path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):
        raise ValueError(f"{config_path} is not a tournament config (not JSON); use another "
                         "--out or --overwrite") from None
    wanted = config.to_dict()
    if old != wanted:
        if not isinstance(old, dict):
            raise ValueError(f"{config_path} is not a tournament config; use another --out "
                             "or --overwrite")
        diff = sorted(str(k)[:40] for k in set(old) | set(wanted) if old.get(k) != wanted.get(k))
        raise ValueError(
            f"{out} holds a different tournament (differs in: {', '.join(diff[:8])}"
            f"{', ...' if len(diff) > 8 else ''}); use another --out"
        )
    lines, good_end, _ = _read_lines(games_path)
    _check_lines(games_path, lines, config)
    return lines, good_end


def verify_sample(lines: list[tuple[int, dict[str, Any]]], mode: str) -> list[tuple[int, dict]]:
    """The logged games a resume re-plays first: every one, or an unpredictable sample (a
    system random source, so whoever edits the log cannot know which records will be
    checked). ``"auto"`` starts with the sample (:func:`verify_rest` may add the rest)."""
    if mode == "all" or len(lines) <= VERIFY_MIN:
        return list(lines)
    size = max(VERIFY_MIN, math.ceil(VERIFY_FRACTION * len(lines)))
    picked = secrets.SystemRandom().sample(range(len(lines)), size)
    return [lines[i] for i in sorted(picked)]


def verify_rest(lines: list[tuple[int, dict[str, Any]]], checked: list[tuple[int, int, int]],
                 seconds: float, mode: str) -> tuple[list[tuple[int, int, int]], float | None]:
    """For ``"auto"``: the logged games the sample left out, when re-playing them is
    estimated (from ``seconds``, the sample's time) to take at most :data:`VERIFY_SECONDS`;
    else none, and that estimate."""
    left = len(lines) - len(checked)
    if mode != "auto" or left <= 0:
        return [], None
    estimate = seconds / max(1, len(checked)) * left
    if estimate > VERIFY_SECONDS:
        return [], estimate
    done = set(checked)
    return [k for k in (game_key(rec) for _, rec in lines) if k not in done], None


def _canonical(rec: dict[str, Any]) -> str:
    return json.dumps(rec, sort_keys=True, separators=(",", ":"))


def check_replayed(games_path: Path, logged: dict[tuple[int, int, int], tuple[int, dict]],
                    records: list[dict[str, Any]]) -> None:
    """Compare re-played games with their log lines; ValueError naming the first that
    differs (the log was edited, or written by other rules, agents or code)."""
    for rec in records:
        number, old = logged[game_key(rec)]
        if _canonical(rec) != _canonical(old):
            field_ = next((f for f in RECORD_FIELDS
                           if _canonical({"v": rec[f]}) != _canonical({"v": old.get(f)})), "?")
            raise ValueError(
                f"{games_path}:{number}: game {game_key(rec)} does not replay as logged "
                f"({field_}: logged {short_repr(old.get(field_))}, played "
                f"{short_repr(rec[field_])}); the log was edited or written by other agents "
                "or code; not resuming (--overwrite starts again)"
            )

