"""Checkpoints and model zips never run code, resume stays exact, failed writes lose nothing.

- The native checkpoint's rollout state is tensors and plain values: a crafted checkpoint
  (a pickle where the rollout state was, a pickled object anywhere) is refused and runs
  nothing; every field is checked on resume and a bad one is one line naming it.
- ``sb3:PATH`` and SB3 resume read the zip themselves: the pickles in its ``data`` member
  are never decoded.
- No error passes on torch's advice to load with ``weights_only=False``.
- A checkpoint write that fails (no space, read-only folder) is one line, exit status 2,
  no temp file, the previous checkpoint intact.
"""

from __future__ import annotations

import base64
import dataclasses
import errno
import io
import json
import pickle
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.registry import make_agent
from scat_cli.main import main
from scat_env import GameState, Rules
from scat_env.view import make_view
from training.config import PPOConfig
from training.ppo import Critic, PolicyNet, compute_gae, train
from training.rollout import (
    GAME_FIELDS,
    Runner,
    agent_from_plain,
    agent_rngs,
    game_from_plain,
    game_plain,
    random_state,
)

SMALL = dict(parallel_games=8, rollout_samples=256, minibatch_samples=256, epochs=1, hidden=16,
             eval_every_updates=0, final_eval_games=0, checkpoint_every_updates=1, progress=False,
             torch_threads=1, snapshot_every_updates=1)


