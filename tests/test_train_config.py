"""Training configs are validated on load: a malformed field is named before training starts."""

from pathlib import Path

import pytest

from training.config import load_config

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "train").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_every_shipped_training_config_loads(path):
    trainer, cfg = load_config(path)
    assert trainer in ("native", "sb3") and cfg.name


@pytest.mark.parametrize("trainer", ["native", "sb3"])
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("lr: fast", "field 'lr' must be a number"),
        ("seed: 1.5", "field 'seed' must be an integer"),
        ("seed: true", "field 'seed' must be an integer"),
        ("eval_players: [2, x]", "field 'eval_players' has an item that must be an integer"),
        ("eval_players: 3", "field 'eval_players' must be a list"),
        ("bogus: 1", "unknown field(s)"),
    ],
)
def test_malformed_training_config_names_the_field(tmp_path, trainer, body, message):
    path = tmp_path / "bad.yaml"
    path.write_text(f"trainer: {trainer}\n{body}\n")
    with pytest.raises(ValueError, match=None) as err:
        load_config(path)
    assert message in str(err.value) and "bad.yaml" in str(err.value)


def test_native_opponent_mix_values_must_be_numbers(tmp_path):
    path = tmp_path / "mix.yaml"
    path.write_text("trainer: native\nopponents: {self: high}\n")
    with pytest.raises(ValueError, match="field 'opponents' has a value that must be a number"):
        load_config(path)
