"""Golf's search labels: the moves weighed, the paired playouts, and the fit to them.

``training/search_labels.py`` teaches golf's policy the search's moves; a label is worth
something only if both moves were played out on the same cards, and the fit only if the
policy it writes plays.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.compact import CompactAgent, load_compact_player, policy_path
from scat_env.actions import DRAW_DISCARD, DRAW_STOCK, NUM_ACTIONS, PLACE_SLOT, TURN_UP
from training import search_labels as sl


@pytest.fixture(scope="module")
def policy():
    return load_compact_player(policy_path("scat_golf"))


def test_each_kind_of_move_is_weighed_at_the_policys_likeliest_of_it() -> None:
    mask = np.zeros((3, NUM_ACTIONS), bool)
    logits = np.zeros((3, NUM_ACTIONS), np.float32)
    mask[0, [DRAW_STOCK, DRAW_DISCARD]] = True  # take or draw
    logits[0, DRAW_DISCARD] = 2.0
    mask[1, [PLACE_SLOT, PLACE_SLOT + 2, TURN_UP, TURN_UP + 2]] = True  # place or turn up
    logits[1, [PLACE_SLOT, PLACE_SLOT + 2, TURN_UP, TURN_UP + 2]] = [1.0, 3.0, 0.5, -1.0]
    mask[2, [PLACE_SLOT, PLACE_SLOT + 1]] = True  # a card taken must be placed: one kind
    moves = sl.kind_moves(logits, mask)
    assert moves[0].tolist() == [DRAW_DISCARD, DRAW_STOCK]
    assert moves[1].tolist() == [PLACE_SLOT + 2, TURN_UP]
    assert moves[2].tolist() == [-1, -1]


@pytest.mark.parametrize("n", [3, 6])
def test_one_move_played_twice_scores_the_same_in_every_world(policy, n: int) -> None:
    """Common random numbers: both copies of a world hold the same cards and are dealt
    from one stream, so a move against itself differs in no world, while the worlds differ
    from each other (the unseen cards dealt anew)."""
    lab = sl.Labeller(policy, n, games=8, worlds=6, seed=n)
    for _ in range(50):
        cur = lab.table.current()
        mine = np.flatnonzero(cur["current_player"] == lab.learner)
        moves = sl.kind_moves(np.zeros(cur["action_mask"].shape, np.float32),
                              cur["action_mask"])
        rows = mine[moves[mine, 0] >= 0]
        if len(rows):
            break
        lab.step()
    same = np.repeat(moves[rows, :1], 2, axis=1)
    out = lab.play_out(rows, same)
    assert out.shape == (len(rows), 6, 2)
    assert np.array_equal(out[:, :, 0], out[:, :, 1])
    assert ((out >= 0) & (out <= 1)).all()
    assert len(np.unique(out)) > 1


def test_labels_are_the_learners_decisions_with_two_kinds_open(policy) -> None:
    lab = sl.Labeller(policy, 3, games=8, worlds=4, seed=1)
    got = [x for x in (lab.step() for _ in range(12)) if x is not None]
    assert got
    for x in got:
        rows = np.arange(len(x["z"]))
        assert x["mask"][rows[:, None], x["moves"]].all()
        assert (x["moves"][:, 0] != x["moves"][:, 1]).all()
        assert x["mean"].shape == (len(rows), 2) and np.isfinite(x["z"]).all()


def _agreement(policy, data: dict) -> float:  # noqa: ANN001
    from scat_env import Rules
    from scat_env.batch import BatchEnv

    rules, obs = Rules.preset("golf"), data["obs"]
    logits = policy.play_logits(obs, BatchEnv(1, 3, rules).hand_features(obs), 3,
                                rules.start_lives, data["mask"], data["advice"], rules)
    kind = sl.kind_of(sl.targets(data, 1.5))  # the kind counts: face-down slots are alike
    return float(kind[np.arange(len(obs)), logits.argmax(1)].mean())


def test_the_fit_learns_the_labels_moves_and_writes_a_playable_policy(policy, tmp_path
                                                                       ) -> None:
    data = sl.label("scat_golf", 3, decisions=120, games=16, worlds=4, seed=2,
                    log=lambda _: None)
    data["z"][:] = 9.0  # every label the other kind's move: one the policy does not make
    out = tmp_path / "fit.npz"
    sl.fit("scat_golf", [data], out, epochs=80, lr=1e-2, batch=32, log=lambda _: None)
    fitted = load_compact_player(str(out))
    assert _agreement(policy, data) < 0.2 < 0.8 < _agreement(fitted, data)
    from scat_env import Rules

    CompactAgent(fitted).check_table(3, Rules.preset("golf"))


def test_the_command_writes_the_labels(tmp_path) -> None:
    out = tmp_path / "labels.npz"
    assert sl.main(["label", "--players", "3", "--decisions", "20", "--games", "8", "--worlds", "2",
                    "--out", str(out)]) == 0
    with np.load(out) as f:
        assert int(f["num_players"]) == 3 and len(f["z"]) >= 20


def test_a_file_that_holds_no_labels_is_one_line_and_status_2(tmp_path, capsys) -> None:
    bad = tmp_path / "not_labels.npz"
    np.savez(bad, x=np.zeros(3))
    out = tmp_path / "fit.npz"
    assert sl.main(["fit", str(bad), "--out", str(out)]) == 2
    assert sl.main(["fit", str(tmp_path / "missing.npz"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("search_labels: ") for line in err)
    assert "not a labels file" in err[0] and "missing.npz" in err[1]
    assert not out.exists()
