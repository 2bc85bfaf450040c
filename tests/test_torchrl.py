"""Scat in TorchRL: the env options that tensor libraries need, and TorchRL itself.

``scat_env.env(infos="flat", eliminated="stay")`` gives every agent the same numeric info
keys from ``reset`` on and keeps an eliminated seat in ``agents`` until the game ends; the
first half of this file checks those options against the default env on the same games
(no TorchRL needed). The second half runs TorchRL's ``PettingZooWrapper`` on the env as is:
``check_env_specs``, whole random games, and the IPPO example of docs/LIBRARIES.md, which
trains with TorchRL's own modules (``MultiAgentMLP``, ``MaskedCategorical``,
``ClipPPOLoss``). Those skip where TorchRL is not installed (``pip install -e
".[torchrl]"``); the last test likewise runs RLlib's ``PettingZooEnv`` where RLlib is.
"""

from __future__ import annotations

import random
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import scat_env
from scat_env import Rules
from scat_env.aec_env import FLAT_INFO_KEYS

ROOT = Path(__file__).resolve().parents[1]
TENSOR_OPTIONS = {"infos": "flat", "eliminated": "stay"}


@pytest.fixture(autouse=True)
def _quiet_library_warnings():
    # api_test warns about Dict observation spaces; TorchRL that it was tested with an
    # older PettingZoo, and about its own coming API changes. None is what these tests check.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.filterwarnings("ignore", category=FutureWarning, module="torchrl")
        warnings.filterwarnings("ignore", "Creating .*WeightUpdater", DeprecationWarning)
        yield


def play(env: Any, seed: int, policy_seed: int = 0) -> list[dict[str, Any]]:
    """One whole random game; a record per step: who moved, what it saw, what it did, and
    every agent's reward and info after the step (dead steps recorded with action None)."""
    env.reset(seed=seed)
    rng = random.Random(policy_seed)
    out = [{"agent": None, "infos": {a: dict(i) for a, i in env.infos.items()}}]
    for agent in env.agent_iter(max_iter=50_000):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        env.step(action)
        out.append({"agent": agent, "action": action, "obs": obs["observation"].tobytes(),
                    "mask": obs["action_mask"].tobytes(), "rewards": dict(env.rewards),
                    "infos": {a: dict(i) for a, i in env.infos.items()},
                    "agents": list(env.agents)})
    assert not env.agents, "the game did not end"
    return out


# -- the options, without TorchRL -----------------------------------------------------------


@pytest.mark.parametrize("option,value", [("infos", "Flat"), ("infos", None), ("infos", "dict"),
                                          ("eliminated", "remove"), ("eliminated", True)])
def test_bad_option_values_raise_one_clear_value_error(option, value):
    with pytest.raises(ValueError, match=f"^{option} must be one of .*got {re.escape(repr(value))}$"):
        scat_env.env(num_players=3, **{option: value})


@pytest.mark.parametrize("n", [2, 3, 6])
@pytest.mark.parametrize("rules", ["standard", "french_canadian", "golf", "hammer"])
def test_pettingzoo_api_test_passes_with_the_tensor_options(n, rules):
    api_test(scat_env.env(num_players=n, rules=rules, **TENSOR_OPTIONS), num_cycles=60)
    seed_test(lambda: scat_env.env(num_players=n, rules=rules, **TENSOR_OPTIONS), num_cycles=60)


@pytest.mark.parametrize("n,rules,seed", [(2, "standard", 0), (3, "standard", 1),
                                          (5, "standard", 2), (3, "french_canadian", 3),
                                          (3, "golf", 4), (4, "hammer", 5)])
def test_flat_infos_hold_the_same_numeric_keys_from_reset_on(n, rules, seed):
    steps = play(scat_env.env(num_players=n, rules=rules, infos="flat"), seed)
    for step in steps:
        for agent, info in step["infos"].items():
            assert tuple(info) == FLAT_INFO_KEYS, (agent, info)
            assert all(type(v) is int for v in info.values()), (agent, info)
    assert sum(s["infos"][a]["hands_ended"] for s in steps[1:] for a in s["infos"]) > 0


@pytest.mark.parametrize("n,rules,seed", [(3, "standard", 11), (4, "standard", 12),
                                          (3, "french_canadian", 13)])
