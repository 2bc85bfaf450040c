"""Every YAML file we read (rules, training configs, policy-set manifests) costs little and
fails in one bounded line, whatever it holds.

The alias bomb below is 415 bytes or so and stands for 9**9 list items once expanded; each
loader used to expand it and then print it in full inside its error message.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import pytest

from agents.neural.policy_set import load_policy_set
from scat_env import Rules
from scat_env.yamlfile import MAX_BYTES, MAX_MESSAGE, one_line, read_yaml
from training.config import load_config

BOMB = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
       f"*{chr(97 + i)}]" for i in range(8)]
)


def _loaders(tmp_path: Path):
    return [
        ("rules", lambda p: Rules.from_yaml(p), "pennies"),
        ("training config", lambda p: load_config(p), "lr"),
        ("policy set", lambda p: load_policy_set(str(p)), "symmetry"),
    ]


@pytest.fixture(autouse=True)
def _bounded_memory():
    """A loader that expanded the bomb would need gigabytes: fail fast instead of swapping."""
    if sys.platform != "linux":
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.parametrize("which", [0, 1, 2])
def test_an_alias_bomb_under_a_known_field_is_refused_in_one_line(tmp_path, which):
    what, load, field = _loaders(tmp_path)[which]
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB + f"\n{field}: *i\n")
    assert path.stat().st_size < 500
    with pytest.raises(ValueError) as exc:
        load(path)
    message = str(exc.value)
    assert "aliases" in message and "\n" not in message and len(message) <= MAX_MESSAGE + 200


@pytest.mark.parametrize("which", [0, 1, 2])
def test_an_oversized_file_is_refused_before_it_is_parsed(tmp_path, which):
    _, load, field = _loaders(tmp_path)[which]
    path = tmp_path / "big.yaml"
    path.write_text(f"{field}: [" + "1, " * (MAX_BYTES // 3) + "1]\n")
    with pytest.raises(ValueError, match="the limit is"):
        load(path)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_long_bad_value_is_named_in_one_bounded_line(tmp_path, which):
    _, load, field = _loaders(tmp_path)[which]
    path = tmp_path / "long.yaml"
    head = "format: scat-policy-set\npolicies: {default: x.npz}\n" if field == "symmetry" else ""
    path.write_text(head + f"{field}: [" + ", ".join(["12345"] * 20_000) + "]\n")
    with pytest.raises(ValueError) as exc:
        load(path)
    message = str(exc.value)
    assert field in message and len(message) <= MAX_MESSAGE and "\n" not in message


def test_deep_nesting_is_a_clear_error(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("pennies: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(ValueError, match="nested too deeply|not valid YAML"):
        read_yaml(path, "rules file")


def test_deep_nesting_is_refused_whatever_the_recursion_limit(tmp_path):
    """The depth is counted, not left to Python's recursion limit: a library that raised
    the limit in this process (hypothesis does, for its own tests) must not let a hostile
    file recurse until the interpreter's stack gives out (a test worker once crashed right
    after the test above)."""
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        path = tmp_path / "deep.yaml"
        path.write_text("pennies: " + "[" * 2_000 + "]" * 2_000 + "\n")
        with pytest.raises(ValueError, match="nested too deeply"):
            read_yaml(path, "rules file")
    finally:
        sys.setrecursionlimit(old)


def test_a_rules_file_whose_preset_names_itself_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text(f"preset: {path}\npennies: 2\n")
    with pytest.raises(ValueError, match="preset chain loops"):
        Rules.from_yaml(path)
    other = tmp_path / "other.yaml"
    other.write_text(f"preset: {path}\n")
    path.write_text(f"preset: {other}\n")
    with pytest.raises(ValueError, match="preset chain loops"):
        Rules.from_yaml(path)


def test_a_rules_file_may_build_on_another_rules_file(tmp_path):
    base = tmp_path / "base.yaml"
    base.write_text("preset: cadillac\n")
    child = tmp_path / "child.yaml"
    child.write_text(f"preset: {base}\nmin_knock: 17\n")
    rules = Rules.from_yaml(child)
    assert rules.three_aces == 33 and rules.min_knock == 17


def test_one_line_keeps_both_ends_of_a_long_message():
    text = "start " + "x" * 1000 + "\n end"
    short = one_line(text, 60)
    assert len(short) <= 60 and short.startswith("start") and short.endswith("end")


@pytest.mark.parametrize("text", ["0\x0b...\n", "pennies: 3\x07\n", "name: \x1b[2J\n"])
def test_characters_yaml_forbids_are_one_line(tmp_path, text):
    """PyYAML checks the characters while it builds its reader, before parsing: that check
    too must end in the loader's one line, not in PyYAML's ReaderError."""
    path = tmp_path / "control.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match="is not valid YAML") as err:
        read_yaml(path, "rules file")
    assert "\n" not in str(err.value) and len(str(err.value)) <= MAX_MESSAGE + 100


def test_deep_flow_nesting_is_refused_before_pyyaml_reads_it(tmp_path, monkeypatch):
    """``[[[[...`` deeper than the limit never reaches PyYAML's scanner and parser, whose
    work (and, in one test worker, the interpreter's state) grew with every level before the
    composer could count them; brackets inside quotes and comments do not count."""
    from scat_env import yamlfile

    def no_loader(*_: object) -> None:
        raise AssertionError("PyYAML was handed the file")

    path = tmp_path / "deep.yaml"
    path.write_text("pennies: " + "{a: " * 200 + "1" + "}" * 200 + "\n")
    monkeypatch.setattr(yamlfile, "_NoAliases", no_loader)
    with pytest.raises(ValueError, match="nested too deeply"):
        read_yaml(path, "rules file")
    monkeypatch.undo()
    fine = tmp_path / "fine.yaml"
    fine.write_text("name: '" + "[" * 100 + "'  # " + "{" * 100 + "\nlist: [[1, 2], [3]]\n")
    assert read_yaml(fine, "rules file") == {"name": "[" * 100, "list": [[1, 2], [3]]}
