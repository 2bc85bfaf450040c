"""Adding a variation is one folder: a toy family written into a copy of the package (its
field, its check, a preset and a help line) is a field of ``Rules``, validated, its preset
loads and is described, and the only other files that change are the ones
``python scripts/rules_files.py`` writes (docs/VARIANTS.md lists them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TOY = '''"""A toy variation: bonus lives for everyone (a test's own family)."""

from ..declare import Family, Field, Preset

FIELDS = (Field("toy_bonus", int, 0, "bonus lives for every player", "a test", order=1000,
                low=0, high=5),)
PRESETS = (Preset("toy", {"toy_bonus": 2}, note="two bonus lives", source="a test",
                  doc="`toy`: two bonus lives.", order=1000),)


def validate(rules, bad):
    if rules.toy_bonus and not rules.county:
        raise bad("toy_bonus", "bonus lives need the county")


def words(rules):
    return [("end", f"Toy: {rules.toy_bonus} bonus lives.")] if rules.toy_bonus else []


FAMILY = Family("toy", "a toy", order=1000, fields=FIELDS, presets=PRESETS,
                validate=validate, words=words)
'''

CHECK = '''
import json, scat_env
from scat_env import Rules
from scat_env.variants import describe
out = {"where": scat_env.__file__, "fields": list(Rules().to_dict())}
rules = Rules.preset("toy")
out["preset"] = [rules.toy_bonus, rules.name]
out["help"] = describe(rules)
out["yaml"] = Rules.from_yaml("configs/rules/toy.yaml") == rules
for bad in ({"toy_bonus": 9}, {"toy_bonus": 1, "county": False}, {"toy_bonus": "2"}):
    try:
        Rules(**bad)
        out.setdefault("errors", []).append(None)
    except ValueError as exc:
        out.setdefault("errors", []).append(str(exc))
print(json.dumps(out))
'''


def _tree(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def test_a_toy_family_needs_only_its_folder_and_the_generated_files(tmp_path):
    copy = tmp_path / "repo"
    ignore = shutil.ignore_patterns("__pycache__")
    for part in ("scat_env", "configs/rules"):
        shutil.copytree(REPO / part, copy / part, ignore=ignore)
    for part in ("scripts/rules_files.py", "docs/RULES.md", "docs/VARIANTS.md"):
        (copy / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / part, copy / part)
    before = {name: path.read_bytes() for name, path in _tree(copy).items()}
    (copy / "scat_env" / "variants" / "toy").mkdir()
    (copy / "scat_env" / "variants" / "toy" / "__init__.py").write_text(TOY)

    env = {**os.environ, "PYTHONPATH": str(copy)}
    run = dict(cwd=copy, env=env, capture_output=True, text=True, timeout=300, check=False)
    wrote = subprocess.run([sys.executable, "scripts/rules_files.py"], **run)
    assert wrote.returncode == 0, wrote.stderr
    checked = subprocess.run([sys.executable, "-c", CHECK], **run)
    assert checked.returncode == 0, checked.stderr
    out = json.loads(checked.stdout)

    assert out["where"].startswith(str(copy))
    assert out["fields"][-1] == "toy_bonus"  # after every field of the product, by its order
    assert out["preset"] == [2, "toy"] and out["yaml"] is True
    assert "Toy: 2 bonus lives." in out["help"]
    assert out["errors"][0] == "Rules.toy_bonus: must be between 0 and 5 (got 9)"
    assert out["errors"][1] == "Rules.toy_bonus: bonus lives need the county (got 1)"
    assert out["errors"][2] == "Rules.toy_bonus: must be int (got '2')"

    after = _tree(copy)
    changed = sorted(name for name, path in after.items()
                     if name not in before or path.read_bytes() != before[name])
    written = {f"configs/rules/{name}.yaml" for name in ("toy", "standard", "gin")}
    written |= {"docs/RULES.md", "docs/VARIANTS.md"}
    by_hand = [name for name in changed
               if not (name.startswith("configs/rules/") or name.startswith("docs/"))]
    assert by_hand == ["scat_env/variants/toy/__init__.py"], changed
    assert written <= set(changed), changed  # every rules file lists the new field
    doc = (copy / "docs" / "RULES.md").read_text("utf-8")
    assert "| toy | `toy_bonus` | 0, 0..5 | bonus lives for every player |" in doc
    assert "- `toy`: two bonus lives." in doc
    assert "toy_bonus: 0" in (copy / "configs/rules/gin.yaml").read_text("utf-8")
