"""The terminal's words: the ``?`` help says the rules being played and fits 80x24, every
complaint about a typed line fits one 80-column row, and opponents are named in plain words
by both front ends."""

from __future__ import annotations

import random

import pytest
from rich.console import Console

from scat_cli.tui import help_view, seats_by_spec
from scat_env import GameState, Rules, make_view
from scat_env.rules import PRESETS
from scat_session.humanio import InputError, parse_command
from scat_session.seating import agent_label

#: Every option turned on at once that validation allows: the tallest help a rules file
#: can ask for.
KITCHEN_SINK = Rules(
    deck="italian", pennies=5, county=False, lives_name="bus", extra_stops=2,
    knocker_tie="all", knocker_loss_on_31=2, three_of_a_kind=30, three_aces=33,
    straight_flush=True, min_knock=17, knock_needs_flush=True, knock_when_stock_exhausted=True,
    all_out="last_life", first_turn_knock=False, knock_then_draw=True, second_knock=True,
    hammer=True, throw_down="any", sudden_death=True, poker_tiebreak=True,
)


def _rows(renderable, width: int = 80) -> list[str]:
    console = Console(width=width, color_system=None, record=True,
                      file=open("/dev/null", "w", encoding="utf-8"))
    console.print(renderable)
    return console.export_text().rstrip("\n").split("\n")


def _help(rules: Rules) -> str:
    """The help's words on one line (drawn wide enough that nothing wraps)."""
    rows = _rows(help_view(rules), width=1000)
    return " ".join(row.strip("│╭╮╰╯─ ") for row in rows)


@pytest.mark.parametrize("rules", [Rules.preset(name) for name in PRESETS] + [KITCHEN_SINK],
                         ids=[*PRESETS, "kitchen_sink"])
def test_the_help_and_the_prompt_under_it_fit_80_columns_and_24_rows(rules):
    rows = _rows(help_view(rules))
    assert max(len(row) for row in rows) <= 80, "\n".join(rows)
    assert len(rows) + 1 <= 24, "\n".join(rows)  # the "> " prompt stays on screen


#: Each rule the help may state, the words that state it, and whether the rules have it.
#: A preset's help holds the words exactly when the preset has the rule.
RULE_WORDS = {
    "hammer": ("Hammer:", lambda r: r.hammer),
    "throw-down": ("Throw-down:", lambda r: r.throw_down != "none"),
    "throw-down by anyone": ("each player in turn", lambda r: r.throw_down == "any"),
    "sudden death": ("Sudden death:", lambda r: r.sudden_death),
    "second knock": ("Second knock:", lambda r: r.second_knock),
    "31 declared at once": ("declared at once", lambda r: r.declare_31 == "auto"),
    "31 by choice": ("declare it", lambda r: r.declare_31 == "choice"),
    "31 never declared": ("never declared", lambda r: r.declare_31 == "never"
                          and r.play == "draw"),
    "knock then draw": ("then draw and discard", lambda r: r.knock_then_draw),
    "no first-turn knock": ("knock on your first turn", lambda r: not r.first_turn_knock),
    "minimum knock": ("Knocking needs a hand of", lambda r: r.min_knock > 0),
    "flush to knock": ("three cards of one suit", lambda r: r.knock_needs_flush),
    "knock on an empty stock": (", knock or end", lambda r: r.knock_when_stock_exhausted),
    "gin's knock": ("promise the highest hand", lambda r: r.knock_mode == "gin"),
    "Italian pack": ("40-card", lambda r: r.deck == "italian"),
    "trips beat 31": ("beats 31", lambda r: r.trips_beat_31),
    "three of a kind": ("three of a kind counts", lambda r: r.three_of_a_kind is not None),
    "three aces": ("three aces 3", lambda r: r.three_aces is not None),
    "straight flush": ("in sequence", lambda r: r.straight_flush),
    "poker tie-break": ("as in poker", lambda r: r.poker_tiebreak),
    "a race to points": ("points wins", lambda r: r.scoring == "points"),
    "all stay in": ("last life", lambda r: r.all_out == "last_life"),
    "the knock key": ("k knock", lambda r: r.play == "draw"),
    "golf's slots": ("place2", lambda r: r.play == "golf"),
    "the bus in golf": ("one player at a time", lambda r: r.one_on_the_bus),
}


@pytest.mark.parametrize("name", PRESETS)
def test_the_help_states_each_rule_the_preset_has_and_none_it_lacks(name):
    rules = Rules.preset(name)
    text = _help(rules)
    for rule, (words, has) in RULE_WORDS.items():
        assert (words in text) == bool(has(rules)), f"{name}: {rule} ({words!r})\n{text}"


@pytest.mark.parametrize("name", PRESETS)
def test_the_help_names_every_call_of_the_preset_by_its_key(name):
    rules = Rules.preset(name)
    keys = _help(rules).split("A hand counts")[0]
    for call in rules.calls:
        assert call in keys, keys
    assert ("pass" in keys) == any(c != "hammer" for c in rules.calls), keys


