"""The browser learns nothing the person's seat has not seen: whole games, every payload.

Two checks on each game, over several presets and table sizes.

**Now.** After every answer the server gives, the game's state is replaced by one where
every card the person has not seen yet (the opponents' cards not taken from the pile, the
stock in any order, the person's own cards before looking in a throw-down, and in golf
every face-down card, the person's own included: nobody has seen those) is dealt
differently and the generator is reseeded; the person's view is the same, and so must be
the STATE and the hint the server builds from it. This catches a payload that reads an
opponent's hand, the stock, a face-down slot or the seed even when those cards are shown
later.

**The whole game.** A game is played through the HTTP API (opponents real agents, the person a fixed rule that
reads only the payloads), then played again with every card the person never saw moved to
another hidden place: the opponents' unseen cards and the stock's order, hand by hand. The
second game is dealt from those decks and its opponents replay the first game's decisions,
so everything the person saw is the same; every payload the server sends (the new game,
each move's answer, each reload, each hint) must then be byte for byte the same too. A
server that let an opponent's card, the stock's order, the seed or a count of hidden
decisions into any payload would differ.

**Each move.** The whole-game check cannot move a card that is shown later (in golf every
card of a hand ends face up), so an event naming a card before it is public would pass it.
So the game is played again on the engine, and before each decision every card the person
has not seen by the end of that decision (in this hand) is dealt anew among its places;
the events the server builds for that decision must be the same. An event naming a
face-down slot, a stock draw or an opponent's hidden card differs.

Only swaps that leave the game the same for the person are used (checked on the engine
first: the same decisions stay legal and the person's :class:`~scat_env.PlayerView` is
equal at every step), and the test checks that most hands (and most decisions) really
were changed.
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from agents.base import Agent  # noqa: E402
from scat_env import GameState, PlayerView, Rules, make_view  # noqa: E402
from scat_env.actions import GOLF_SLOTS, PLACE_SLOT, TURN_UP  # noqa: E402
from scat_env.rules import PRESETS  # noqa: E402
from scat_web.app import create_app  # noqa: E402
from scat_web.games import GameStore, WebSave, _Before  # noqa: E402

HUMAN = 0

#: (rules, players, opponent spec, seed): the standard game at several table sizes, with the
#: trained set (hints then carry its ranking), presets with calls, golf (face-down slots,
#: the person's own among them) and a race to points.
CASES = [
    ("golf", 3, "expert", 21),
    ("golf", 2, "random", 22),
    ("french_canadian", 3, "greedy", 23),
    ("standard", 3, "compact:scat_batch_set", 11),
    ("standard", 2, "expert", 12),
    ("standard", 6, "greedy", 13),
    ("hammer", 3, "expert", 14),
    ("throw_down", 4, "expert", 15),
    ("undeclared_31", 3, "expert", 16),
    ("moyer", 3, "greedy", 17),
    ("throw_down_any", 2, "random", 18),
]


class _Recording(random.Random):
    """The engine's generator, noting every shuffled deck (a subclass is asked to shuffle
    itself, with the same permutation as the engine's inline loop)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.decks: list[list[int]] = []

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        super().shuffle(x)
        self.decks.append(list(x))


class _Stacked(random.Random):
    """Deals the given decks, in order."""

    def __init__(self, decks: list[list[int]]) -> None:
        super().__init__(0)
        self.queue = [list(d) for d in decks]

    def shuffle(self, x: list[int]) -> None:  # type: ignore[override]
        x[:] = self.queue.pop(0)


class _Scripted(Agent):
    """Plays one seat's recorded decisions, in order, whatever it is shown."""

    def __init__(self, moves: list[int]) -> None:
        super().__init__(0)
        self.moves = iter(moves)

    def act(self, view: PlayerView) -> int:
        return next(self.moves)


