"""One network for every preset: the rules as inputs, a run over many rules, and the default
opponent that learned a table's rules.

- Every rule option that changes play is a column of the ``rules`` piece
  (:mod:`agents.rules_inputs`); presets that differ in play read differently.
- A ``rules_mix`` run trains one network on a table of each preset, reading every piece;
  its file records the mix, the numpy player gives the torch logits at each preset's
  table, and the player says which rules it learned (``trained_on``).
- Continued from a policy that reads fewer pieces, the network plays as that policy did.
- A table's default opponent is the shipped policy trained on its rules.
- A config's mix is checked: preset names, each once, no handoff.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_batch_pieces import EVERY_PRESET
from test_batch_training import TINY, _Table

from agents.compact import PIECE_WIDTHS, CompactAgent, CompactPolicy, load_compact, policy_path
from agents.registry import make_agent
from agents.rules_inputs import NOT_READ, RULES_INPUTS, RULES_WIDTH, rules_vector
from scat_env import Rules
from scat_env.batch import BatchEnv
from scat_env.rules import PRESETS
from scat_env.variants import FIELDS
from scat_session import seating
from training.batch_ppo import (
    CompactNet,
    Handoff,
    Shard,
    _tensors,
    collect,
    export,
    network_pieces,
    train_network,
    warm_start,
)
from training.config import BatchPPOConfig

MIX = ["standard", "hammer", "golf", "french_canadian", "gin"]


def test_every_option_that_changes_play_is_read():
    read = [name for name, _ in RULES_INPUTS]
    assert len(set(read)) == len(read)
    assert sorted(read + list(NOT_READ)) == sorted(f.name for f in FIELDS)


def test_every_value_an_option_may_take_is_read():
    """A one-hot knows every choice; a scaled option's whole range maps onto 0..1."""
    for name, how in RULES_INPUTS:
        field = next(f for f in FIELDS if f.name == name)
        if how[0] == "onehot":
            assert set(how[1]) == set(field.choices), name
        elif how[0] in ("scale", "optional") and not field.choices:
            assert how[1] <= field.low and field.high <= how[2], name


def test_presets_that_play_differently_read_differently():
    seen: dict[bytes, Rules] = {}
    for name in PRESETS:
        rules = Rules.preset(name)
        vec = rules_vector(rules)
        assert vec.shape == (RULES_WIDTH,) and vec.dtype == np.float32
        assert ((vec >= 0) & (vec <= 1)).all()
        other = seen.setdefault(vec.tobytes(), rules)
        assert other == rules, f"{name} reads as {other.name}"


def test_an_unknown_choice_is_refused_in_one_line():
    class Odd:
        def __getattr__(self, name):
            return "sideways" if name == "deck" else getattr(Rules(), name)

    with pytest.raises(ValueError, match="'deck' knows standard, italian, not 'sideways'"):
        rules_vector.__wrapped__(Odd())


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    cfg = BatchPPOConfig(rules="standard", rules_mix=MIX, player_counts=[3],
                         total_samples=2000, **EVERY_PRESET, **TINY)
    net, summary = train_network(cfg, log=lambda m: None)
    path = tmp_path_factory.mktemp("mix") / "policy.npz"
    export(net, path, cfg, {})
    return net, path, summary


def test_a_mix_trains_one_network_that_reads_every_piece(mixed):
    net, path, summary = mixed
    assert net.pieces == tuple(PIECE_WIDTHS) and summary["samples"] >= 2000
    arrays, meta = load_compact(path)
    assert meta["rules_mix"] == MIX and meta["pieces"] == list(PIECE_WIDTHS)
    policy = CompactPolicy(arrays, meta)
    for rules in MIX:
        env = BatchEnv(32, 4, rules, seed=4)
        out = env.reset()
        for _ in range(12):
            out = env.step(env.random_actions())
        obs, mask = out["observation"].copy(), out["action_mask"].copy()
        table = _Table(env)
        table.pieces = net.pieces
        cards, feats, dense = _tensors(table, obs)
        with torch.no_grad():
            want, _ = net(cards, feats, dense, torch.from_numpy(mask))
        got = policy.play_logits(obs, feats.numpy(), 4, env.rules.start_lives, mask, None,
                                 env.rules)
        assert np.allclose(got[mask], want.numpy()[mask], atol=1e-4), rules


