"""``scat rules``: the rules presets, and what one of them (or a rules file) sets.

- ``scat rules``: every preset with one line on what it changes;
- ``scat rules NAME`` or ``scat rules FILE.yaml``: every field of those rules, the ones that
  differ from the standard game marked, the calls the rules offer, and the rules in words
  (the lines of ``scat play``'s ``?`` help).

The same names go to ``--rules`` of ``scat play``, ``scat watch``, ``scat tournament`` and
the training configs; docs/RULES.md says what each field means and where it comes from.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CliError

if TYPE_CHECKING:
    from scat_env import Rules

#: What a rules file's name ends with (scat_env.Rules.preset reads only these).
RULES_FILE_SUFFIXES = (".yaml", ".yml")


def rules_from_arg(value: str, flag: str = "--rules") -> Rules:
    """The rules a command-line value names: a preset, or a YAML rules file.

    Why not :meth:`Rules.preset <scat_env.Rules.preset>` alone: it knows presets and
    ``.yaml`` names, so a folder or a mistyped path came back as "unknown rules preset
    '/tmp'", sending the user to the list of presets when the path was the problem. Here a
    value that is a path is named as one: a folder, a missing file, a file that is not YAML.
    """
    from scat_env import Rules
    from scat_env.rules import PRESETS
    from scat_env.yamlfile import one_line

    if value in PRESETS:
        return Rules.preset(value)
    shown = one_line(value, 80)
    if not shown.isprintable():
        shown = ascii(value)[:80]
    where = f"{flag} {shown}" if flag else shown
    path = Path(value).expanduser()
    try:
        is_dir, exists, is_file = path.is_dir(), path.exists(), path.is_file()
    except OSError as exc:  # a name too long for the system, a folder it may not enter...
        raise CliError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    if is_dir:
        raise CliError(f"{where}: a folder, not a rules file")
    if exists and not is_file:
        raise CliError(f"{where}: a special file, not a rules file")
    if is_file:
        if not value.endswith(RULES_FILE_SUFFIXES):
            raise CliError(f"{where}: a rules file is YAML, named *.yaml or *.yml")
        return Rules.preset(str(path))
    if (any(sep in value for sep in {"/", os.sep, os.altsep or "/"})
            or value.startswith((".", "~")) or value.endswith(RULES_FILE_SUFFIXES)):
        raise CliError(f"{where}: no such file")
    return Rules.preset(value)  # an unknown name: the preset list's error, with suggestions


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


#: The width ``scat rules`` keeps to: an 80-column terminal.
WIDTH = 80


def preset_list() -> list[str]:
    """``scat rules``: one row per preset (its name, how long a game usually lasts, what
    it changes), each note wrapped under its column so that no line passes :data:`WIDTH`."""
    import textwrap

    from scat_env.rules import PRESET_NOTES, PRESETS
    from scat_session.lengths import measured_players, minutes_text

    usual = {name: minutes_text(name).split(" (")[0] for name in PRESETS}
    name_w = max(len(name) for name in PRESETS)
    time_w = max(len("a game"), *(len(t) for t in usual.values()))
    note_w = WIDTH - name_w - time_w - 4
    lines = [f"{'preset':<{name_w}}  {'a game':<{time_w}}  what it changes"]
    for name in PRESETS:
        note = textwrap.wrap(PRESET_NOTES.get(name, ""), note_w) or [""]
        lines.append(f"{name:<{name_w}}  {usual[name]:<{time_w}}  {note[0]}".rstrip())
        lines += [" " * (name_w + time_w + 4) + more for more in note[1:]]
    lines += ["", *textwrap.wrap(
        f"A game: the median minutes at {measured_players()} players against the default "
        "opponents, at 4 s a move of yours (scat rules NAME gives the range, and every field "
        "of the preset; docs/RULES.md explains them).", WIDTH)]
    return lines


def run(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from scat_env import Rules
    from scat_env.rules import PRESET_NOTES, PRESET_SOURCES
    from scat_session.lengths import preset_length_text

    if args.name is None:
        print("\n".join(preset_list()))
        return 0
    rules = rules_from_arg(args.name, flag="")
    standard = Rules()
    print(f"rules {rules.name!r}" + (f": {PRESET_NOTES[rules.name]}"
                                    if rules.name in PRESET_NOTES else ""))
    if rules.name in PRESET_SOURCES:
        print(f"  from: {PRESET_SOURCES[rules.name]}")
    length = preset_length_text(rules)
    if length:
        print(f"  {length}")
    for f in fields(Rules):
        if f.name == "name":
            continue
        value = getattr(rules, f.name)
        mark = "  *" if value != getattr(standard, f.name) else ""
        print(f"  {f.name:<27} {value!r}{mark}")
    print("  (* differs from the standard game)")
    print(f"  lives: {rules.start_lives}; pack: {len(rules.deck_cards)} cards; calls: "
          f"{', '.join(rules.calls) or 'none'}")
    print("\n".join(words_lines(rules)))
    return 0


def words_lines(rules: Rules) -> list[str]:
    """The rules in words, as the ``?`` help of ``scat play`` says them (from the variation
    families, :func:`scat_env.variants.describe`), each wrapped within :data:`WIDTH`."""
    import textwrap

    from scat_env.variants import describe

    out = ["", "In words:"]
    for line in describe(rules):
        out += textwrap.wrap(line, WIDTH, initial_indent="  ", subsequent_indent="    ")
    return out


__all__ = ["add_parser", "preset_list", "rules_from_arg", "run", "words_lines"]
