"""The policy file format (agents.neural.policy_file): numpy only, checked before use.

The shipped files play exactly as the torch files they were converted from: their logits
on fixed positions are stored in tests/data/policy_logits.json (computed from the ``.pt``
files before those were removed), and where torch is installed the torch network built from
each file agrees with the numpy forward pass.
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.neural.encoding import PaddedEncoder, policy_observation_size
from agents.neural.policy_file import (
    METADATA,
    content_hash,
    expected_shapes,
    load_any,
    load_policy,
    save_policy,
    shipped_path,
)
from agents.registry import make_agent
from scat_env import NUM_ACTIONS, GameState, Rules
from scat_env.view import make_view

POLICIES = Path(__file__).resolve().parent.parent / "policies"
STORED = json.loads((Path(__file__).parent / "data" / "policy_logits.json").read_text())


def _positions() -> tuple[np.ndarray, np.ndarray]:
    """Random-play positions at two to six players, encoded with the expert-advice inputs."""
    rules = Rules()
    enc, rng = PaddedEncoder(rules, 6, advice=True), random.Random(7)
    obs, masks = [], []
    for game in range(6):
        state = GameState(2 + game % 5, rules, seed=game)
        while not state.is_terminal() and len(obs) < 40 * (game + 1):
            view = make_view(state, state.current_player)
            mask = np.zeros(NUM_ACTIONS, dtype=bool)
            mask[list(view.legal_actions)] = True
            obs.append(enc.encode(view))
            masks.append(mask)
            state.apply_action(rng.choice(view.legal_actions))
    return np.stack(obs), np.stack(masks)


@pytest.mark.parametrize("name", sorted(STORED["logits"]))
def test_each_shipped_file_plays_as_the_torch_file_it_came_from(name):
    obs, masks = _positions()
    policy = load_policy(POLICIES / f"{name}.npz").policy()
    for i, want in zip(STORED["positions"], STORED["logits"][name], strict=True):
        got = policy.logits(obs[i], masks[i])[masks[i]]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


def test_the_torch_network_built_from_a_file_gives_the_numpy_logits():
    torch = pytest.importorskip("torch")
    from training.policy_net import build_net, load_file

    obs, masks = _positions()
    path = POLICIES / "scat_ppo.npz"
    with torch.no_grad():
        logits, _ = build_net(load_file(path), str(path))(torch.from_numpy(obs),
                                                        torch.from_numpy(masks))
    numpy_logits = load_policy(path).policy().logits(obs, masks)
    np.testing.assert_allclose(logits.numpy()[masks], numpy_logits[masks], rtol=1e-5, atol=1e-4)


def _small(path: Path, **arch_changes) -> Path:
    arch = {"obs_size": policy_observation_size(6), "hidden": 8, "layers": 2, "max_players": 6}
    rng = np.random.default_rng(0)
    arrays = {k: rng.normal(size=s).astype(np.float32) for k, s in expected_shapes(arch).items()}
    arch.update(arch_changes)
    save_policy(path, arrays, {"arch": arch, "max_players": arch["max_players"],
                               "num_actions": NUM_ACTIONS, "rules": {},
                               "config": {"lr": 3e-4},
                               "metrics": {}})
    return path


def test_a_saved_file_loads_with_numpy_alone_and_keeps_its_metadata(tmp_path):
    path = _small(tmp_path / "p.npz")
    loaded = load_policy(path)
    assert loaded.metadata["config"] == {"lr": 3e-4} and loaded.metadata["format_version"] == 2
    assert loaded.metadata["sha256"] == content_hash(loaded.arrays, loaded.metadata)
    with np.load(path, allow_pickle=False) as raw:  # plain .npz, no pickled object
        assert METADATA in raw.files
    agent = make_agent(f"ppo:{path}")
    state = GameState(3, seed=1)
    view = make_view(state, state.current_player)
    assert agent.act(view) in view.legal_actions


def test_a_flipped_byte_is_refused_in_one_line(tmp_path):
    path = _small(tmp_path / "p.npz")
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    data = bytearray(members["pi.bias.npy"])
    data[-3] ^= 0x01
    members["pi.bias.npy"] = bytes(data)
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    with pytest.raises(ValueError, match="content hash mismatch") as err:
        load_policy(path)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("change, message", [
    ({"hidden": 10**9}, "'hidden' is 1000000000, expected a whole number from 1 to 4096"),
    ({"layers": 0}, "'layers' is 0"),
    ({"max_players": 40}, "'max_players' is 40"),
    ({"obs_size": 12}, "observation size 12 does not match"),
])
def test_an_architecture_out_of_bounds_is_refused_before_reading_weights(tmp_path, change, message):
    good = _small(tmp_path / "good.npz")
    loaded = load_policy(good)
    meta = {**loaded.metadata, "arch": {**loaded.metadata["arch"], **change}}
    meta["max_players"] = meta["arch"]["max_players"]
    blob = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    bad = tmp_path / "bad.npz"
    np.savez(bad, **loaded.arrays, **{METADATA: blob})
    with pytest.raises(ValueError, match=message):
        load_policy(bad)


def test_weights_that_do_not_fit_the_architecture_are_refused(tmp_path):
    loaded = load_policy(_small(tmp_path / "p.npz"))
    arrays = dict(loaded.arrays)
    arrays["trunk.2.weight"] = np.zeros((8, 9), dtype=np.float32)
    blob = np.frombuffer(json.dumps(loaded.metadata).encode(), dtype=np.uint8)
    np.savez(tmp_path / "bad.npz", **arrays, **{METADATA: blob})
    with pytest.raises(ValueError, match=r"trunk.2.weight.npy is float32\[8, 9\], expected float32\[8, 8\]"):
        load_policy(tmp_path / "bad.npz")


@pytest.mark.parametrize("content, message", [
    (b"not a zip", "not a zip"),
    (b"", "not a zip"),
])
def test_a_file_that_is_no_policy_is_one_line(tmp_path, content, message):
    path = tmp_path / "x.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        make_agent(f"ppo:{path}")
    with pytest.raises(ValueError, match="does not exist"):
        load_any(tmp_path / "missing.npz")


def test_a_truncated_file_is_one_line(tmp_path):
    path = _small(tmp_path / "p.npz")
    path.write_bytes(path.read_bytes()[:4000])
    with pytest.raises(ValueError, match=str(path)):
        load_policy(path)


def test_shipped_names_resolve_and_paths_do_not():
    assert shipped_path("scat_ppo_set").endswith("scat_ppo_set.yaml")
    assert shipped_path("scat_ppo").endswith("scat_ppo.npz")
    assert shipped_path("policies/scat_ppo") is None and shipped_path("nothing") is None
