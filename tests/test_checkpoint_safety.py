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
import zipfile
from pathlib import Path

import pytest
import torch

from agents.registry import make_agent
from scat_env import GameState
from scat_env.view import make_view

SMALL = dict(parallel_games=8, rollout_samples=256, minibatch_samples=256, epochs=1, hidden=16,
             eval_every_updates=0, final_eval_games=0, checkpoint_every_updates=1, progress=False,
             torch_threads=1, snapshot_every_updates=1)


class _Marker:
    """Unpickling this creates a file: the proof that a loader ran code from a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))




# -- the native checkpoint ------------------------------------------------------------------






ALL_OPPONENTS = {"self": 1.0, "snapshot": 0.5, "random": 0.5, "greedy": 0.5, "threshold:22": 0.5,
                 "expert": 0.5, "ismcts:6": 0.3, "compact:scat_batch:sample": 0.5}














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
    from agents.adapters.sb3 import _load_sb3

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




@pytest.mark.parametrize("member, blob, message", [
    ("policy.pth", None, "no 'policy.pth'"),
    ("policy.pth", b"garbage", "corrupt or truncated"),
])
def test_a_broken_sb3_zip_is_one_line(tmp_path, member, blob, message):
    from agents.adapters.sb3 import _load_sb3

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
    from agents.adapters.sb3 import read_sb3_zip

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

    from agents.adapters.sb3 import _load_sb3
    from training.adapters.sb3 import train as sb3_train
    from training.config import SB3Config

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




def test_a_flipped_byte_in_sb3_weights_is_refused(tmp_path):
    from agents.adapters.sb3 import read_sb3_zip

    path = _sb3_zip(tmp_path)
    with zipfile.ZipFile(path) as zf:
        blob = zf.read("policy.pth")
    _rewrite(path, **{"policy.pth": _flip_tensor_byte(blob)})
    with pytest.raises(ValueError, match=r"\(policy.pth\): .*is damaged"):
        read_sb3_zip(path)




def _first_moment(data: dict) -> None:
    first = next(iter(data["optimizer"]["state"]))
    data["optimizer"]["state"][first]["exp_avg"] = torch.zeros(3)




def test_an_sb3_zip_whose_weights_hold_a_pickle_is_one_line(tmp_path):
    from agents.adapters.sb3 import _load_sb3

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


def test_sb3_weights_wider_than_any_policy_are_refused(tmp_path):
    from agents.adapters.sb3 import read_sb3_zip
    from agents.neural.policy_file import MAX_HIDDEN

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
