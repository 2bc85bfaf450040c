"""A policy set's ``calls``: one policy makes every call, the members play the rest of the
game (agents/neural/policy_set.py, agents/compact.py; policies/README.md, "Calls by one
policy, play by another").

- A decision with a call on offer (an action past the core ones legal) gets the calls'
  policy's logits, and every other decision the members', each as it plays alone.
- Such a set plays the calls' tables that its members alone are refused (they never read
  which call is on offer), and nothing the calls' policy does not play.
- A bad ``calls`` is one line naming the manifest and what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.compact import CompactSet, load_compact_player, policy_path
from agents.neural.policy_set import load_policy_set
from agents.registry import make_agent
from scat_env import Rules
from scat_env.actions import CORE_ACTIONS, PLACE_SLOT
from scat_env.batch import BatchEnv

REPO = Path(__file__).resolve().parents[1]
POLICIES = REPO / "policies"


def _manifest(tmp_path: Path, calls: str, name: str = "set.yaml") -> Path:
    path = tmp_path / name
    path.write_text("format: scat-policy-set\npolicies:\n"
                    f"  2: {POLICIES / 'scat_batch_2p.npz'}\n"
                    f"  3: {POLICIES / 'scat_batch_3p.npz'}\n"
                    f"  default: {POLICIES / 'scat_batch_7_10.npz'}\n"
                    f"calls: {calls}\n")
    return path


def _positions(rules: str, players: int, seed: int = 3):
    """Observations, features and masks of many positions of random games: some with a
    call on offer, most without."""
    env = BatchEnv(64, players, rules, seed=seed)
    out = env.reset()
    obs, feats, masks = [], [], []
    for _ in range(40):
        obs.append(out["observation"].copy())
        feats.append(env.hand_features(out["observation"]))
        masks.append(out["action_mask"].copy())
        out = env.step(env.random_actions())
    return np.concatenate(obs), np.concatenate(feats), np.concatenate(masks), env.rules


@pytest.mark.parametrize(("rules", "players"), [("hammer", 3), ("throw_down_any", 6),
                                                ("undeclared_31", 3)])
def test_a_call_on_offer_goes_to_the_calls_policy_and_every_other_decision_to_the_members(
        rules, players):
    obs, feats, mask, table = _positions(rules, players)
    call = mask[:, CORE_ACTIONS:].any(axis=1)
    assert call.any() and (~call).any()
    both = load_compact_player(policy_path("scat_calls_play"))
    calls = load_compact_player(policy_path("scat_calls_set"))
    members = load_compact_player(policy_path("scat_batch_set"))
    got = both.play_logits(obs, feats, players, table.start_lives, mask, None, table)
    want_calls = calls.play_logits(obs[call], feats[call], players, table.start_lives,
                                   mask[call], None, table)
    want_play = members.play_logits(obs[~call], feats[~call], players, table.start_lives,
                                    mask[~call], None, table)
    np.testing.assert_array_equal(got[call], want_calls)
    np.testing.assert_array_equal(got[~call], want_play)


def test_the_set_plays_the_calls_tables_its_members_alone_are_refused():
    both = make_agent("compact:scat_calls_play")
    members = make_agent("compact:scat_batch_set")
    for rules in ("hammer", "throw_down", "throw_down_any", "undeclared_31"):
        with pytest.raises(ValueError, match="does not read their phase"):
            members.check_table(3, Rules.preset(rules))
        for players in (2, 3, 6, 10):
            both.check_table(players, Rules.preset(rules))
    # golf and the points races add pieces the members need and nobody here reads
    for rules, piece in (("golf", "slots"), ("french_canadian", "points")):
        with pytest.raises(ValueError, match=f"does not read their {piece}"):
            both.check_table(3, Rules.preset(rules))
    assert "phase" in both.policy.pieces and "quiet" in both.policy.pieces


def test_the_shipped_set_is_measured_and_seated_on_the_calls_its_calls_policy_learned():
    manifest = load_policy_set(str(POLICIES / "scat_calls_play.yaml"))
    assert Path(manifest.calls).name == "scat_calls_set.yaml"
    agent = make_agent("compact:scat_calls_play")
    assert set(agent.policy.meta["rules_mix"]) == {"hammer", "throw_down", "throw_down_any",
                                                   "undeclared_31"}
    assert agent.trained_on(Rules.preset("hammer"))
    assert not agent.trained_on(Rules.preset("standard"))
    assert not agent.trained_on(Rules.preset("sudden_death"))  # its call never learned


def test_whole_games_through_the_python_agent_play_only_legal_moves():
    from agents.match import play_game

    for rules in ("hammer", "undeclared_31"):
        agents = [make_agent(spec) for spec in ("compact:scat_calls_play", "expert", "expert")]
        record = play_game(agents, Rules.preset(rules), seed=4)  # an illegal move raises
        assert record.winner is not None and not record.truncated


@pytest.mark.parametrize(("calls", "message"), [
    ("''", "'calls' must name a policy file or a set manifest"),
    ("[a.npz]", "'calls' must name a policy file or a set manifest"),
    ("set.yaml", "'calls' names the set itself"),
])
def test_a_bad_calls_field_is_one_line_naming_it(tmp_path, calls, message):
    path = _manifest(tmp_path, calls)
    with pytest.raises(ValueError) as err:
        load_policy_set(str(path))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(path) in str(err.value)


def test_calls_made_by_a_set_with_calls_of_its_own_are_refused(tmp_path):
    inner = _manifest(tmp_path, str(POLICIES / "scat_calls_set.yaml"), "inner.yaml")
    outer = _manifest(tmp_path, str(inner), "outer.yaml")
    with pytest.raises(ValueError, match="calls of its own"):
        load_compact_player(str(outer))


def test_a_missing_calls_file_is_one_line(tmp_path):
    path = _manifest(tmp_path, "nowhere.npz")
    with pytest.raises(ValueError) as err:
        load_compact_player(str(path))
    assert "nowhere.npz" in str(err.value) and "\n" not in str(err.value)


def test_a_set_without_calls_plays_as_before():
    plain = load_compact_player(policy_path("scat_batch_set"))
    assert isinstance(plain, CompactSet) and plain.calls is None


def test_calls_by_a_policy_that_never_read_them_are_refused_before_play(tmp_path):
    path = _manifest(tmp_path, str(POLICIES / "scat_batch_3p.npz"))
    agent = make_agent(f"compact:{path}")
    with pytest.raises(ValueError, match="does not read their phase observation"):
        agent.check_table(3, Rules.preset("hammer"))
    agent.check_table(3, Rules.preset("standard"))  # no call there: its members play


def test_golfs_slot_moves_are_no_call_and_stay_with_the_members(tmp_path):
    """Golf's moves lie past the calls in the action space (PLACE_SLOT, TURN_UP): a set whose
    members play golf sends none of them to the policy that makes the calls."""
    path = tmp_path / "golf.yaml"
    path.write_text("format: scat-policy-set\npolicies:\n"
                    f"  default: {POLICIES / 'scat_golf.npz'}\n"
                    f"calls: {POLICIES / 'scat_calls.npz'}\n")
    both = load_compact_player(str(path))
    golf = load_compact_player(policy_path("scat_golf"))
    obs, feats, mask, table = _positions("golf", 3)
    assert mask[:, PLACE_SLOT:].any()
    got = both.play_logits(obs, feats, 3, table.start_lives, mask, None, table)
    want = golf.play_logits(obs, feats, 3, table.start_lives, mask, None, table)
    np.testing.assert_array_equal(got, want)


def test_two_sets_whose_calls_name_each_other_are_one_line(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    for path, other in ((a, b), (b, a)):
        path.write_text("format: scat-policy-set\npolicies:\n"
                        f"  default: {POLICIES / 'scat_batch_7_10.npz'}\ncalls: {other}\n")
    with pytest.raises(ValueError) as err:
        load_compact_player(str(a))
    assert "calls of its own" in str(err.value) and "\n" not in str(err.value)
    assert str(a) in str(err.value) and str(b) in str(err.value)