def test_the_help_says_31_as_each_preset_declares_it():
    assert "A 31 is never declared" in _help(Rules.preset("italian"))
    assert "declared at once" not in _help(Rules.preset("italian"))
    choice = _help(Rules.preset("undeclared_31"))
    assert "declare it" in choice and "counts 30" in choice and "at once" not in choice
    assert "declared at once: everyone else loses a life" in _help(Rules.preset("standard"))
    assert "declared at once: a point to its holder" in _help(Rules.preset("french_canadian"))
    assert "the knocker two" in _help(Rules.preset("knocker_pays_ties"))


def test_the_help_counts_what_a_knocker_pays_in_the_presets_words():
    assert "pays two lives, tied for lowest is safe" in _help(Rules.preset("standard"))
    assert "alone or tied, pays one life" in _help(Rules.preset("moyer"))
    assert "only the knocker pays" in _help(Rules.preset("cadillac"))
    # 002 Ride the Bus: every lost hand is one stop, a knocker's too.
    assert "pays one stop," in _help(Rules.preset("ride_the_bus"))
    assert "pays two stops" in _help(Rules.preset("ride_the_bus").replace(knocker_loss=2))
    assert "Four lives: 3 pennies, then on the county" in _help(Rules.preset("standard"))
    assert "letter of GIN" in _help(Rules.preset("gin"))


# -- complaints -----------------------------------------------------------------------------
#: Lines a person may type: garbage of any length, numbers out of range, cards held and not,
#: every key and call name, control characters.
TYPED = ["xyzzy", "x" * 500, "9" * 60, "99", "0", "s", "d", "k", "e", "m7", "10h", "1 2",
         "\x1b[2J", "place1", "turn3", "hammer", "pass", "declare", "throw_down",
         "sudden_death", "knock", "end", "take", "stock", "5♣", "ａｂｃ" * 30,
         *(f"{r}{s}" for r in "a23456789tjqk" for s in "cdhs")]
NAMES = ["You", "Bartholomew-Alexander-XY", "Christabel-Evangeline-Zed", "Dave"]


def _complaints(preset: str, players: int, seed: int):
    """Every complaint :func:`parse_command` makes about :data:`TYPED` at seat 0's
    decisions through one game of random play."""
    rng = random.Random(seed)
    state = GameState(players, Rules.preset(preset), seed=seed)
    for _ in range(300):
        if state.is_terminal():
            return
        if state.current_player == 0:
            view = make_view(state, 0)
            for typed in TYPED:
                try:
                    parse_command(typed, view, NAMES[:players])
                except InputError as exc:
                    yield typed, str(exc)
        state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_complaint_fits_one_80_column_row_after_its_mark(preset):
    seen = 0
    for players, seed in ((2, 1), (4, 2)):
        for typed, message in _complaints(preset, players, seed):
            assert "\n" not in message and message.isprintable(), (typed, message)
            assert len(message) <= 78, (typed, message)  # "✗ " + message <= 80
            seen += 1
    assert seen > 50


def test_a_complaint_quotes_a_bounded_piece_of_what_was_typed():
    state = GameState(2, Rules(), seed=3)
    while state.current_player != 0 or state.phase != "draw":
        state.apply_action(state.legal_actions()[0])
    view = make_view(state, 0)
    with pytest.raises(InputError) as err:
        parse_command("blah" * 100, view)
    assert "'blahblahbla...'" in str(err.value)
    with pytest.raises(InputError, match="no option 99999999999..."):
        parse_command("9" * 60, view)


# -- opponents ---------------------------------------------------------------------------
@pytest.mark.parametrize("spec, label", [
    ("ppo:scat_ppo_set", "trained AI"), ("compact:scat_batch_set", "trained AI"),
    ("compact:runs/x/policy.yaml:sample", "trained AI"), ("sb3:model.zip", "trained AI"),
    ("ismcts:200", "search AI"), ("expert", "expert"), ("greedy", "greedy"),
    ("random", "random"), ("threshold:25", "knocks at 25"), ("threshold:never", "never knocks"),
    ("human", ""),
])
def test_opponents_are_labelled_in_plain_words(spec, label):
    assert agent_label(spec) == label


def test_both_front_ends_label_opponents_with_one_function():
    from scat_web import games, serialize

    assert serialize.agent_label is agent_label and games.agent_label is agent_label


def test_the_start_line_names_each_opponent_in_words_and_by_spec():
    said = seats_by_spec([("Alice", "compact:scat_batch_set"), ("Bob", "compact:scat_batch_set"),
                          ("Carol", "expert")])
    assert said == "Alice and Bob: trained AI (compact:scat_batch_set); Carol: expert"


def test_sudden_death_shows_one_face_down_card_at_every_seat_the_persons_too():
    """While the dealer decides on sudden death each player holds one card, unseen by all
    (Doug Moyer's variation): the table draws one ``??`` per seat, never three, and the
    person's own seat shows that card face down rather than nothing."""
    from conftest import game

    from scat_cli.tui import table_view

    state = game(["QS 9D 8D", "KH 8H 5H", "AC 6S 4S"], "2D", rules="sudden_death")
    view = make_view(state, 0)
    assert view.hand == () and [view.cards_held(s) for s in range(3)] == [1, 1, 1]
    rows = _rows(table_view(view, ["You", "Bob", "Carol"]))
    seats = [r for r in rows if any(name in r for name in ("You", "Bob", "Carol"))][:3]
    assert len(seats) == 3
    for row in seats:
        assert row.count("??") == 1, row
