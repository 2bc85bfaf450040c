"""What a variation family declares: its fields, its presets, its checks and its words.

A family is data plus a few small functions. :mod:`scat_env.variants` gathers every family
found in its folder; :class:`scat_env.Rules` is assembled from their fields, and the help
text, the rules files, docs/RULES.md's preset table and the page's rule summary are all
written from the same declarations, so none of them can say something the rules do not do.

Nothing here imports the rules or the engine: a family receives the rules object it checks
or describes (a :class:`scat_env.Rules`), so the declarations load before ``Rules`` exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: ``bad(field_name, message)``: the error a check raises, naming the field and its value
#: (``Rules.NAME: MESSAGE (got VALUE)``).
Bad = Callable[[str, str], ValueError]

#: Where a line of the rules' description goes, in reading order: the hand, the turn, the
#: knock and what it costs, 31, the calls, the exhausted stock, how the game ends. A family
#: names the place of each line it writes, so that lines from several families read as one
#: text.
PLACES = ("hand", "values", "turn", "knock", "second_knock", "showdown", "thirty_one",
          "calls", "stock", "end")


@dataclass(frozen=True)
class Field:
    """One rule option: a field of :class:`scat_env.Rules`.

    ``order`` is its place among the fields (the dataclass order, the order of a rules file
    and of ``Rules.to_dict()``): a new field takes the next free number, so that rules files
    and saved games written before it keep their layout.
    """

    name: str
    kind: type  # str, int, bool or float (a float field also takes an int)
    default: Any
    meaning: str  # one line for docs/RULES.md's table and the Rules docstring (markdown)
    source: str
    order: int
    choices: tuple[Any, ...] = ()  # the allowed values, when they are few
    low: float | None = None  # or the allowed range, both ends included
    high: float | None = None
    nullable: bool = False  # None (YAML null) allowed: the option is off
    message: str = ""  # the complaint for a value outside choices/range, if not the usual
    suggest: bool = False  # a wrong word gets "(did you mean ...?)"
    changes_value: bool = False  # part of Rules.scoring_key: it changes what a hand is worth
    compare: bool = True  # part of Rules equality (the name is not)

    @property
    def annotation(self) -> Any:
        """The type the dataclass field is declared with."""
        return self.kind | None if self.nullable else self.kind

    @property
    def types(self) -> tuple[type, ...]:
        """The Python types a value may have (a float option also takes an int: ``30``)."""
        return (int, float) if self.kind is float else (self.kind,)

    def complaint(self, value: Any) -> str | None:
        """What is wrong with ``value`` (of the right type), or ``None``."""
        if value is None and self.nullable:
            return None
        if self.choices:
            ok = (float(value) in self.choices) if self.kind is float else value in self.choices
            if not ok:
                hint = did_you_mean(value, self.choices) if self.suggest else ""
                return self.message or f"must be one of {self.choices}{hint}"
        if self.low is not None and self.high is not None and not self.low <= value <= self.high:
            return self.message or f"must be between {self.low:g} and {self.high:g}"
        return None

    def allowed_text(self) -> str:
        """The values, the standard first, as docs/RULES.md's table shows them."""
        head = [yaml_value(self.default)]
        if self.nullable and self.default is not None:
            head.append("null")
        if self.kind is bool:
            return ", ".join(head + [yaml_value(not self.default)])
        if self.choices:
            rest = [yaml_value(c) for c in self.choices if c != self.default]
            return ", ".join(head + rest)
        return ", ".join(head + [f"{self.low:g}..{self.high:g}"])


@dataclass(frozen=True)
class Preset:
    """A named table of rules: the fields it changes from the standard game, one plain line
    on what it changes (``note``: ``scat rules`` and the new-game form), where it comes from
    in words (``source``: ``scat rules NAME``), and its paragraph in docs/RULES.md (``doc``,
    markdown, unwrapped; presets that share one paragraph give the same text).

    ``order`` is its place in the preset list (``scat rules``, the page's form, docs).
    """

    name: str
    changes: Mapping[str, Any]
    note: str
    source: str
    doc: str
    order: int


@dataclass(frozen=True)
class Family:
    """One family of variations, declared in ``scat_env/variants/<name>/__init__.py`` as
    ``FAMILY``.

    - ``fields``, ``presets``: as above.
    - ``validate(rules, bad)``: the checks that tie this family's fields to each other or to
      other fields; raises ``bad(field, message)``. Each field's own type and values are
      checked before, from its declaration.
    - ``words(rules)``: the lines this family adds to the description of ``rules``, each as
      ``(place, line)`` with a place of :data:`PLACES`.
    - ``whole_words(rules)``: the whole description, where this family changes the game so
      much that no other family's lines apply (golf), else ``None``.
    - ``calls(rules)``: the calls (actions of their own) these rules offer from this family.
    - ``menu``: the menu words of those calls, by call name.
    - ``order``: the family's place among the families (its lines within one place, its
      calls in ``Rules.calls``).
    """

    name: str
    summary: str
    order: int
    fields: tuple[Field, ...] = ()
    presets: tuple[Preset, ...] = ()
    validate: Callable[[Any, Bad], None] | None = None
    words: Callable[[Any], Iterable[tuple[str, str]]] | None = None
    whole_words: Callable[[Any], list[str] | None] | None = None
    calls: Callable[[Any], tuple[str, ...]] | None = None
    menu: Mapping[str, str] = field(default_factory=dict)


# -- words ------------------------------------------------------------------------------------
#: Words for small counts, so that a sentence reads "pays two lives".
NUMBERS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def count(n: int, one: str, many: str) -> str:
    """``count(2, "life", "lives")`` is "two lives"."""
    return f"{NUMBERS.get(n, str(n))} {one if n == 1 else many}"


def lives_count(rules: Any, n: int) -> str:
    """``n`` lives in the preset's unit: "two lives"; on the bus, "two stops"."""
    one, many = ("stop", "stops") if rules.lives_name == "bus" else ("life", "lives")
    return count(n, one, many)


def yaml_value(value: Any) -> str:
    """A value as a rules file writes it: ``null``, ``true``, ``30.5``, ``lowest``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest names, or ``""``: an error that lists every
    preset or field would run past one line."""
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


__all__ = ["NUMBERS", "PLACES", "Bad", "Family", "Field", "Preset", "count", "did_you_mean",
           "lives_count", "yaml_value"]
