"""One set of rules, two speeds: the batched engine plays exactly as :class:`GameState`.

Each batched game has a Python twin: a ``GameState`` whose generator draws as the batched
game's does (:class:`SplitMixRandom`), so both deal the same cards. Both take the same
random legal actions, and after every step the test compares everything: hands (in order),
stock, discard pile, lives, who is in, dealer, player to move, phase, knocker, turn, hand
number, the taken and drawn cards, the cards known to be held; the mask against the legal
actions; the observation against the one built from the mover's :class:`PlayerView` (so it
holds nothing the view does not); rewards as ``env()`` pays them (``hand_rewards`` and the
turn cap's share); hands ended, lives lost, done, truncated, the winner.

The default run compares every preset at 2, 3, 6 and 10 players, at least 100,000 steps;
``pytest -m slow`` compares 3,000,000 (every preset, 2 to 10 players). The rule paths of
the calls, the quiet 31, the points races and golf are each sought out in
``tests/test_batch_rules.py``. They catch a broken kernel rule: a quiet 31 counted 29
instead of 30, or golf's bus boarding the first of several who lose their last quarter
together, fails them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from hang_limits import hang_limit

from scat_env import GameState, Rules
from scat_env.actions import DECLARE, KNOCK, NUM_ACTIONS, PASS, SUDDEN_DEATH, THROW_DOWN
from scat_env.batch import BatchEnv, covered_presets
from scat_env.batch.kernels import hand_features_serial
from scat_env.batch.reference import (
    SplitMixRandom,
    compact_observation,
    game_seed,
    observation_size,
)
from scat_env.rewards import hand_rewards
from scat_env.rules import PRESETS
from scat_env.view import make_view


class Twin:
    """A ``GameState`` playing batched game ``index`` of a batch seeded ``seed``."""

    def __init__(self, n: int, rules: Rules, seed: int, index: int, max_turns: int,
                 reward: str) -> None:
        self.n, self.rules, self.max_turns, self.reward = n, rules, max_turns, reward
        self.rng = SplitMixRandom(game_seed(seed, index))
        self.new_game()

    def new_game(self) -> None:
        """A game that waits for a decision; hands its deal decided are paid with its
        first step (``seen`` stays 0), as ``env()`` pays them."""
        self.state = GameState(self.n, self.rules, rng=self.rng)
        while self.state.is_terminal():  # decided by the deal alone (one life each)
            self.state = GameState(self.n, self.rules, rng=self.rng)
        self.seen = 0

    def step(self, action: int, events: Counter | None = None) -> dict:
        """Apply ``action``; what the batched step must report for this game. ``events``
        counts the rule paths the step took (:func:`_events`)."""
        state, n = self.state, self.n
        before = _events_before(state, action) if events is not None else ()
        state.apply_action(action)
        new = state.results[self.seen:]
        self.seen = len(state.results)
        rewards = np.zeros(n)
        lost = np.zeros(n, np.int64)
        for res in new:
            for s, r in hand_rewards(res, n, reward=self.reward).items():
                rewards[s] += r
            for s, k in res.lives_lost.items():
                lost[s] += k
        report = {"rewards": rewards, "lost": lost, "ended": len(new), "done": False,
                  "truncated": False, "winner": -1}
        if events is not None:
            events.update(before)
            events.update(_events_after(state, new))
        if state.is_terminal():
            report.update(done=True, winner=state.winner)
        elif state.turn >= self.max_turns:
            report.update(done=True, truncated=True)
            if self.reward == "game":
                live = sum(state.active)
                for s in range(n):
                    if state.active[s]:
                        rewards[s] += (n - live) / ((n - 1) * live)
        if report["done"]:
            self.new_game()
        return report


def _events_before(state: GameState, action: int) -> list[str]:
    """The rule paths an action takes, named as the targeted tests ask for them."""
    seat, phase = state.current_player, str(state.phase)
    out = [f"action:{action}"] if action >= 52 else []
    if action == THROW_DOWN and seat != state._next_active(state.dealer):
        out.append("later_throw_down")
    if action == DECLARE and state.quiet[seat]:
        out.append("declare_after_quiet")
    if (phase == "declare" and action == PASS and state.pending
            and len(state.pending) + len(state.declared) >= 2):
        out.append("quiet_among_dealt_31s")
    if phase == "sudden_death":
        out.append("sudden_called" if action == SUDDEN_DEATH else "sudden_declined")
    return out


def _events_after(state: GameState, new: list) -> list[str]:
    """The hands a step scored: their reasons and rules, races won, golf's bus."""
    out = []
    for res in new:
        out += [f"reason:{res.reason}", f"rule:{res.rule}"]
        if res.race_winner is not None:
            out.append("race_won")
        if state.rules.one_on_the_bus:
            for s, lost in res.lives_lost.items():
                if lost >= 2:  # a hand costs one: more is the bus putting a player off
                    out.append("bus_full")
                elif lost and res.lives_after[s] == 1:
                    out.append("bus_boarded")
    return out