def _walk(json_value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(json_value, dict):
        for k, v in json_value.items():
            yield k, v
            yield from _walk(v)
    elif isinstance(json_value, list):
        for v in json_value:
            yield from _walk(v)


def _seen_by(state: GameState, you: int, seat: int, card: int) -> bool:
    """Whether ``you`` has seen ``card`` where it lies now, in ``seat``'s hand: a card
    taken from the pile or lying face up (``known``), the person's own hand once looked at;
    in golf, of the person's own cards only the face-up slots and the card held this turn
    (the face-down slots are unseen by their owner too)."""
    if state.known[seat] >> card & 1:
        return True
    if seat != you:
        return False
    if state.rules.play == "golf":
        return state.current_player == you and card == state.drawn
    return state.looked[seat]


def _swapped(state: GameState, you: int, rng: random.Random) -> tuple[GameState, int]:
    """``state`` with every card ``you`` has not seen dealt anew among the same places,
    and another generator (the seed deals every later hand); also how many of ``you``'s
    own places took another card."""
    new = state.clone()
    places: list[tuple[list[int], int]] = []
    for seat in range(new.num_players):
        hand = new.hands[seat]
        for i, card in enumerate(hand):
            if not _seen_by(new, you, seat, card):
                places.append((hand, i))
    places += [(new.stock, i) for i in range(len(new.stock))]
    cards = [where[i] for where, i in places]
    rng.shuffle(cards)
    for (where, i), card in zip(places, cards, strict=True):
        where[i] = card
    new.rng = random.Random(rng.random())
    own = sum(a != b for a, b in zip(state.hands[you], new.hands[you], strict=True))
    return new, own


def _same_now(store: GameStore, game_id: str, rng: random.Random) -> tuple[int, int]:
    """STATE and hint built from a state whose unseen cards were dealt anew are the same;
    returns how many cards moved, and how many of them in the person's own hand."""
    live = store.get(game_id)
    with live.lock:
        real = live.state
        other, own = _swapped(real, HUMAN, rng)
        assert make_view(other, HUMAN) == make_view(real, HUMAN)
        turn = not real.is_terminal() and real.current_player == HUMAN
        payloads = []
        for state in (real, other):
            live.state = state
            try:
                payloads.append(json.dumps([store.state_of(live),
                                            store.hint(live) if turn else None]))
            finally:
                live.state = real
    assert payloads[0] == payloads[1]
    hidden = [c for s in range(real.num_players) for c in real.hands[s]] + real.stock
    return sum(a != b for a, b in zip(
        hidden, [c for s in range(other.num_players) for c in other.hands[s]] + other.stock,
        strict=True)), own


def _play(client: TestClient, rules: str, players: int, spec: str, seed: int,
          store: GameStore | None = None) -> tuple[str, list[str], tuple[int, int]]:
    """One game through the API; the person plays the hint's move or a random legal one,
    decided from the payloads alone. Returns the game id, every payload (the id removed: a
    random handle, not a card) and, with ``store``, how many cards :func:`_same_now` moved
    in all and in the person's own hand."""
    rng = random.Random(seed)
    sent: list[str] = []
    swaps, cards_moved = random.Random(-seed), [0, 0]

    def note(response: Any, game_id: str) -> dict[str, Any]:
        assert response.status_code in (200, 201), response.text
        if store is not None:
            moved, own = _same_now(store, game_id, swaps)
            cards_moved[0] += moved
            cards_moved[1] += own
        body = response.json()
        state = body.get("game", body)
        if state.get("status", "playing") == "playing":
            keys = {k for k, _ in _walk(body)}
            assert not keys & {"seed", "stock_order", "deck"}, keys
        sent.append(response.text.replace(game_id, "<id>"))
        return body

    created = client.post("/api/games", json={"players": players, "opponents": spec,
                                              "rules": rules})
    game_id = created.json()["game"]["id"]
    game = note(created, game_id)["game"]
    while game["status"] == "playing":
        hint = note(client.get(f"/api/games/{game_id}/hint"), game_id)
        if rng.random() < 0.7:
            action = hint["action"]
        else:
            action = rng.choice(game["legal"])["action"]
        if rng.random() < 0.1:
            note(client.get(f"/api/games/{game_id}"), game_id)
        moved = client.post(f"/api/games/{game_id}/move",
                            json={"action": action, "seq": game["seq"]})
        game = note(moved, game_id)["game"]
    note(client.get(f"/api/games/{game_id}"), game_id)
    return game_id, sent, (cards_moved[0], cards_moved[1])


def _views(state: GameState, actions: list[tuple[int, int]],
           discards: dict[int, set[int]] | None = None) -> Iterator[PlayerView]:
    """The person's view before the first decision and after each one; ``discards`` gets
    each hand's discarded cards (the one that makes a 31 ends the hand at once, so no
    view shows it on the pile, but everyone saw it discarded; likewise the card golf's
    last placement sends face up onto the pile, and the card it puts face up)."""
    yield make_view(state, HUMAN)
    for seat, action in actions:
        if discards is not None and action < 52:
            discards.setdefault(state.hand_number, set()).add(action)
        if discards is not None and PLACE_SLOT <= action < TURN_UP + GOLF_SLOTS:
            slot = (action - PLACE_SLOT) % GOLF_SLOTS  # the slot's card and the card held
            discards.setdefault(state.hand_number, set()).update(
                (state.hands[seat][slot], state.hands[seat][GOLF_SLOTS]))
        state.apply_action(action)
        yield make_view(state, HUMAN)


def _seen(view: PlayerView, hand: int, seen: dict[int, set[int]]) -> None:
    here = seen.setdefault(hand, set())
    here.update(view.hand, view.discard_pile)
    if view.drawn_card is not None:
        here.add(view.drawn_card)
    for cards in view.known_cards:
        here.update(cards)
    if view.last_result is not None:
        for cards in view.last_result.hands.values():
            seen.setdefault(view.last_result.hand_number, set()).update(cards)


def _same_for_the_person(n: int, rules: Rules, dealer: int, decks: list[list[int]],
                         actions: list[tuple[int, int]], reference: list[PlayerView]) -> bool:
    state = GameState(n, rules, rng=_Stacked(decks), dealer=dealer)
    try:
        for i, view in enumerate(_views(state, actions)):
            if view != reference[i]:
                return False
    except (ValueError, IndexError):  # a decision no longer legal, or a deal not planned
        return False
    return True


def _hidden_swaps(save: WebSave, rng: random.Random) -> tuple[list[list[int]], int, int]:
    """The game's decks with the person's never-seen cards of each hand moved among their
    places, keeping only swaps that change nothing the person sees. Returns the decks, the
    hands changed, and the hands that had two or more cards to swap."""
    n, rules, actions = save.num_players, save.rules, save.actions
    recording = _Recording(save.seed)
    state = GameState(n, rules, rng=recording)  # draws the first dealer, as the seed did
    assert state.dealer == save.first_dealer
    seen: dict[int, set[int]] = {}
    reference = []
    for view in _views(state, actions, seen):
        _seen(view, view.hand_number, seen)
        reference.append(view)
    decks = recording.decks
    swapped = candidates = 0
    for k, deck in enumerate(decks):
        places = [i for i, c in enumerate(deck) if c not in seen.get(k + 1, set())]
        if len(places) < 2:
            continue
        candidates += 1
        for _ in range(12):
            cards = [deck[i] for i in places]
            rng.shuffle(cards)
            if cards == [deck[i] for i in places]:
                continue
            trial = list(deck)
            for i, c in zip(places, cards, strict=True):
                trial[i] = c
            tried = decks[:k] + [trial] + decks[k + 1:]
            if _same_for_the_person(n, rules, save.first_dealer, tried, actions, reference):
                decks = tried
                swapped += 1
                break
    return decks, swapped, candidates


def _same_events(store: GameStore, game_id: str, rng: random.Random) -> tuple[int, int]:
    """Each decision of the finished game ``game_id`` makes the same events whatever the
    cards the person has not seen by the end of it are (module docstring, "Each move").
    Returns the decisions checked with a card moved, and all decisions."""
    live = store.get(game_id)
    state = live.save.new_state()
    seen: dict[int, set[int]] = {}
    _seen(make_view(state, HUMAN), state.hand_number, seen)
    checked = 0
    for seat, action in live.save.actions:
        after = state.clone()
        public: dict[int, set[int]] = {}
        for view in _views(after, [(seat, action)], public):
            _seen(view, view.hand_number, seen)
        for hand, cards in public.items():
            seen.setdefault(hand, set()).update(cards)
        known = seen.get(state.hand_number, set())
        places = [(s, i) for s in range(state.num_players)
                  for i, c in enumerate(state.hands[s]) if c not in known]
        places += [(-1, i) for i, c in enumerate(state.stock) if c not in known]
        real: list[dict[str, Any]] = []
        store._events_of(live, after, seat, action, _Before.of(state), real)
        for _ in range(12):
            other = state.clone()
            where = [other.stock if s < 0 else other.hands[s] for s, _ in places]
            cards = [w[i] for w, (_, i) in zip(where, places, strict=True)]
            rng.shuffle(cards)
            if len(places) < 2 or cards == [w[i] for w, (_, i) in zip(where, places,
                                                                       strict=True)]:
                continue
            for w, (_, i), card in zip(where, places, cards, strict=True):
                w[i] = card
            before = _Before.of(other)
            try:
                other.apply_action(action)
            except ValueError:  # the decision depends on a swapped card: try another deal
                continue
            if make_view(other, HUMAN) != make_view(after, HUMAN):
                continue  # the person would see the change (a 31 made, say)
            events: list[dict[str, Any]] = []
            store._events_of(live, other, seat, action, before, events)
            assert json.dumps(events) == json.dumps(real), (seat, action, real, events)
            checked += 1
            break
        state = after
    return checked, len(live.save.actions)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.mark.parametrize(("rules", "players", "spec", "seed"), CASES)
def test_every_payload_is_the_same_whatever_the_unseen_cards_are(
        home: Path, monkeypatch: pytest.MonkeyPatch, rules: str, players: int, spec: str,
        seed: int) -> None:
    if PRESETS[rules].get("scoring") == "points":  # a shorter race: the same payloads, sooner
        monkeypatch.setitem(PRESETS, rules, {**PRESETS[rules], "points_to_win": 9})
    first = GameStore(home / "a", seed_source=lambda: seed)
    app = create_app(home / "a", store=first, token=None)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        game_id, sent, (moved, own) = _play(client, rules, players, spec, seed, store=first)
    assert moved > 0
    if rules == "golf":  # the person's own face-down cards were among those moved
        assert own > 0
    checked, decisions = _same_events(first, game_id, random.Random(seed))
    assert checked >= 0.5 * decisions, (checked, decisions)
    save = first.get(game_id).save
    decks, swapped, candidates = _hidden_swaps(save, random.Random(seed))
    assert candidates and swapped >= 0.5 * candidates, (swapped, candidates)

    moves: dict[int, list[int]] = {}
    for s, a in save.actions:
        moves.setdefault(s, []).append(a)
    dealer = save.first_dealer
    monkeypatch.setattr(WebSave, "new_state", lambda self: GameState(
        self.num_players, self.rules, rng=_Stacked(decks), dealer=dealer))
    second = GameStore(home / "b", seed_source=lambda: seed + 1,
                       agent_factory=lambda spec, s: _Scripted(moves[s % 1000]))
    app = create_app(home / "b", store=second, token=None)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        other_id, again, _ = _play(client, rules, players, spec, seed)
    assert second.get(other_id).save.actions == save.actions  # the same game was played
    for i, (a, b) in enumerate(zip(sent, again, strict=True)):
        if a != b:
            da, db = json.loads(a), json.loads(b)
            diff = sorted(k for k in set(da.get("game", da)) | set(db.get("game", db))
                          if da.get("game", da).get(k) != db.get("game", db).get(k))
            raise AssertionError(f"payload {i} differs in {diff}")
    assert len(sent) == len(again)
