"""Rule options and named presets.

Scat is played with many house rules. Every option the sources list (002 "Variations",
003 "VARIATIONS", 004 "Alternativ poängräkning") is a field of the frozen :class:`Rules`
dataclass, validated on construction so that an impossible table never reaches the engine.

Each option, its checks and its presets are declared once, by their family in
:mod:`scat_env.variants`; ``Rules``, :data:`PRESETS`, :data:`PRESET_NOTES` and
:data:`PRESET_SOURCES` are assembled from those declarations. Every preset also lives as a
YAML file in ``configs/rules/`` that a user can copy and edit (written by
``python scripts/rules_files.py``); ``Rules.from_yaml`` reads it back with the same
validation.

See ``docs/RULES.md`` for the rule each field implements and its source.
"""

from __future__ import annotations

import dataclasses
from dataclasses import fields
from functools import cached_property
from pathlib import Path
from typing import Any

from . import variants
from .names import MAX_RULES_NAME, check_shown
from .variants.calls import THROW_DOWN
from .variants.declare import did_you_mean as _did_you_mean
from .variants.declare import yaml_value
from .variants.golf import PLAYS
from .variants.knocking import KNOCK_MODES, KNOCKER_TIES
from .variants.lives import ALL_OUT, BUS_EXTRA_STOPS, LIVES_NAMES, lives_label, start_lives
from .variants.packs import DECK_CARDS, DECKS, ITALIAN_MISSING_RANKS
from .variants.points import SCORINGS
from .variants.thirty_one import DECLARE_31

MIN_PLAYERS = 2
MAX_PLAYERS = 10

#: Turns one hand may last before a game is cut short (the env truncates the episode, match
#: loops stop the game). Two players who keep taking each other's discards could otherwise
#: play one hand forever. Shared by the env, the match loop, the trainers and the CLI so that
#: every game ends at the same place.
DEFAULT_MAX_TURNS = 300