def test_flat_infos_say_in_numbers_what_the_rich_infos_say(n, rules, seed):
    """The same game (same seed, same moves) in both modes: lives, points, and each step's
    hands, lives lost and points won agree; outside the infos nothing differs."""
    rich = play(scat_env.env(num_players=n, rules=rules), seed)
    flat = play(scat_env.env(num_players=n, rules=rules, infos="flat"), seed)
    assert len(rich) == len(flat)
    hands = 0
    for r, f in zip(rich, flat, strict=True):
        assert {k: v for k, v in r.items() if k != "infos"} == {
            k: v for k, v in f.items() if k != "infos"}
        assert set(r["infos"]) == set(f["infos"])
        for agent, info in f["infos"].items():
            want = r["infos"][agent]
            assert info["lives"] == want["lives"]
            assert info["points"] == want.get("points", 0)
            results = want.get("hand_results", [])
            assert info["hands_ended"] == len(results)
            assert info["lives_lost"] == sum(x["lives_lost"].get(agent, 0) for x in results)
            assert info["points_won"] == sum(x.get("points_won", {}).get(agent, 0)
                                             for x in results)
            hands += len(results)
    assert hands > 0


def test_a_step_that_ends_two_hands_sums_both_in_the_flat_infos():
    """A hand, then a 31 dealt in the next deal: one step scores both."""
    for seed in range(400):
        rich = play(scat_env.env(num_players=6), seed)
        twice = [i for i, s in enumerate(rich)
                 if any(len(x.get("hand_results", [])) > 1 for x in s["infos"].values())]
        if twice:
            break
    else:
        pytest.fail("no step ended two hands in 400 games")
    flat = play(scat_env.env(num_players=6, infos="flat"), seed)
    step = twice[0]
    for agent, info in flat[step]["infos"].items():
        results = rich[step]["infos"][agent]["hand_results"]
        assert info["hands_ended"] == len(results) > 1
        assert info["lives_lost"] == sum(r["lives_lost"].get(agent, 0) for r in results)
    assert sum(i["lives_lost"] for i in flat[step]["infos"].values()) > sum(
        rich[step]["infos"][a]["hand_results"][0]["lives_lost"].get(a, 0)
        for a in flat[step]["infos"])


def test_hand_results_lists_every_hand_the_rich_infos_reported():
    env = scat_env.env(num_players=3, eliminated="stay")
    steps = play(env, seed=21)
    moves = [s for s in steps if s.get("action", 0) is not None]  # dead steps repeat infos
    for agent in env.possible_agents:
        reported = [x for s in moves for x in s["infos"].get(agent, {}).get("hand_results", [])]
        assert env.unwrapped.hand_results(agent) == reported
        assert len(reported) == len(env.unwrapped._state.results) >= 3
    seat = env.unwrapped.agent_name_mapping["player_1"]
    assert env.unwrapped.hand_results(seat) == env.unwrapped.hand_results("player_1")


def test_hand_results_show_only_what_the_seat_saw():
    """After a declared 31 the hands of the others stay hidden in ``hand_results`` too."""
    env = scat_env.env(num_players=3)
    for seed in range(200):
        env.reset(seed=seed)
        state = env.unwrapped._state
        rng = random.Random(seed)
        while not state.results and not state.is_terminal():
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
        result = state.results[0]
        if result.reason in ("thirty_one", "dealt_thirty_one"):
            break
    else:
        pytest.fail("no first hand ended on a 31 in 200 seeds")
    for seat, agent in enumerate(env.possible_agents):
        seen = env.unwrapped.hand_results(agent)[0]["hands"]
        assert set(seen) == {env.possible_agents[s] for s in {*result.declarers, seat}}


@pytest.mark.parametrize("n,rules,seed", [(3, "standard", 31), (5, "standard", 32),
                                          (4, "cadillac", 33)])
def test_eliminated_seats_stay_until_the_game_ends_and_nothing_else_changes(n, rules, seed):
    """Same game in both modes: the moves, observations and masks of the seats in play and
    every agent's total reward are the same; with "stay" nobody leaves ``agents`` before
    the game ends, and everyone steps off once, at the end."""
    leave = play(scat_env.env(num_players=n, rules=rules), seed)[1:]
    env = scat_env.env(num_players=n, rules=rules, **TENSOR_OPTIONS)
    stay = play(env, seed)[1:]
    key = ("agent", "action", "obs", "mask")
    moves = [s for s in stay if s["action"] is not None]
    assert [[s[k] for k in key] for s in moves] == [
        [s[k] for k in key] for s in leave if s["action"] is not None]
    assert total_rewards(stay) == pytest.approx(total_rewards(leave))
    assert all(s["agents"] == env.possible_agents for s in moves)
    assert sum(s["action"] is None for s in stay) == n
    assert stay[-n:] == [s for s in stay if s["action"] is None]
    # The check has teeth: seats were put out while the others played on.
    assert any(0 in [i["active"] for i in s["infos"].values()] for s in moves[:-1])


