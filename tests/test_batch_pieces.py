"""The batched trainer and the compact player read every family's observation pieces.

- A run on a call, golf or a points race builds a network that reads the pieces its rules'
  observation appends (``phase``, ``quiet``, ``points``, ``slots``), records them in its
  file, and the player's numpy forward gives the torch logits on real observations.
- A policy without pieces has no weight for them: the shipped files load unchanged and
  decide exactly as the forward pass without pieces does.
- The player refuses, in one line, a table whose pieces it does not read, and plays one
  whose pieces it reads (from its views, whole games).
- A file whose pieces or piece weights are wrong is refused in one line.
- The batched greedy player makes a legal move under every preset, so a run may seat it
  anywhere.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_batch_training import TINY, _rewrite, _Table

from agents.compact import (
    DENSE_SIZE,
    PIECE_WIDTHS,
    POINT_SCALE,
    CompactPolicy,
    dense_inputs,
    load_compact,
    piece_inputs,
    policy_path,
    save_compact,
    table_pieces,
)
from agents.match import play_game
from agents.registry import make_agent
from scat_env import Rules
from scat_env.actions import DRAW_DISCARD, KNOCK
from scat_env.batch import BatchEnv
from scat_env.batch.reference import observation_pieces
from scat_env.rules import PRESETS
from training.batch_ppo import CompactNet, _tensors, export, train_network, warm_start
from training.config import BatchPPOConfig, load_config

#: One preset of each family that appends pieces, and what it appends.
FAMILIES = {"hammer": ("phase",), "undeclared_31": ("phase", "quiet"),
            "french_canadian": ("points",), "golf": ("phase", "slots")}
#: Opponents every preset's batched run can seat.
EVERY_PRESET = dict(opponents={"expert": 1.0, "random": 0.3}, eval_opponent="expert")


def random_policy(path, rules: str, seed: int = 0) -> CompactNet:
    """A network for ``rules`` with weights large enough that every input moves its
    decisions, written through the trainer's own save path."""
    torch.manual_seed(seed)
    net = CompactNet(32, 2, pieces=table_pieces(Rules.preset(rules)))
    with torch.no_grad():
        for p in (net.pi.weight, net.dense.weight, *net.trunk.parameters()):
            p.normal_(0.0, 0.5)
        if net.pieces:
            net.piece_layer.weight.normal_(0.0, 2.0)
    cfg = BatchPPOConfig(rules=rules, player_counts=[3], **EVERY_PRESET, **TINY)
    export(net, path, cfg, {})
    return net


def _observations(rules: str, n: int, steps: int = 25, seed: int = 1) -> tuple[BatchEnv, dict]:
    env = BatchEnv(64, n, rules, seed=seed)
    out = env.reset()
    for _ in range(steps):
        out = env.step(env.random_actions())
    return env, out


def test_every_family_trains_a_network_that_reads_its_pieces(tmp_path):
    for rules, pieces in FAMILIES.items():
        cfg = BatchPPOConfig(rules=rules, player_counts=[2, 4], total_samples=1000,
                             **EVERY_PRESET, **TINY)
        net, summary = train_network(cfg, log=lambda m: None)
        assert net.pieces == pieces and summary["samples"] >= 1000
        path = tmp_path / f"{rules}.npz"
        export(net, path, cfg, {})
        arrays, meta = load_compact(path)
        assert meta["pieces"] == list(pieces) and meta["rules"] == rules
        assert arrays["piece_layer.weight"].shape == (32, sum(PIECE_WIDTHS[p] for p in pieces))
        policy = CompactPolicy(arrays, meta)
        for n in (2, 5, 10):
            env, out = _observations(rules, n, seed=n)
            obs, mask = out["observation"].copy(), out["action_mask"].copy()
            cards, feats, dense = _tensors(_Table(env), obs)
            with torch.no_grad():
                want, _ = net(cards, feats, dense, torch.from_numpy(mask))
            got = policy.play_logits(obs, feats.numpy(), n, env.rules.start_lives, mask,
                                     None, env.rules)
            assert np.allclose(got[mask], want.numpy()[mask], atol=1e-4), (rules, n)