class _Marker:
    """Unpickling this creates a file: the proof that a loader ran code from a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


def _tiny_run(folder: Path, **changes: object) -> PPOConfig:
    cfg = PPOConfig(player_counts=[2, 3], opponents={"self": 0.5, "snapshot": 0.2, "greedy": 0.3},
                    total_samples=500, seed=3, **{**SMALL, **changes})
    train(cfg, folder, log=lambda m: None)
    return cfg


# -- the native checkpoint ------------------------------------------------------------------
def test_resume_never_unpickles_a_crafted_rollout_state(tmp_path):
    cfg = _tiny_run(tmp_path)
    ckpt = tmp_path / "checkpoint.pt"
    data = torch.load(ckpt, weights_only=True)
    marker = tmp_path / "ran"
    data.pop("rollout", None)
    data["runner"] = pickle.dumps(_Marker(marker))  # where older versions kept a pickle
    torch.save(data, ckpt)
    with pytest.raises(ValueError, match="holds no rollout state.*never loaded") as err:
        train(dataclasses.replace(cfg, total_samples=1000), tmp_path, resume=True,
              log=lambda m: None)
    assert not marker.exists()
    assert "\n" not in str(err.value)


def test_a_checkpoint_holding_a_pickled_object_is_refused_without_unsafe_advice(tmp_path, capsys):
    cfg = _tiny_run(tmp_path)
    ckpt = tmp_path / "checkpoint.pt"
    data = torch.load(ckpt, weights_only=True)
    marker = tmp_path / "ran"
    data["history"] = [_Marker(marker)]
    torch.save(data, ckpt)
    with pytest.raises(ValueError) as err:
        train(dataclasses.replace(cfg, total_samples=1000), tmp_path, resume=True)
    with pytest.raises(ValueError) as err_agent:
        make_agent(f"ppo:{ckpt}")
    for exc in (err.value, err_agent.value):
        assert "not a scat-env policy/checkpoint file" in str(exc)
        assert "weights_only" not in str(exc) and "\n" not in str(exc)
    assert not marker.exists()


def test_the_checkpoint_reads_back_with_weights_only_and_holds_no_pickle(tmp_path):
    _tiny_run(tmp_path, privileged_critic=True)
    data = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert "runner" not in data and data["rollout"]["format"] == 1

    def walk(value: object) -> None:
        assert not isinstance(value, bytes | bytearray)
        if isinstance(value, dict):
            for k, v in value.items():
                assert isinstance(k, str | int)
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        else:
            assert value is None or isinstance(value, str | int | float | bool | torch.Tensor)

    walk(data["rollout"])


ALL_OPPONENTS = {"self": 1.0, "snapshot": 0.5, "random": 0.5, "greedy": 0.5, "threshold:22": 0.5,
                 "expert": 0.5, "ismcts:6": 0.3, "ppo:scat_ppo:sample": 0.5}


def _collect(runner: Runner, net: PolicyNet, critic: Critic | None, seed: int) -> dict:
    torch.manual_seed(seed)
    runner.collect(net, 0.1, critic)
    return runner.take_batch(*compute_gae(runner, 0.99, 0.95))


@pytest.mark.parametrize("privileged", [False, True])
def test_the_rollout_state_round_trips_exactly_with_every_kind_of_opponent(privileged):
    cfg = PPOConfig(player_counts=[3, 4], opponents=ALL_OPPONENTS, seed=7,
                    handoff="expert", handoff_players=2, random_lives=0.3,
                    privileged_critic=privileged,
                    **{**SMALL, "rollout_samples": 200, "parallel_games": 24})
    rules = Rules()
    torch.manual_seed(0)
    net = PolicyNet(Runner(cfg, rules, 0).encoder.size, 16, 2, cfg.max_players)
    critic = Critic(net.obs_size, 52 * cfg.max_players, 16, 2) if privileged else None
    runner = Runner(cfg, rules, cfg.seed)
    runner.add_snapshot(net.state_dict())
    runner.slots = [runner._new_slot() for _ in runner.slots]  # tables that seat snapshots too
    _collect(runner, net, critic, 1)
    _collect(runner, net, critic, 2)
    runner.collect(net, 0.1, critic)  # mid-rollout: finished trajectories pending
    buf = io.BytesIO()
    torch.save(runner.state_dict(), buf)
    buf.seek(0)
    twin = Runner(cfg, rules, 12345)
    twin.load_state_dict(torch.load(buf, weights_only=True), net.state_dict())
    kinds = {type(p).__name__ for s in runner.slots for p in s.players if p is not None}
    assert len(kinds - {"int"}) >= 4 and "int" in kinds, kinds  # snapshots and agents held
    for step in range(3):
        a = runner.take_batch(*compute_gae(runner, 0.99, 0.95)) if step == 0 else _collect(
            runner, net, critic, 10 + step)
        b = twin.take_batch(*compute_gae(twin, 0.99, 0.95)) if step == 0 else _collect(
            twin, net, critic, 10 + step)
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    assert (runner.env_steps, runner.games_done, list(runner.wins)) == (
        twin.env_steps, twin.games_done, list(twin.wins))


def test_every_agent_kind_continues_from_its_saved_generators(tmp_path):
    from test_rllib import _export  # a small RLlib export, written without RLlib

    from agents.registry import available

    state, pick, views = GameState(3, seed=2), random.Random(2), []
    while len(views) < 40:
        if state.is_terminal():
            state = GameState(3, seed=len(views))
        views.append(make_view(state, state.current_player))
        state.apply_action(pick.choice(state.legal_actions()))
    specs = ["random", "greedy", "threshold:20", "expert", "ismcts:8", "ppo:scat_ppo:sample",
             "ppo:scat_ppo_set:sample", "compact:scat_batch:sample",
             f"rllib:{_export(tmp_path / 'rllib')}:sample"]
    builtin = {name for name in available() if name != "sb3" and not name.startswith("test")}
    assert {s.split(":")[0] for s in specs} >= builtin  # a new kind of agent: add it here
    for spec in specs:
        agent = make_agent(spec, seed=5)
        for view in views[:15]:
            agent.act(view)
        plain = {"spec": agent.spec, "rngs": [random_state(r) for r in agent_rngs(agent)]}
        from training.rollout import _Reader

        twin = agent_from_plain(plain, "p", _Reader("rollout state"), [spec])
        assert [agent.act(v) for v in views[15:]] == [twin.act(v) for v in views[15:]], spec


@pytest.mark.parametrize("preset", ["standard", "gin", "italian", "moyer_second_knock",
                                    "ride_the_bus_extra_stops", "computer"])
def test_every_game_field_round_trips(preset):
    rules = Rules.preset(preset)
    rng = random.Random(preset)
    for game in range(6):
        state = GameState(rng.choice([2, 3, 5]), rules, seed=game)
        steps = 0
        while not state.is_terminal() and steps < 400:
            if rng.random() < 0.1:
                plain = game_plain(state)
                buf = io.BytesIO()
                torch.save(plain, buf)
                buf.seek(0)
                twin = game_from_plain(torch.load(buf, weights_only=True), rules, "g")
                for name in GAME_FIELDS:
                    mine, theirs = getattr(state, name), getattr(twin, name)
                    if name == "rng":
                        mine, theirs = mine.getstate(), theirs.getstate()
                    assert mine == theirs, name
                    assert type(mine) is type(theirs), name
                tail = []
                for _ in range(60):  # both play on alike, deals included
                    if state.is_terminal():
                        break
                    a = rng.choice(state.legal_actions())
                    state.apply_action(a)
                    twin.apply_action(a)
                    tail.append(a)
                assert _same(state, twin)
                steps += len(tail)
                continue
            state.apply_action(rng.choice(state.legal_actions()))
            steps += 1


def _same(a: GameState, b: GameState) -> bool:
    for name in GAME_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if name == "rng":
            x, y = x.getstate(), y.getstate()
        if x != y:
            return False
    return True


def _saved_state(tmp_path: Path) -> tuple[PPOConfig, dict]:
    cfg = _tiny_run(tmp_path)
    return cfg, torch.load(tmp_path / "checkpoint.pt", weights_only=True)


def _set(plain: dict, path: str, value: object) -> None:
    *head, last = path.split("/")
    for key in head:
        plain = plain[int(key)] if isinstance(plain, list) else plain[key]
    if isinstance(plain, list):
        plain[int(last)] = value
    else:
        plain[last] = value


TAMPERED = [
    ("env_steps", "lots", "env_steps: expected an integer"),
    ("rng/words", torch.zeros(10, dtype=torch.int64), "rng.words: expected a torch.int64 tensor"),
    ("slots/0/game/stock", [0, 0, 0], r"slots\[0\].game"),
    ("slots/0/game/current_player", 9, r"slots\[0\].game.current_player"),
    ("slots/0/game/phase", "shuffle", r"slots\[0\].game.phase"),
    ("slots/0/kinds", [7, 7], r"slots\[0\].kinds"),
    ("slots/0/players", [{"spec": "sb3:/tmp/x.zip", "rngs": []}] * 2, r"slots\[0\].players"),
    ("snapshots/0/pi.bias", torch.zeros(3), r"snapshots\[0\]\['pi.bias'\]"),
    ("buffer/rewards", torch.tensor([float("nan")], dtype=torch.float64), "buffer.rewards"),
    ("np_rng/bit_generator", "MT19937", "np_rng.bit_generator"),
    ("wins", [(2, 0.5)] * 501, "wins"),
    ("format", 2, "format 2"),
]


@pytest.mark.parametrize("path, value, message", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_a_tampered_rollout_field_is_one_line_naming_it(tmp_path, path, value, message):
    cfg, data = _saved_state(tmp_path)
    _set(data["rollout"], path, value)
    torch.save(data, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=message) as err:
        train(dataclasses.replace(cfg, total_samples=1000), tmp_path, resume=True,
              log=lambda m: None)
    assert "\n" not in str(err.value) and len(str(err.value)) < 400
    assert str(tmp_path / "checkpoint.pt") in str(err.value)


def test_tampered_checkpoint_through_the_cli_is_exit_status_2(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text("trainer: native\nplayer_counts: [2]\nopponents: {self: 1.0}\n"
                      "parallel_games: 4\nrollout_samples: 128\nminibatch_samples: 128\n"
                      "epochs: 1\nhidden: 16\neval_every_updates: 0\nfinal_eval_games: 0\n"
                      "checkpoint_every_updates: 1\ntorch_threads: 1\ntotal_samples: 256\n")
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    data = torch.load(out / "checkpoint.pt", weights_only=True)
    data["rollout"]["slots"][0]["game"]["hands"][0] = [99, 98, 97]
    torch.save(data, out / "checkpoint.pt")
    capsys.readouterr()
    assert main(["train", "--config", str(config), "--out", str(out), "--resume",
                 "--samples", "512"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if "error" in line] == err[-1:]
    assert "slots[0].game.hands[0][0]: expected a card" in err[-1]


# -- SB3 zips -------------------------------------------------------------------------------
def _sb3_zip(tmp_path: Path) -> Path:
    from sb3_contrib import MaskablePPO

    from training.single_agent import ScatSingleAgentEnv

    path = tmp_path / "tiny.zip"
    MaskablePPO("MlpPolicy", ScatSingleAgentEnv([2]), n_steps=64, batch_size=32, seed=0,
                policy_kwargs={"net_arch": [16, 16]}).save(path)
    return path


def _rewrite(path: Path, **members: bytes) -> None:
    with zipfile.ZipFile(path) as zf:
        blobs = {n: zf.read(n) for n in zf.namelist()}
    blobs.update(members)
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in blobs.items():
            zf.writestr(name, blob)


def _crafted_data(path: Path, marker: Path) -> bytes:
    with zipfile.ZipFile(path) as zf:
        data = json.loads(zf.read("data"))
    evil = base64.b64encode(pickle.dumps(_Marker(marker))).decode()
    for key in ("policy_class", "observation_space", "clip_range"):
        data[key] = {":type:": "<class 'x'>", ":serialized:": evil}
    return json.dumps(data).encode()


def test_an_sb3_zip_whose_data_holds_a_pickle_plays_without_running_it(tmp_path):
    from agents.sb3 import _load_sb3

    path = _sb3_zip(tmp_path)
    marker = tmp_path / "ran"
    _rewrite(path, data=_crafted_data(path, marker))
    _load_sb3.cache_clear()
    agent = make_agent(f"sb3:{path}", seed=1)
    state = GameState(2, seed=3)
    for _ in range(20):
        if state.is_terminal():
            break
        action = agent.act(make_view(state, state.current_player))
        assert action in state.legal_actions()
        state.apply_action(action)
    assert not marker.exists()


def test_an_sb3_zip_whose_weights_hold_a_pickle_is_one_line(tmp_path):
    from agents.sb3 import _load_sb3

    path = _sb3_zip(tmp_path)
    marker = tmp_path / "ran"
    buf = io.BytesIO()
    torch.save({"mlp_extractor.policy_net.0.weight": _Marker(marker)}, buf)
    _rewrite(path, **{"policy.pth": buf.getvalue()})
    _load_sb3.cache_clear()
    with pytest.raises(ValueError, match="policy.pth.*not a scat-env policy/checkpoint") as err:
        make_agent(f"sb3:{path}")
    assert "weights_only" not in str(err.value) and "\n" not in str(err.value)
    assert not marker.exists()


@pytest.mark.parametrize("member, blob, message", [
    ("policy.pth", None, "no 'policy.pth'"),
    ("policy.pth", b"garbage", "corrupt or truncated"),
])
def test_a_broken_sb3_zip_is_one_line(tmp_path, member, blob, message):
    from agents.sb3 import _load_sb3

    path = _sb3_zip(tmp_path)
    with zipfile.ZipFile(path) as zf:
        blobs = {n: zf.read(n) for n in zf.namelist() if n != member or blob is not None}
    if blob is not None:
        blobs[member] = blob
    with zipfile.ZipFile(path, "w") as zf:
        for name, b in blobs.items():
            zf.writestr(name, b)
    _load_sb3.cache_clear()
    with pytest.raises(ValueError, match=message):
        make_agent(f"sb3:{path}")


def test_sb3_weights_that_do_not_fit_are_refused(tmp_path):
    from agents.sb3 import read_sb3_zip

    path = _sb3_zip(tmp_path)
    with zipfile.ZipFile(path) as zf:
        weights = torch.load(io.BytesIO(zf.read("policy.pth")), weights_only=True)
    weights["action_net.weight"] = torch.zeros(3, 16)
    buf = io.BytesIO()
    torch.save(weights, buf)
    _rewrite(path, **{"policy.pth": buf.getvalue()})
    with pytest.raises(ValueError, match=r"action_net.weight is torch.float32\[3, 16\]"):
        read_sb3_zip(path)


def test_sb3_training_resumes_and_its_checkpoint_plays_without_sb3s_loader(tmp_path, monkeypatch):
    from sb3_contrib import MaskablePPO

    from agents.sb3 import _load_sb3
    from training.config import SB3Config
    from training.sb3_train import train as sb3_train

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("SB3's unpickling loader was called")

    monkeypatch.setattr(MaskablePPO, "load", refuse)
    cfg = SB3Config(player_counts=[2], n_envs=1, vec_env="dummy", total_samples=128,
                    rollout_samples_per_env=64, minibatch_samples=64, epochs=1, hidden=16,
                    eval_every_samples=0, final_eval_games=0, checkpoint_every_samples=64,
                    progress=False, opponents={"random": 1.0})
    out = tmp_path / "run"
    sb3_train(cfg, out, log=lambda m: None)
    marker = tmp_path / "ran"
    _rewrite(out / "checkpoint.zip", data=_crafted_data(out / "checkpoint.zip", marker))
    summary = sb3_train(dataclasses.replace(cfg, total_samples=256), out, resume=True,
                        log=lambda m: None)
    assert summary["samples"] >= 256 and not marker.exists()
    _load_sb3.cache_clear()
    agent = make_agent(f"sb3:{out / 'checkpoint.zip'}")
    state = GameState(2, seed=1)
    assert agent.act(make_view(state, state.current_player)) in state.legal_actions()
    with pytest.raises(ValueError, match="does not match the config"):
        sb3_train(dataclasses.replace(cfg, hidden=32, total_samples=512), out, resume=True,
                  log=lambda m: None)


# -- failed writes --------------------------------------------------------------------------
def _full_disk(obj: object, f: object, *args: object, **kwargs: object) -> None:
    Path(str(f)).write_bytes(b"PK\x03\x04 half a checkpoint")
    raise OSError(errno.ENOSPC, "No space left on device")


def _read_only(*args: object, **kwargs: object) -> None:
    raise PermissionError(errno.EROFS, "Read-only file system")


@pytest.mark.parametrize("target, fault", [("torch.save", _full_disk),
                                           ("tempfile.mkstemp", _read_only)])
def test_a_failed_checkpoint_write_is_one_line_and_keeps_the_previous_one(
        tmp_path, capsys, monkeypatch, target, fault):
    config = tmp_path / "tiny.yaml"
    config.write_text("trainer: native\nplayer_counts: [2]\nopponents: {self: 1.0}\n"
                      "parallel_games: 4\nrollout_samples: 128\nminibatch_samples: 128\n"
                      "epochs: 1\nhidden: 16\neval_every_updates: 0\nfinal_eval_games: 0\n"
                      "checkpoint_every_updates: 1\ntorch_threads: 1\ntotal_samples: 256\n")
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--no-progress"]) == 0
    before = (out / "checkpoint.pt").read_bytes()
    listing = sorted(p.name for p in out.iterdir())
    module, name = target.rsplit(".", 1)
    monkeypatch.setattr(f"{module}.{name}", fault)
    capsys.readouterr()
    code = main(["train", "--config", str(config), "--out", str(out), "--resume",
                 "--samples", "512", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len([line for line in err if "error" in line]) == 1
    assert "cannot write" in err[-1] and "checkpoint.pt" in err[-1]
    assert (out / "checkpoint.pt").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == listing  # no stray temp file
    monkeypatch.undo()
    assert main(["train", "--config", str(config), "--out", str(out), "--resume",
                 "--samples", "512", "--no-progress"]) == 0  # and the run goes on


# -- bit rot and absurd sizes ----------------------------------------------------------------
def _flip_tensor_byte(blob: bytes, member_suffix: str = "data/0") -> bytes:
    """``blob`` (a torch zip) with one bit of a tensor's stored data flipped."""
    zf = zipfile.ZipFile(io.BytesIO(blob))
    info = next(i for i in zf.infolist() if i.filename.endswith(member_suffix))
    head = blob[info.header_offset:info.header_offset + 30]  # the local header: its own
    start = info.header_offset + 30 + int.from_bytes(head[26:28], "little") + int.from_bytes(
        head[28:30], "little")  # name and extra lengths (torch pads the extra to align data)
    data = bytearray(blob)
    data[start + info.file_size // 2] ^= 0x10
    return bytes(data)


def test_a_flipped_byte_in_checkpoint_tensor_data_is_refused(tmp_path):
    cfg = _tiny_run(tmp_path)
    ckpt = tmp_path / "checkpoint.pt"
    ckpt.write_bytes(_flip_tensor_byte(ckpt.read_bytes()))
    with pytest.raises(ValueError, match="is damaged.*changed after it was written"):
        train(dataclasses.replace(cfg, total_samples=1000), tmp_path, resume=True)
    with pytest.raises(ValueError, match="is damaged"):
        make_agent(f"ppo:{ckpt}")


def test_a_flipped_byte_in_sb3_weights_is_refused(tmp_path):
    from agents.sb3 import read_sb3_zip

    path = _sb3_zip(tmp_path)
    with zipfile.ZipFile(path) as zf:
        blob = zf.read("policy.pth")
    _rewrite(path, **{"policy.pth": _flip_tensor_byte(blob)})
    with pytest.raises(ValueError, match=r"\(policy.pth\): .*is damaged"):
        read_sb3_zip(path)


def test_sb3_weights_wider_than_any_policy_are_refused(tmp_path):
    from agents.neural.policy_file import MAX_HIDDEN
    from agents.sb3 import read_sb3_zip

    path = _sb3_zip(tmp_path)
    with zipfile.ZipFile(path) as zf:
        weights = torch.load(io.BytesIO(zf.read("policy.pth")), weights_only=True)
    obs = weights["mlp_extractor.policy_net.0.weight"].shape[1]
    weights["mlp_extractor.policy_net.0.weight"] = torch.zeros(MAX_HIDDEN + 1, obs)
    buf = io.BytesIO()
    torch.save(weights, buf)
    _rewrite(path, **{"policy.pth": buf.getvalue()})
    with pytest.raises(ValueError, match=rf"expected \[1..{MAX_HIDDEN}, {obs}\]"):
        read_sb3_zip(path)


def _first_moment(data: dict) -> None:
    first = next(iter(data["optimizer"]["state"]))
    data["optimizer"]["state"][first]["exp_avg"] = torch.zeros(3)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.update(history=[{"win_rate": {"greedy": 0.5}}]), r"'history\[0\]'"),
    (lambda d: d.update(counters={**d["counters"], "samples": -5}), "'counters.samples'"),
    (_first_moment, "'optimizer'.*'exp_avg' does not fit"),
    (lambda d: d.update(torch_rng=torch.zeros(3, dtype=torch.uint8)), "'torch_rng'"),
])
def test_a_tampered_learner_field_is_one_line_naming_it(tmp_path, change, message):
    cfg, data = _saved_state(tmp_path)
    change(data)
    torch.save(data, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=message) as err:
        train(dataclasses.replace(cfg, total_samples=1000), tmp_path, resume=True,
              log=lambda m: None)
    assert "\n" not in str(err.value)
