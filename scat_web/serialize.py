"""What the browser is sent: the person's table as JSON, built from their :class:`PlayerView`.

Every field of a STATE payload (``docs/WEB_API.md``) comes from ``make_view(state, you)``
and from the public facts of the game (names, agent specs, rules), never from the engine's
state: the same boundary the agents and ``scat play`` keep. The one exception is a teaching
game, which the person started to see the opponents' hands; :func:`state_payload` adds them
only when ``teaching`` is set, and the saved game says so.

Events (one per public decision, plus hand ends, deals and takeovers) are built here too,
from the decision, the phase it was taken in, the card it took from the pile and, for a
golf move, the cards that move turns face up (the card put in a slot or the slot turned
up, and the card sent to the pile): public once the move is made, and the event is only
sent after it. Texts are the play session's plain words (:mod:`scat_session.words`,
:mod:`scat_session.humanio`), the ones the terminal colours; the page lays them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scat_env import GameState, HandResult, Phase, PlayerView, Rules, card_str
from scat_env import actions as _actions
from scat_env.actions import (
    DRAW_DISCARD,
    DRAW_STOCK,
    END_PLAY,
    GOLF_SLOTS,
    KNOCK,
    PASS,
    PLACE_SLOT,
    TURN_UP,
    action_str,
)
from scat_env.cards import NUM_CARDS
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESET_NOTES
from scat_env.scoring import value_of
from scat_env.showdown import rule_text
from scat_env.variants import describe
from scat_session.humanio import menu_options
from scat_session.seating import agent_label
from scat_session.strength import strength_text
from scat_session.words import (
    action_text,
    deal_text,
    explain_result,
    game_numbers,
    game_over_text,
    golf_place_text,
    golf_turn_up_text,
    knock_text,
    pass_text,
    points_text,
    scored_text,
    standing_text,
    takeover_text,
)

#: The person's agent name in payloads (``players[].agent``).
YOU = "you"


def cards(cs: Sequence[int]) -> list[str]:
    return [card_str(c) for c in cs]


#: The action ids the page needs, by their names in :mod:`scat_env.actions`: the page reads
#: them from ``GET /api/options`` instead of keeping its own copy of the numbers.
ACTION_NAMES = ("DRAW_STOCK", "DRAW_DISCARD", "KNOCK", "END_PLAY", "HAMMER", "THROW_DOWN",
                "SUDDEN_DEATH", "DECLARE", "PASS", "PLACE_SLOT", "TURN_UP", "GOLF_SLOTS",
                "NUM_ACTIONS")


def actions_payload() -> dict[str, int]:
    """``{"DRAW_STOCK": 52, ...}``: the ids of :data:`ACTION_NAMES`, from scat_env.actions."""
    return {name: getattr(_actions, name) for name in ACTION_NAMES}


def rules_payload(rules: Rules) -> dict[str, Any]:
    """The rules in force, in the words the page shows. ``play`` says how a turn goes
    (``draw`` and discard, or ``golf``'s slots), ``scoring`` how the game is won (``lives``
    or ``points``); ``points_to_win`` is the race's goal, ``None`` in a lives game."""
    race = rules.scoring == "points"
    return {
        "name": rules.name,
        "lives_name": rules.lives_name,
        "notes": PRESET_NOTES.get(rules.name, ""),
        "start_lives": rules.start_lives,
        "calls": list(rules.calls),
        "pack": len(rules.deck_cards),
        "play": rules.play,
        "scoring": rules.scoring,
        "points_to_win": rules.points_to_win if race else None,
    }


def preset_option(name: str) -> dict[str, Any]:
    """One preset as the new-game form lists it: what it changes (:data:`PRESET_NOTES`, no
    source tags), how a turn goes and a game is won, its rules in full (``help``: the lines
    of ``scat play``'s ``?`` help, :func:`scat_env.variants.describe`), and how long a game
    usually lasts
    (``length``: a sentence, "" for an unmeasured preset; ``minutes``: the measured median
    and 10th-90th percentile, or ``None``; :mod:`scat_session.lengths`)."""
    from scat_session.lengths import game_length, length_text

    rules = Rules.preset(name)
    race = rules.scoring == "points"
    measured = game_length(name)
    return {"name": name, "notes": PRESET_NOTES.get(name, ""),
            "lives_name": rules.lives_name, "start_lives": rules.start_lives,
            "calls": list(rules.calls), "play": rules.play, "scoring": rules.scoring,
            "points_to_win": rules.points_to_win if race else None,
            "help": describe(rules),
            "length": length_text(name),
            "minutes": dict(measured["minutes"]) if measured else None,
            "min_players": MIN_PLAYERS, "max_players": MAX_PLAYERS}