def _engine_fields(state: GameState) -> dict:
    return {
        "hands": [list(h) for h in state.hands], "stock": list(state.stock),
        "discard": list(state.discard), "lives": list(state.lives),
        "active": list(state.active), "dealer": state.dealer,
        "current_player": state.current_player, "phase": str(state.phase),
        "knocker": state.knocker, "turn": state.turn, "hand_number": state.hand_number,
        "taken": state.taken, "drawn": state.drawn,
        "known": [[c for c in range(52) if k >> c & 1] for k in state.known],
        "draws": [sum(1 for s, kind, _ in state.log if s == seat and kind in ("draw_stock", "take"))
                  for seat in range(state.num_players)],
        "discarded_suits": [[sum(1 for s, kind, c in state.log
                                 if s == seat and kind == "discard" and c // 13 == suit)
                             for suit in range(4)] for seat in range(state.num_players)],
        "looked": list(state.looked), "quiet": list(state.quiet),
        "face_up": list(state.face_up), "points": list(state.points),
        "pending": list(state.pending), "declared": list(state.declared),
    }


def _check_game(env: BatchEnv, out: dict, i: int, twin: Twin,
                every_seat: np.ndarray | None = None) -> None:
    """Game ``i`` against its twin; with ``every_seat`` (:meth:`BatchEnv.observe_all`)
    every seat's observation against its own view too."""
    state = twin.state
    assert env.game(i) == _engine_fields(state), f"game {i}"
    seat = state.current_player
    assert out["current_player"][i] == seat
    legal = np.zeros(NUM_ACTIONS, bool)
    legal[state.legal_actions()] = True
    assert (out["action_mask"][i] == legal).all(), f"game {i}: mask"
    view = make_view(state, seat)
    assert (out["observation"][i] == compact_observation(view)).all(), f"game {i}: obs"
    if every_seat is not None:
        for s in range(state.num_players):
            mine = compact_observation(make_view(state, s))
            assert (every_seat[i, s] == mine).all(), f"game {i}: seat {s}'s observation"


def _pick(mask: np.ndarray, rng: np.random.Generator, knock_bias: float,
          bias: dict[int, float] | None = None, greedy: np.ndarray | None = None) -> np.ndarray:
    """A random legal action per game; knocks (which end hands) at ``knock_bias`` odds
    where legal, so that hands, eliminations and whole games come often; each action of
    ``bias`` at its odds where legal; with ``greedy`` (the threshold agent's moves), those
    moves where legal and no call is on offer, so that 31s are made often."""
    B = mask.shape[0]
    acts = np.empty(B, np.int64)
    odds = {KNOCK: knock_bias, **(bias or {})}
    for i in range(B):
        legal = np.flatnonzero(mask[i])
        acts[i] = rng.choice(legal)
        if greedy is not None and mask[i, greedy[i]] and not mask[i, PASS]:
            acts[i] = greedy[i]
        for action, p in odds.items():
            if mask[i, action] and rng.random() < p:
                acts[i] = action
                break
    return acts


def play_side_by_side(rules: str | Rules, n: int, steps: int, *, batch: int = 8,
                      seed: int = 0, max_turns: int = 300, reward: str = "game",
                      knock_bias: float = 0.1, skip_rate: float = 0.0,
                      bias: dict[int, float] | None = None, greedy: bool = False,
                      deal_ids: list[int] | None = None) -> Counter:
    """Play ``steps`` batched steps of ``batch`` games next to their twins, comparing after
    every step; counts of what was covered (steps, hands, games, truncated) and of the
    rule paths taken (:func:`_events_before`, :func:`_events_after`)."""
    rules = Rules.preset(rules) if isinstance(rules, str) else rules
    env = BatchEnv(batch, n, rules, seed, max_turns=max_turns, reward=reward, deal_ids=deal_ids)
    ids = deal_ids if deal_ids is not None else range(batch)
    twins = [Twin(n, rules, seed, i, max_turns, reward) for i in ids]
    out = env.reset()
    for i, twin in enumerate(twins):
        _check_game(env, out, i, twin)
    rng = np.random.default_rng(seed)
    seen = Counter({"steps": 0, "hands": 0, "games": 0, "truncated": 0})
    for _ in range(steps):
        moves = env.threshold_actions(None) if greedy else None
        acts = _pick(out["action_mask"], rng, knock_bias, bias, moves)
        skip = rng.random(batch) < skip_rate if skip_rate else None
        out = env.step(acts, skip) if skip is not None else env.step(acts)
        every_seat = env.observe_all() if seen["steps"] % (7 * batch) == 0 else None
        for i, twin in enumerate(twins):
            if skip is not None and skip[i]:  # waits: nothing moves, nothing is reported
                want = {"rewards": np.zeros(n), "lost": np.zeros(n, np.int64), "ended": 0,
                        "done": False, "truncated": False, "winner": -1}
            else:
                want = twin.step(int(acts[i]), seen)
            assert np.allclose(out["rewards"][i], want["rewards"], atol=1e-6), f"game {i}"
            assert (out["lives_lost"][i] == want["lost"]).all(), f"game {i}"
            assert out["hands_ended"][i] == want["ended"], f"game {i}"
            assert bool(out["done"][i]) == want["done"], f"game {i}"
            assert bool(out["truncated"][i]) == want["truncated"], f"game {i}"
            assert out["winner"][i] == want["winner"], f"game {i}"
            _check_game(env, out, i, twin, every_seat)
            seen["hands"] += want["ended"]
            seen["games"] += want["done"]
            seen["truncated"] += want["truncated"]
        seen["steps"] += batch
    return seen


# Every preset at 2, 3, 6 and 10 players (italian's 40-card pack deals ten: 31 cards);
# 800 steps each, ~100,000 in all.
CASES = [(name, n) for name in PRESETS for n in (2, 3, 6, 10)]
CASE_STEPS = 100


@pytest.mark.parametrize("preset, players", CASES, ids=[f"{p}-{n}p" for p, n in CASES])
def test_the_batched_engine_plays_every_preset_as_the_engine_does(preset, players):
    seen = play_side_by_side(preset, players, steps=CASE_STEPS, batch=8,
                             seed=len(preset) + players)
    assert seen["hands"] > 0 and seen["steps"] == 8 * CASE_STEPS


def test_every_preset_is_covered():
    assert covered_presets() == list(PRESETS)


def test_whole_games_truncations_and_hand_rewards_agree():
    """Short turn caps and the ``hand`` reward, until games end every way."""
    seen = play_side_by_side("standard", 3, steps=600, batch=16, seed=7, max_turns=12,
                             knock_bias=0.05)
    assert seen["games"] > 0 and seen["truncated"] > 0
    seen = play_side_by_side("standard", 4, steps=600, batch=8, seed=8, reward="hand",
                             knock_bias=0.5)
    assert seen["games"] > 0


def test_skipped_games_wait_and_the_others_play_on():
    """``step(actions, skip)``: a game that waits keeps its state and reports nothing, and
    its next step plays as if the wait had not happened (checked against the twins)."""
    seen = play_side_by_side("standard", 3, steps=300, batch=8, seed=12, skip_rate=0.5)
    assert seen["hands"] > 0


def test_the_default_run_compares_at_least_100000_steps():
    assert len(CASES) * 8 * CASE_STEPS + 600 * 16 + 600 * 8 >= 100_000


@pytest.mark.slow
@pytest.mark.parametrize("players", range(2, 11))
def test_the_batched_engine_agrees_over_three_million_steps(players):
    for k, preset in enumerate(covered_presets()):
        play_side_by_side(preset, players, steps=1100, batch=10,
                          seed=1000 * players + k, knock_bias=0.05 + 0.1 * (k % 3))


def test_a_hidden_card_never_changes_the_observation():
    """Swapping two cards the mover has not seen (in the stock or in an opponent's hand,
    not known to be there) leaves its observation as it was: the batched observation is a
    function of the view (checked against it at every step above), and the view hides
    them; here the swap is made in the batched state itself."""
    env = BatchEnv(64, 4, "standard", seed=3)
    out = env.reset()
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        out = env.step(_pick(out["action_mask"], rng, 0.05))
        for i in range(0, 64, 7):
            g = env.game(i)
            me = g["current_player"]
            hidden = [("stock", j) for j in range(len(g["stock"]))]
            for s in range(4):
                if s != me:
                    hidden += [(s, j) for j, c in enumerate(g["hands"][s])
                               if c not in g["known"][s]]
            if len(hidden) < 2:
                continue
            a, b = (hidden[k] for k in rng.choice(len(hidden), 2, replace=False))
            before = out["observation"][i].copy()
            _swap(env, i, a, b)
            from scat_env.batch import kernels as K

            # the game index as the kernels pass it (unsigned): an int would compile
            # the observation a second time, for this test alone
            K._observe(np.uint64(i), 4, env._P, env._T, env._hands, env._hlen, env._known,
                       env._per_seat, env._slen, env._disc, env._dlen, env._lives,
                       env._active, env._sc, env._obs, env._mask)
            assert (env._obs[i] == before).all()
            _swap(env, i, a, b)
            checked += 1
    assert checked > 500


def _slot(env: BatchEnv, i: int, where: tuple) -> tuple[np.ndarray, tuple]:
    kind, j = where
    if kind == "stock":
        return env._stock, (i, j)
    return env._hands, (i, kind, j)


def _swap(env: BatchEnv, i: int, a: tuple, b: tuple) -> None:
    arr_a, ia = _slot(env, i, a)
    arr_b, ib = _slot(env, i, b)
    arr_a[ia], arr_b[ib] = arr_b[ib], arr_a[ia]


def test_an_illegal_action_names_the_game_and_the_action_and_moves_nothing():
    env = BatchEnv(4, 3, "standard", seed=1)
    out = env.reset()
    acts = env.random_actions()
    bad = int(np.flatnonzero(~out["action_mask"][2])[0])
    acts[2] = bad
    before = [env.game(i) for i in range(4)]
    with pytest.raises(ValueError, match=f"^game 2: action {bad} is not legal"):
        env.step(acts)
    assert [env.game(i) for i in range(4)] == before


@pytest.mark.parametrize("args, message", [
    ((0, 3), "num_envs must be a positive int"),
    ((4, 11), "num_players must be an int from 2 to 10"),
    ((4, True), "num_players must be an int"),
    ((4, 3, "no_such_preset"), "no_such_preset"),
])
def test_bad_arguments_are_one_line(args, message):
    with pytest.raises(ValueError, match=message) as err:
        BatchEnv(*args)
    assert "\n" not in str(err.value)


def test_step_before_reset_and_wrong_shapes_are_refused():
    """Wrong shapes are refused, a given ``observe_all`` buffer too: the kernel writes it
    as [B * n, D] rows, so a buffer that is not one block of int8 would lose the writes."""
    env = BatchEnv(4, 3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(4, np.int64))
    env.reset()
    with pytest.raises(ValueError, match="4 integers"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="4 integers"):
        env.step(np.zeros(4, np.float32))

    every = np.zeros((4, 3, observation_size(3)), np.int8)
    assert env.observe_all(every) is every and every.any()
    with pytest.raises(ValueError, match="C-contiguous int8 array of shape"):
        env.observe_all(np.zeros((4, 3, observation_size(3)), np.int64))
    with pytest.raises(ValueError, match="C-contiguous int8 array of shape"):
        env.observe_all(np.zeros((3, 4, observation_size(3)), np.int8).transpose(1, 0, 2))


def test_shapes_and_seeds():
    env = BatchEnv(32, 5, seed=9)
    out = env.reset()
    assert out["observation"].shape == (32, observation_size(5))
    assert out["observation"].dtype == np.int8
    assert out["action_mask"].shape == (32, NUM_ACTIONS)
    twin = BatchEnv(32, 5, seed=9)
    twin.reset()
    other = BatchEnv(32, 5, seed=10)
    other.reset()
    assert [env.game(i) for i in range(32)] == [twin.game(i) for i in range(32)]
    assert [env.game(i) for i in range(32)] != [other.game(i) for i in range(32)]
    assert len({str(env.game(i)["hands"]) for i in range(32)}) == 32  # each game its own deal


_THREADED_RULES = ("standard", "golf", "undeclared_31")
_THREADED_RUN = """
import hashlib, numpy as np, numba
from scat_env.batch import BatchEnv
assert numba.get_num_threads() == {threads}
for rules in {rules!r}:
    env = BatchEnv(64, 6, rules, seed=5)
    out, digest = env.reset(), hashlib.sha256()
    for _ in range(3000):
        out = env.step(env.random_actions())
        for key in ("observation", "action_mask", "current_player", "rewards", "done"):
            digest.update(np.ascontiguousarray(out[key]).tobytes())
    print(rules, digest.hexdigest())
"""


@pytest.fixture(scope="module")
def threaded_digests() -> list[dict[str, str]]:
    """The digests of the same games on one thread and on two, every rules set of
    :data:`_THREADED_RULES` in one process per thread count (a process start and the
    kernels' load cost more than the games)."""
    runs = []
    for threads in (1, 2):
        env = {**os.environ, "NUMBA_NUM_THREADS": str(threads)}
        code = _THREADED_RUN.format(threads=threads, rules=_THREADED_RULES)
        proc = subprocess.run([sys.executable, "-c", code],
                              capture_output=True, text=True, env=env, timeout=hang_limit(600))
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(dict(line.split() for line in proc.stdout.splitlines()))
    return runs


@pytest.mark.parametrize("rules", _THREADED_RULES)
def test_the_games_do_not_depend_on_the_number_of_threads(rules, threaded_digests):
    """Each game owns its generator and its rows, so a ``prange`` step gives the same bytes
    on one thread and on two (the suite's workers run one thread each: this is where the
    threaded kernels are checked), on the plain games' path and the other families'."""
    one, two = (run[rules] for run in threaded_digests)
    assert one == two and len(one) == 64


@pytest.mark.parametrize("preset, players, knock_at", [("standard", 3, 25), ("gin", 4, 21),
                                                        ("italian", 2, None),
                                                        ("straight_flush", 6, 27)])
def test_the_batched_threshold_agent_and_features_match_the_python_ones(preset, players,
                                                                         knock_at):
    """``threshold_actions`` plays the moves of ``ThresholdAgent`` and ``hand_features`` holds
    the values the Python helpers compute, from the same views."""
    from agents.greedy import ThresholdAgent
    from agents.knowledge import value3
    from scat_env.scoring import best_three, value_table

    rules = Rules.preset(preset)
    table = value_table(rules)
    agent = ThresholdAgent(knock_at)
    env = BatchEnv(16, players, rules, seed=5)
    twins = [Twin(players, rules, 5, i, 300, "game") for i in range(16)]
    out = env.reset()
    checked = 0
    for _ in range(150):
        acts = env.threshold_actions(knock_at)
        feats = env.hand_features(out["observation"])
        one = np.empty_like(feats)  # the single-threaded kernel an agent's view uses
        hand_features_serial(out["observation"], env._T, one)
        assert (one == feats).all()
        for i, twin in enumerate(twins):
            view = make_view(twin.state, twin.state.current_player)
            assert acts[i] == agent.act(view), f"game {i}"
            hand = view.hand
            if view.phase == "discard":
                for c in hand:
                    keep = [x for x in hand if x != c]
                    want = value3(keep, table) if c != view.taken_card else 0.0
                    assert feats[i, c] == pytest.approx(want)
                assert feats[i, 52] == pytest.approx(best_three(hand, table, view.taken_card))
            else:
                assert feats[i, 52] == pytest.approx(value3(hand, table))
                top = view.top_discard
                want = best_three((*hand, top), table, keep=top) if top is not None else 0.0
                assert feats[i, 53] == pytest.approx(want)
            checked += 1
        # the threshold agent against itself, with some random moves for variety
        rnd = env.random_actions()
        mix = np.where(np.arange(16) % 3 == 0, rnd, acts)
        out = env.step(mix)
        for i, twin in enumerate(twins):
            twin.step(int(mix[i]))
    assert checked == 16 * 150
