"""The native trainer's policies and specs were retired: whatever names one gets one line
naming the replacement (compact:scat_batch_set, trainer: batch), never a traceback or a
bare "unknown agent"."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.registry import DEFAULT_POLICIES, make_agent

REPLACEMENT = "compact:scat_batch_set"


@pytest.mark.parametrize("spec", ["ppo:scat_ppo_set", "ppo:scat_ppo", "ppo:runs/x/policy.npz",
                                  "ppo:policies/scat_ppo_set.yaml:sample", "ppo"])
def test_a_ppo_spec_is_one_line_naming_the_replacement(spec):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    text = str(err.value)
    assert "\n" not in text and "retired" in text and REPLACEMENT in text
    assert "trainer: batch" in text


def _native_npz(path):
    """A policy file as the native trainer wrote it: ``.npz`` weights and ``metadata.json``
    of kind ``scat-policy``."""
    meta = json.dumps({"arch": {"hidden": 8}, "kind": "scat-policy", "format_version": 2},
                      sort_keys=True).encode()
    with open(path, "wb") as fh:
        np.savez(fh, **{"pi.bias": np.zeros(3, np.float32),
                        "metadata.json": np.frombuffer(meta, np.uint8)})
    return path


def test_a_native_policy_file_given_to_compact_names_the_replacement(tmp_path):
    path = _native_npz(tmp_path / "old.npz")
    with pytest.raises(ValueError) as err:
        make_agent(f"compact:{path}")
    text = str(err.value)
    assert "\n" not in text and "retired native trainer" in text and REPLACEMENT in text


def test_a_torch_policy_file_given_to_compact_names_the_replacement(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "old.pt"
    torch.save({"kind": "scat-policy", "state_dict": {}}, path)
    with pytest.raises(ValueError) as err:
        make_agent(f"compact:{path}")
    assert "retired native trainer" in str(err.value) and REPLACEMENT in str(err.value)


def test_the_default_policy_is_the_batched_set_and_plays_every_table_size():
    assert DEFAULT_POLICIES[0] == REPLACEMENT
    from scat_env import Rules

    agent = make_agent(DEFAULT_POLICIES[0], seed=1)
    for n in range(2, 11):
        agent.check_table(n, Rules.preset("standard"))


def test_ppo_is_not_listed_among_the_agents_one_can_pick():
    from agents.registry import available

    assert "ppo" not in available() and "compact" in available()
