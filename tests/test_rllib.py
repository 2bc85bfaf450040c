"""RLlib trains on scat: the MultiAgentEnv adapter, the masked module, the export and its
agent spec ``rllib:PATH``, the config and the command line (training.adapters.rllib).

The tests that need RLlib skip where it is not installed (``pip install -e ".[rllib]"``);
the config, the export reader and the command line's refusal are checked everywhere. One
short training run (one iteration) and the README's example run in the default suite;
a longer run that must beat ``random``, and a resumed run, are in the slow tier.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hang_limits import hang_limit

from agents import make_agent
from agents.match import play_game
from scat_env import Rules
from training.config import RLlibConfig, load_config

ROOT = Path(__file__).resolve().parents[1]
#: A run that takes one RLlib iteration of a few hundred samples.
TINY = {"total_samples": 300, "train_batch_samples": 300, "minibatch_samples": 150,
        "epochs": 1, "hidden": 32, "layers": 1, "final_eval_games": 0, "progress": False}


def _blocks(path: Path, heading: str, fence: str) -> list[str]:
    """The ``fence`` code blocks of one section of a Markdown file."""
    section = path.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1]
    level = heading.split(" ", 1)[0]
    section = re.split(rf"\n#{{1,{len(level)}}} ", section, maxsplit=1)[0]
    return re.findall(rf"```{fence}\n(.*?)```", section, re.S)


def needs_rllib() -> Any:
    return pytest.importorskip("ray.rllib", reason="RLlib is not installed (.[rllib])")


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    """One local Ray for this file's training runs (each run would start its own)."""
    needs_rllib()
    import ray

    from training.adapters.rllib import start_ray

    started = start_ray(RLlibConfig())
    yield
    if started:
        ray.shutdown()


def random_game(env: Any, seed: int, rng: np.random.Generator) -> list[tuple[Any, ...]]:
    """One game of random legal moves through the adapter; every step's return."""
    obs, _ = env.reset(seed=seed)
    steps: list[tuple[Any, ...]] = [(obs, {}, {"__all__": False}, {"__all__": False})]
    term: dict[str, bool] = {}
    trunc: dict[str, bool] = {}
    while True:
        live = [a for a in obs if not term.get(a) and not trunc.get(a)]
        assert len(live) == 1, f"one learning seat moves at a time, got {live}"
        legal = np.flatnonzero(obs[live[0]]["action_mask"])
        obs, rew, term, trunc, _ = env.step({live[0]: int(rng.choice(legal))})
        steps.append((obs, rew, term, trunc))
        assert set(rew) == set(obs), "every observation comes with its reward"
        assert "__all__" in term and "__all__" in trunc
        if term["__all__"] or trunc["__all__"]:
            return steps