def total_rewards(steps: list[dict[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for s in steps:
        for a, r in s["rewards"].items():
            totals[a] = totals.get(a, 0.0) + r
    return totals


def test_an_eliminated_seat_is_never_selected_and_its_mask_is_empty():
    env = scat_env.env(num_players=4, eliminated="stay")
    env.reset(seed=41)
    state = env.unwrapped._state
    rng = random.Random(0)
    checked = 0
    while not state.is_terminal():
        mover = env.agent_selection
        assert state.active[env.unwrapped.agent_name_mapping[mover]]
        assert env.agents == env.possible_agents
        for seat, agent in enumerate(env.possible_agents):
            if not state.active[seat]:
                assert not env.observe(agent)["action_mask"].any()
                assert not env.terminations[agent]
                checked += 1
        legal = np.flatnonzero(env.observe(mover)["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    assert checked > 0
    assert all(env.terminations.values())


def test_the_turn_cap_after_an_elimination_truncates_the_seats_in_play_only():
    """With one life each, a hand puts a seat out early; a later hand that reaches the turn
    cap truncates the seats still in and terminates the eliminated ones, and the game
    rewards still sum to zero."""
    rules = Rules(pennies=1, county=False)
    for seed in range(300):
        env = scat_env.env(num_players=4, rules=rules, max_turns=10, eliminated="stay")
        env.reset(seed=seed)
        state = env.unwrapped._state
        rng = random.Random(seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        while not any(env.terminations.values()) and not any(env.truncations.values()):
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            for a, r in env.rewards.items():
                totals[a] += r
        if any(env.truncations.values()) and not all(state.active):
            break
    else:
        pytest.fail("no seed gave a truncation after an elimination")
    for seat, agent in enumerate(env.possible_agents):
        if state.active[seat]:
            assert env.truncations[agent] and not env.terminations[agent]
        else:
            assert env.terminations[agent] and not env.truncations[agent]
            assert totals[agent] == pytest.approx(-1 / 3)
    assert sum(totals.values()) == pytest.approx(0.0, abs=1e-9)


def test_the_docs_flat_infos_example_runs():
    blocks = _blocks(ROOT / "docs" / "LIBRARIES.md",
                     "## PettingZoo: the two options for tensor libraries", "python")
    assert len(blocks) == 1 and ".hand_results(" in blocks[0]
    exec(compile(blocks[0], "docs/LIBRARIES.md", "exec"), {"__name__": "docs_example"})


# -- TorchRL ---------------------------------------------------------------------------------


@pytest.fixture
def one_torch_thread():
    """TorchRL steps tiny tensors one env step at a time; on a shared machine a second
    thread only waits (docs/LIBRARIES.md). The examples set it; the test restores it."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def torchrl_env(n: int, rules: str = "standard", seed: int = 0) -> tuple[Any, Any]:
    """TorchRL's wrapper around the env with the tensor options, and the env itself."""
    pytest.importorskip("torchrl")
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType

    game = scat_env.env(num_players=n, rules=rules, **TENSOR_OPTIONS)
    return PettingZooWrapper(env=game, use_mask=True, seed=seed,
                             group_map=MarlGroupMapType.ALL_IN_ONE_GROUP), game


@pytest.mark.parametrize("n", [2, 3, 6])
def test_torchrl_specs_check_out_and_hold_the_flat_info_keys(n, one_torch_thread):
    pytest.importorskip("torchrl")
    from torchrl.envs.utils import check_env_specs

    env, _ = torchrl_env(n)
    check_env_specs(env)
    info_spec = env.observation_spec["agents", "info"]
    assert set(info_spec.keys()) == set(FLAT_INFO_KEYS)
    assert env.observation_spec["agents", "action_mask"].shape == (n, scat_env.NUM_ACTIONS)


@pytest.mark.parametrize("n,rules", [(2, "standard"), (3, "standard"), (5, "standard"),
                                     (3, "golf"), (3, "french_canadian")])
def test_torchrl_plays_whole_games_of_legal_moves(n, rules, one_torch_thread):
    """Random rollouts through the wrapper: one seat moves per step and its move is legal,
    the game runs to its end (seats put out on the way included), the game rewards sum to
    zero with +1 for the winner, and the last infos are the game's final lives."""
    import torch

    env, scat = torchrl_env(n, rules, seed=n)
    for _ in range(2):
        game = env.rollout(20_000, break_when_any_done=True)
        done = game["next", "done"].squeeze(-1)
        assert done[-1] and not done[:-1].any()
        moved = game["agents", "mask"]
        assert (moved.sum(-1) == 1).all()
        action = game["agents", "action"]
        legal = game["agents", "action_mask"].gather(-1, action.unsqueeze(-1)).squeeze(-1)
        assert legal[moved].all()
        totals = game["next", "agents", "reward"].sum(0).squeeze(-1)
        assert totals.sum().item() == pytest.approx(0.0, abs=1e-5)
        assert totals.max().item() == pytest.approx(1.0)
        state = scat.unwrapped._state
        assert state.is_terminal()
        final = game["next", "agents", "info"][-1]
        assert final["lives"].tolist() == [float(v) for v in state.lives]
        assert final["active"].tolist() == [float(a) for a in state.active]
        ended = game["next", "agents", "info", "hands_ended"][:, 0].sum().item()
        assert ended == len(state.results) - int(game["agents", "info", "hands_ended"][0, 0])
        assert (game["next", "agents", "info", "illegal_move"] == -1).all()
        assert torch.isfinite(game["next", "agents", "observation", "observation"]).all()


def _blocks(path: Path, heading: str, fence: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    level = heading.split(" ", 1)[0]
    section = re.split(rf"\n#{{1,{len(level)}}} ", section, maxsplit=1)[0]
    return re.findall(rf"```{fence}\n(.*?)```", section, re.S)


def test_the_documented_torchrl_game_runs(one_torch_thread):
    """docs/LIBRARIES.md's game through the wrapper runs. Its block is fenced ``py``, not
    ``python``: ``python`` blocks of the docs run on the default install, which has no
    TorchRL."""
    pytest.importorskip("torchrl")
    blocks = _blocks(ROOT / "docs" / "LIBRARIES.md", "### One game through the wrapper", "py")
    assert len(blocks) == 1 and 'infos="flat", eliminated="stay"' in blocks[0]
    exec(compile(blocks[0], "docs/LIBRARIES.md", "exec"), {"__name__": "docs_example"})


# MAPPO (the same loop with a centralised critic) in the slow tier: one training run is
# enough for the default suite's time.
@pytest.mark.parametrize("critic", ["ippo", pytest.param("mappo", marks=pytest.mark.slow)])
def test_the_documented_ippo_loop_trains_with_torchrls_own_modules(critic, one_torch_thread):
    """docs/LIBRARIES.md's training loop, as written (IPPO) and with its centralised critic
    (MAPPO): every iteration collects whole games of legal moves and takes its optimiser
    steps, and the losses stay finite. The IPPO run then plays the docs' matches as a scat
    agent (``play_game`` refuses an illegal move)."""
    pytest.importorskip("torchrl")
    import torch

    blocks = _blocks(ROOT / "docs" / "LIBRARIES.md", "## TorchRL", "python")[:2]
    assert "ClipPPOLoss" in blocks[0] and "play_game" in blocks[1]
    code = blocks[0]
    if critic == "mappo":
        assert "CENTRALISED_CRITIC = False" in code
        code = code.replace("CENTRALISED_CRITIC = False", "CENTRALISED_CRITIC = True")
    else:
        code += blocks[1]
    ns: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(code, "docs/LIBRARIES.md", "exec"), ns)
    optim, data = ns["optim"], ns["data"]
    steps = {int(s["step"]) for s in optim.state.values()}
    assert steps == {ns["ITERATIONS"] * ns["EPOCHS"]}
    assert ns["critic"].module.centralized is (critic == "mappo")
    assert data.shape[0] == ns["FRAMES_PER_BATCH"]
    moved = data["agents", "mask"]
    assert (moved.sum(-1) == 1).all()
    action = data["agents", "action"].unsqueeze(-1)
    assert data["agents", "action_mask"].gather(-1, action).squeeze(-1)[moved].all()
    assert data["next", "done"].any()
    assert torch.isfinite(ns["loss"]).all()


# -- RLlib, where it is installed --------------------------------------------------------------


def test_the_docs_rllib_rollouts_run_where_rllib_is_installed():
    """RLlib is no extra of the project (it pins an older gymnasium); where it is installed,
    its PettingZooEnv plays whole games of the default env (docs/LIBRARIES.md)."""
    pytest.importorskip("ray.rllib")
    blocks = _blocks(ROOT / "docs" / "LIBRARIES.md", "## RLlib", "python")
    assert len(blocks) == 1 and "PettingZooEnv(scat_env.env(" in blocks[0]
    exec(compile(blocks[0], "docs/LIBRARIES.md", "exec"), {"__name__": "docs_example"})