def points_fields(rules: Rules, points: Sequence[int], seat: int) -> dict[str, Any]:
    """``points`` and ``points_text`` of one seat: its score in a race, ``None`` otherwise."""
    if not points:
        return {"points": None, "points_text": None}
    return {"points": points[seat], "points_text": points_text(rules, points[seat])}


def result_payload(result: HandResult, rules: Rules, names: Sequence[str]) -> dict[str, Any]:
    """A hand's end as its viewer saw it: pass ``result.seen_by(seat)`` (after a declared 31
    only the declarers' hands are in it), or the full record for a replay or a teaching
    game. Per-seat tables are keyed by the seat as a string (JSON keys are strings)."""
    lines = explain_result(result, rules, names)
    scored = scored_text(result, rules, names)
    if scored:
        lines.append(scored)
    race = bool(result.points_after)
    return {
        "hand_number": result.hand_number,
        "dealer": result.dealer,
        "reason": result.reason,
        "rule": result.rule,
        "rule_text": rule_text(result.rule, rules),
        "knocker": result.knocker,
        "declarers": list(result.declarers),
        # golf's in slot order, as the table shows them; the other games' sorted
        "hands": {str(s): cards(h if rules.play == "golf" else sorted(h))
                  for s, h in sorted(result.hands.items())},
        "values": {str(s): v for s, v in sorted(result.values.items())},
        "lives_lost": {str(s): n for s, n in sorted(result.lives_lost.items())},
        "lives_after": list(result.lives_after),
        "eliminated": list(result.eliminated),
        "replayed": result.replayed,
        # a race to points: every seat dealt in with what it scored, every seat's points
        # after the hand, and the seat the hand made the race's winner; null otherwise
        "points_won": {str(s): result.points_won.get(s, 0) for s in sorted(result.lives_lost)}
        if race else None,
        "points_after": list(result.points_after) if race else None,
        "race_winner": result.race_winner if race else None,
        "text": " ".join(lines),
    }


def slots_payload(slots: Sequence[int | None]) -> list[str | None]:
    """Golf's slots as the page gets them: a card string, or ``None`` for a face-down card."""
    return [card_str(c) if c is not None else None for c in slots]


def legal_payload(view: PlayerView) -> list[dict[str, Any]]:
    """The person's legal moves, in the terminal menu's order and words; a discard also
    says what the hand is worth after it (``value``)."""
    out = []
    for opt in menu_options(view):
        item: dict[str, Any] = {"action": opt.action, "label": opt.label,
                                "key": opt.key.lower()}
        if opt.action < NUM_CARDS:
            item["value"] = value_of([c for c in view.hand if c != opt.action], view.rules)
        out.append(item)
    return out


def action_label(view: PlayerView, action: int) -> str:
    """The menu's words for ``action`` in ``view`` (its plain name if not on the menu)."""
    for opt in menu_options(view):
        if opt.action == action:
            return opt.label
    return action_str(action, symbols=True)