def test_the_pieces_move_a_readers_decisions(tmp_path):
    """The piece layer is read: zeroing it changes the logits of a golf policy."""
    path = tmp_path / "golf.npz"
    random_policy(path, "golf")
    arrays, meta = load_compact(path)
    env, out = _observations("golf", 3)
    obs, mask = out["observation"], out["action_mask"]
    feats = env.hand_features(obs)
    args = (obs, feats, 3, env.rules.start_lives, mask, None, env.rules)
    with_pieces = CompactPolicy(arrays, meta).play_logits(*args)
    blind = CompactPolicy({**arrays, "piece_layer.weight": 0 * arrays["piece_layer.weight"]},
                          meta).play_logits(*args)
    assert not np.allclose(with_pieces[mask], blind[mask])


def _forward_without_pieces(policy: CompactPolicy, obs, feats, n, lives, mask) -> np.ndarray:
    """The compact player's forward pass as it was written before the pieces."""
    w = policy.w
    dense = dense_inputs(obs, feats, n, lives)
    h = w["cards.weight"][obs[:, :52].astype(np.int64) + policy.offsets].sum(axis=1)
    h = np.maximum(h + dense @ w["dense.weight"].T + w["dense.bias"], 0.0)
    for i in range(policy.layers - 1):
        h = np.maximum(h @ w[f"trunk.{2 * i + 1}.weight"].T + w[f"trunk.{2 * i + 1}.bias"],
                       0.0)
    logits = h @ w["pi.weight"].T + w["pi.bias"]
    value = feats[:, 52] * POINT_SCALE
    logits[:, :52] += w["card_gain"] * feats[:, :52] * POINT_SCALE
    logits[:, DRAW_DISCARD] += w["draw_gain"] * (feats[:, 53] - feats[:, 52]) * POINT_SCALE
    logits[:, KNOCK] += w["knock_gain"] * (value - w["knock_at"] * POINT_SCALE)
    missing = mask.shape[-1] - logits.shape[-1]
    if missing > 0:
        logits = np.concatenate([logits, np.full((len(logits), missing), -1e9, np.float32)],
                                axis=1)
    return np.where(mask, logits, np.float32(-1e9))


@pytest.mark.parametrize("name", ["scat_batch", "scat_batch_2p", "scat_batch_3p"])
def test_a_shipped_policy_reads_no_pieces_and_decides_as_before(name):
    arrays, meta = load_compact(policy_path(name))
    policy = CompactPolicy(arrays, meta)
    assert policy.pieces == () and "piece_layer.weight" not in arrays
    for n in (2, 3, 6, 10):
        env, out = _observations("standard", n, seed=n)
        obs, mask = out["observation"], out["action_mask"]
        feats = env.hand_features(obs)
        got = policy.play_logits(obs, feats, n, 3, mask)
        want = _forward_without_pieces(policy, obs, feats, n, 3, mask)
        assert np.array_equal(got, want)


def test_a_policy_refuses_a_table_whose_pieces_it_does_not_read(tmp_path):
    path = tmp_path / "hammer.npz"
    random_policy(path, "hammer")
    agent = make_agent(f"compact:{path}")
    agent.check_table(3, Rules.preset("hammer"))
    agent.check_table(3, Rules.preset("standard"))  # no piece it cannot read
    agent.check_table(3, Rules.preset("sudden_death"))  # the same phase piece
    with pytest.raises(ValueError, match="does not read their slots observation") as err:
        agent.check_table(3, Rules.preset("golf"))
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="does not read their points observation"):
        agent.check_table(3, Rules.preset("french_canadian"))
    with pytest.raises(ValueError, match="does not read their phase observation"):
        make_agent("compact:scat_batch").check_table(3, Rules.preset("hammer"))


