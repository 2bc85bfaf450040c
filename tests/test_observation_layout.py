"""The documented observation layout matches the encoder (the docs are a contract too)."""

import re

import numpy as np
import pytest

import scat_env
from scat_env import GameState, Phase, make_view
from scat_env.aec_env import __doc__ as ENV_DOC
from scat_env.observation import PIECES, ObservationEncoder, layout_table, observation_size


@pytest.mark.parametrize("n", range(2, 11))
def test_documented_size_formula_matches_encoder(n):
    assert observation_size(n) == 52 * (n + 4) + 4 * n + 12
    env = scat_env.env(num_players=n)
    assert env.observation_space("player_0")["observation"].shape == (observation_size(n),)


def test_env_docstring_quotes_the_sizes_the_encoder_produces():
    quoted = re.search(r"``52 \* \(n \+ 4\) \+ 4n \+ 12``: (\d+) for 2 players, (\d+) for 3, "
                       r"(\d+) for 6, (\d+) for 10", ENV_DOC)
    assert quoted, "the size line of the env docstring changed shape"
    assert [int(x) for x in quoted.groups()] == [observation_size(n) for n in (2, 3, 6, 10)]


@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_layout_table_covers_every_index_once(n):
    rows = [r for r in layout_table(n).splitlines()[2:]]
    covered = []
    for row in rows:
        lo, hi = map(int, row.split("|")[1].strip().split(".."))
        covered.extend(range(lo, hi + 1))
    assert covered == list(range(observation_size(n)))
    assert [r.split("`")[1] for r in rows] == [p.name for p in PIECES]


def test_observation_values_stay_in_unit_box_for_every_preset():
    for preset in scat_env.PRESETS:
        rules = scat_env.Rules.preset(preset)
        enc = ObservationEncoder(4, rules)
        st = GameState(4, rules, seed=11)
        for _ in range(120):
            if st.is_terminal():
                break
            for seat in range(4):
                obs = enc.encode(make_view(st, seat))
                assert obs.dtype == np.float32 and obs.min() >= 0.0 and obs.max() <= 1.0, preset
            st.apply_action(st.legal_actions()[-1] if st.phase is Phase.DISCARD else st.legal_actions()[0])


def _reference_encode(view, rules) -> np.ndarray:
    """The observation written out by hand, offset by offset (the encoder as it was before
    the pieces were declared as data): an independent check of the layout and the values."""
    from scat_env.cards import CARD_POINTS, CARD_SUIT
    from scat_env.scoring import best_three, value_table

    n, me, t = view.num_players, view.seat, value_table(rules)
    k = 52 * (n - 1)
    obs = np.zeros(52 * (n + 4) + 4 * n + 12, dtype=np.float32)
    for c in view.hand:
        obs[c] = 1.0
    if view.drawn_card is not None:
        obs[52 + view.drawn_card] = 1.0
    if view.top_discard is not None:
        obs[104 + view.top_discard] = 1.0
    for c in view.discard_pile:
        obs[156 + c] = 1.0
    seen = set(view.hand) | set(view.discard_pile)
    for s, cards in enumerate(view.known_cards):
        for c in cards:
            obs[208 + 52 * ((s - me) % n - 1) + c] = 1.0
            seen.add(c)
    for c in range(52):
        obs[208 + k + c] = 0.0 if c in seen else 1.0
    at = 260 + k
    suits = [0.0] * 4  # summed in double precision, then stored: as the encoder does
    for c in view.hand:
        suits[CARD_SUIT[c]] += CARD_POINTS[c] * (1 / 41.0)
    obs[at:at + 4] = suits
    hand = view.hand
    if len(hand) == 3:
        obs[at + 4] = t[hand[0] * 2704 + hand[1] * 52 + hand[2]] * (1 / 41.0)
        if view.phase == "draw" and view.top_discard is not None:
            obs[at + 5] = best_three(hand + (view.top_discard,), t, view.top_discard) * (1 / 41.0)
    elif len(hand) == 4:
        obs[at + 4] = best_three(hand, t, view.taken_card) * (1 / 41.0)
    at += 6
    for r in range(n):
        s = (me + r) % n
        obs[at + r] = view.lives[s] / rules.start_lives
        obs[at + n + r] = 1.0 if view.active[s] else 0.0
        obs[at + 2 * n + r] = 1.0 if s == view.knocker else 0.0
        obs[at + 3 * n + r] = 1.0 if s == view.dealer else 0.0
    at += 4 * n
    obs[at] = view.stock_size / 52.0
    obs[at + 1] = 1.0 if view.phase == "draw" else 0.0
    obs[at + 2] = 1.0 if view.phase == "discard" else 0.0
    obs[at + 3] = 0.0 if view.knocker is None else 1.0
    obs[at + 4] = 1.0 if view.stock_size == 0 else 0.0
    obs[at + 5] = min(view.turn, 100) / 100
    return obs


@pytest.mark.parametrize("n,preset", [(2, "standard"), (3, "cadillac"), (4, "gin"),
                                      (6, "straight_flush"), (10, "standard")])
def test_the_encoder_matches_the_hand_written_layout_on_random_positions(n, preset):
    import random

    rules = scat_env.Rules.preset(preset)
    enc = ObservationEncoder(n, rules)
    rng = random.Random(n)
    checked = 0
    for seed in range(6):
        st = GameState(n, rules, seed=seed)
        while not st.is_terminal() and st.turn < 60:
            for seat in range(n):
                view = make_view(st, seat)
                got, want = enc.encode(view), _reference_encode(view, rules)
                assert np.array_equal(got, want), (seed, seat, np.flatnonzero(got != want))
                checked += 1
            legal = st.legal_actions()
            st.apply_action(legal[rng.randrange(len(legal))])
    assert checked > 200