def test_the_rules_move_a_readers_decisions(mixed):
    _, path, _ = mixed
    arrays, meta = load_compact(path)
    layer = arrays["piece_layer.weight"].copy()
    layer[:, -RULES_WIDTH:] = np.random.default_rng(0).normal(0, 2, (layer.shape[0], RULES_WIDTH))
    policy = CompactPolicy({**arrays, "piece_layer.weight": layer}, meta)
    env = BatchEnv(16, 3, "standard", seed=1)
    env.reset()
    out = env.step(env.random_actions())
    obs, mask = out["observation"], out["action_mask"]
    feats = env.hand_features(obs)
    here = policy.play_logits(obs, feats, 3, 4, mask, None, Rules.preset("standard"))
    there = policy.play_logits(obs, feats, 3, 4, mask, None, Rules.preset("min_knock_21"))
    assert not np.allclose(here[mask], there[mask])


def test_the_player_knows_which_rules_it_learned(mixed):
    _, path, _ = mixed
    agent = make_agent(f"compact:{path}")
    assert isinstance(agent, CompactAgent)
    for rules in MIX:
        assert agent.trained_on(Rules.preset(rules))
        agent.check_table(3, Rules.preset(rules))
    agent.check_table(6, Rules.preset("italian"))  # never trained on: played, not learned
    assert not agent.trained_on(Rules.preset("italian"))
    assert agent.trained_on(Rules.preset("golf").replace(name="my golf"))  # by options
    assert make_agent("compact:scat_batch_set").trained_on(Rules())
    assert not make_agent("expert").trained_on(Rules())


def test_the_default_opponent_is_the_policy_that_learned_the_rules(mixed, monkeypatch):
    _, path, _ = mixed
    monkeypatch.setattr(seating, "default_candidates",
                        lambda: ("compact:scat_batch_set", f"compact:{path}"))
    assert seating.default_opponent(3, Rules()) == "compact:scat_batch_set"
    assert seating.default_opponent(3, Rules.preset("hammer")) == f"compact:{path}"
    # the set plays italian but never learned it; the mix policy plays it too, unlearned
    assert seating.default_opponent(3, Rules.preset("italian")) == "compact:scat_batch_set"
    assert seating.default_opponent(3, Rules.preset("gin")) == f"compact:{path}"


def test_a_policy_of_fewer_pieces_continues_as_it_played(tmp_path):
    """``init_from`` a standard policy into a network of every piece: new weights at zero,
    the same logits at a standard table."""
    cfg = BatchPPOConfig(rules="standard", player_counts=[3], total_samples=500, **TINY,
                         **EVERY_PRESET)
    small, _ = train_network(cfg, log=lambda m: None)
    path = tmp_path / "small.npz"
    export(small, path, cfg, {})
    big = CompactNet(32, 2, pieces=tuple(PIECE_WIDTHS))
    warm_start(big, str(path))
    assert not big.piece_layer.weight.detach().any()
    env = BatchEnv(16, 3, "standard", seed=2)
    env.reset()
    out = env.step(env.random_actions())
    table = _Table(env)
    cards, feats, dense = _tensors(table, out["observation"])
    table.pieces = big.pieces
    _, _, dense_big = _tensors(table, out["observation"])
    mask = torch.from_numpy(out["action_mask"])
    with torch.no_grad():
        assert torch.allclose(small(cards, feats, dense, mask)[0],
                              big(cards, feats, dense_big, mask)[0], atol=1e-5)
    hammer = CompactNet(32, 2, pieces=("phase",))
    export(hammer, tmp_path / "hammer.npz",
           BatchPPOConfig(rules="hammer", player_counts=[3], **TINY, **EVERY_PRESET), {})
    with pytest.raises(ValueError, match="pieces is .* in the file"):  # more than it reads
        warm_start(CompactNet(32, 2), str(tmp_path / "hammer.npz"))