@pytest.mark.parametrize("rules", ["hammer", "undeclared_31", "golf"])
def test_a_sets_member_reads_the_smaller_games_pieces(tmp_path, rules):
    """A set at a table with pieces: each position with two players in is its two-player
    member's, reading the smaller game's pieces (scat_env.batch.active), every other the
    default member's, reading the table as it is."""
    from scat_env.batch.active import active_observations, players_in

    random_policy(tmp_path / "two.npz", rules, seed=1)
    random_policy(tmp_path / "rest.npz", rules, seed=2)
    manifest = tmp_path / "set.yaml"
    manifest.write_text(f"format: scat-policy-set\npolicies:\n  2: {tmp_path / 'two.npz'}\n"
                        f"  default: {tmp_path / 'rest.npz'}\n")
    agent = make_agent(f"compact:{manifest}")
    n, table = 4, Rules.preset(rules)
    agent.check_table(n, table)
    two = CompactPolicy(*load_compact(str(tmp_path / "two.npz")))
    rest = CompactPolicy(*load_compact(str(tmp_path / "rest.npz")))
    env = BatchEnv(64, n, rules, seed=5)
    out, heads_up = env.reset(), 0
    for _ in range(600):
        obs, mask = out["observation"], out["action_mask"]
        feats = env.hand_features(obs)
        got = agent.policy.play_logits(obs, feats, n, table.start_lives, mask, None, table)
        ins = players_in(obs, n)
        for k in np.unique(ins).tolist():  # the set plays each count of players in apart
            rows = np.flatnonzero(ins == k)
            if k == 2:
                heads_up += len(rows)
                small = active_observations(obs[rows], n, 2, table)
                want = two.play_logits(small, feats[rows], 2, table.start_lives,
                                       mask[rows], None, table)
            else:
                want = rest.play_logits(obs[rows], feats[rows], n, table.start_lives,
                                        mask[rows], None, table)
            assert np.array_equal(got[rows], want), f"{k} players in"
        out = env.step(env.random_actions())
    assert heads_up


@pytest.mark.parametrize("rules", list(FAMILIES))
def test_a_reader_of_the_pieces_plays_whole_games_from_its_views(tmp_path, rules):
    path = tmp_path / "policy.npz"
    random_policy(path, rules)
    for n in (2, 5):
        agents = [make_agent(f"compact:{path}", seed=1)] + [make_agent("expert")] * (n - 1)
        agents[0].check_table(n, Rules.preset(rules))
        record = play_game(agents, Rules.preset(rules), seed=n)
        assert record.actions and (record.winner is not None or record.truncated)


def test_a_piece_absent_from_a_table_reads_as_the_base_observation_says():
    """A phase reader on a table without the piece reads the base counter's phase and the
    cards of mine it shows; points and slots read as none."""
    env, out = _observations("standard", 4)
    obs = out["observation"]
    got = piece_inputs(obs, 4, env.rules, ("phase", "quiet", "points", "slots"))
    phase = obs[:, 52 + 8 + 1]
    assert (got[np.arange(64), phase] == 1).all() and got[:, :7].sum(axis=1).max() == 1
    mine = ((obs[:, :52] >= 1) & (obs[:, :52] <= 3)).sum(axis=1)
    assert np.allclose(got[:, 7], mine / 3.0)
    assert not got[:, 8:].any()


