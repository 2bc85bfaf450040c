"""What the rules and env tests share: stacked decks and readable turns.

A scenario is written the way a person would describe it at the table: "seat 0 holds KH 8H
5H, the upcard is 2C, the stock starts with 9S", and :func:`stack` turns that into the
52-card deck (top first) the engine deals from. Cards are dealt one at a time starting
left of the dealer (002 "Deal"), so :func:`stack` interleaves the hands the same way; every
card not named is appended in id order (2C, 3C, ... ) so the deck is always complete.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, settings

from scat_env import GameState, Phase, Rules, cards_str, parse_card, parse_cards
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, END_PLAY, KNOCK

# Hypothesis' own clocks (a 200 ms deadline per example, a health check on slow generation)
# fail on a busy machine and check nothing this suite promises; a hang is caught by the
# generous limits of tests/hang_limits.py instead.
settings.register_profile("scat", deadline=None, suppress_health_check=[HealthCheck.too_slow])
# CI runs the same examples every time (a landing must not depend on luck); locally the
# random simulations keep exploring new seeds, which is how they find bugs.
settings.register_profile("ci", parent=settings.get_profile("scat"), derandomize=True,
                          print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "scat")

MOVES = {"stock": DRAW_STOCK, "take": DRAW_DISCARD, "knock": KNOCK, "end": END_PLAY}

# One thread each when pytest-xdist runs several workers: the workers already fill the cores,
# and a numba ``prange`` kernel or a torch op that waits at a barrier for a thread the other
# worker has descheduled runs many times slower (a 4 s test took 17 s beside another worker).
# Set before numba or torch is imported. The batched engine's results do not depend on its
# thread count, which ``tests/test_batch_engine.py`` checks in a process with two threads.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                 "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ROOT_BEFORE: set[str] = set()


def pytest_sessionstart(session: pytest.Session) -> None:
    _ROOT_BEFORE.update(os.listdir(_ROOT))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A test that writes into the checkout (a relative path, a default output folder) fails
    the run: the product folders hold only what is committed. Caches (dot folders) and the
    editable install's metadata are left alone."""
    new = sorted(name for name in set(os.listdir(_ROOT)) - _ROOT_BEFORE
                 if not name.startswith(".") and not name.endswith(".egg-info"))
    if new:
        print(f"\ntests left files in the checkout: {new}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config: pytest.Config) -> None:
    """Every test, and every process a test starts, keeps the game's files (the save key,
    the ledger, replays) in a temporary folder, never in the real home."""
    import tempfile

    home = tempfile.mkdtemp(prefix="scat-test-home-")
    os.environ.setdefault("SCAT_HOME", home)
    os.environ.setdefault("SCAT_REPLAY_DIR", os.path.join(home, "replays"))


def deal_order(num_players: int, dealer: int, active: Sequence[bool] | None = None) -> list[int]:
    """Seats in the order they receive cards: the dealer's left first, clockwise."""
    active = list(active) if active is not None else [True] * num_players
    seats = []
    s = dealer
    for _ in range(sum(active)):
        s = (s + 1) % num_players
        while not active[s]:
            s = (s + 1) % num_players
        seats.append(s)
    return seats


def stack(
    hands: Sequence[str | Sequence[str] | None],
    upcard: str,
    stock: str | Sequence[str] = (),
    dealer: int | None = None,
    pack: Sequence[int] = range(52),
) -> list[int]:
    """A full deck (top first) that deals ``hands[seat]`` to each seat still in.

    ``hands[seat] is None`` marks a seat that is out of the game (it gets no cards).
    ``dealer`` defaults to the last seat, so seat 0 receives the first card and moves first.
    ``pack``: the cards of the game's pack (``rules.deck_cards``; the Italian pack has 40).
    """
    n = len(hands)
    dealer = n - 1 if dealer is None else dealer
    parsed = [None if h is None else parse_cards(h) for h in hands]
    for seat, cards in enumerate(parsed):
        if cards is not None and len(cards) != 3:
            raise ValueError(f"seat {seat} needs exactly 3 cards, got {hands[seat]!r}")
    order = deal_order(n, dealer, [h is not None for h in parsed])
    top: list[int] = []
    for r in range(3):
        for s in order:
            top.append(parsed[s][r])  # type: ignore[index]
    top.append(parse_card(upcard))
    top.extend(parse_cards(stock) if isinstance(stock, str) else [parse_card(c) for c in stock])
    if len(set(top)) != len(top):
        raise ValueError(f"a card is named twice in the scenario: {cards_str(top)}")
    return top + [c for c in pack if c not in set(top)]


def game(
    hands: Sequence[str | None],
    upcard: str,
    stock: str | Sequence[str] = (),
    *,
    dealer: int | None = None,
    rules: Rules | str | None = None,
    lives: Sequence[int] | None = None,
    single_hand: bool = False,
) -> GameState:
    """A game whose first (or, with ``lives``, current) hand is dealt from a stacked deck.

    With ``lives``, the table is mid-game: seats with 0 lives are out (give them ``None`` as
    hand) and the stacked hand is dealt among the others. The engine has no public way to
    start from a mid-game standing, so this sets ``lives``/``active`` and re-deals through
    the engine's own ``_deal`` (the same code path every later hand uses).
    """
    n = len(hands)
    dealer = n - 1 if dealer is None else dealer
    if isinstance(rules, str):
        rules = Rules.preset(rules)
    deck = stack(hands, upcard, stock, dealer, (rules or Rules()).deck_cards)
    if lives is None:
        # Seeded: the hands after the stacked one are shuffled by the state's own rng, and
        # an unseeded rng made scenarios flaky (a dealt 31 in the NEXT hand is scored in the
        # same step and became the 'last' result about once in a hundred runs).
        return GameState(n, rules, seed=0, deck=deck, dealer=dealer, single_hand=single_hand)
    state = GameState(n, rules, seed=0, dealer=dealer, single_hand=single_hand)
    state.lives = list(lives)
    state.active = [x > 0 for x in lives]
    state.results = []
    state.hand_number = 0
    state.dealer = dealer
    state.phase = Phase.DRAW
    state._deal(deck)
    return state


def move(state: GameState, seat: int, *actions: str) -> None:
    """Play a turn of ``seat``: e.g. ``move(st, 1, "stock", "KH")`` or ``move(st, 2, "knock")``.

    Each action is ``stock``, ``take``, ``knock``, ``end`` or a card to discard. Asserting
    the seat keeps scenarios honest about whose turn the rules say it is.
    """
    for a in actions:
        assert state.current_player == seat, (
            f"expected seat {seat} to move, but it is seat {state.current_player}"
        )
        state.apply_action(MOVES[a] if a in MOVES else parse_card(a))


def keep(state: GameState, seat: int) -> int:
    """``seat`` draws from the stock and throws the drawn card back: its hand is unchanged
    (002 "Play": a card drawn from the stock may be discarded at once). Returns the card."""
    move(state, seat, "stock")
    card = state.drawn
    state.apply_action(card)
    return card


def exhaust_stock(state: GameState, leave: int = 0) -> None:
    """Everyone draws from the stock and throws the drawn card back until the stock is
    empty (or ``leave`` cards are left). Throwing back the drawn card leaves every hand as dealt
    (002 "Play": allowed)."""
    while len(state.stock) > leave:
        state.apply_action(DRAW_STOCK)
        state.apply_action(state.drawn)


def knock_game(hands: Sequence[str | None], knocker: int = 0, upcard: str = "2D", **kw) -> GameState:
    """Seat ``knocker`` knocks at its first turn; everyone else keeps its hand until the
    hand is scored."""
    st = game(hands, upcard, **kw)
    while not st.results:
        seat = st.current_player
        if seat == knocker and st.knocker is None:
            move(st, seat, "knock")
        else:
            keep(st, seat)
    return st


def last(state: GameState):
    """The most recent hand result."""
    assert state.results, "no hand has been scored yet"
    return state.results[-1]


@pytest.fixture
def standard() -> Rules:
    return Rules()


def random_midgame(n: int, seed: int, rng: random.Random, lo: int, hi: int) -> GameState | None:
    """A fresh ``n``-player game (deal ``seed``) after ``rng.randrange(lo, hi)`` random legal
    moves drawn from ``rng``; None if the game ended on the way."""
    state = GameState(n, Rules(), seed=seed)
    for _ in range(rng.randrange(lo, hi)):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return None if state.is_terminal() else state


def hidden_variant(state: GameState, rng: random.Random) -> GameState:
    """Same public picture, different hidden cards: swap an opponent's unknown card with a
    stock card, then reshuffle the stock."""
    other = state.clone()
    seat = other.current_player
    opps = [s for s in range(other.num_players) if s != seat and other.active[s]]
    rng.shuffle(opps)
    for o in opps:
        unknown = [c for c in other.hands[o] if not other.known[o] >> c & 1]
        if unknown and other.stock:
            c = rng.choice(unknown)
            i = rng.randrange(len(other.stock))
            hand = other.hands[o]
            hand[hand.index(c)], other.stock[i] = other.stock[i], c
            break
    rng.shuffle(other.stock)
    return other


@pytest.fixture(scope="session")
def fuzz_saves(tmp_path_factory):
    """Saves written by ``scat play`` once per run, shared by the fuzz tests
    (``tests/fuzz_inputs.py``: ``make_saves``; their key is in the folder's ``home``)."""
    from fuzz_inputs import make_saves

    return make_saves(tmp_path_factory.mktemp("fuzz_saves"))


def pytest_terminal_summary(terminalreporter) -> None:
    """How many inputs each fuzzed reader was given (tests/fuzz_inputs.py), when any was."""
    import sys

    fuzz = sys.modules.get("fuzz_inputs")
    if fuzz is None or not fuzz.TRIED:
        return
    terminalreporter.section("fuzz: inputs tried per reader (accepted)")
    for what, count in sorted(fuzz.TRIED.items()):
        terminalreporter.write_line(f"{what}: {count} ({fuzz.ACCEPTED[what]} accepted)")