@pytest.mark.parametrize("fields, message", [
    (dict(rules_mix=["standard", "no_such"]), "rules_mix: 'no_such' is not a preset"),
    (dict(rules_mix=["golf", "golf"]), "rules_mix names a preset twice"),
    (dict(rules_mix="golf"), "rules_mix must be a list of preset names"),
])
def test_a_mix_is_checked(fields, message):
    base = dict(rules="standard", player_counts=[3], **TINY)
    with pytest.raises(ValueError, match=message) as err:
        BatchPPOConfig(**{**base, **fields})
    assert "\n" not in str(err.value)


def _every_table_hands_off(cfg: BatchPPOConfig) -> list[str]:
    """Collect a rollout on each table of ``cfg``'s mix with its handoff: every table has
    positions played by the learner and positions handed off. Returns the tables' rules."""
    handoff = Handoff(cfg.handoff, cfg.handoff_players, cfg.rules_mix)
    shard = Shard(cfg, 0, network_pieces(cfg), torch.Generator().manual_seed(0))
    net = CompactNet(32, 2, pieces=network_pieces(cfg))
    stats = {"games": 0.0, "learner_wins": 0.0, "mixed_games": 0.0}
    for table in shard.tables:
        ro, _ = collect(net, net, table, 200, shard.gen, stats, handoff=handoff)
        assert (~ro.policy).any() and ro.policy.any(), table.env.rules.name
    return [t.env.rules.name for t in shard.tables]


def test_a_mix_with_pieces_hands_its_heads_up_to_a_member_that_reads_them():
    """The calls' heads-ups: the handoff reads the smaller game's phase and quiet 31
    (scat_env.batch.active), so a mix of calls presets trains with one; a handoff that
    does not read a table's pieces is refused in one line before the run starts."""
    mix = ["hammer", "undeclared_31"]
    cfg = BatchPPOConfig(rules="hammer", rules_mix=mix, player_counts=[3], self_play=1.0,
                         handoff="scat_calls_avg", total_samples=2000, **TINY)
    _every_table_hands_off(cfg)
    with pytest.raises(ValueError, match="does not read their phase observation") as err:
        Handoff("scat_batch_2p", 2, mix)
    assert "\n" not in str(err.value)


def test_a_mix_of_rules_without_pieces_hands_its_heads_up_to_a_set_member():
    """A set's member for three players in may learn many rules at once: every table of
    the mix hands its positions with two players in to the handoff, as the set will play
    them, and the run trains."""
    mix = ["ride_the_bus", "italian"]
    cfg = BatchPPOConfig(rules="standard", rules_mix=mix, player_counts=[3], self_play=1.0,
                         handoff="scat_batch_2p", total_samples=2000, **TINY)
    assert _every_table_hands_off(cfg) == mix
    _, summary = train_network(cfg, log=lambda m: None)
    assert summary["samples"] >= 2000


def test_a_set_with_a_familys_member_learned_that_family_alone():
    """``compact:scat_lives_set`` has members for two, three and more players in, each
    trained on the knock and lives presets: the set learned those (its ``rules_mix`` is its
    members', as its manifest's ``presets`` says), not the standard game its members'
    ``rules`` name (a mix's ``rules`` is only its in-training check). Its members read
    every piece and the rules, so it plays a table of the calls, which it never learned:
    measured and seated only on its ten presets."""
    agent = make_agent("compact:scat_lives_set")
    _, member = load_compact(policy_path("scat_lives_3p"))
    _, heads_up = load_compact(policy_path("scat_lives_2p"))
    _, more = load_compact(policy_path("scat_lives_6p"))
    assert (agent.policy.meta["rules_mix"] == member["rules_mix"] == heads_up["rules_mix"]
            == more["rules_mix"])
    assert heads_up["player_counts"] == [2] and member["player_counts"] == [3]
    assert more["player_counts"] == [6]
    for rules in member["rules_mix"]:
        assert agent.trained_on(Rules.preset(rules)), rules
        agent.check_table(3, Rules.preset(rules))
    assert not agent.trained_on(Rules()) and not agent.trained_on(Rules.preset("moyer"))
    agent.check_table(6, Rules.preset("hammer"))
    assert not agent.trained_on(Rules.preset("hammer"))
    assert "rules_mix" not in make_agent("compact:scat_batch_set").policy.meta
