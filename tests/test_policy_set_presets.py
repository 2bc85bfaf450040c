"""A policy set's ``presets``: the presets it was put together for, where it is measured and
seated, even when a member learned more (agents/neural/policy_set.py, agents/compact.py).

- Without the field, a set is trained on what its members learned: a set borrowing the
  every-preset policy is a candidate at every table.
- With it, the set is its family's: trained on those presets alone, so the preset table and
  the default seating take it there and nowhere else.
- A bad ``presets`` is one line naming the manifest and what is wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_preset_table import _script

from agents.compact import load_compact, policy_path
from agents.neural.policy_set import load_policy_set
from agents.registry import make_agent
from scat_env import Rules

REPO = Path(__file__).resolve().parents[1]
POLICIES = REPO / "policies"


def _family_member():
    return _script().family_member


def _set(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "set.yaml"
    path.write_text("format: scat-policy-set\npolicies:\n"
                    f"  3: {POLICIES / 'scat_lives_3p.npz'}\n"
                    f"  default: [{POLICIES / 'scat_batch_7_10.npz'}, "
                    f"{POLICIES / 'scat_rules.npz'}]\n" + extra)
    return path


def test_a_set_borrowing_the_every_preset_policy_learned_what_its_members_learned(tmp_path):
    agent = make_agent(f"compact:{_set(tmp_path)}")
    assert agent.trained_on(Rules.preset("hammer")) and agent.trained_on(Rules.preset("golf"))
    assert not _family_member()(agent)


def test_a_sets_presets_are_where_it_is_measured_and_seated(tmp_path):
    path = _set(tmp_path, "presets: [cadillac, straight_flush]\n")
    agent = make_agent(f"compact:{path}")
    assert agent.trained_on(Rules.preset("cadillac"))
    assert agent.trained_on(Rules.preset("straight_flush"))
    assert not agent.trained_on(Rules.preset("hammer"))
    assert not agent.trained_on(Rules.preset("standard"))
    assert _family_member()(agent)


@pytest.mark.parametrize(("value", "message"), [
    ("cadillac", "'presets' must be a list of preset names"),
    ("[]", "'presets' must be a list of preset names"),
    ("[cadillac, 3]", "'presets' must be a list of preset names"),
    ("[cadillac, no_such_game]", "'presets': 'no_such_game' is not a preset"),
    ("[cadillac, cadillac]", "names a preset twice"),
])
def test_a_bad_presets_field_is_one_line_naming_it(tmp_path, value, message):
    path = _set(tmp_path, f"presets: {value}\n")
    with pytest.raises(ValueError) as err:
        load_policy_set(str(path))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(path) in str(err.value)


def test_the_shipped_lives_set_is_measured_on_its_ten_presets():
    manifest = load_policy_set(str(POLICIES / "scat_lives_set.yaml"))
    assert manifest.presets is not None and len(manifest.presets) == 10
    # Its own members for two, three and more players in: every heads-up of these presets
    # too, and every position of a six-player table.
    assert [Path(p).name for p in manifest.members[2]] == ["scat_lives_2p.npz"]
    assert [Path(p).name for p in manifest.members[3]] == ["scat_lives_3p.npz"]
    assert [Path(p).name for p in manifest.default] == ["scat_lives_6p.npz"]
    agent = make_agent("compact:scat_lives_set")
    assert agent.trained_on(Rules.preset("cadillac"))
    assert not agent.trained_on(Rules.preset("standard"))


def test_the_shipped_calls_set_hands_three_players_in_to_the_averaged_calls_policy():
    """``compact:scat_calls_set``: the averaged calls policy plays every position with two
    or three players in, as that smaller game; its member for four or more learned at 6
    players with those positions handed to that same policy
    (configs/train/family_calls_6p.yaml), the way the set plays them."""
    manifest = load_policy_set(str(POLICIES / "scat_calls_set.yaml"))
    assert manifest.presets is None  # its members' five presets are the set's
    assert [Path(p).name for p in manifest.members[2]] == ["scat_calls_avg.npz"]
    assert [Path(p).name for p in manifest.members[3]] == ["scat_calls_avg.npz"]
    assert [Path(p).name for p in manifest.default] == ["scat_calls_6p.npz"]
    _, meta = load_compact(policy_path("scat_calls_6p"))
    config = meta["config"]
    assert (config["handoff"], config["handoff_players"]) == ("policies/scat_calls_avg.npz", 3)
    assert meta["player_counts"] == [6]
    agent = make_agent("compact:scat_calls_set")
    assert set(agent.policy.meta["rules_mix"]) == {
        "hammer", "throw_down", "throw_down_any", "moyer_second_knock", "undeclared_31"}
    assert agent.trained_on(Rules.preset("hammer"))
    assert not agent.trained_on(Rules.preset("moyer"))
    agent.check_table(6, Rules.preset("undeclared_31"))