def test_golf_slots_read_as_face_up_flags_ranks_and_suits():
    env, out = _observations("golf", 3, steps=40)
    obs = out["observation"]
    at = 52 + 6 + 5 + observation_pieces(3, env.rules)["phase"]
    codes = obs[:, at:at + 9].astype(int)
    slots = piece_inputs(obs, 3, env.rules, ("slots",)).reshape(64, 30, 18)
    assert codes.any()
    assert np.array_equal(slots[:, :9, 0], codes > 0)
    b, s = np.nonzero(codes)
    assert (slots[b, s, 1 + (codes[b, s] - 1) % 13] == 1).all()
    assert (slots[b, s, 14 + (codes[b, s] - 1) // 13] == 1).all()
    assert slots[:, :, 1:].sum() == 2 * len(b) and not slots[:, 9:].any()


@pytest.mark.parametrize("meta_pieces, message", [
    (["slots", "phase"], "pieces .* in that order"),
    (["phase", "phase"], "pieces .* in that order"),
    (["cards"], "pieces .* in that order"),
    ("phase", "pieces .* in that order"),
    ([["phase"]], "pieces .* in that order"),  # not a name: refused, not a traceback
    (["phase"], r"piece_layer.weight.npy is float32\[32, 548\], expected float32\[32, 8\]"),
    ([], "weights do not fit"),  # a piece weight in a file that reads none
])
def test_a_file_whose_pieces_do_not_fit_is_one_line(tmp_path, meta_pieces, message):
    path = tmp_path / "golf.npz"
    random_policy(path, "golf")
    arrays, meta = load_compact(path)
    save_compact(path, arrays, {k: v for k, v in meta.items()
                                if k not in ("kind", "format_version", "sha256")}
                 | {"pieces": meta_pieces})
    with pytest.raises(ValueError, match=message) as err:
        load_compact(path)
    assert "\n" not in str(err.value)


def test_a_piece_weight_of_the_wrong_shape_is_refused(tmp_path):
    path = tmp_path / "points.npz"
    random_policy(path, "french_canadian")
    import io

    buf = io.BytesIO()
    np.save(buf, np.zeros((32, 3), np.float32))
    _rewrite(path, "piece_layer.weight.npy", buf.getvalue())
    with pytest.raises(ValueError) as err:
        load_compact(path)
    assert "\n" not in str(err.value)


def test_warm_start_needs_the_same_pieces(tmp_path):
    path = tmp_path / "hammer.npz"
    net = random_policy(path, "hammer")
    again = CompactNet(32, 2, pieces=("phase",))
    warm_start(again, str(path))
    assert torch.equal(again.piece_layer.weight, net.piece_layer.weight)
    with pytest.raises(ValueError, match="pieces is \\['phase'\\] in the file, \\[\\]"):
        warm_start(CompactNet(32, 2), str(path))


def test_every_preset_is_a_batched_run_with_opponents_that_play_it(tmp_path):
    path = tmp_path / "run.yaml"
    for preset in PRESETS:
        path.write_text(f"trainer: batch\nrules: {preset}\nopponents: {{expert: 1.0}}\n"
                        "eval_opponent: expert\n")
        assert load_config(path)[1].rules == preset


def test_greedy_may_be_seated_under_every_preset(tmp_path):
    path = tmp_path / "run.yaml"
    for preset in ("golf", "throw_down", "sudden_death", "undeclared_31"):
        path.write_text(f"trainer: batch\nrules: {preset}\neval_opponent: greedy\n")
        assert load_config(path)[1].opponents.get("greedy")


def test_the_batched_greedy_player_plays_legal_moves_under_every_preset():
    for preset in PRESETS:
        env = BatchEnv(64, 3, preset, seed=3)
        out = env.reset()
        for _ in range(120):
            acts = env.threshold_actions(25)
            assert out["action_mask"][np.arange(64), acts].all(), preset
            out = env.step(acts)


def test_the_dense_inputs_of_a_network_without_pieces_are_the_base_columns():
    env, out = _observations("hammer", 3)
    obs = out["observation"]
    feats = env.hand_features(obs)
    assert dense_inputs(obs, feats, 3, 3).shape == (64, DENSE_SIZE)
    assert dense_inputs(obs, feats, 3, 3, env.rules, ("phase",)).shape == (
        64, DENSE_SIZE + PIECE_WIDTHS["phase"])
