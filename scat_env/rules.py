"""Rule options and named presets.

Scat is played with many house rules. Every option the sources list (002 "Variations",
003 "VARIATIONS", 004 "Alternativ poängräkning") is a field of the frozen :class:`Rules`
dataclass, validated on construction so that an impossible table never reaches the engine.
Every preset of :data:`PRESETS` also lives as a YAML file in ``configs/rules/`` that a user
can copy and edit; ``Rules.from_yaml`` reads it back with the same validation.

See ``docs/RULES.md`` for the rule each field implements and its source.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .names import MAX_RULES_NAME, check_shown

KNOCK_MODES = ("lowest", "gin")
KNOCKER_TIES = ("safe", "all", "knocker_only")
ALL_OUT = ("replay", "last_life")
LIVES_NAMES = ("pennies", "nickels", "points", "bus", "letters", "tokens", "quarters")
DECKS = ("standard", "italian")
DECLARE_31 = ("auto", "never", "choice")
THROW_DOWN = ("none", "first", "any")
#: How a game is won: by lives (the last player in) or by points (the first to
#: ``points_to_win``; 002 French Canadian).
SCORINGS = ("lives", "points")
#: How a turn goes: draw and discard (every game but one), or golf (002 Mike Armstrong:
#: three face-down cards, one turned face up each turn).
PLAYS = ("draw", "golf")
#: Extra stops a Ride the Bus game may add after "on the stairs" (002 Ride the Bus).
BUS_EXTRA_STOPS = ("on the second step", "asking the driver to stop")
#: Ranks missing from the Italian 40-card pack (002, Antonio di Sebastiano): 8, 9 and 10
#: (rank indices of :data:`scat_env.cards.RANK_NAMES`).
ITALIAN_MISSING_RANKS = (6, 7, 8)

#: The card ids of each pack, built once: the engine reads them at every deal.
_DECK_CARDS: dict[str, tuple[int, ...]] = {
    "standard": tuple(range(52)),
    "italian": tuple(c for c in range(52) if c % 13 not in ITALIAN_MISSING_RANKS),
}

MIN_PLAYERS = 2
MAX_PLAYERS = 10

#: Turns one hand may last before a game is cut short (the env truncates the episode, match
#: loops stop the game). Two players who keep taking each other's discards could otherwise
#: play one hand forever. Shared by the env, the match loop, the trainers and the CLI so that
#: every game ends at the same place.
DEFAULT_MAX_TURNS = 300


@dataclass(frozen=True)
class Rules:
    """A complete, validated table of rule options. ``Rules()`` is the standard game (002).

    Fields (source in brackets):

    - ``pennies`` / ``county``: lives are pennies plus, if ``county``, one more life spent
      "on the county" [002 Scoring]. Standard: 3 + county = 4 losses eliminate.
    - ``lives_name``: how lives are shown (pennies, nickels [Cadillac], points [004],
      bus positions [Ride the Bus], letters [Gin]); it never changes play.
    - ``knock_mode``: ``"lowest"`` (the lowest hand loses) or ``"gin"`` (a knock promises
      the highest hand [002 Gin]).
    - ``knocker_tie``: who pays when the knocker ties for lowest: ``"safe"`` (the others,
      standard), ``"all"`` (knocker and others, variant 1), ``"knocker_only"`` (variant 2,
      Cadillac).
    - ``knocker_loss``: lives a losing knocker pays (2 standard, 1 in the variant).
    - ``knocker_loss_on_31``: lives the knocker pays when someone declares 31 after the
      knock (1 standard; 2 in variant 1, where the 31-holder is safe and the rest pay one).
    - ``three_of_a_kind``: ``None``, ``30`` or ``30.5`` [002, 003].
    - ``three_aces``: ``None`` or the value of three aces (33 = Grand Cadillac).
    - ``straight_flush``: three suited cards in sequence count 30 (A-K-Q stays 31) [002, 003].
    - ``min_knock``: the least hand value allowed to knock (0 = no minimum) [002, 003].
    - ``knock_needs_flush``: knocking needs three cards of one suit [002].
    - ``knock_when_stock_exhausted``: may a player knock once the stock is empty? No in
      the standard game: 002 and 000 ("Draw pile exhausted") leave the player to move two
      choices, take the previous discard or end the play. ``True`` keeps a knock as a
      third choice (preset ``knock_when_exhausted``).
    - ``deck``: ``"standard"`` (52 cards) or ``"italian"`` (40 cards, no 8, 9 or 10;
      002, Antonio di Sebastiano).
    - ``trips_beat_31``: three of a kind beats 31 and ranks among itself by rank, aces
      highest (Italian); values 32 (three 2s) to 44 (three aces).
    - ``declare_31``: ``"auto"`` (a 31 is declared as soon as it is made or dealt and ends
      the hand, standard), ``"never"`` (no declaring: a 31 is just a high hand and its
      holder knocks as usual; Italian) or ``"choice"`` (the holder declares or keeps quiet;
      a 31 kept quiet cannot be claimed later and counts as 30, 002/000).
    - ``hammer``: the first player may call a showdown instead of drawing (002).
    - ``throw_down``: a showdown called before looking at one's cards: ``"first"`` (the
      first player only, 002) or ``"any"`` (each player in turn before looking, 003).
    - ``sudden_death``: after one card each the dealer may call sudden death: the single
      cards are compared and the lowest lose a life (002, Doug Moyer).
    - ``first_turn_knock``: may a player knock on their first turn of a hand (standard: yes;
      the computer versions of 002 "Scat software": no).
    - ``knock_then_draw``: the knocker goes on to draw and discard in the same turn (the
      computer versions) instead of keeping the hand.
    - ``second_knock``: after a knock the next player may knock too, ending the play at
      once (002, Doug Moyer).
    - ``extra_stops``: Ride the Bus extra stops after "on the stairs" ("on the second
      step", "asking the driver to stop"), one more life each for every player; only with
      ``lives_name: bus``.
    - ``all_out``: what happens when one hand would eliminate every remaining player:
      ``"replay"`` the hand with lives unchanged (002 Scoring, the all-on-the-county draw)
      or everyone stays on their ``"last_life"`` (variant 1).
    - ``scoring``: ``"lives"`` (the last player in wins) or ``"points"`` (002 French
      Canadian: the highest hand after a knock scores a point, a 31 scores one at once, the
      first to ``points_to_win`` wins; nobody loses a life).
    - ``points_to_win``: the points that win a points game (31 in the source).
    - ``poker_tiebreak``: equal hands are told apart by the ranks of the cards that count,
      highest first, as in poker (002, Jeffrey Jacobs: A-10-9 beats K-Q-J).
    - ``play``: ``"draw"`` (draw and discard) or ``"golf"`` (002, Mike Armstrong: three
      face-down cards the owner may not look at; each turn puts a card in place of one or
      turns one face up; scored after three turns each, by suit or by rank).
    - ``one_on_the_bus``: only one player at a time may be on the last life (the county,
      "on the bus"); another who loses the last quarter meanwhile is out at once (golf).
    """

    name: str = field(default="custom", compare=False)
    deck: str = "standard"
    pennies: int = 3
    county: bool = True
    lives_name: str = "pennies"
    knock_mode: str = "lowest"
    knocker_tie: str = "safe"
    knocker_loss: int = 2
    knocker_loss_on_31: int = 1
    three_of_a_kind: float | None = None
    three_aces: float | None = None
    straight_flush: bool = False
    min_knock: int = 0
    knock_needs_flush: bool = False
    knock_when_stock_exhausted: bool = False
    all_out: str = "replay"
    trips_beat_31: bool = False
    declare_31: str = "auto"
    first_turn_knock: bool = True
    knock_then_draw: bool = False
    second_knock: bool = False
    extra_stops: int = 0
    hammer: bool = False
    throw_down: str = "none"
    sudden_death: bool = False
    scoring: str = "lives"
    points_to_win: int = 31
    poker_tiebreak: bool = False
    play: str = "draw"
    one_on_the_bus: bool = False

    # One flat check per field, in field order: splitting it would scatter the validation
    # of one dataclass over helpers that each see a few fields, so it stays above C901's 20.
    def __post_init__(self) -> None:  # noqa: C901
        def bad(name: str, msg: str) -> ValueError:
            return ValueError(f"Rules.{name}: {msg} (got {getattr(self, name)!r})")

        def check_type(name: str, types: tuple[type, ...]) -> None:
            value = getattr(self, name)
            # bool is an int subclass; refuse it where a number is meant and vice versa.
            if isinstance(value, bool) and bool not in types:
                raise bad(name, f"must be {' or '.join(t.__name__ for t in types)}")
            if not isinstance(value, types):
                raise bad(name, f"must be {' or '.join(t.__name__ for t in types)}")

        check_type("name", (str,))
        # Shown in every title line: checked here, so a rules file, a saved game and a
        # tournament log are held to one rule (scat_env.names)
        check_shown(self.name, "Rules.name", MAX_RULES_NAME)
        for name in ("deck", "lives_name", "knock_mode", "knocker_tie", "all_out",
                     "declare_31", "throw_down", "scoring", "play"):
            check_type(name, (str,))
        for name in ("pennies", "knocker_loss", "knocker_loss_on_31", "min_knock",
                     "extra_stops", "points_to_win"):
            check_type(name, (int,))
        for name in ("county", "straight_flush", "knock_needs_flush",
                     "knock_when_stock_exhausted", "trips_beat_31", "first_turn_knock",
                     "knock_then_draw", "second_knock", "hammer", "sudden_death",
                     "poker_tiebreak", "one_on_the_bus"):
            check_type(name, (bool,))
        self._check_families(bad)
        if self.throw_down not in THROW_DOWN:
            raise bad("throw_down", f"must be one of {THROW_DOWN}")
        if self.throw_down != "none" and self.declare_31 == "choice":
            raise bad("throw_down", "cannot be combined with declare_31 'choice': a 31 holder "
                      "must look at the cards to decide, a throw-down caller must not")
        if self.declare_31 not in DECLARE_31:
            raise bad("declare_31", f"must be one of {DECLARE_31}")
        if not 0 <= self.extra_stops <= len(BUS_EXTRA_STOPS):
            raise bad("extra_stops", f"must be between 0 and {len(BUS_EXTRA_STOPS)}")
        if self.extra_stops and self.lives_name != "bus":
            raise bad("extra_stops", "is a Ride the Bus rule: it needs lives_name 'bus'")
        if self.trips_beat_31 and (self.three_of_a_kind is not None
                                   or self.three_aces is not None):
            raise bad("trips_beat_31", "already values three of a kind; leave "
                      "three_of_a_kind and three_aces null")
        if self.deck not in DECKS:
            raise bad("deck", f"must be one of {DECKS}")
        if self.lives_name not in LIVES_NAMES:
            raise bad("lives_name", f"must be one of {LIVES_NAMES}")
        if self.knock_mode not in KNOCK_MODES:
            raise bad("knock_mode", f"must be one of {KNOCK_MODES}")
        if self.knocker_tie not in KNOCKER_TIES:
            raise bad("knocker_tie", f"must be one of {KNOCKER_TIES}")
        if self.all_out not in ALL_OUT:
            raise bad("all_out", f"must be one of {ALL_OUT}")
        if self.pennies < 0 or self.pennies > 20:
            raise bad("pennies", "must be between 0 and 20")
        if self.pennies + int(self.county) < 1:
            raise bad("pennies", "a player needs at least one life: pennies >= 1 or county")
        if self.knocker_loss not in (1, 2):
            raise bad("knocker_loss", "must be 1 or 2")
        if self.knocker_loss_on_31 not in (1, 2):
            raise bad("knocker_loss_on_31", "must be 1 or 2")
        if self.three_of_a_kind is not None:
            check_type("three_of_a_kind", (int, float))
            if float(self.three_of_a_kind) not in (30.0, 30.5):
                raise bad("three_of_a_kind", "must be null, 30 or 30.5")
        if self.three_aces is not None:
            check_type("three_aces", (int, float))
            if not 30 <= float(self.three_aces) <= 40:
                raise bad("three_aces", "must be null or a value between 30 and 40")
        if not 0 <= self.min_knock <= 31:
            raise bad("min_knock", "must be between 0 (no minimum) and 31")
        if self.knock_mode == "gin" and self.knocker_tie != "safe":
            raise bad("knocker_tie", "has no meaning with knock_mode='gin'; leave it 'safe'")

    def _check_families(self, bad: Any) -> None:
        """The points race and golf: each leaves out the options that have no meaning in it,
        so that a table of rules never promises something the engine does not do."""
        if self.scoring not in SCORINGS:
            raise bad("scoring", f"must be one of {SCORINGS}{_did_you_mean(self.scoring, SCORINGS)}")
        if self.play not in PLAYS:
            raise bad("play", f"must be one of {PLAYS}{_did_you_mean(self.play, PLAYS)}")
        if not 1 <= self.points_to_win <= 100:
            raise bad("points_to_win", "must be between 1 and 100")
        if self.one_on_the_bus and not self.county:
            raise bad("one_on_the_bus", "the bus is the last life: it needs county true")
        if self.scoring == "points":
            for name in ("hammer", "sudden_death"):
                if getattr(self, name):
                    raise bad(name, "is a lives call; a points game has none")
            if self.throw_down != "none" or self.declare_31 == "choice":
                raise bad("scoring", "a points game has no throw-down and no quiet 31: "
                          "leave throw_down 'none' and declare_31 'auto' or 'never'")
            if self.knock_mode != "lowest" or self.second_knock or self.play != "draw":
                raise bad("scoring", "points are scored only in the draw-and-discard game "
                          "with the plain knock (knock_mode 'lowest', no second_knock)")
        if self.play == "golf":
            plain = Rules()
            for name in ("declare_31", "min_knock", "knock_needs_flush", "straight_flush",
                         "three_of_a_kind", "three_aces", "trips_beat_31", "hammer",
                         "throw_down", "sudden_death", "second_knock", "knock_then_draw",
                         "knock_when_stock_exhausted", "poker_tiebreak"):
                if name == "declare_31":
                    if self.declare_31 != "never":
                        raise bad(name, "golf has no declaring (nobody sees a whole hand "
                                  "before the end): use 'never'")
                elif getattr(self, name) != getattr(plain, name):
                    raise bad(name, "has no meaning in golf (no knocking, hands scored by "
                              "suit or by rank); leave it at its default")

    # -- derived -------------------------------------------------------------------------
    @property
    def start_lives(self) -> int:
        """Losses a player can take before elimination, county life included."""
        return self.pennies + int(self.county) + self.extra_stops

    @property
    def deck_cards(self) -> tuple[int, ...]:
        """The card ids in play (ids of :mod:`scat_env.cards`: ``rank + 13 * suit``)."""
        return _DECK_CARDS[self.deck]

    @property
    def scoring_key(self) -> tuple[Any, ...]:
        """The fields that change hand values (used to cache value tables)."""
        return (self.three_of_a_kind, self.three_aces, self.straight_flush, self.trips_beat_31,
                self.play == "golf", self.poker_tiebreak)

    @property
    def calls(self) -> tuple[str, ...]:
        """The calls these rules offer beyond drawing, discarding and knocking (each an
        action of its own, :mod:`scat_env.actions`); empty for the standard game."""
        out = []
        if self.hammer:
            out.append("hammer")
        if self.throw_down != "none":
            out.append("throw_down")
        if self.sudden_death:
            out.append("sudden_death")
        if self.declare_31 == "choice":
            out.append("declare")
        return tuple(out)

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


def _did_you_mean(word: str, choices: Any) -> str:
    """``"; did you mean 'x'?"`` for the closest names, or ``""``: an error that lists every
    preset or field would run past one line."""
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""


#: Rules files being loaded, outermost first (to refuse a ``preset:`` chain that loops).
_LOADING: list[Path] = []

#: Named presets: the standard game and one turning on each option of the sources.
PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    # 002 Variations, first paragraph: knocker in a tie pays two, others one; a 31 after a
    # knock spares its holder while the knocker pays two; an all-out hand is replayed with
    # everyone on the county.
    "knocker_pays_ties": {"knocker_tie": "all", "knocker_loss_on_31": 2, "all_out": "last_life"},
    "knocker_only_ties": {"knocker_tie": "knocker_only"},
    "knocker_loses_one": {"knocker_loss": 1},
    "three_of_a_kind_30": {"three_of_a_kind": 30},
    "three_of_a_kind_30_5": {"three_of_a_kind": 30.5},
    "straight_flush": {"straight_flush": True},
    "min_knock_17": {"min_knock": 17},
    "min_knock_19": {"min_knock": 19},
    "min_knock_21": {"min_knock": 21},
    "flush_to_knock": {"knock_needs_flush": True},
    "no_county": {"county": False},
    # A knock stays a third choice once the stock is empty (the standard game offers only
    # taking the discard or ending the play, 002/000 "Draw pile exhausted").
    "knock_when_exhausted": {"knock_when_stock_exhausted": True},
    # The standard game since the exhausted-stock rule follows 002/000; the name is kept so
    # that rules files and saved games naming it still load.
    "no_knock_when_exhausted": {},
    # 004: play to four points; four points and you are out. The knocker who is lowest
    # still pays two (004 Knacka).
    "swedish_points": {"pennies": 4, "county": False, "lives_name": "points"},
    # 002 Ride the Bus: seated, then five steps to the front; the fifth loss is off the bus.
    "ride_the_bus": {"pennies": 5, "county": False, "lives_name": "bus"},
    # 002 Cadillac (Kent Hamilton): four nickels plus poverty; a knocker in a tie pays two,
    # the others nothing; three aces = Grand Cadillac (33); other trips 30.
    "cadillac": {
        "pennies": 4,
        "county": True,
        "lives_name": "nickels",
        "knocker_tie": "knocker_only",
        "knocker_loss": 2,
        "three_of_a_kind": 30,
        "three_aces": 33,
    },
    # 002 Ride the Bus: "on the second step" and "asking the driver to stop" added for
    # every player: seven losses put you off the bus.
    "ride_the_bus_extra_stops": {"pennies": 5, "county": False, "lives_name": "bus",
                                 "extra_stops": 2},
    # 002 Doug Moyer: after a knock the next player may knock too and end the play at once;
    # the lowest simply lose one (no extra cost for a knocker); an all-out hand is redealt.
    "moyer_second_knock": {"second_knock": True, "knocker_loss": 1, "knocker_tie": "all"},
    # 002 Scat software: knock, then draw and discard in the same turn; no knock on a
    # player's first turn. The hand points decide who loses a life, as at a showdown.
    "computer": {"knock_then_draw": True, "first_turn_knock": False},
    # 002 Antonio di Sebastiano: the 40-card Italian pack (no 8, 9, 10); three of a kind
    # beats 31 and ranks among itself (aces highest); no declaring, players knock as usual;
    # three tokens and a player who loses the last plays on until losing again; after a
    # knock the lowest lose one token.
    "italian": {"deck": "italian", "trips_beat_31": True, "declare_31": "never",
                "pennies": 3, "county": True, "lives_name": "tokens", "knocker_loss": 1,
                "knocker_tie": "all"},
    # 002 Variations: instead of drawing, the first player may call a "hammer" (knocking
    # under the gun): everyone shows at once, scored like a knock with the caller as
    # knocker (a lowest caller loses two); dealt 31s still pay.
    "hammer": {"hammer": True},
    # 002: the "throw-down" / "shotgun": the first player decides before looking at their
    # cards whether to call the showdown. 003 lets any player call it before looking:
    # throw_down_any.
    "throw_down": {"throw_down": "first"},
    "throw_down_any": {"throw_down": "any"},
    # 002 Doug Moyer's game: the second knock, sudden death, the lowest simply lose one.
    "moyer": {"second_knock": True, "sudden_death": True, "knocker_loss": 1,
              "knocker_tie": "all"},
    "sudden_death": {"sudden_death": True},
    # 002/000: a 31 is declared by choice; one kept quiet counts as 30 for the rest of the
    # hand and cannot be claimed later.
    "undeclared_31": {"declare_31": "choice"},
    # 002 Gin (Angie Barry), 000: a knock promises the highest hand; three letters G-I-N
    # and you are out; trips 30.5.
    "gin": {
        "knock_mode": "gin",
        "pennies": 3,
        "county": False,
        "lives_name": "letters",
        "knocker_loss": 1,
        "three_of_a_kind": 30.5,
    },
    # 002 French Canadian (Cribbage.ca): a point for the highest hand after a knock (ties to
    # the non-knockers), a point at once for a declared 31, first to 31 points wins.
    "french_canadian": {"scoring": "points", "points_to_win": 31},
    # 002 Jeffrey Jacobs: the same, knocking only with three cards of one suit, equal hands
    # told apart by their ranks as in poker.
    "french_canadian_jacobs": {"scoring": "points", "points_to_win": 31,
                               "knock_needs_flush": True, "poker_tiebreak": True},
    # 002 Mike Armstrong: golf-like 31. Three quarters, then on the bus (the county life),
    # one player at a time; no knocking, no declaring.
    "golf": {"play": "golf", "declare_31": "never", "pennies": 3, "county": True,
             "lives_name": "quarters", "one_on_the_bus": True},
}

#: One line per preset in plain words, what ``scat rules`` and the browser's new-game form
#: show where a person picks one. No source tags here: where a rule comes from is
#: :data:`PRESET_SOURCES` (and docs/RULES.md), shown with one preset's fields.
PRESET_NOTES: dict[str, str] = {
    "standard": "the standard game: 3 pennies and the county",
    "knocker_pays_ties": "a tied knocker pays two, the others one; a 31 after a knock "
                         "spares its holder",
    "knocker_only_ties": "a knocker tied for lowest alone pays",
    "knocker_loses_one": "a lone lowest knocker pays one, not two",
    "three_of_a_kind_30": "three of a kind counts 30",
    "three_of_a_kind_30_5": "three of a kind counts 30.5",
    "straight_flush": "three suited cards in sequence count 30",
    "min_knock_17": "knocking needs a hand of 17 or more",
    "min_knock_19": "knocking needs a hand of 19 or more",
    "min_knock_21": "knocking needs a hand of 21 or more",
    "flush_to_knock": "knocking needs three cards of one suit",
    "no_county": "three lives, no county",
    "knock_when_exhausted": "a knock stays allowed once the stock is empty",
    "no_knock_when_exhausted": "the standard game under its former name",
    "swedish_points": "each lost hand a point; four points and out",
    "ride_the_bus": "five stops, seated to the stairs, then off the bus",
    "ride_the_bus_extra_stops": "Ride the Bus with two more stops, seven in all",
    "moyer_second_knock": "the next player may knock too, ending the play",
    "computer": "knock, then draw and discard; no knock on a first turn",
    "italian": "the 40-card Italian pack; trips beat 31; no declaring",
    "hammer": "the first player may call a showdown instead of drawing",
    "throw_down": "the first player may call a showdown before looking",
    "throw_down_any": "any player may call a showdown before looking",
    "moyer": "the second knock and the dealer's sudden death",
    "sudden_death": "the dealer may call sudden death on one card each",
    "undeclared_31": "declaring 31 is a choice; a quiet 31 counts 30",
    "cadillac": "four nickels; a tied knocker pays; three aces 33 (a Grand Cadillac)",
    "gin": "a knock promises the best hand; G-I-N and out",
    "french_canadian": "a race to 31 points: the best hand after a knock, or a 31, scores",
    "french_canadian_jacobs": "French Canadian, a flush to knock, ties told apart as in poker",
    "golf": "three face-down cards, one turned up a turn; quarters, then the bus",
}

#: Where each preset comes from, in words (the documents of docs/RULES.md: Pagat's page
#: "31 / Scat / Ride the Bus / Cadillac" and its sections, a condensed copy of the same
#: rules, a short rules summary, a Swedish description). ``scat rules NAME`` shows it.
PRESET_SOURCES: dict[str, str] = {
    "standard": "Pagat",
    "knocker_pays_ties": "Pagat, Variations",
    "knocker_only_ties": "Pagat, Variations",
    "knocker_loses_one": "Pagat, Variations",
    "three_of_a_kind_30": "Pagat, Variations; a short rules summary",
    "three_of_a_kind_30_5": "Pagat, Variations",
    "straight_flush": "Pagat, Variations; a short rules summary",
    "min_knock_17": "Pagat, Variations; a short rules summary",
    "min_knock_19": "Pagat, Variations; a short rules summary",
    "min_knock_21": "Pagat, Variations; a short rules summary",
    "flush_to_knock": "Pagat, Variations",
    "no_county": "a short rules summary",
    "knock_when_exhausted": "a house rule",
    "no_knock_when_exhausted": "Pagat",
    "swedish_points": "a Swedish description (Alternativ poängräkning)",
    "ride_the_bus": "Pagat, Ride the Bus",
    "ride_the_bus_extra_stops": "Pagat, Ride the Bus",
    "moyer_second_knock": "Pagat, Doug Moyer",
    "computer": "Pagat, Scat software",
    "italian": "Pagat, Antonio di Sebastiano",
    "hammer": "Pagat, Variations",
    "throw_down": "Pagat, Variations",
    "throw_down_any": "a short rules summary, Variations",
    "moyer": "Pagat, Doug Moyer",
    "sudden_death": "Pagat, Doug Moyer",
    "undeclared_31": "Pagat; a condensed copy of the standard rules",
    "cadillac": "Pagat, Cadillac",
    "gin": "Pagat, Gin; a condensed copy of the standard rules",
    "french_canadian": "Pagat, French Canadian",
    "french_canadian_jacobs": "Pagat, Jeffrey Jacobs",
    "golf": "Pagat, Mike Armstrong",
}

#: Ride the Bus's stops, seated first; the extra stops of :data:`BUS_EXTRA_STOPS` come
#: after "on the stairs".
_BUS_POSITIONS = (
    "seated",
    "standing at the back",
    "in the middle",
    "at the front",
    "on the stairs",
    "off the bus",
)


def lives_label(rules: Rules, lives: int) -> str:
    """Human words for a player's standing, in the chosen game's own vocabulary. In a
    points game nobody loses a life: the standing is the points (``PlayerView.points``)."""
    if rules.scoring == "points":
        return "in the race" if lives > 0 else "out"
    if lives <= 0:
        return "off the bus" if rules.lives_name == "bus" else "out"
    lost = rules.start_lives - lives
    if rules.lives_name == "points":
        return f"{lost} point{'s' if lost != 1 else ''}"
    if rules.lives_name == "letters":
        return "GIN"[:lost] or "clean"
    if rules.lives_name == "bus":
        stops = _BUS_POSITIONS[:-1] + BUS_EXTRA_STOPS[: rules.extra_stops]
        if rules.start_lives == 5 + rules.extra_stops and lost < len(stops):
            return stops[lost]
        return f"{lives} stop{'s' if lives != 1 else ''} left"
    if rules.lives_name == "quarters":
        quarters = lives - int(rules.county)
        if quarters <= 0:
            return "on the bus"
        return f"{quarters} quarter{'s' if quarters != 1 else ''}"
    if rules.lives_name == "tokens":
        tokens = lives - int(rules.county)
        if tokens <= 0:
            return "playing on, no tokens"
        return f"{tokens} token{'s' if tokens != 1 else ''}"
    coins = lives - int(rules.county)
    unit = "nickel" if rules.lives_name == "nickels" else "penn"
    if coins <= 0:
        return "on poverty" if rules.lives_name == "nickels" else "on the county"
    if unit == "penn":
        return f"{coins} penn{'y' if coins == 1 else 'ies'}"
    return f"{coins} nickel{'s' if coins != 1 else ''}"
