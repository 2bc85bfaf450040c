"""``scat rules``: the rules presets, and what one of them (or a rules file) sets.

- ``scat rules``: every preset with one line on what it changes;
- ``scat rules NAME`` or ``scat rules FILE.yaml``: every field of those rules, the ones that
  differ from the standard game marked, and the calls the rules offer.

The same names go to ``--rules`` of ``scat play``, ``scat watch``, ``scat tournament`` and
the training configs; docs/RULES.md says what each field means and where it comes from.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rules",
        help="list the rules presets, or show what one preset or rules file sets",
        description="List the rules presets, or show every field of one preset or rules "
                    "file (docs/RULES.md explains each field and its source).",
    )
    p.add_argument("name", nargs="?", default=None, metavar="PRESET_OR_FILE",
                   help="a preset name or a rules YAML file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from scat_env import Rules
    from scat_env.rules import PRESET_NOTES, PRESETS

    if args.name is None:
        width = max(len(name) for name in PRESETS)
        for name in PRESETS:
            print(f"{name:<{width}}  {PRESET_NOTES.get(name, '')}")
        print("\nscat rules NAME shows every field of a preset; docs/RULES.md explains them.")
        return 0
    rules = Rules.preset(args.name)
    standard = Rules()
    print(f"rules {rules.name!r}" + (f": {PRESET_NOTES[rules.name]}"
                                    if rules.name in PRESET_NOTES else ""))
    for f in fields(Rules):
        if f.name == "name":
            continue
        value = getattr(rules, f.name)
        mark = "  *" if value != getattr(standard, f.name) else ""
        print(f"  {f.name:<27} {value!r}{mark}")
    print("  (* differs from the standard game)")
    print(f"  lives: {rules.start_lives}; pack: {len(rules.deck_cards)} cards; calls: "
          f"{', '.join(rules.calls) or 'none'}")
    return 0


__all__ = ["add_parser", "run"]
