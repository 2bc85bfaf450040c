"""Averaging the weights of compact policies of one network (:mod:`training.average`)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_batch_pieces import EVERY_PRESET, random_policy
from test_batch_training import TINY

from agents.compact import load_compact, save_compact, table_pieces
from agents.registry import make_agent
from scat_env import Rules
from training import average
from training.batch_ppo import CompactNet, export, warm_start
from training.config import BatchPPOConfig


@pytest.fixture
def two(tmp_path):
    """Two networks of one architecture, trained (as far as the file says) at 3 and at 6."""
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    random_policy(a, "hammer", seed=1)
    torch.manual_seed(2)
    net = CompactNet(32, 2, pieces=table_pieces(Rules.preset("hammer")))
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.1 * (p != 0))  # unseen cards' rows stay zero
    export(net, b, BatchPPOConfig(rules="hammer", player_counts=[6], rules_mix=["throw_down"],
                                  **EVERY_PRESET, **TINY), {})
    return a, b


def test_the_result_is_the_mean_of_every_weight(two, tmp_path):
    a, b = two
    out = tmp_path / "mean.npz"
    assert average.main([str(a), str(b), "--out", str(out)]) == 0
    got, _ = load_compact(out)  # its hash checks
    (wa, _), (wb, _) = load_compact(a), load_compact(b)
    assert set(got) == set(wa)
    for k in got:
        assert np.allclose(got[k], (wa[k] + wb[k]) / 2, atol=1e-7), k
    assert not np.array_equal(got["pi.weight"], wa["pi.weight"])


def test_the_result_names_its_parts_and_every_preset_and_size_they_learned(two, tmp_path):
    a, b = two
    out = tmp_path / "mean.npz"
    average.main([str(a), str(b), "--out", str(out)])
    _, meta = load_compact(out)
    (_, ma), (_, mb) = load_compact(a), load_compact(b)
    assert meta["player_counts"] == [3, 6]
    assert meta["rules_mix"] == ["throw_down"]
    assert [p["sha256"] for p in meta["averaged_from"]] == [ma["sha256"], mb["sha256"]]
    assert [p["file"] for p in meta["averaged_from"]] == ["a.npz", "b.npz"]
    assert "config" not in meta  # no one run made it


def test_the_result_plays_and_trains_on(two, tmp_path):
    a, b = two
    out = tmp_path / "mean.npz"
    average.main([str(a), str(b), "--out", str(out)])
    agent = make_agent(f"compact:{out}")
    agent.check_table(3, Rules.preset("hammer"))
    net = CompactNet(32, 2, pieces=table_pieces(Rules.preset("hammer")))
    warm_start(net, str(out))  # a leg may continue from it
    got, _ = load_compact(out)
    assert np.allclose(net.pi.weight.detach().numpy(), got["pi.weight"])


def test_another_network_is_refused_in_one_line(two, tmp_path, capsys):
    a, _ = two
    other = tmp_path / "other.npz"
    random_policy(other, "standard", seed=3)  # reads no call pieces
    out = tmp_path / "mean.npz"
    assert average.main([str(a), str(other), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "other.npz" in err and "pieces" in err
    assert not out.exists()


@pytest.mark.parametrize("argv, words", [
    (["A"], "at least two"),
    (["A", "A", "--out", "A"], "one of the files averaged"),
    (["A", "missing.npz"], "does not exist"),
])
def test_bad_arguments_are_one_line_and_write_nothing(two, tmp_path, capsys, argv, words):
    a, _ = two
    out = tmp_path / "mean.npz"
    argv = [str(a) if x == "A" else str(tmp_path / x) if x.endswith(".npz") else x
            for x in argv]
    if "--out" not in argv:
        argv += ["--out", str(out)]
    before = a.read_bytes()
    assert average.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and words in err
    assert not out.exists() and a.read_bytes() == before


def test_a_file_from_before_the_pieces_field_is_the_same_network(tmp_path):
    """A file written before policies named their pieces reads none (agents.compact), so it
    averages with a run that continued from it and wrote ``pieces: []``."""
    old, new, out = tmp_path / "old.npz", tmp_path / "new.npz", tmp_path / "mean.npz"
    random_policy(new, "standard", seed=4)
    arrays, meta = load_compact(new)
    assert meta["pieces"] == []
    save_compact(old, arrays, {k: v for k, v in meta.items()
                               if k not in ("pieces", "kind", "format_version", "sha256")})
    assert "pieces" not in load_compact(old)[1]
    assert average.main([str(old), str(new), "--out", str(out)]) == 0


def test_another_width_is_refused_naming_the_weight(two, tmp_path, capsys):
    a, _ = two
    wide = tmp_path / "wide.npz"
    net = CompactNet(48, 2, pieces=table_pieces(Rules.preset("hammer")))
    export(net, wide, BatchPPOConfig(rules="hammer", player_counts=[3], **EVERY_PRESET,
                                     **{**TINY, "hidden": 48}), {})
    assert average.main([str(a), str(wide), "--out", str(tmp_path / "mean.npz")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "wide.npz" in err and "weight" in err and "48" in err
