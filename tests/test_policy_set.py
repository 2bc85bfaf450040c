"""``ppo:SET.yaml``: one policy per number of players still in, from a small manifest."""

from pathlib import Path

import numpy as np
import pytest

from agents.match import play_game
from agents.policy import PolicySetAgent
from agents.registry import make_agent
from scat_env import GameState, Rules, make_view

POLICIES = Path(__file__).resolve().parent.parent / "policies"
GENERAL, V1, V2 = (str(POLICIES / f) for f in ("scat_ppo.npz", "scat_ppo_2p.npz", "scat_ppo_3p.npz"))


def _plain_policy(path: Path, max_players: int = 6, seed: int = 0) -> str:
    """A small random policy file without the expert-advice inputs (numpy only)."""
    from agents.neural.encoding import policy_observation_size
    from agents.neural.policy_file import expected_shapes, save_policy
    from scat_env.actions import NUM_ACTIONS

    arch = {"obs_size": policy_observation_size(max_players), "hidden": 8, "layers": 1,
            "max_players": max_players}
    rng = np.random.default_rng(seed)
    arrays = {k: rng.normal(size=shape).astype(np.float32)
              for k, shape in expected_shapes(arch).items()}
    save_policy(path, arrays, {"arch": arch, "max_players": max_players, "num_actions": NUM_ACTIONS,
                               "rules": {}, "config": {}, "metrics": {}})
    return str(path)