def returns(steps: list[tuple[Any, ...]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for _, rew, _, _ in steps:
        for a, r in rew.items():
            total[a] = total.get(a, 0.0) + r
    return total


# -- the env adapter ---------------------------------------------------------------------


def test_rllibs_own_env_checker_accepts_the_adapter():
    needs_rllib()
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    from training.adapters.rllib import ScatMultiAgentEnv

    env = ScatMultiAgentEnv({"num_players": 3})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r".*Illegal move made", UserWarning)
        check_multiagent_environments(env)
    obs, infos = env.reset(seed=0)
    (agent,) = obs
    assert set(obs[agent]) == {"observations", "action_mask"}  # RLlib's masking keys
    assert env.observation_spaces[agent].contains(obs[agent])
    assert obs[agent]["action_mask"].sum() >= 1 and infos == {}


def test_self_play_games_are_zero_sum_with_one_seat_to_move_at_a_time():
    needs_rllib()
    from training.adapters.rllib import ScatMultiAgentEnv

    rng = np.random.default_rng(0)
    for n in (2, 3, 4):
        env = ScatMultiAgentEnv({"num_players": n})
        for seed in range(3):
            total = returns(random_game(env, seed, rng))
            assert abs(sum(total.values())) < 1e-9 and max(total.values()) == 1.0


def test_hand_shaping_reaches_the_learning_seats_and_stays_zero_sum():
    needs_rllib()
    from training.adapters.rllib import ScatMultiAgentEnv

    rng = np.random.default_rng(1)
    env = ScatMultiAgentEnv({"num_players": 3, "hand_reward": 0.25})
    for seed in range(3):
        total = returns(random_game(env, seed, rng))
        assert abs(sum(total.values())) < 1e-9
        assert max(total.values()) > 1.0 or min(total.values()) < -0.5  # shaping was paid


def _eliminations(env: Any, rng: np.random.Generator) -> Iterator[tuple[str, str, Any]]:
    """(seat that moved, seat put out, that step) for every elimination of some games."""
    for seed in range(40):
        obs, _ = env.reset(seed=seed)
        term: dict[str, bool] = {}
        trunc: dict[str, bool] = {}
        while True:
            (mover,) = [a for a in obs if not term.get(a) and not trunc.get(a)]
            legal = np.flatnonzero(obs[mover]["action_mask"])
            obs, rew, term, trunc, _ = env.step({mover: int(rng.choice(legal))})
            for a, done in term.items():
                if a != "__all__" and done and not term["__all__"]:
                    yield mover, a, (obs, rew, term, trunc)
            if term["__all__"] or trunc["__all__"]:
                break


def test_a_seat_put_out_on_another_seats_move_gets_its_final_observation_and_reward():
    needs_rllib()
    from training.adapters.rllib import ScatMultiAgentEnv

    env = ScatMultiAgentEnv({"num_players": 4})
    found = 0
    for mover, out, (obs, rew, term, trunc) in _eliminations(env, np.random.default_rng(2)):
        if mover == out:
            continue
        found += 1
        assert out in obs and not obs[out]["action_mask"].any()  # final, nothing to play
        assert rew[out] == pytest.approx(-1 / 3)  # the game's loss, in the step it happened
        assert not trunc.get(out) and not term["__all__"]
        live = [a for a in obs if not term.get(a)]
        assert len(live) == 1 and obs[live[0]]["action_mask"].any()  # and play goes on
    assert found, "no game put a seat out on another seat's move"


def test_a_game_cut_at_the_turn_cap_truncates_every_learning_seat_still_in():
    needs_rllib()
    from training.adapters.rllib import ScatMultiAgentEnv

    env = ScatMultiAgentEnv({"num_players": 3, "max_turns": 4})
    steps = random_game(env, 0, np.random.default_rng(3))
    obs, rew, term, trunc = steps[-1]
    assert trunc["__all__"] and not term["__all__"]
    assert set(obs) == {"player_0", "player_1", "player_2"}  # every seat's last observation
    assert all(trunc[a] and not term[a] for a in obs)
    assert abs(sum(returns(steps).values())) < 1e-9  # nobody won: nobody is paid


def test_baselines_play_inside_the_env_from_their_own_view(monkeypatch):
    needs_rllib()
    import training.adapters.rllib as rt

    made: dict[str, int] = {}

    def spy_agent(spec: str, seed: int | None = None) -> Any:
        made[spec] = made.get(spec, 0) + 1
        return make_agent(spec, seed)

    monkeypatch.setattr(rt, "make_agent", spy_agent)
    env = rt.ScatMultiAgentEnv({"num_players": 3, "opponents": {"greedy": 1.0}})
    learners = set()
    for seed in range(3):
        steps = random_game(env, seed, np.random.default_rng(seed))
        seats = {a for obs, *_ in steps for a in obs}
        assert len(seats) == 1  # one learning seat; the other two never reach RLlib
        learners |= seats
        (me,) = seats
        assert [env.roles[a] for a in env.possible_agents].count("self") == 1
        assert env.roles[me] == "self"
    assert made["greedy"] >= 6 and len(learners) >= 2  # the learner's seat is drawn

    class ViewOnly:
        def __init__(self, seat: int) -> None:
            self.seat = seat

        def act(self, view: Any) -> int:
            assert view.seat == self.seat and not hasattr(view, "hands")
            return int(view.legal_actions[0])

    env.reset(seed=5)
    for a, role in env.roles.items():
        if role != "self":
            env._players[a] = ViewOnly(env.aec.agent_name_mapping[a])
    random_game_from_here(env, np.random.default_rng(5))


def random_game_from_here(env: Any, rng: np.random.Generator) -> None:
    obs = {env.aec.agent_selection: env._observation(env.aec.observe(env.aec.agent_selection))}
    term: dict[str, bool] = {}
    while not term.get("__all__"):
        (mover,) = [a for a in obs if not term.get(a)]
        legal = np.flatnonzero(obs[mover]["action_mask"])
        obs, _, term, trunc, _ = env.step({mover: int(rng.choice(legal))})
        if trunc["__all__"]:
            break


def test_snapshot_seats_play_the_frozen_weights_once_there_are_any():
    needs_rllib()
    from agents.adapters.rllib import layer_shapes
    from training.adapters.rllib import ScatMultiAgentEnv

    env = ScatMultiAgentEnv({"num_players": 3, "opponents": {"snapshot": 1.0}})
    steps = random_game(env, 0, np.random.default_rng(0))
    assert len({a for obs, *_ in steps for a in obs}) == 3  # no snapshot yet: all learn
    size = env.observation_spaces["player_0"]["observations"].shape[0]
    rng = np.random.default_rng(0)
    env.set_snapshot({k: rng.normal(size=s).astype(np.float32) * 0.1
                      for k, s in layer_shapes(size, 16, 1, 67).items()})
    for seed in range(3):
        steps = random_game(env, seed, np.random.default_rng(seed))
        assert len({a for obs, *_ in steps for a in obs}) == 1
        assert sorted(env.roles.values()) == ["self", "snapshot", "snapshot"]


def test_the_module_masks_illegal_actions_and_the_export_reproduces_its_logits(tmp_path):
    needs_rllib()
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.adapters.rllib import RLlibExport
    from training.adapters.rllib import ScatMaskedMLP, ScatMultiAgentEnv, export_policy

    env = ScatMultiAgentEnv({"num_players": 3})
    space = env.observation_spaces["player_0"]
    module = RLModuleSpec(module_class=ScatMaskedMLP, observation_space=space,
                          action_space=env.action_spaces["player_0"],
                          model_config={"hidden": 24, "layers": 2}).build()
    names = {k: tuple(v.shape) for k, v in module.state_dict().items()}
    from agents.adapters.rllib import layer_shapes

    assert names == layer_shapes(space["observations"].shape[0], 24, 2, 67)
    obs, _ = env.reset(seed=4)
    (agent,) = obs
    batch = {Columns.OBS: {k: torch.as_tensor(v)[None] for k, v in obs[agent].items()}}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
    mask = obs[agent]["action_mask"] > 0
    assert (logits[~mask] <= -1e8).all() and (logits[mask] > -1e8).all()
    cfg = RLlibConfig(hidden=24, layers=2)
    weights = {k: v.detach().numpy() for k, v in module.state_dict().items()}
    export_policy(weights, tmp_path / "policy", cfg, space["observations"].shape[0], {})
    mine = RLlibExport(tmp_path / "policy").policy.logits(obs[agent]["observations"], mask)
    np.testing.assert_allclose(mine[mask], logits[mask], rtol=1e-5, atol=1e-5)


# -- training --------------------------------------------------------------------------


def test_a_short_run_checkpoints_exports_and_its_policy_plays_as_rllib_spec(tmp_path, ray_local):
    from training.adapters.rllib import train

    cfg = RLlibConfig(**{**TINY, "final_eval_games": 1, "eval_opponents": ["random"],
                         "opponents": {"self": 1.0, "snapshot": 1.0, "random": 1.0},
                         "snapshot_every_iterations": 1})
    out = tmp_path / "run"
    summary = train(cfg, out, log=lambda m: None)
    assert summary["iterations"] == 1 and summary["samples"] >= 300
    assert summary["final_eval"]["games"] == {"random_x3": 3}
    meta = json.loads((out / "policy" / "meta.json").read_text())
    assert meta["num_players"] == 3 and meta["rules"] == "standard"
    assert meta["architecture"] == {"kind": "mlp", "activation": "relu", "hidden": 32,
                                    "layers": 1, "actions": 67, "observation_size": 388}
    assert not list(out.rglob("*.pkl")) and not (out / "checkpoint").exists()  # no pickles
    state = json.loads((out / "state.json").read_text())
    assert state["snapshots"] == 1 and state["snapshot_envs"] == 1  # the frozen copy arrived
    rules = Rules.preset("standard")
    for path in (out, out / "policy"):
        agent = make_agent(f"rllib:{path}", seed=0)
        rec = play_game([agent, make_agent("random", seed=1), make_agent("expert", seed=2)],
                        rules, seed=3)
        assert rec.winner in (0, 1, 2)


def test_the_documented_rllib_example_runs(tmp_path, monkeypatch, ray_local):
    blocks = _blocks(ROOT / "docs" / "LIBRARIES.md", "### From Python", "py")
    assert len(blocks) == 1 and "rllib:" in blocks[0]
    monkeypatch.chdir(tmp_path)  # it writes runs/ where it runs
    exec(compile(blocks[0], "docs/LIBRARIES.md", "exec"), {"__name__": "docs_example"})
    assert (tmp_path / "runs" / "rllib_demo" / "policy" / "weights.pt").is_file()


def test_a_damaged_state_file_is_refused_in_one_line(tmp_path):
    needs_rllib()
    from training.adapters.rllib import read_state

    for text in ("{", '{"history": []}', '{"history": [], "iterations": -1, "samples": 0, '
                 '"snapshots": 0, "elapsed_s": 0}'):
        (tmp_path / "state.json").write_text(text)
        with pytest.raises(ValueError, match="state") as err:
            read_state(tmp_path / "state.json")
        assert "\n" not in str(err.value)


@pytest.mark.slow
def test_a_resumed_run_goes_on_from_its_checkpoint(tmp_path, ray_local):
    from training.adapters.rllib import train

    out = tmp_path / "run"
    first = train(RLlibConfig(**TINY), out, log=lambda m: None)
    again = train(RLlibConfig(**{**TINY, "total_samples": 600}), out, resume=True,
                  log=lambda m: None)
    assert again["iterations"] == first["iterations"] + 1
    assert again["samples"] >= first["samples"] + 300


def test_a_resume_reads_the_export_and_refuses_another_network_in_one_line(tmp_path):
    """The export and state.json are the checkpoint: read as JSON and ``weights_only`` torch,
    checked, and refused in one line when the config asks for another network."""
    needs_rllib()
    from training.adapters.rllib import read_resume_point

    _export(tmp_path / "policy", hidden=8)
    (tmp_path / "state.json").write_text(json.dumps(
        {"history": [], "iterations": 2, "samples": 900, "snapshots": 0, "elapsed_s": 3.5}))
    weights, state = read_resume_point(RLlibConfig(hidden=8, layers=1), tmp_path)
    assert weights["pi.0.weight"].shape == (8, 388) and state["samples"] == 900
    with pytest.raises(ValueError) as err:
        read_resume_point(RLlibConfig(hidden=32, layers=1, num_players=4), tmp_path)
    assert str(err.value) == (f"--resume: the run in {str(tmp_path)!r} has hidden 8 (the config "
                              "says 32), num_players 3 (the config says 4)")
    (tmp_path / "state.json").unlink()
    with pytest.raises(ValueError, match="no RLlib run to continue"):
        read_resume_point(RLlibConfig(hidden=8, layers=1), tmp_path)


@pytest.mark.slow
def test_a_minute_of_training_beats_random_clearly(tmp_path, ray_local):
    from training.adapters.rllib import train

    cfg = RLlibConfig(total_samples=10**9, time_limit_s=60, envs_per_env_runner=8,
                      final_eval_games=200, eval_opponents=["random"], progress=False)
    summary = train(cfg, tmp_path / "run", log=lambda m: None)
    low, _ = summary["final_eval"]["ci95"]["random_x3"]
    assert low > 1 / 3, summary["final_eval"]


# -- the agent spec, without RLlib ---------------------------------------------------------


def _export(folder: Path, num_players: int = 3, hidden: int = 8, **meta: Any) -> Path:
    from agents.adapters.rllib import layer_shapes, write_export
    from scat_env.observation import observation_size

    size = observation_size(num_players)
    rng = np.random.default_rng(0)
    weights = {k: rng.normal(size=s).astype(np.float32)
               for k, s in layer_shapes(size, hidden, 1, 67).items()}
    write_export(weights, folder, {
        "architecture": {"kind": "mlp", "activation": "relu", "observation_size": size,
                         "hidden": hidden, "layers": 1, "actions": 67},
        "num_players": num_players, "rules": "standard",
        "rules_fields": {"deck": "standard", "knock_mode": "lowest"}, **meta})
    return folder


def test_the_rllib_spec_plays_from_an_export_with_torch_alone(tmp_path):
    pytest.importorskip("torch")
    folder = _export(tmp_path / "policy")
    code = ("import sys; sys.modules['ray'] = None\n"  # no Ray at all
            "from agents import make_agent\nfrom agents.match import play_game\n"
            "from scat_env import Rules\n"
            f"a = make_agent('rllib:{folder}', seed=0)\n"
            "r = play_game([a, make_agent('greedy'), make_agent('random')], "
            "Rules.preset('standard'), seed=1)\nprint('winner', r.winner)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=hang_limit(300), check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"winner [012]", done.stdout)


def test_a_bad_rllib_path_is_one_line_naming_it(tmp_path):
    pytest.importorskip("torch")
    folder = _export(tmp_path / "good")
    (tmp_path / "file.txt").write_text("x")
    cases = {"missing": str(tmp_path / "nope"), "a file": str(tmp_path / "file.txt"),
             "empty folder": str(tmp_path)}
    bad_meta = _export(tmp_path / "meta")
    (bad_meta / "meta.json").write_text('{"format": "other"}')
    cases["foreign meta"] = str(bad_meta)
    torn = _export(tmp_path / "torn")
    (torn / "weights.pt").write_bytes((folder / "weights.pt").read_bytes()[:100])
    cases["truncated weights"] = str(torn)
    wrong = _export(tmp_path / "wrong")
    meta = json.loads((wrong / "meta.json").read_text())
    meta["architecture"]["hidden"] = 9
    (wrong / "meta.json").write_text(json.dumps(meta))
    cases["shapes that do not fit"] = str(wrong)
    for why, path in cases.items():
        with pytest.raises(ValueError) as err:
            make_agent(f"rllib:{path}")
        text = str(err.value)
        assert "\n" not in text and "Traceback" not in text, why
        assert Path(path).name in text, (why, text)
    with pytest.raises(ValueError, match="needs the exported policy"):
        make_agent("rllib:")


def test_the_rllib_spec_refuses_a_table_of_another_size(tmp_path):
    pytest.importorskip("torch")
    agent = make_agent(f"rllib:{_export(tmp_path / 'p', num_players=3)}")
    with pytest.raises(ValueError, match="trained for tables of 3 players"):
        agent.check_table(4, Rules.preset("standard"))
    with pytest.raises(ValueError, match="observation"):
        agent.check_table(3, Rules.preset("french_canadian"))  # a points race reads more


# -- config and command line ---------------------------------------------------------------


def test_the_shipped_rllib_config_loads_and_is_short():
    trainer, cfg = load_config(ROOT / "configs/train/rllib.yaml")
    assert trainer == "rllib" and isinstance(cfg, RLlibConfig)
    assert cfg.time_limit_s is not None and cfg.time_limit_s <= 300
    assert cfg.num_gpus_per_learner == 0 and cfg.ray_address is None


@pytest.mark.parametrize("field, value, words", [
    ("num_players", 11, "num_players"),
    ("minibatch_samples", 10_000, "minibatch_samples"),
    ("num_gpus_per_learner", -1, "num_gpus_per_learner"),
    ("ray_address", "", "ray_address"),
    ("num_env_runners", -1, "num_env_runners"),
    ("opponents", {"greedy": -1}, "opponents"),
    ("lr", 0, "lr"),
    ("gpus", 1, "unknown field"),
])
def test_a_bad_rllib_config_is_refused_naming_the_field(tmp_path, field, value, words):
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps({"trainer": "rllib", field: value}))
    with pytest.raises(ValueError) as err:
        load_config(path)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_without_rllib_scat_train_says_how_to_install_it_in_one_line(capsys, monkeypatch,
                                                                      tmp_path):
    from scat_cli.main import main

    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # as where it is not installed
    code = main(["train", "--config", str(ROOT / "configs/train/rllib.yaml"),
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == "scat train: error: RLlib is not installed: pip install -e '.[rllib]'"
    assert not (tmp_path / "run").exists()
