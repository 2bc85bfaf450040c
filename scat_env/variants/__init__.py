"""The variation families of Scat, each in one folder, gathered here.

Every folder of this package is one family of variations (``packs``, ``values``,
``knocking``, ``thirty_one``, ``calls``, ``lives``, ``points``, ``golf``): its
``__init__.py`` declares ``FAMILY`` (:class:`~scat_env.variants.declare.Family`), the
fields it adds to :class:`scat_env.Rules`, their checks, its presets and the words that
describe it. Everything else is written from them: the ``Rules`` dataclass, the preset
tables of :mod:`scat_env.rules`, the ``?`` help of ``scat play``, the page's rule summary,
``configs/rules/*.yaml`` and docs/RULES.md's table (``python scripts/rules_files.py``).
docs/VARIANTS.md says how to add a family.

Pure Python, no engine: a family gets the rules object it checks or describes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import Any

from .declare import PLACES, Bad, Family, Field, Preset

#: The rules' name: shown in every title line, not part of equality.
NAME_FIELD = Field("name", str, "custom", "the name shown in title lines (a preset's name, or "
                   "`custom`)", "", order=0, compare=False)

#: The standard game (002): no field changed.
STANDARD = Preset("standard", {}, note="the standard game: 3 pennies and the county",
                  source="Pagat", doc="`standard`: section 1.", order=0)


def _discover() -> tuple[Family, ...]:
    """Every family folder of this package, in family order: a new folder is found
    without a line anywhere else."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg:
            module = importlib.import_module(f"{__name__}.{info.name}")
            family = getattr(module, "FAMILY", None)
            if not isinstance(family, Family):
                raise TypeError(f"scat_env.variants.{info.name} declares no FAMILY")
            found.append(family)
    return tuple(sorted(found, key=lambda f: (f.order, f.name)))


def _unique(what: str, items: Iterable[Any], key: str) -> None:
    """A name or an order number used twice is a declaration error: say which, at import."""
    seen: dict[Any, str] = {}
    for item in items:
        value = getattr(item, key)
        if value in seen:
            raise ValueError(f"two {what}s share the {key} {value!r}: {seen[value]} and "
                             f"{item.name}")
        seen[value] = item.name


FAMILIES: tuple[Family, ...] = _discover()
#: Every field of Rules, in order (``name`` first).
FIELDS: tuple[Field, ...] = tuple(sorted(
    [NAME_FIELD, *(f for fam in FAMILIES for f in fam.fields)], key=lambda f: f.order))
#: Every preset, in order (``standard`` first).
PRESETS: tuple[Preset, ...] = tuple(sorted(
    [STANDARD, *(p for fam in FAMILIES for p in fam.presets)], key=lambda p: p.order))
for _what, _items in (("field", FIELDS), ("preset", PRESETS)):
    _unique(_what, _items, "name")
    _unique(_what, _items, "order")

#: The family that declares each field.
FAMILY_OF_FIELD: dict[str, str] = {f.name: fam.name for fam in FAMILIES for f in fam.fields}
#: The family that declares each preset.
FAMILY_OF_PRESET: dict[str, str] = {p.name: fam.name for fam in FAMILIES for p in fam.presets}
#: The fields that change what a hand is worth (``Rules.scoring_key``).
VALUE_FIELDS: tuple[str, ...] = tuple(f.name for f in FIELDS if f.changes_value)
_BY_NAME = {f.name: f for f in FIELDS}


def field_named(name: str) -> Field:
    """The declaration of one field."""
    return _BY_NAME[name]


def check(rules: Any, bad: Bad) -> None:
    """Validate ``rules``: every field's type and values from its declaration, then each
    family's own checks, in family order. Raises ``bad(field, message)``."""
    for f in FIELDS:
        value = getattr(rules, f.name)
        if value is None and f.nullable:
            continue
        # bool is an int subclass; refuse it where a number is meant and vice versa.
        if (isinstance(value, bool) and f.kind is not bool) or not isinstance(value, f.types):
            raise bad(f.name, f"must be {' or '.join(t.__name__ for t in f.types)}")
    for f in FIELDS:
        complaint = f.complaint(getattr(rules, f.name))
        if complaint:
            raise bad(f.name, complaint)
    for family in FAMILIES:
        if family.validate is not None:
            family.validate(rules, bad)


def calls(rules: Any) -> tuple[str, ...]:
    """The calls ``rules`` offer beyond drawing, discarding and knocking, family by family."""
    return tuple(c for fam in FAMILIES if fam.calls is not None for c in fam.calls(rules))


def menu_words() -> dict[str, str]:
    """Every family's menu words for its calls, by call name."""
    return {name: words for fam in FAMILIES for name, words in fam.menu.items()}


def describe(rules: Any) -> list[str]:
    """The rules being played, one short paragraph per line, each from the fields that make
    it true: the ``?`` help of ``scat play`` and the page's rule summary.

    Lines go in the order of :data:`~scat_env.variants.declare.PLACES`; the phrases that
    change a hand's value (place ``values``) make one sentence, "Here ...". A family that
    changes the whole game (golf) gives the whole text instead."""
    for family in FAMILIES:
        if family.whole_words is not None:
            whole = family.whole_words(rules)
            if whole is not None:
                return list(whole)
    placed: dict[str, list[str]] = {place: [] for place in PLACES}
    for family in FAMILIES:
        if family.words is None:
            continue
        for place, line in family.words(rules):
            if place not in placed:
                raise ValueError(f"family {family.name}: unknown place {place!r} for a line; "
                                 f"places are {PLACES}")
            placed[place].append(line)
    if placed["values"]:
        placed["values"] = [f"Here {'; '.join(placed['values'])}."]
    return [line for place in PLACES for line in placed[place] if line]


__all__ = ["FAMILIES", "FAMILY_OF_FIELD", "FAMILY_OF_PRESET", "FIELDS", "NAME_FIELD",
           "PRESETS", "STANDARD", "VALUE_FIELDS", "calls", "check", "describe", "field_named",
           "menu_words"]