def _manifest(tmp_path: Path, text: str, name: str = "set.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _set(tmp_path: Path) -> str:
    return _manifest(tmp_path, f"format: scat-policy-set\npolicies:\n  2: {V1}\n  3: {V2}\n"
                               f"  default: {GENERAL}\n")


def _three_with_one_out() -> GameState:
    rules = Rules()
    deck = list(range(52))
    return GameState.from_parts(rules, hands=[deck[:3], [], deck[3:6]], stock=deck[7:],
                                discard=[deck[6]], lives=[2, 0, 3], dealer=2,
                                current_player=0, hand_number=5)


def test_a_set_hands_each_table_size_to_its_specialist(tmp_path):
    agent = make_agent(f"ppo:{_set(tmp_path)}")
    assert isinstance(agent, PolicySetAgent)
    name = {id(a): a.name for a in agent._all()}
    for n, expected in ((2, V1), (3, V2), (4, GENERAL), (5, GENERAL)):
        state = GameState(n, seed=n)
        view = make_view(state, state.current_player)
        assert name[id(agent.member(view))] == f"ppo:{Path(expected).name}"
        assert agent.act(view) in view.legal_actions


def test_once_a_player_is_out_the_set_plays_the_smaller_games_specialist(tmp_path):
    """A three-player table with one player out is a two-player game (scat_env.active_view)."""
    view = make_view(_three_with_one_out(), 0)
    assert make_agent(f"ppo:{_set(tmp_path)}").member(view).name == f"ppo:{Path(V1).name}"
    # ':full' reads the whole table, so the table's size picks the member.
    assert make_agent(f"ppo:{_set(tmp_path)}:full").member(view).name == f"ppo:{Path(V2).name}"


def test_a_set_plays_whole_games_and_is_seeded(tmp_path):
    spec = f"ppo:{_set(tmp_path)}:sample"
    records = []
    for _ in range(2):
        agents = [make_agent(spec), make_agent("greedy"), make_agent("expert")]
        records.append(play_game(agents, Rules(), seed=11))
    assert records[0].winner is not None and not records[0].truncated
    assert records[0].actions == records[1].actions


def test_member_files_are_relative_to_the_manifest(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two.npz").write_bytes(Path(V1).read_bytes())
    path = _manifest(tmp_path, f"format: scat-policy-set\npolicies:\n  2: sub/two.npz\n"
                               f"  default: {GENERAL}\n")
    view = make_view(GameState(2, seed=0), 0)
    assert make_agent(f"ppo:{path}").member(view).name == "ppo:two.npz"


@pytest.mark.parametrize("text, message", [
    ("policies: {default: x.pt}\n", "format: scat-policy-set"),
    ("format: scat-policy-set\npolicies: {2: [a.pt, 3]}\n", "entry 2 must name a policy file or a list"),
    ("format: scat-policy-set\npolicies: {1: a.pt}\n", "key 1 is not a player count"),
    ("format: scat-policy-set\npolicies: {two: a.pt}\n", "key 'two' is not a player count"),
    ("format: scat-policy-set\npolicies: {}\n", "'policies' must map"),
    ("format: scat-policy-set\npolicy: {default: a.pt}\n", "unknown field"),
    ("format: scat-policy-set\npolicies: {2: [\n", "not valid YAML"),
    ("format: scat-policy-set\npolicies: {default: missing.pt}\n", "does not exist"),
    ("format: scat-policy-set\nsymmetry: 0\npolicies: {default: a.pt}\n", "'symmetry' must be"),
    ("format: scat-policy-set\nsymmetry: [8]\npolicies: {default: a.pt}\n", "'symmetry' must be"),
])
def test_a_bad_manifest_is_a_clear_error(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        make_agent(f"ppo:{_manifest(tmp_path, text)}")


def test_a_set_averages_over_the_relabellings_its_manifest_names(tmp_path):
    # agents.symmetry: each member averages its logits over renamed suits and ranks; the
    # spec's sym option overrides the manifest, and :sym=1 plays the members as they are.
    path = _manifest(tmp_path, f"format: scat-policy-set\nsymmetry: 6\npolicies:\n"
                               f"  2: {V1}\n  default: {GENERAL}\n", name="sym.yaml")
    assert {a.symmetry for a in make_agent(f"ppo:{path}")._all()} == {6}
    assert {a.symmetry for a in make_agent(f"ppo:{path}:sym=2")._all()} == {2}
    assert {a.symmetry for a in make_agent(f"ppo:{path}:sym=1")._all()} == {1}
    assert {a.symmetry for a in make_agent(f"ppo:{_set(tmp_path)}")._all()} == {1}


def test_a_missing_or_corrupt_set_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(f"ppo:{tmp_path / 'nope.yaml'}")
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="not valid YAML"):
        make_agent(f"ppo:{path}")


def test_a_specialist_cannot_be_listed_for_more_players_than_it_plays(tmp_path):
    path = _manifest(tmp_path, f"format: scat-policy-set\npolicies:\n  8: {GENERAL}\n")
    with pytest.raises(ValueError, match="plays at most 6 players, listed for 8"):
        make_agent(f"ppo:{path}")


def test_a_set_without_a_default_refuses_an_unlisted_size(tmp_path):
    path = _manifest(tmp_path, f"format: scat-policy-set\npolicies: {{2: {V1}}}\n")
    agent = make_agent(f"ppo:{path}")
    view = make_view(GameState(3, seed=0), 0)
    with pytest.raises(ValueError, match="policies for 2 players and no default; this table has 3"):
        agent.act(view)


def test_a_list_of_files_plays_as_the_mean_of_their_logits(tmp_path):
    path = _manifest(tmp_path, f"format: scat-policy-set\npolicies:\n  default: [{GENERAL}, {V2}]\n")
    state = GameState(3, seed=4)
    view = make_view(state, state.current_player)
    both = make_agent(f"ppo:{path}").logits(view)
    one, two = make_agent(f"ppo:{GENERAL}").logits(view), make_agent(f"ppo:{V2}").logits(view)
    legal = list(view.legal_actions)
    assert np.allclose(both[legal], (one[legal] + two[legal]) / 2, atol=1e-5)


def test_an_ensemble_cannot_mix_input_layouts(tmp_path):
    """One file reads no expert-advice inputs, the other does: their logits cannot share one
    observation."""
    plain = _plain_policy(tmp_path / "plain.npz")
    path = _manifest(tmp_path, f"format: scat-policy-set\npolicies:\n  default: [{plain}, {V2}]\n")
    with pytest.raises(ValueError, match="cannot mix policies with and without"):
        make_agent(f"ppo:{path}")


def test_the_shipped_set_averages_members_whose_provenance_ships_with_them():
    """policies/scat_ppo_set.yaml: every file it names is committed and documented in the
    model card (policies/README.md: its config, command and evaluation), the table sizes it
    averages list several files, and it plays a whole four-player game, the size whose
    member changes once a player is out."""
    from agents.neural.policy_set import load_policy_set

    members, default, _ = load_policy_set(str(POLICIES / "scat_ppo_set.yaml"))
    assert sorted(members) == [2, 3, 4] and default == [str(POLICIES / "scat_ppo.npz")]
    assert all(len(files) >= 2 for files in members.values())
    readme = (POLICIES / "README.md").read_text()
    for files in members.values():
        for f in files:
            name = Path(f).name
            assert Path(f).is_file(), name
            assert Path(f).stem in readme, f"{name} is not documented in policies/README.md"
    agent = make_agent(f"ppo:{POLICIES / 'scat_ppo_set.yaml'}", seed=0)
    rec = play_game([agent] + [make_agent("random", seed=s) for s in (1, 2, 3)], Rules(), seed=4)
    assert rec.winner in range(4) and not rec.truncated


def test_the_shipped_set_is_named_from_any_folder(tmp_path, monkeypatch):
    from agents.policy import DEFAULT_OPPONENT

    monkeypatch.chdir(tmp_path)
    agent = make_agent(DEFAULT_OPPONENT, seed=0)
    assert isinstance(agent, PolicySetAgent) and DEFAULT_OPPONENT == "ppo:scat_ppo_set"
    assert make_agent("ppo:scat_ppo").max_players == 6
    with pytest.raises(ValueError, match="policy file 'scat_ppo_nope' does not exist"):
        make_agent("ppo:scat_ppo_nope")


def test_a_set_refuses_a_table_it_cannot_play_before_the_first_move(tmp_path):
    """check_table: the shipped default plays up to six players; the match loop asks every
    agent before the first move, so an eight-player table fails at once, not mid-game."""
    agent = make_agent(f"ppo:{POLICIES / 'scat_ppo_set.yaml'}")
    agent.check_table(6, Rules())
    with pytest.raises(ValueError, match="plays at most 6 players, this table has 8"):
        play_game([agent] + [make_agent("random")] * 7, Rules(), seed=1)
    with pytest.raises(ValueError, match="trained with knock_mode 'lowest'; these rules \\(gin\\)"):
        agent.check_table(3, Rules.preset("gin"))
    # A set without a default cannot play the two-player end of a three-player game.
    path = _manifest(tmp_path, f"format: scat-policy-set\npolicies: {{3: {V2}}}\n")
    with pytest.raises(ValueError, match="policies for 3 players and no default; this table has 2"):
        make_agent(f"ppo:{path}").check_table(3, Rules())
    make_agent(f"ppo:{path}:full").check_table(3, Rules())


@pytest.mark.parametrize("spec", ["ppo:scat_ppo_set", "ppo:scat_ppo_set:sample", "ppo:scat_ppo"])
@pytest.mark.parametrize("preset", ["golf", "french_canadian", "moyer", "gin"])
def test_a_refusal_names_the_spec_the_user_gave_not_the_files_behind_it(spec, preset):
    with pytest.raises(ValueError) as refused:
        make_agent(spec).check_table(3, Rules.preset(preset))
    given = spec.removesuffix(":sample")
    message = str(refused.value)
    assert message.startswith(f"{given} ") and ".npz" not in message and "\n" not in message


@pytest.mark.parametrize("spec, word", [
    ("ppo:scat_ppo_set:bogus", "bogus"),
    ("ppo:scat_ppo_set:sample:bogus", "bogus"),
    ("ppo:scat_ppo_set:Full", "Full"),
    ("ppo:scat_ppo_set:symm=3", "symm=3"),
    ("ppo:no_such_policy.npz:bogus", "bogus"),
])
def test_an_unknown_option_after_a_policy_is_named_with_the_options(spec, word):
    with pytest.raises(ValueError) as refused:
        make_agent(spec)
    assert str(refused.value) == (
        f"ppo: unknown option {word!r} in {spec}; options: sample, argmax, full, sym, "
        "sym=N (N from 1 to 576)")


def test_a_policy_file_whose_name_holds_a_colon_still_loads(tmp_path):
    path = _plain_policy(tmp_path / "run:best")
    assert make_agent(f"ppo:{path}").max_players == 6
    with pytest.raises(ValueError, match="policy file .*does not exist"):
        make_agent(f"ppo:{tmp_path}/run:best.npz")  # a file name, not an option: missing