def state_payload(  # the STATE schema is one flat record; each line is one field of it
    view: PlayerView,
    *,
    game_id: str,
    seq: int,
    names: Sequence[str],
    specs: Sequence[str],
    events: list[dict[str, Any]],
    teaching: bool,
    hands: Sequence[Sequence[int]] | None = None,
    full_result: HandResult | None = None,
    winner: int | None = None,
    summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The STATE the person's browser gets (``docs/WEB_API.md``).

    ``hands`` (every seat's cards) and ``full_result`` are read only in a teaching game;
    ``winner`` and ``summary`` are public once the game is over.
    """
    rules = view.rules
    you = view.seat
    over = view.phase == Phase.GAME_OVER
    golf = rules.play == "golf"
    if golf:  # the hand holds the face-up slots and the card held: only full slots count
        mine = view.slots[you] if view.slots else ()
        up = [c for c in mine if c is not None]
        hand_value = value_of(up, rules) if len(up) == GOLF_SLOTS else None
    else:
        hand_value = value_of(list(view.hand), rules) if len(view.hand) == 3 else None
    players = []
    for s in range(view.num_players):
        entry: dict[str, Any] = {
            "seat": s,
            "name": names[s],
            "agent": YOU if s == you else specs[s],
            "label": "" if s == you else agent_label(specs[s]),
            # the model card's figure for this seat's policy at this table, if measured
            "strength": None if s == you else strength_text(specs[s], view.num_players, rules),
            "lives": view.lives[s],
            "lives_text": standing_text(rules, view.lives[s]),
            "out": not view.active[s],
            "known": cards(view.known_cards[s]),
            "held": view.cards_held(s),
            # golf: the three slots in order as the view shows them, a face-down card
            # (unseen by everyone, its owner included) as null; [] in other games
            "slots": slots_payload(view.slots[s]) if view.slots else [],
            **points_fields(rules, view.points, s),
        }
        if teaching and hands is not None and s != you:
            # golf: the slots in their order (the seat holds no fourth card between turns)
            entry["hand"] = cards(hands[s][:GOLF_SLOTS] if golf else sorted(hands[s]))
        players.append(entry)
    last = view.last_result
    if teaching and full_result is not None:
        last = full_result
    return {
        "id": game_id,
        "seq": seq,
        "status": "over" if over else "playing",
        "teaching": teaching,
        "rules": rules_payload(rules),
        "you": you,
        "to_move": None if over else view.current_player,
        "phase": str(view.phase),
        "dealer": view.dealer,
        "knocker": view.knocker,
        "hand_number": view.hand_number,
        "turn": view.turn,
        "stock": view.stock_size,
        "top_discard": card_str(view.top_discard) if view.top_discard is not None else None,
        "discard_pile": cards(view.discard_pile),
        "hand": cards(view.hand),
        "hand_value": hand_value,
        "drawn": card_str(view.drawn_card) if view.drawn_card is not None else None,
        "taken": card_str(view.taken_card) if view.taken_card is not None else None,
        "legal": legal_payload(view),
        "players": players,
        "events": events,
        "result": result_payload(last, rules, names) if last is not None else None,
        "winner": [winner] if over and winner is not None else None,
        "summary": summary if over else None,
    }


# -- events -------------------------------------------------------------------------------
def move_event(seat: int, action: int, *, you: int, names: Sequence[str], rules: Rules,
               phase: Phase, top_before: int | None, second_knock: bool,
               hand_number: int, golf_cards: Sequence[int] = ()) -> dict[str, Any] | None:
    """The public event of one decision, or ``None`` when nobody else sees it (an
    opponent keeping a new 31 quiet: even that a decision was asked tells it holds 31).

    ``golf_cards``: for a golf placement, the mover's three slots in order and the card it
    held, as they were before the move (:func:`golf_event` names the two the move turns
    face up)."""
    if phase is Phase.DECLARE and action == PASS and seat != you:
        return None
    if PLACE_SLOT <= action < TURN_UP + GOLF_SLOTS:
        return golf_event(seat, action, names=names, golf_cards=golf_cards,
                          hand_number=hand_number)
    mine = seat == you
    card: int | None = None
    if action == DRAW_STOCK:
        kind = "draw_stock"
        text = "You drew from the stock." if mine else action_text(
            seat, action, names, top_before) + "."
    elif action == DRAW_DISCARD:
        kind, card = "draw_discard", top_before
        text = action_text(seat, action, names, top_before) + "."
    elif action == KNOCK:
        kind = "knock"
        text = knock_text(names[seat], rules, second=second_knock, mine=mine)
    elif action < NUM_CARDS:
        kind, card = "discard", action
        text = action_text(seat, action, names, top_before) + "."
    elif action == PASS:
        kind = "call"
        text = pass_text(names[seat], phase)
    else:
        kind = "end_play" if action == END_PLAY else "call"
        text = action_text(seat, action, names, top_before) + "."
    return {"kind": kind, "seat": seat, "action": action, "card": card_str(card)
            if card is not None else None, "hand_number": hand_number, "text": text}


def golf_event(seat: int, action: int, *, names: Sequence[str], golf_cards: Sequence[int],
               hand_number: int) -> dict[str, Any]:
    """A golf placement. Both cards it names are face up once it is made, for everyone
    (002, RULES.md (w)): ``place`` puts the card held face up in face-down slot ``slot``
    (``card``) and sends the card that lay there, never seen before, face up onto the pile
    (``discarded``); ``turn_up`` discards the card drawn (``discarded``) and turns slot
    ``slot`` face up (``card``). The words are the terminal's log ("put the 7♣ in a slot",
    "discarded the 8♥", "turned up the K♠"), with the slot numbered from 1 as its menu
    numbers them."""
    if len(golf_cards) != GOLF_SLOTS + 1:
        raise ValueError(f"a golf move needs the mover's {GOLF_SLOTS} slots and the card "
                         f"held, got {len(golf_cards)} cards")
    held = golf_cards[GOLF_SLOTS]
    who = names[seat]
    if action < TURN_UP:
        slot = action - PLACE_SLOT
        kind, card, discarded = "place", held, golf_cards[slot]
        text = golf_place_text(who, slot, card, discarded)
    else:
        slot = action - TURN_UP
        kind, card, discarded = "turn_up", golf_cards[slot], held
        text = golf_turn_up_text(who, slot, card, discarded)
    return {"kind": kind, "seat": seat, "action": action, "card": card_str(card),
            "slot": slot, "discarded": card_str(discarded), "hand_number": hand_number,
            "text": text}


def hand_over_event(result: HandResult, rules: Rules, names: Sequence[str]) -> dict[str, Any]:
    """A hand's end; ``result`` as the person saw it (or in full in a teaching game)."""
    payload = result_payload(result, rules, names)
    return {"kind": "hand_over", "seat": None, "action": None, "card": None,
            "hand_number": result.hand_number, "text": payload["text"], "result": payload}


def deal_event(hand_number: int, dealer: int, names: Sequence[str]) -> dict[str, Any]:
    return {"kind": "deal", "seat": dealer, "action": None, "card": None,
            "hand_number": hand_number, "text": deal_text(names, hand_number, dealer) + "."}


def game_over_event(winner: int | None, you: int, names: Sequence[str],
                    hand_number: int) -> dict[str, Any]:
    return {"kind": "game_over", "seat": winner, "action": None, "card": None,
            "hand_number": hand_number, "text": game_over_text(winner, you, names)}


def takeover_event(seat: int, names: Sequence[str], label: str, spec: str, what: str,
                   hand_number: int) -> dict[str, Any]:
    """One line naming the seat and its new agent, never the move that broke (it would
    name a card of that seat's hand: :func:`scat_session.words.takeover_text`)."""
    return {"kind": "takeover", "seat": seat, "action": None, "card": None,
            "hand_number": hand_number, "text": takeover_text(names[seat], label, spec, what)}


def summary_payload(results: Sequence[HandResult], you: int, num_players: int,
                    winner: int | None, knocks: Sequence[int]) -> dict[str, Any]:
    """The end-of-game numbers the terminal's summary shows too (:func:`game_numbers`)."""
    g = game_numbers(results, you, num_players, winner, knocks)
    return {
        "hands": g.hands,
        "thirty_ones": g.thirty_ones,
        "knocks": g.knocks,
        "your_knocks": g.your_knocks,
        "your_lives_lost": g.lives_lost,
        "your_hands_lost": g.hands_lost,
        "your_31s": g.your_31s,
        "your_points": g.points,
        "place": g.places[you],
        # every seat's place, by seat: the standings are listed in this order
        "places": g.places,
        "winner": winner,
    }


# -- replays (every hand face up) -------------------------------------------------------------
def full_state(state: GameState, names: Sequence[str]) -> dict[str, Any]:
    """The whole table with every hand face up: replays of finished games, and teaching
    games. Never sent for a game in progress otherwise."""
    rules = state.rules
    over = state.is_terminal()
    golf = rules.play == "golf"
    race = rules.scoring == "points"
    players = []
    for s in range(state.num_players):
        hand = sorted(state.hands[s]) if state.active[s] or over else []
        # golf: the slots in order, every card shown (the replay is face up), and which
        # of them the table saw face up at this step
        slots = list(state.hands[s][:GOLF_SLOTS]) if golf and hand else []
        counted = slots if golf else hand
        players.append({
            "seat": s,
            "lives": state.lives[s],
            "lives_text": standing_text(rules, state.lives[s]),
            "out": not state.active[s],
            "hand": cards(hand),
            "value": value_of(counted, rules) if len(counted) == 3 else None,
            "slots": cards(slots),
            "face_up": [bool(state.face_up[s] >> i & 1) for i in range(GOLF_SLOTS)]
            if slots else [],
            **points_fields(rules, state.points if race else (), s),
        })
    return {
        "phase": str(state.phase),
        "to_move": None if over else state.current_player,
        "dealer": state.dealer,
        "knocker": state.knocker,
        "hand_number": state.hand_number,
        "turn": state.turn,
        "stock": len(state.stock),
        "top_discard": card_str(state.discard[-1]) if state.discard else None,
        "discard_pile": cards(state.discard),
        "drawn": card_str(state.drawn) if state.drawn is not None else None,
        "players": players,
    }