def test_pieces_declare_their_symmetry_and_sizes():
    from scat_env.observation import PIECES, Piece, layout

    for n in (2, 5, 10):
        spans = layout(n)
        assert list(spans) == [p.name for p in PIECES]
        assert sum(p.size(n) for p in PIECES) == observation_size(n) == spans["turn"].stop
        for p in PIECES:
            assert spans[p.name].stop - spans[p.name].start == p.size(n)
    assert {p.name for p in PIECES if p.symmetry == "card"} == {
        "hand", "drawn_card", "top_discard", "discard_pile", "known_cards", "unseen"}
    with pytest.raises(ValueError, match="card block has 52"):
        Piece("x", 4, "one", "card", "")
    with pytest.raises(ValueError, match="per must be"):
        Piece("x", 1, "each", "none", "")


@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_the_env_docstring_table_names_the_pieces_at_their_offsets(n):
    """The table in the env's docstring is written for any n; evaluated for this n, every
    range it gives is the piece's slice in layout(n)."""
    from scat_env.observation import layout

    rows = re.findall(r"^\| ([^|]+) \| ``(\w+)`` \|", ENV_DOC, flags=re.M)
    assert [name for _, name in rows] == [p.name for p in PIECES]
    spans, k = layout(n), 52 * (n - 1)
    for where, name in rows:
        first = where.split("..")[0].strip()
        if first[0].isdigit():  # "208+K", "264+K"; the "next ..." rows follow in order
            start = sum(k if term == "K" else int(term) for term in first.split("+"))
            assert start == spans[name].start, name


@pytest.mark.parametrize("n", [2, 3, 6, 10])
def test_every_lives_preset_of_draw_and_discard_keeps_the_shipped_layout(n):
    """Trained policies read this layout: every preset that adds nothing to know keeps it
    exactly; the points race adds one entry per seat after it, golf three."""
    from scat_env.observation import layout, pieces_for

    base = observation_size(n)
    assert base == 52 * (n + 4) + 4 * n + 12
    for name in scat_env.PRESETS:
        rules = scat_env.Rules.preset(name)
        pieces = pieces_for(rules)
        assert pieces[:len(PIECES)] == PIECES
        extra = {"points": n, "golf": 3 * n}.get(
            "golf" if rules.play == "golf" else rules.scoring, 0)
        assert ObservationEncoder(n, rules).size == base + extra, name
        assert layout(n, pieces)["turn"] == layout(n)["turn"]


def test_points_and_face_down_pieces_read_the_view():
    """The added pieces hold exactly the view's points (/ points to win, seat-relative) and
    its face-down slots (1 each, seat-relative), and nothing in the old layout moves."""
    from scat_env.observation import layout, pieces_for

    rules = scat_env.Rules.preset("french_canadian")
    st = GameState(3, rules, seed=1)
    st.points[:] = [3, 0, 31]
    enc = ObservationEncoder(3, rules)
    obs = enc.encode(make_view(st, 1))
    span = layout(3, pieces_for(rules))["points"]
    assert obs[span].tolist() == pytest.approx([0.0, 1.0, 3 / 31])  # me, my left, my right
    assert np.array_equal(obs[:span.start], _reference_encode(make_view(st, 1), rules))

    golf = scat_env.Rules.preset("golf")
    st = GameState(3, golf, seed=2)
    st.apply_action(scat_env.DRAW_STOCK)
    st.apply_action(scat_env.actions.TURN_UP + 1)  # seat to move turns its slot 2 up
    mover = (st.current_player - 1) % 3
    obs = ObservationEncoder(3, golf).encode(make_view(st, mover))
    span = layout(3, pieces_for(golf))["face_down"]
    assert obs[span].tolist() == [1, 0, 1, 1, 1, 1, 1, 1, 1]
    assert obs[layout(3)["hand"]].sum() == 1  # the card turned up: seen by its owner now


@pytest.mark.parametrize("made", [False, True])
def test_a_31_kept_quiet_reads_30_in_the_observation(made):
    """``undeclared_31`` (002/000): a 31 kept quiet counts 30 while its cards stay together,
    and the hand value the observation gives its holder says so (it read 31)."""
    from conftest import game

    from scat_env.actions import DRAW_STOCK, PASS
    from scat_env.cards import parse_card
    from scat_env.observation import layout

    rules = scat_env.Rules.preset("undeclared_31")
    if made:  # seat 0 draws QH to AH KH 5D and discards the 5D: a new 31
        g = game(["AH KH 5D", "2C 3D 5S", "4C 6D 8S"], "2D", ["QH", "7C", "9C"], rules=rules)
        g.apply_action(DRAW_STOCK)
        g.apply_action(parse_card("5D"))
    else:  # dealt
        g = game(["AH KH QH", "2C 3D 5S", "4C 6D 8S"], "2D", ["7C", "9C"], rules=rules)
    assert g.phase is Phase.DECLARE and g.current_player == 0
    g.apply_action(PASS)
    enc = ObservationEncoder(3, rules)
    view = make_view(g, 0)
    assert view.quiet_cards == tuple(sorted(map(parse_card, ["AH", "KH", "QH"])))
    at = layout(3)["hand_value"].start
    assert enc.encode(view)[at] == pytest.approx(30 / 41)
    assert make_view(g, 1).quiet_cards == ()  # nobody else learns of it
    if not made:  # seat 0 now draws: mid-turn the best three still count the quiet 31 as 30
        g.apply_action(DRAW_STOCK)  # the 7C
        assert enc.encode(make_view(g, 0))[at] == pytest.approx(30 / 41)
