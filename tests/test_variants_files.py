"""One preset source: the rules files, docs/RULES.md's field table and preset paragraphs and
docs/VARIANTS.md's family table are what ``python scripts/rules_files.py`` writes from the
variation families, and ``--check`` names a file that is not."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scat_env import Rules
from scat_env.rules import PRESETS

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "rules_files.py"


def _script():
    spec = importlib.util.spec_from_file_location("rules_files", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_file_is_what_the_script_writes():
    assert _script().stale(REPO) == []


@pytest.mark.parametrize("name", PRESETS)
def test_each_rules_file_lists_every_field_in_order_and_loads_to_its_preset(name):
    path = REPO / "configs" / "rules" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text("utf-8"))
    assert list(data) == list(Rules().to_dict())
    assert Rules.from_yaml(path) == Rules.preset(name)


def _copy(tmp_path: Path) -> Path:
    """The generated files and the family folders, in a folder of their own."""
    for part in ("configs/rules", "scat_env/variants"):
        shutil.copytree(REPO / part, tmp_path / part,
                        ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "docs").mkdir()
    for doc in ("RULES.md", "VARIANTS.md"):
        shutil.copy(REPO / "docs" / doc, tmp_path / "docs" / doc)
    return tmp_path


def _check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--check", "--root", str(root)],
                          capture_output=True, text=True, check=False, cwd=REPO, timeout=120)


def test_check_exits_1_naming_a_stale_rules_file_and_writing_mends_it(tmp_path):
    root = _copy(tmp_path)
    assert _check(root).returncode == 0
    path = root / "configs" / "rules" / "gin.yaml"
    path.write_text(path.read_text("utf-8").replace("knocker_loss: 1", "knocker_loss: 2"))
    done = _check(root)
    assert done.returncode == 1 and "configs/rules/gin.yaml" in done.stderr, done.stderr
    assert "RULES.md" not in done.stderr
    assert _script().main(["--root", str(root)]) == 0
    assert _check(root).returncode == 0


def test_check_names_a_hand_edited_doc_table_and_a_rules_file_of_no_preset(tmp_path):
    root = _copy(tmp_path)
    doc = root / "docs" / "RULES.md"
    doc.write_text(doc.read_text("utf-8").replace("| lives before the county |",
                                                  "| lives before the parish |"))
    (root / "configs" / "rules" / "mine.yaml").write_text("preset: gin\n")
    done = _check(root)
    assert done.returncode == 1
    assert "docs/RULES.md" in done.stderr and "mine.yaml (no preset" in done.stderr
