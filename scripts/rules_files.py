"""Write every file that repeats the variation families' declarations (scat_env/variants).

- ``configs/rules/<preset>.yaml``: one rules file per preset, every field listed, so that a
  user can copy one and edit it;
- docs/RULES.md, section 2: the field table and the presets' paragraphs, between the
  ``<!-- rules_files: ... -->`` marker comments;
- docs/VARIANTS.md: the table of lines per family, between the same kind of markers.

Run it after changing a family; ``--check`` changes nothing and exits 1 naming each file
that differs from what it would write (the tests run it so), 0 when all are current::

    python scripts/rules_files.py           # write
    python scripts/rules_files.py --check   # exit 1 naming a stale file

``--root DIR`` works on another copy of the repository (its own ``scat_env`` is the one
read: run the script with that copy's Python path).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scat_env import variants  # noqa: E402
from scat_env.rules import Rules  # noqa: E402
from scat_env.variants.declare import Field, Preset, yaml_value  # noqa: E402

RULES_DIR = Path("configs") / "rules"
RULES_DOC = Path("docs") / "RULES.md"
VARIANTS_DOC = Path("docs") / "VARIANTS.md"
#: Where each generated region starts and ends in a markdown file.
BEGIN = "<!-- rules_files: {name} (written by python scripts/rules_files.py; edit "\
        "scat_env/variants) -->"
END = "<!-- rules_files: end {name} -->"
#: Width of the generated prose (the docs' own).
WIDTH = 92


# -- rules files -------------------------------------------------------------------------------
def _yaml_scalar(value: object) -> str:
    """A value as YAML that reads back as itself (a word YAML would take for a boolean or
    null is quoted)."""
    import yaml

    text = yaml_value(value)
    return text if yaml.safe_load(text) == value else f'"{text}"'


def rules_file(preset: Preset) -> str:
    """The rules file of one preset: a header in words, then every field."""
    family = variants.FAMILY_OF_PRESET.get(preset.name)
    where = f"scat_env/variants/{family}" if family else "scat_env/variants"
    head = [f"Scat rules preset '{preset.name}': {preset.note}.", f"From: {preset.source}.",
            "Every field is listed so this file can be copied and edited; see docs/RULES.md.",
            "Load with Rules.from_yaml(path) or Rules.preset(path).",
            f"Written by python scripts/rules_files.py from {where}: change it there."]
    rules = Rules.preset(preset.name)
    body = [f"{f.name}: {_yaml_scalar(getattr(rules, f.name))}" for f in variants.FIELDS]
    wrapped = [part for line in head for part in textwrap.wrap(line, 88, subsequent_indent="  ")]
    return "".join(f"# {line}\n" for line in wrapped) + "\n" + "".join(f"{b}\n" for b in body)


# -- docs/RULES.md -----------------------------------------------------------------------------
def _changed_by(f: Field) -> str:
    """The presets that change field ``f``, with the value each gives it."""
    out = []
    for p in variants.PRESETS:
        if f.name in p.changes and p.changes[f.name] != f.default:
            value = "" if f.kind is bool else f" {yaml_value(p.changes[f.name])}"
            out.append(f"`{p.name}`{value}")
    return ", ".join(out) or "-"


def field_table() -> str:
    """docs/RULES.md's table: one row per field, family by family."""
    rows = ["| family | field | values (standard first) | meaning | source | presets that "
            "change it |", "| --- | --- | --- | --- | --- | --- |"]
    for family in variants.FAMILIES:
        for f in sorted(family.fields, key=lambda f: f.order):
            rows.append(f"| {family.name} | `{f.name}` | {f.allowed_text()} | {f.meaning} | "
                        f"{f.source} | {_changed_by(f)} |")
    return "\n".join(rows)


def preset_paragraphs() -> str:
    """docs/RULES.md's presets in words: one paragraph each (presets that share one, once)."""
    out: list[str] = []
    seen: set[str] = set()
    for p in variants.PRESETS:
        if p.doc in seen:
            continue
        seen.add(p.doc)
        out += textwrap.wrap(p.doc, WIDTH, initial_indent="- ", subsequent_indent="  ",
                             break_on_hyphens=False)
    return "\n".join(out)


# -- docs/VARIANTS.md --------------------------------------------------------------------------
def family_lines(root: Path) -> str:
    """docs/VARIANTS.md's table: each family's folder, its size, its fields and presets."""
    rows = ["| family | what it is | lines | fields | presets |", "| --- | --- | --- | --- | --- |"]
    total = 0
    for family in variants.FAMILIES:
        folder = root / "scat_env" / "variants" / family.name
        lines = sum(len(p.read_text("utf-8").splitlines()) for p in sorted(folder.glob("*.py")))
        total += lines
        names = ", ".join(f"`{f.name}`" for f in sorted(family.fields, key=lambda f: f.order))
        presets = ", ".join(f"`{p.name}`" for p in family.presets) or "-"
        rows.append(f"| `{family.name}` | {family.summary} | {lines} | {names} | {presets} |")
    rows.append(f"| all | | {total} | {len(variants.FIELDS) - 1} | {len(variants.PRESETS)} |")
    return "\n".join(rows)


def fill(text: str, name: str, body: str, path: Path) -> str:
    """``text`` with the region ``name`` replaced by ``body``."""
    begin, end = BEGIN.format(name=name), END.format(name=name)
    pattern = re.compile(re.escape(begin) + r"\n.*?\n" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: the markers of '{name}' are missing ({begin} ... {end})")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text, count=1)


def expected(root: Path) -> dict[Path, str]:
    """Every generated file under ``root``, with the text it should hold."""
    files = {root / RULES_DIR / f"{p.name}.yaml": rules_file(p) for p in variants.PRESETS}
    doc = root / RULES_DOC
    text = fill(doc.read_text("utf-8"), "fields", field_table(), doc)
    files[doc] = fill(text, "presets", preset_paragraphs(), doc)
    guide = root / VARIANTS_DOC
    files[guide] = fill(guide.read_text("utf-8"), "families", family_lines(root), guide)
    return files


def stale(root: Path) -> list[str]:
    """The files that differ from what this script writes, and rules files of no preset."""
    out = [str(path.relative_to(root)) for path, text in expected(root).items()
           if not path.is_file() or path.read_text("utf-8") != text]
    presets = {p.name for p in variants.PRESETS}
    out += [f"{path.relative_to(root)} (no preset of that name)"
            for path in sorted((root / RULES_DIR).glob("*.yaml")) if path.stem not in presets]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 naming each stale file")
    parser.add_argument("--root", type=Path, default=REPO, help="the repository (default: this)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    if args.check:
        found = stale(root)
        for name in found:
            print(f"stale: {name} (run python scripts/rules_files.py)", file=sys.stderr)
        return 1 if found else 0
    for path, text in expected(root).items():
        if not path.is_file() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
            print(f"wrote {path.relative_to(root)}")
    orphans = [n for n in stale(root) if n.endswith("(no preset of that name)")]
    for name in orphans:
        print(f"not a preset: {name}; remove it or declare the preset", file=sys.stderr)
    return 1 if orphans else 0


if __name__ == "__main__":
    raise SystemExit(main())
