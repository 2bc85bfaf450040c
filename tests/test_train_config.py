"""Training configs are validated on load: a malformed field is named before training starts."""

from pathlib import Path

import pytest

from training.config import load_config
from training.trainers import trainers

TRAINERS = tuple(trainers())

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "train").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_every_shipped_training_config_loads(path):
    trainer, cfg = load_config(path)
    assert trainer in TRAINERS and cfg.name


@pytest.mark.parametrize("trainer", TRAINERS)
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


def test_opponent_mix_values_must_be_numbers(tmp_path):
    path = tmp_path / "mix.yaml"
    path.write_text("trainer: sb3\nopponents: {self: high}\n")
    with pytest.raises(ValueError, match="field 'opponents' has a value that must be a number"):
        load_config(path)


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "train").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_every_file_a_shipped_config_starts_from_or_hands_off_to_exists(path, monkeypatch):
    """A config names shipped policy files (``init_from``, ``handoff``) by paths from the
    repository root; a renamed or deleted file must fail here, not an hour into a run. A
    file under ``runs/`` is an earlier stage's run folder, made by its config."""
    from training.batch_ppo import Handoff

    monkeypatch.chdir(ROOT)
    _, cfg = load_config(path)
    init_from = getattr(cfg, "init_from", None)
    handoff = getattr(cfg, "handoff", None)
    if init_from and not init_from.startswith("runs/"):
        assert (ROOT / init_from).is_file(), init_from
    for made in (init_from, handoff):
        if made and made.startswith("runs/"):
            stage = made.split("/")[1]
            assert (ROOT / "configs" / "train" / f"{stage}.yaml").is_file(), made
    if handoff and not handoff.startswith("runs/"):  # a compact file, set or name
        Handoff(cfg.handoff, cfg.handoff_players, cfg.rules)


@pytest.mark.parametrize("trainer", ["batch", "sb3"])
@pytest.mark.parametrize("field, value", [
    ("gamma", 1.5), ("gae_lambda", -0.1), ("clip", 0), ("ent_coef", -1), ("lr", float("nan")),
    ("time_limit_s", -5), ("time_limit_s", float("inf")), ("hand_reward", float("nan")),
])
def test_hyper_parameters_out_of_range_are_refused_in_one_line(tmp_path, trainer, field, value):
    path = tmp_path / "c.yaml"
    path.write_text(f"trainer: {trainer}\n{field}: {value}\n".replace("nan", ".nan")
                    .replace("inf", ".inf"))
    with pytest.raises(ValueError, match=f"{field} must be in") as exc:
        load_config(path)
    assert "\n" not in str(exc.value)


def test_time_limit_from_the_command_line_is_range_checked(tmp_path, capsys):
    from scat_cli.main import main

    config = Path(__file__).resolve().parents[1] / "configs" / "train" / "smoke.yaml"
    assert main(["train", "--config", str(config), "--out", str(tmp_path / "r"),
                 "--time-limit", "-3"]) == 2
    assert "time_limit_s must be in" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("trainer", ["sb3", "rllib"])
@pytest.mark.parametrize("body, message", [
    ("opponents: {self: 0.5, nosuch: 0.5}\n", "field 'opponents': unknown agent spec 'nosuch'"),
    ("eval_opponents: [greedy, nosuch]\n", "field 'eval_opponents': unknown agent spec 'nosuch'"),
    ("rules: nosuch\n", "field 'rules': unknown rules preset 'nosuch'"),
    ("rules: missing.yaml\n", "field 'rules': rules file not found"),
])
def test_a_misspelt_agent_spec_or_rules_name_is_refused_when_the_config_is_read(
        tmp_path, trainer, body, message):
    """Not a warning that quietly changes the opponents' mix, nor an error after the whole
    run when the final evaluation meets the name."""
    path = tmp_path / "typo.yaml"
    path.write_text(f"trainer: {trainer}\n{body}")
    with pytest.raises(ValueError, match=message.replace("(", r"\(")) as err:
        load_config(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_the_batched_trainers_eval_opponents_are_checked_too(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("trainer: batch\neval_opponents: [expertt]\n")
    with pytest.raises(ValueError, match="field 'eval_opponents': unknown agent spec 'expertt'"):
        load_config(path)


def test_a_retired_trainer_is_one_line_naming_its_replacement(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("trainer: native\ntotal_samples: 1000\n")
    with pytest.raises(ValueError) as err:
        load_config(path)
    text = str(err.value)
    assert "\n" not in text and "'native' was retired" in text and "trainer: batch" in text


def test_an_unknown_trainer_lists_the_known_ones(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("trainer: bach\n")
    with pytest.raises(ValueError) as err:
        load_config(path)
    text = str(err.value)
    assert "\n" not in text and "unknown trainer 'bach'" in text
    assert all(name in text for name in TRAINERS)


def test_a_registered_trainer_is_looked_up_by_scat_train(tmp_path, capsys):
    """``register_trainer`` is the one table: a trainer added there is what a config's
    ``trainer:`` finds, its config validated by the same loader."""
    from scat_cli.main import main
    from training.config import SB3Config
    from training.trainers import _TRAINERS, register_trainer

    seen = {}

    def fake_train(cfg, out, resume=False, log=print):
        seen["cfg"] = cfg
        return {"samples": 0}

    register_trainer("fake", SB3Config, fake_train, "a test trainer")
    try:
        path = tmp_path / "fake.yaml"
        path.write_text("trainer: fake\ntotal_samples: 5\nfinal_eval_games: 0\n")
        assert main(["train", "--config", str(path), "--out", str(tmp_path / "run")]) == 0
        assert seen["cfg"].total_samples == 5
    finally:
        del _TRAINERS["fake"]


def test_the_training_docs_list_every_field_as_its_table_declares_it():
    """docs/TRAINING.md's field lists are ``python -m training.config``'s output: a field
    added, renamed or given another range must be regenerated there."""
    from training.config import BatchPPOConfig, RLlibConfig, SB3Config, fields_table

    text = (ROOT / "docs" / "TRAINING.md").read_text(encoding="utf-8")
    for cls in (BatchPPOConfig, SB3Config, RLlibConfig):
        assert fields_table(cls) in text, cls.__name__


def test_no_config_class_repeats_a_shared_fields_declaration():
    """PPO's shared fields (lr, gamma, clip, epochs...) have one spec each: every config
    that has one uses that spec, whatever its default."""
    import dataclasses

    from training.config import SHARED, BatchPPOConfig, RLlibConfig, SB3Config

    ppo = ("lr", "gamma", "gae_lambda", "clip", "ent_coef", "vf_coef", "max_grad_norm",
           "epochs", "minibatch_samples", "hidden", "layers", "total_samples", "time_limit_s",
           "seed", "hand_reward", "final_eval_games", "eval_games")
    for cls in (BatchPPOConfig, SB3Config, RLlibConfig):
        for f in dataclasses.fields(cls):
            if f.name in ppo:
                assert f.metadata["spec"] is SHARED[f.name], (cls.__name__, f.name)
