"""The rules of a table as numbers a network reads: the ``rules`` observation piece.

Why: one network for every variation has to know which variation it sits at. The cards,
counters and pieces of the observation show some of it (a call's phase, a points race's
scores, golf's slots), but not what a knock costs, whether three of a kind scores 30, or
whether the pack is Italian. Each option of :class:`scat_env.Rules` that changes play
becomes a few fixed columns here, the same at every table size, so a preset never trained
on whose options are known ones gets a policy without training (the model card measures how
well that transfers).

The layout is written out field by field (:data:`RULES_INPUTS`), not derived from
``Rules``: a policy file that reads this piece was trained on exactly these columns, and
a new rule option must not shift them under it. ``tests/test_rules_inputs.py`` fails when
a new option that changes play is missing here, so adding one is a decision (a new piece
name and a retrained policy), not an accident.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from scat_env import Rules

#: Each rule option a network reads, and how: ``("onehot", choices)`` a column per value;
#: ``("flag",)`` 0 or 1; ``("scale", low, high)`` the value mapped onto 0..1;
#: ``("optional", low, high)`` a flag for "set" and the value mapped onto 0..1 (0 when off).
RULES_INPUTS: tuple[tuple[str, tuple], ...] = (
    ("deck", ("onehot", ("standard", "italian"))),
    ("pennies", ("scale", 0, 20)),
    ("county", ("flag",)),
    ("knock_mode", ("onehot", ("lowest", "gin"))),
    ("knocker_tie", ("onehot", ("safe", "all", "knocker_only"))),
    ("knocker_loss", ("scale", 0, 2)),
    ("knocker_loss_on_31", ("scale", 0, 2)),
    ("three_of_a_kind", ("optional", 30, 31)),
    ("three_aces", ("optional", 30, 40)),
    ("straight_flush", ("flag",)),
    ("min_knock", ("scale", 0, 31)),
    ("knock_needs_flush", ("flag",)),
    ("knock_when_stock_exhausted", ("flag",)),
    ("all_out", ("onehot", ("replay", "last_life"))),
    ("trips_beat_31", ("flag",)),
    ("declare_31", ("onehot", ("auto", "never", "choice"))),
    ("first_turn_knock", ("flag",)),
    ("knock_then_draw", ("flag",)),
    ("second_knock", ("flag",)),
    ("extra_stops", ("scale", 0, 2)),
    ("hammer", ("flag",)),
    ("throw_down", ("onehot", ("none", "first", "any"))),
    ("sudden_death", ("flag",)),
    ("scoring", ("onehot", ("lives", "points"))),
    ("points_to_win", ("scale", 0, 100)),
    ("poker_tiebreak", ("flag",)),
    ("play", ("onehot", ("draw", "golf"))),
    ("one_on_the_bus", ("flag",)),
)

#: Options that do not change play: the name shown, and what the lives are called.
NOT_READ = ("name", "lives_name")


def _width(how: tuple) -> int:
    kind = how[0]
    return len(how[1]) if kind == "onehot" else 2 if kind == "optional" else 1


#: Columns of the ``rules`` piece.
RULES_WIDTH = sum(_width(how) for _, how in RULES_INPUTS)


@lru_cache(maxsize=256)
def rules_vector(rules: Rules) -> np.ndarray:
    """The ``rules`` piece of ``rules``: float32 [:data:`RULES_WIDTH`] (read-only: cached,
    one per rules object, since every row of a table reads the same). A value outside an
    option's known choices is refused in one line: the network never saw it."""
    parts: list[float] = []
    for name, how in RULES_INPUTS:
        value = getattr(rules, name)
        kind = how[0]
        if kind == "onehot":
            if value not in how[1]:
                raise ValueError(f"the rules input {name!r} knows {', '.join(map(str, how[1]))}"
                                 f", not {value!r}")
            parts += [float(value == choice) for choice in how[1]]
        elif kind == "flag":
            parts.append(float(bool(value)))
        elif kind == "scale":
            parts.append((float(value) - how[1]) / (how[2] - how[1]))
        else:  # optional
            on = value is not None
            parts += [float(on), (float(value) - how[1]) / (how[2] - how[1]) if on else 0.0]
    out = np.asarray(parts, np.float32)
    out.setflags(write=False)
    return out