class _RulesBehaviour:
    """What every :class:`Rules` does beside holding its fields: validate itself, the
    values derived from its fields, and loading. The fields come from the families of
    :mod:`scat_env.variants` (see :func:`_make_rules`)."""

    __slots__ = ()

    def __post_init__(self) -> None:
        def bad(name: str, msg: str) -> ValueError:
            return ValueError(f"Rules.{name}: {msg} (got {getattr(self, name)!r})")

        if not isinstance(self.name, str):
            raise bad("name", "must be str")
        # Shown in every title line: checked here, so a rules file, a saved game and a
        # tournament log are held to one rule (scat_env.names)
        check_shown(self.name, "Rules.name", MAX_RULES_NAME)
        variants.check(self, bad)

    # -- derived -------------------------------------------------------------------------
    # Computed once per Rules (they are frozen), then read as plain attributes: the engine
    # and the hand values read them at every hand.
    @cached_property
    def start_lives(self) -> int:
        """Losses a player can take before elimination, county life included (the lives
        family's count)."""
        return start_lives(self)

    @property
    def deck_cards(self) -> tuple[int, ...]:
        """The card ids in play (ids of :mod:`scat_env.cards`: ``rank + 13 * suit``)."""
        return DECK_CARDS[self.deck]

    @cached_property
    def scoring_key(self) -> tuple[Any, ...]:
        """The fields that change hand values (used to cache value tables): those declared
        ``changes_value`` by their family."""
        return tuple(getattr(self, name) for name in variants.VALUE_FIELDS)

    @cached_property
    def calls(self) -> tuple[str, ...]:
        """The calls these rules offer beyond drawing, discarding and knocking (each an
        action of its own, :mod:`scat_env.actions`); empty for the standard game."""
        return variants.calls(self)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "rules") -> Rules:
        if not isinstance(data, dict):
            raise ValueError(f"{source}: expected a mapping of rule fields, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        data = dict(data)
        base_name = data.pop("preset", None)
        unknown = sorted(map(str, set(data) - known))  # keys may be numbers in YAML
        if unknown:
            from .yamlfile import one_line

            shown = ", ".join(repr(one_line(str(u))[:40]) for u in unknown[:3])
            raise ValueError(f"{source}: unknown rule field(s) {shown}"
                             f"{' and more' if len(unknown) > 3 else ''}"
                             f"{_did_you_mean(str(unknown[0]), known)}; the {len(known)} fields "
                             "are listed in docs/RULES.md")
        base = cls.preset(base_name) if base_name is not None else cls()
        if base_name is not None and "name" not in data:
            data["name"] = "custom"
        return dataclasses.replace(base, **data)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Rules:
        """Load a rules file (all fields, or ``preset: NAME`` plus the fields to change).

        ``preset:`` may name another rules file; a chain that comes back to a file already
        being loaded is refused (it would never end)."""
        from .yamlfile import one_line, read_yaml

        p = Path(path)
        key = p.resolve()
        if key in _LOADING:
            chain = " -> ".join(str(f) for f in [*_LOADING, key])
            raise ValueError(one_line(f"rules file {str(p)!r}: its preset chain loops ({chain})"))
        if not p.is_file():
            raise ValueError(f"rules file not found: {one_line(str(p))}")
        data = read_yaml(p, "rules file")
        _LOADING.append(key)
        try:
            return cls.from_dict(data, source=str(p))
        except ValueError as exc:
            raise ValueError(one_line(str(exc))) from None
        finally:
            _LOADING.pop()

    @classmethod
    def preset(cls, name: str) -> Rules:
        """A named preset (see :data:`PRESETS`), or a path to a YAML rules file."""
        if not isinstance(name, str):
            raise ValueError(f"preset name must be a string, got {name!r}")
        if name in PRESETS:
            return cls(name=name, **PRESETS[name])
        if name.endswith((".yaml", ".yml")):
            return cls.from_yaml(name)
        raise ValueError(f"unknown rules preset {name[:40]!r}{_did_you_mean(name, PRESETS)}; "
                         f"{len(PRESETS)} presets, listed by 'scat rules' and in docs/RULES.md")


#: Rules files being loaded, outermost first (to refuse a ``preset:`` chain that loops).
_LOADING: list[Path] = []


def _docstring() -> str:
    """The class docstring: every field with its meaning and source, from its family."""
    lines = ["A complete, validated table of rule options. ``Rules()`` is the standard game "
             "(002).", "", "Fields, by family (source in brackets; docs/RULES.md has the "
             "values and presets):", ""]
    for family in variants.FAMILIES:
        for f in sorted(family.fields, key=lambda f: f.order):
            lines.append(f"- ``{f.name}`` ({family.name}, default ``{yaml_value(f.default)}``): "
                         f"{f.meaning} [{f.source}].")
    return "\n".join(lines) + "\n"


def _make_rules() -> type:
    """The frozen ``Rules`` dataclass, one field per field of the families of
    :mod:`scat_env.variants`, in their declared order: a field added to a family is a field
    of ``Rules``, of every rules file and of ``to_dict``, without a line here. Its fields
    stay plain dataclass attributes (read at every move)."""
    specs = [(f.name, f.annotation, dataclasses.field(default=f.default, compare=f.compare))
             for f in variants.FIELDS]
    return dataclasses.make_dataclass(
        "Rules", specs, bases=(_RulesBehaviour,), frozen=True,
        namespace={"__module__": __name__, "__qualname__": "Rules", "__doc__": _docstring()})


Rules = _make_rules()

#: Named presets: the standard game and one turning on each option of the sources (each
#: declared by its family in :mod:`scat_env.variants`), as the fields each changes.
PRESETS: dict[str, dict[str, Any]] = {p.name: dict(p.changes) for p in variants.PRESETS}


def preset_names(value: object, field: str) -> tuple[str, ...]:
    """``value`` as preset names, each once: what a training config's ``rules_mix`` and a
    policy set's ``presets`` hold, checked in one place so both refuse alike. A
    ``ValueError`` line starting with ``field`` otherwise."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{field} must be a list of preset names, got {value!r}")
    for name in value:
        if name not in PRESETS:
            raise ValueError(f"{field}: {name!r} is not a preset")
    if len(set(value)) != len(value):
        raise ValueError(f"{field} names a preset twice")
    return tuple(value)

#: One line per preset in plain words, what ``scat rules`` and the browser's new-game form
#: show where a person picks one. No source tags here: where a rule comes from is
#: :data:`PRESET_SOURCES` (and docs/RULES.md), shown with one preset's fields.
PRESET_NOTES: dict[str, str] = {p.name: p.note for p in variants.PRESETS}

#: Where each preset comes from, in words (the documents of docs/RULES.md: Pagat's page
#: "31 / Scat / Ride the Bus / Cadillac" and its sections, a condensed copy of the same
#: rules, a short rules summary, a Swedish description). ``scat rules NAME`` shows it.
PRESET_SOURCES: dict[str, str] = {p.name: p.source for p in variants.PRESETS}

__all__ = ["ALL_OUT", "BUS_EXTRA_STOPS", "DECKS", "DECLARE_31", "DEFAULT_MAX_TURNS",
           "ITALIAN_MISSING_RANKS", "KNOCKER_TIES", "KNOCK_MODES", "LIVES_NAMES",
           "MAX_PLAYERS", "MIN_PLAYERS", "PLAYS", "PRESETS", "PRESET_NOTES", "PRESET_SOURCES",
           "Rules", "SCORINGS", "THROW_DOWN", "lives_label"]
