"""Policies of the batched trainer as agents: ``compact:PATH``.

The batched trainer (:mod:`training.batch_ppo`) trains a network over the compact
observation of :mod:`scat_env.batch` (one code per card, counters per seat, the scoring
features). Here that network plays from a :class:`~scat_env.PlayerView`, like every agent:
the view is turned into the compact observation by
:func:`scat_env.batch.reference.compact_observation` (the batched engine is tested to give
exactly the same bytes), and the forward pass runs in numpy, so playing needs no torch.

The file (``.npz``, read with ``allow_pickle=False``) holds one float32 array per weight of
:class:`training.batch_ppo.CompactNet` under its ``state_dict`` name and ``metadata.json`` (a
uint8 array of UTF-8 JSON): ``kind`` (:data:`COMPACT_KIND`), ``format_version``, ``hidden``,
``layers``, ``num_codes``, ``num_actions``, ``rules`` (the preset name it was trained on),
``player_counts``, ``expert_advice`` (whether it reads ``expert``'s move: then the file
holds ``advice_gain`` and the agent asks :class:`~agents.expert.ExpertAgent`; absent in
files written before the option, meaning false), ``pieces`` (the observation pieces it
reads beyond the base observation, :data:`PIECE_WIDTHS`: then the file holds
``piece_layer.weight``; absent in files written before the pieces, meaning none), the run's
``metrics`` and ``sha256`` over everything else. Every shape is
checked against the architecture and the hash against the content before a weight is used.

``compact:SET.yaml`` plays a *compact set* (:class:`CompactSet`): compact files by the
number of players still in, each reading its smaller game (the ``scat-policy-set`` manifest
of :mod:`agents.neural.policy_set`).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from functools import lru_cache
from typing import Any

import numpy as np

from scat_env import PlayerView, Rules
from scat_env.actions import DRAW_DISCARD, HAMMER, KNOCK, NUM_ACTIONS, PLACE_SLOT
from scat_env.batch.active import active_observations, players_in
from scat_env.batch.reference import (
    C_KNOWN,
    PHASE_CODES,
    compact_observation,
    observation_pieces,
    piece_starts,
)
from scat_env.cards import CARD_RANK, CARD_SUIT
from scat_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS
from scat_env.scoring import value_table
from scat_env.yamlfile import one_line

from .base import Agent, likeliest_moves_text
from .expert import ExpertAgent
from .neural.archive import (
    MAX_POLICY_BYTES,
    check_parameters,
    open_policy_zip,
    parameters_text,
    read_npy,
)
from .neural.policy_file import (
    ACTION_WIDTHS,
    MAX_METADATA_BYTES,
    RETIRED,
    retired_policy_file,
    shipped_path,
)
from .neural.policy_set import load_policy_set
from .registry import register
from .rules_inputs import RULES_WIDTH, rules_vector

COMPACT_KIND = "scat-compact-policy"
#: The batched trainer's first policy, one network for 2 to 10 players (policies/README.md):
#: ``compact:scat_batch``.
SHIPPED_COMPACT = "scat_batch"
#: The batched trainer's shipped set (``compact:scat_batch_set``, policies/README.md): a
#: two-player specialist for every position with two players in, ``scat_batch_7_10`` (it
#: reads the expert's move) for the rest. It beats ``scat_batch_7_10`` alone at every
#: table size, game by game on the same deals, so it is the compact policy a table gets by
#: default.
SHIPPED_SET = "scat_batch_set"

FORMAT_VERSION = 1
METADATA = "metadata.json"
NUM_CODES = C_KNOWN + MAX_PLAYERS - 1
SEAT_FEATURES = 4
COUNTERS = 6
DENSE_SIZE = MAX_PLAYERS * SEAT_FEATURES + COUNTERS + (MAX_PLAYERS - 1) + 54  # + hand features
POINT_SCALE = 1.0 / 41.0
MAX_HIDDEN, MAX_LAYERS = 4096, 16
MAX_FILE_BYTES = MAX_POLICY_BYTES

#: What the network reads of each observation piece (:func:`piece_inputs`), in the
#: observation's order, each as wide at every table size (one network for 2 to 10 players):
#: ``phase`` the phase code as a one-hot (7 codes: a code is a kind of decision, not a
#: quantity) and the cards I see over 3; ``quiet`` the flag; ``points`` per relative seat,
#: points over ``points_to_win`` (how near the race's end), padded to 10 seats; ``slots``
#: per relative seat and slot, a face-up flag, the card's rank and suit as one-hots (golf
#: counts a suit's points or a rank's cards; the card codes already show a face-up card, as
#: mine or as a known card, but not which slot it lies in, and a slot is what a golf move
#: names), padded to 10 seats; ``rules`` the table's rule options
#: (:mod:`agents.rules_inputs`), which no observation holds: a network that reads them
#: learns every variation at once, and plays a table of any rules.
SLOT_WIDTH = 1 + 13 + 4
#: The pieces of the calls' presets (which call is on offer; whether my 31 is kept quiet):
#: a set whose calls are made by another policy (a manifest's ``calls``) plays tables with
#: these pieces, the calls' policy reading them and its members playing on without them
#: (after the calls, those tables play as the standard game).
CALL_PIECES = ("phase", "quiet")
PIECE_WIDTHS = {"phase": len(PHASE_CODES) + 1, "quiet": 1, "points": MAX_PLAYERS,
                "slots": 3 * MAX_PLAYERS * SLOT_WIDTH, "rules": RULES_WIDTH}
_CARD_RANKS = np.asarray(CARD_RANK, np.int64)
_CARD_SUITS = np.asarray(CARD_SUIT, np.int64)


def table_pieces(rules: Rules | None) -> tuple[str, ...]:
    """The observation pieces of ``rules``' tables (the same names at every size)."""
    return tuple(observation_pieces(MIN_PLAYERS, rules))


def pieces_width(pieces: tuple[str, ...] | list[str]) -> int:
    """Width of :func:`piece_inputs` for ``pieces``."""
    return sum(PIECE_WIDTHS[p] for p in pieces)


def piece_inputs(obs: np.ndarray, num_players: int, rules: Rules | None,
                 pieces: tuple[str, ...] | list[str]) -> np.ndarray:
    """The ``pieces`` a network reads (:data:`PIECE_WIDTHS`) of compact observations [B, D]
    of ``num_players``-seat tables under ``rules``, float32 [B, :func:`pieces_width`].

    A piece the table does not have reads as the base observation says it is: the phase
    from the base's draw/discard counter and the cards of mine it shows, no quiet 31, no
    points, no face-up slot. So a network that reads a piece also plays tables without it
    (a player refuses only the converse: :meth:`CompactAgent.check_table`)."""
    B, n = obs.shape[0], num_players
    offsets = piece_starts(n, rules)
    parts = []
    for name in pieces:
        part = np.zeros((B, PIECE_WIDTHS[name]), np.float32)
        at = offsets.get(name)
        if name == "phase":
            if at is None:
                code = obs[:, 52 + 2 * n + 1].astype(np.int64)
                seen = ((obs[:, :52] >= 1) & (obs[:, :52] <= 3)).sum(axis=1)
            else:
                code, seen = obs[:, at].astype(np.int64), obs[:, at + 1]
            part[np.arange(B), code] = 1.0
            part[:, -1] = seen / 3.0
        elif name == "quiet" and at is not None:
            part[:, 0] = obs[:, at]
        elif name == "points" and at is not None:
            part[:, :n] = obs[:, at:at + n] / float(rules.points_to_win)  # type: ignore[union-attr]
        elif name == "rules":  # every row of a table reads the same rules
            part[:] = rules_vector(rules if rules is not None else Rules())
        elif name == "slots" and at is not None:
            codes = obs[:, at:at + 3 * n].astype(np.int64)
            up = codes > 0
            slots = np.zeros((B, 3 * n, SLOT_WIDTH), np.float32)
            slots[..., 0] = up
            b, s = np.nonzero(up)
            card = codes[b, s] - 1
            slots[b, s, 1 + _CARD_RANKS[card]] = 1.0
            slots[b, s, 14 + _CARD_SUITS[card]] = 1.0
            part[:, :3 * n * SLOT_WIDTH] = slots.reshape(B, -1)
        parts.append(part)
    return np.concatenate(parts, axis=1) if parts else np.zeros((B, 0), np.float32)


def expected_shapes(hidden: int, layers: int, num_actions: int = NUM_ACTIONS,
                    advice: bool = False, pieces: tuple[str, ...] | list[str] = ()
                    ) -> dict[str, tuple[int, ...]]:
    """Every weight of a :class:`training.batch_ppo.CompactNet` of this size (``advice``:
    with its expert-advice bonus per action; ``pieces``: with the dense layer over them)."""
    shapes: dict[str, tuple[int, ...]] = {
        "cards.weight": (52 * NUM_CODES, hidden),
        "dense.weight": (hidden, DENSE_SIZE), "dense.bias": (hidden,),
    }
    for i in range(layers - 1):
        shapes[f"trunk.{2 * i + 1}.weight"] = (hidden, hidden)
        shapes[f"trunk.{2 * i + 1}.bias"] = (hidden,)
    shapes.update({"pi.weight": (num_actions, hidden), "pi.bias": (num_actions,),
                   "v.weight": (1, hidden), "v.bias": (1,)})
    for name in ("card_gain", "draw_gain", "knock_gain", "knock_at"):
        shapes[name] = ()
    if advice:
        shapes["advice_gain"] = (num_actions,)
    if pieces:
        shapes["piece_layer.weight"] = (hidden, pieces_width(pieces))
    return shapes


def content_hash(arrays: dict[str, np.ndarray], metadata: dict[str, Any]) -> str:
    digest = hashlib.sha256()
    meta = {k: v for k, v in metadata.items() if k != "sha256"}
    digest.update(json.dumps(meta, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        digest.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def save_compact(path: str | os.PathLike[str], arrays: dict[str, np.ndarray],
                 metadata: dict[str, Any]) -> None:
    """Write a compact policy file (module docstring), atomically."""
    arrays = {k: np.asarray(v, np.float32) for k, v in arrays.items()}
    meta = {"kind": COMPACT_KIND, "format_version": FORMAT_VERSION, **metadata}
    meta["sha256"] = content_hash(arrays, meta)
    blob = np.frombuffer(json.dumps(meta, sort_keys=True).encode(), np.uint8)
    tmp = f"{os.fspath(path)}.tmp"
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays, **{METADATA: blob})
    os.replace(tmp, path)


def load_compact(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read and check a compact policy file; any problem is one ``ValueError`` line.

    Never read with ``np.load``: the zip's directory is bounded before it is parsed, every ``.npy`` header
    is checked before its array is allocated, and the architecture's parameter count before
    any weight is read (:mod:`agents.neural.archive`)."""
    where = repr(str(path))
    if not os.path.isfile(path):
        raise ValueError(f"compact policy file {where} does not exist")
    if os.path.getsize(path) > MAX_FILE_BYTES:
        raise ValueError(f"{where} is larger than any policy ({parameters_text()})")
    if retired_policy_file(path):
        raise ValueError(f"{where} is a policy of the retired native trainer: {RETIRED}")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{where} is not a readable compact policy file (not a zip: "
                         "corrupt or truncated?)")
    try:
        with open_policy_zip(path, where) as zf:
            arrays, meta = _read(zf, where)
    except ValueError as exc:  # ours; values quoted from the file may be long
        raise ValueError(one_line(str(exc))) from None
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError,
            zlib.error) as exc:
        # the zip module's: an unsupported compression, an encrypted member, bad deflate
        raise ValueError(f"{where} is not a readable compact policy file (corrupt or "
                         f"truncated?): {type(exc).__name__}") from None
    if content_hash(arrays, meta) != meta.get("sha256"):
        raise ValueError(f"{where}: its content does not match its hash (the file changed "
                         "after it was written)")
    return arrays, meta


def _read(zf: zipfile.ZipFile, where: str) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays and metadata of an open compact file, every check of :func:`load_compact`
    but the hash."""
    members = {n.removesuffix(".npy"): n for n in zf.namelist()}
    if METADATA not in members:
        raise ValueError(f"{where} is not a compact policy file (no {METADATA})")
    raw = read_npy(zf, members.pop(METADATA), (None,), where, np.uint8, MAX_METADATA_BYTES)
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError(f"{where} is not a compact policy file (its metadata is not "
                         "JSON)") from None
    shapes = _check_meta(meta, where)
    check_parameters(shapes, where)
    if set(members) != set(shapes) or any(not n.endswith(".npy") for n in members.values()):
        raise ValueError(f"{where}: weights do not fit the architecture")
    arrays = {}
    for name, shape in shapes.items():
        a = read_npy(zf, members[name], shape, where, np.float32, MAX_FILE_BYTES)
        if not np.isfinite(a).all():
            raise ValueError(f"{where}: {name} holds a value that is not finite")
        arrays[name] = a
    return arrays, meta


def _check_meta(meta: Any, where: str) -> dict[str, tuple[int, ...]]:
    """The weights' shapes a compact file's metadata declares, each field checked."""
    if not isinstance(meta, dict) or meta.get("kind") != COMPACT_KIND:
        raise ValueError(f"{where} is not a compact policy file")
    if meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{where} has format version {meta.get('format_version')!r}; "
                         f"this scat-env reads version {FORMAT_VERSION}")
    hidden, layers = meta.get("hidden"), meta.get("layers")
    if (type(hidden) is not int or type(layers) is not int
            or not 1 <= hidden <= MAX_HIDDEN or not 1 <= layers <= MAX_LAYERS):
        raise ValueError(f"{where}: hidden {hidden!r} / layers {layers!r} out of bounds")
    if meta.get("num_codes") != NUM_CODES or meta.get("num_actions") not in ACTION_WIDTHS:
        raise ValueError(f"{where} was made for another observation or action space "
                         f"(codes {meta.get('num_codes')!r}, actions "
                         f"{meta.get('num_actions')!r})")
    advice = meta.get("expert_advice", False)  # absent: written before the option
    if not isinstance(advice, bool):
        raise ValueError(f"{where}: expert_advice {advice!r} is not true or false")
    pieces = meta.get("pieces", [])  # absent: written before the pieces, none read
    order = list(PIECE_WIDTHS)
    if (not isinstance(pieces, list)
            or not all(isinstance(p, str) and p in PIECE_WIDTHS for p in pieces)
            or pieces != sorted(set(pieces), key=order.index)):
        raise ValueError(f"{where}: pieces {one_line(repr(pieces))[:80]} is not a list of "
                         f"{', '.join(order)} in that order")
    return expected_shapes(hidden, layers, meta["num_actions"], advice, pieces)


def dense_inputs(obs: np.ndarray, feats: np.ndarray, num_players: int,
                 start_lives: int, rules: Rules | None = None,
                 pieces: tuple[str, ...] | list[str] = ()) -> np.ndarray:
    """The numpy twin of :func:`training.batch_ppo.dense_inputs` (tested equal): the
    seat counters, counters, table size and scoring features (:data:`DENSE_SIZE`), then
    :func:`piece_inputs` of ``pieces`` when there are any (a network without pieces gets
    exactly the columns it was trained on)."""
    dense = _base_dense(obs, feats, num_players, start_lives)
    if not pieces:
        return dense
    return np.concatenate([dense, piece_inputs(obs, num_players, rules, pieces)], axis=1)


def _base_dense(obs: np.ndarray, feats: np.ndarray, num_players: int,
                start_lives: int) -> np.ndarray:
    """:func:`dense_inputs` without the pieces: :data:`DENSE_SIZE` columns."""
    B, n = obs.shape[0], num_players
    o = obs.astype(np.float32)
    flags = obs[:, 52 + n:52 + 2 * n].astype(np.int64)
    seats = np.zeros((B, MAX_PLAYERS, SEAT_FEATURES), np.float32)
    seats[:, :n, 0] = o[:, 52:52 + n] / max(start_lives, 1)
    seats[:, :n, 1] = flags & 1
    seats[:, :n, 2] = (flags >> 1) & 1
    seats[:, :n, 3] = (flags >> 2) & 1
    base = 52 + 2 * n
    f = obs[:, base + 4].astype(np.int64)
    counters = np.stack([o[:, base] / 52.0, o[:, base + 1], o[:, base + 2] / 100.0,
                         o[:, base + 3] / 50.0, (f & 1).astype(np.float32),
                         ((f >> 1) & 1).astype(np.float32)], axis=1)
    table = np.zeros((B, MAX_PLAYERS - 1), np.float32)
    table[:, n - 2] = 1.0
    return np.concatenate([seats.reshape(B, -1), counters, table,
                           feats.astype(np.float32) * POINT_SCALE], axis=1)


HAND_FEATURES = 54  # hand_features' width: a value per discard, the hand's, the take's


def vector_size(max_players: int) -> int:
    """Width of :func:`vector_inputs` for tables of up to ``max_players`` seats."""
    codes = C_KNOWN + max_players - 1
    return (52 * codes + max_players * SEAT_FEATURES + COUNTERS + (MAX_PLAYERS - 1)
            + HAND_FEATURES)


@lru_cache(maxsize=16)
def _dense_columns(max_players: int) -> np.ndarray:
    """Which of :func:`dense_inputs`' 10-seat columns a ``max_players`` vector keeps: its
    seats, then all the rest (counters, the table size's one-hot, the hand features). The
    one-hot stays whole, 9 wide at every ``max_players``: cut to the table's sizes, the
    9-seat vector was exactly as wide as the env's 10-player observation, and an SB3 zip,
    which tells its input only by its width, could have been read the wrong way.
    Cached: BatchVecEnv asks at every step (the array is only read)."""
    seats = np.arange(max_players * SEAT_FEATURES)
    rest = np.arange(MAX_PLAYERS * SEAT_FEATURES, DENSE_SIZE)
    return np.concatenate([seats, rest])


def vector_inputs(obs: np.ndarray, feats: np.ndarray, num_players: int, start_lives: int,
                  max_players: int, rules: Rules | None = None) -> np.ndarray:
    """Compact observations [B, D] as one flat float32 vector each, for networks that take
    a plain vector (SB3's ``MlpPolicy`` on :class:`training.batch_vec_env.BatchVecEnv`, and
    the ``sb3:`` agent that plays what it trained): the one-hot of each card's code, then
    :func:`dense_inputs` cut to ``max_players`` seats, then, for ``rules`` whose
    observation has pieces, :func:`piece_inputs` of them (none without ``rules``: the
    vector of the base observation, unchanged). One definition for the env that
    trains and the agent that plays, so the two cannot drift apart."""
    B = obs.shape[0]
    codes = C_KNOWN + max_players - 1
    out = np.zeros((B, vector_size(max_players)), np.float32)
    cols = (np.arange(52) * codes)[None, :] + obs[:, :52]
    out[np.repeat(np.arange(B), 52), cols.reshape(-1)] = 1.0
    dense = dense_inputs(obs, feats, num_players, start_lives)
    out[:, 52 * codes:] = dense[:, _dense_columns(max_players)]
    pieces = table_pieces(rules)
    if pieces:
        out = np.concatenate([out, piece_inputs(obs, num_players, rules, pieces)], axis=1)
    return out


@lru_cache(maxsize=32)
def _value_table(rules: Rules) -> np.ndarray:
    return np.asarray(value_table(rules), np.float64)


def view_inputs(view: PlayerView) -> tuple[np.ndarray, np.ndarray]:
    """``view``'s compact observation [1, D] and its scoring features [1, 54], as the
    batched engine computes them for its own games: what an agent trained on that engine
    reads when it plays from a view (``compact:``, and ``sb3:`` for a BatchVecEnv model)."""
    from scat_env.batch.kernels import hand_features_serial

    obs = compact_observation(view)[None]
    feats = np.empty((1, HAND_FEATURES), np.float32)
    hand_features_serial(obs, _value_table(view.rules), feats)
    return obs, feats


def check_vector_table(name: str, num_players: int, max_players: int, rules: Rules) -> None:
    """Refuse, for a policy reading :func:`view_vector` of ``max_players`` seats, what that
    vector cannot say (calls, golf, points races:
    :func:`scat_env.batch.beyond_base_observation`) and tables larger than it."""
    from scat_env.batch import beyond_base_observation

    why = beyond_base_observation(rules)
    if why is not None:
        raise ValueError(f"{name} does not play {why} (the {rules.name!r} rules): its "
                         "observation is the draw-and-discard game's")
    if num_players > max_players:
        raise ValueError(f"{name} was trained for at most {max_players} players, "
                         f"not {num_players}")


def view_vector(view: PlayerView, max_players: int) -> np.ndarray:
    """``view`` as the batched learner vector of ``max_players`` seats, [vector_size]: the
    input the standard-library adapters train on (:class:`training.batch_learner.BatchLearnerEnv`)
    and their agents (``sb3:``, ``torchrl:``, ``rllib:`` of ``env: batched``) play from."""
    obs, feats = view_inputs(view)
    return vector_inputs(obs, feats, view.num_players, view.rules.start_lives, max_players)[0]


class VectorAgent(Agent):
    """Plays, from the view, a policy of another library trained on the batched learner
    vector (:func:`view_vector`): any ``policy`` with ``logits(vector, mask)`` giving masked
    logits. The most likely legal move, or a draw from the softmax with ``sample``.

    :data:`FORCED_MOVE_DRAWS`: whether a sampling agent spends a draw of its generator on a
    move that is the only legal one. ``sb3:`` always has, ``torchrl:`` never has, and a
    seeded sampling agent keeps the games it has always played."""

    #: See the class docstring.
    FORCED_MOVE_DRAWS = True

    def __init__(self, policy: Any, max_players: int, sample: bool = False,
                 seed: int | None = None, name: str = "vector") -> None:
        super().__init__(seed)
        self.policy, self.max_players, self.sample, self.name = policy, max_players, sample, name

    def check_table(self, num_players: int, rules: Rules) -> None:
        """Refuse what its vector cannot say and larger tables (:func:`check_vector_table`)."""
        check_vector_table(self.name, num_players, self.max_players, rules)

    def act(self, view: PlayerView) -> int:
        legal = list(view.legal_actions)
        if len(legal) == 1 and not (self.sample and self.FORCED_MOVE_DRAWS):
            return legal[0]
        mask = np.zeros(NUM_ACTIONS, bool)
        mask[legal] = True
        z = self.policy.logits(view_vector(view, self.max_players), mask)
        if not self.sample:
            return int(np.argmax(z))
        p = np.exp(np.where(mask, z - z.max(), -np.inf))
        return int(self.rng.choices(range(NUM_ACTIONS), weights=(p / p.sum()).tolist())[0])


class CompactPolicy:
    """The forward pass of :class:`training.batch_ppo.CompactNet` in numpy."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        self.w = arrays
        self.meta = meta
        self.advice = bool(meta.get("expert_advice", False))
        self.layers = int(meta["layers"])
        self.num_actions = int(meta["num_actions"])
        self.pieces: tuple[str, ...] = tuple(meta.get("pieces", ()))
        self.offsets = np.arange(52) * NUM_CODES

    def logits(self, obs: np.ndarray, feats: np.ndarray, dense: np.ndarray,
               mask: np.ndarray, advice: np.ndarray | None = None) -> np.ndarray:
        """Masked logits; ``advice`` ([B] ints, the expert's move or -1) is read by a
        policy trained with ``expert_advice``."""
        w = self.w
        h = w["cards.weight"][obs[:, :52].astype(np.int64) + self.offsets].sum(axis=1)
        h = h + dense[:, :DENSE_SIZE] @ w["dense.weight"].T + w["dense.bias"]
        if self.pieces:  # a policy without pieces has no such weight: its sums as before
            h = h + dense[:, DENSE_SIZE:] @ w["piece_layer.weight"].T
        h = np.maximum(h, 0.0)
        for i in range(self.layers - 1):
            h = np.maximum(h @ w[f"trunk.{2 * i + 1}.weight"].T + w[f"trunk.{2 * i + 1}.bias"],
                           0.0)
        logits = h @ w["pi.weight"].T + w["pi.bias"]
        value = feats[:, 52] * POINT_SCALE
        logits[:, :52] += w["card_gain"] * feats[:, :52] * POINT_SCALE
        logits[:, DRAW_DISCARD] += w["draw_gain"] * (feats[:, 53] - feats[:, 52]) * POINT_SCALE
        logits[:, KNOCK] += w["knock_gain"] * (value - w["knock_at"] * POINT_SCALE)
        if self.advice and advice is not None:
            rows = np.flatnonzero(advice >= 0)
            logits[rows, advice[rows]] += w["advice_gain"][advice[rows]]
        missing = mask.shape[-1] - logits.shape[-1]
        if missing > 0:  # trained on a prefix of the action space: it never plays the rest
            logits = np.concatenate([logits, np.full((len(logits), missing), -1e9,
                                                     np.float32)], axis=1)
        return np.where(mask, logits, np.float32(-1e9))

    def play_logits(self, obs: np.ndarray, feats: np.ndarray, num_players: int,
                    start_lives: int, mask: np.ndarray, advice: np.ndarray | None = None,
                    rules: Rules | None = None) -> np.ndarray:
        """Masked logits of a table's compact observations (what a player calls; a
        :class:`CompactSet` answers the same call); ``rules``, the table's, locate the
        pieces of its observation (needed by a policy that reads pieces)."""
        dense = dense_inputs(obs, feats, num_players, start_lives, rules, self.pieces)
        return self.logits(obs, feats, dense, mask, advice)


class CompactSet:
    """Compact policies by the number of players still in: a policy-set manifest
    (:func:`agents.neural.policy_set.load_policy_set`) whose
    files are compact policies, played as ``compact:SET.yaml``.

    Why: the end of a game is a smaller game (``scat_env.active_view``), and it decides
    who wins: at ten players against ``expert``, handing the last two players' hands of
    ``scat_batch_7_10`` to the policy that plays two-player tables best raised its score on
    the same deals (``python -m training.batch_eval SET.yaml --against scat_batch_7_10``).
    A member for
    ``k`` players plays every position with ``k`` players in, reading the smaller game's
    observation (:func:`scat_env.batch.active.active_observations`); ``default`` plays the
    other positions as the whole table. A list of files is one member: their logits
    averaged. The scoring features are the table's: the smaller game's cards and counters
    are the same, and so are its features.
    """

    def __init__(self, members: dict[int, list[CompactPolicy]],
                 default: list[CompactPolicy] | None, name: str,
                 presets: tuple[str, ...] | None = None,
                 calls: CompactPolicy | CompactSet | None = None) -> None:
        if isinstance(calls, CompactSet) and calls.calls is not None:
            raise ValueError(f"{name}: its calls are made by a set that has calls of its "
                             "own; name that set's calls policy instead")
        every = [p for group in members.values() for p in group] + list(default or [])
        trained = {p.meta.get("rules") for p in every}
        if len(trained) > 1:
            raise ValueError(f"{name}: its members were trained on different rules "
                             f"({', '.join(sorted(map(str, trained)))})")
        self.members, self.default, self.name = members, default, name
        self.meta: dict[str, Any] = {"rules": trained.pop()}
        # A set with a member that learned some presets together (a family's member for
        # three players in, its heads-ups to the standard game's member) is that family's
        # set: it was put together for those presets, and is measured and seated there.
        # A manifest's ``presets`` says which they are where a member learned more (the
        # every-preset policy borrowed for the positions the family's member does not play).
        mix = list(presets or [r for p in every for r in p.meta.get("rules_mix") or []])
        if mix:
            self.meta["rules_mix"] = list(dict.fromkeys(mix))
        self.calls = calls
        self.advice = any(p.advice for p in every) or bool(calls is not None and calls.advice)
        # what every member reads: a piece one member lacks is one the set cannot see; a
        # call's piece is read by the policy that makes the calls
        self.pieces = tuple(p for p in PIECE_WIDTHS
                            if all(p in m.pieces for m in every)
                            or (calls is not None and p in CALL_PIECES and p in calls.pieces))

    def plays(self, num_players: int) -> bool:
        """Whether every position of a ``num_players`` table has a member (and the calls'
        policy plays that table too)."""
        if isinstance(self.calls, CompactSet) and not self.calls.plays(num_players):
            return False
        return self.default is not None or all(
            k in self.members for k in range(2, num_players + 1))

    def play_logits(self, obs: np.ndarray, feats: np.ndarray, num_players: int,
                    start_lives: int, mask: np.ndarray, advice: np.ndarray | None = None,
                    rules: Rules | None = None) -> np.ndarray:
        if self.calls is None:
            return self._members_logits(obs, feats, num_players, start_lives, mask, advice,
                                        rules)
        # a decision with a call on offer (HAMMER..PASS legal) goes to the calls' policy,
        # every other to the members; golf's slot moves lie past the calls and are no call
        call = mask[:, HAMMER:PLACE_SLOT].any(axis=1)
        out = np.empty(mask.shape, np.float32)
        for rows, logits in ((call, self.calls.play_logits), (~call, self._members_logits)):
            rows = np.flatnonzero(rows)
            if len(rows):
                adv = None if advice is None else advice[rows]
                out[rows] = logits(obs[rows], feats[rows], num_players, start_lives,
                                   mask[rows], adv, rules)
        return out

    def _members_logits(self, obs: np.ndarray, feats: np.ndarray, num_players: int,
                        start_lives: int, mask: np.ndarray, advice: np.ndarray | None,
                        rules: Rules | None) -> np.ndarray:
        """The members' logits: each row to the member for its players in."""
        n = num_players
        out = np.empty(mask.shape, np.float32)
        ins = players_in(obs, n)
        for k in np.unique(ins).tolist():
            rows = np.flatnonzero(ins == k)
            group = self.members.get(k)
            o, size = obs[rows], n
            if group is not None:
                o, size = active_observations(o, n, k, rules), k
            else:
                group = self.default
            if group is None:
                raise ValueError(f"{self.name} has no member for {k} players in and no "
                                 "default")
            adv = None if advice is None else advice[rows]
            total = group[0].play_logits(o, feats[rows], size, start_lives, mask[rows], adv,
                                         rules)
            for policy in group[1:]:
                total = total + policy.play_logits(o, feats[rows], size, start_lives,
                                                   mask[rows], adv, rules)
            out[rows] = total / len(group)
        return out


def policy_path(name: str) -> str:
    """A compact policy file's path: ``name`` itself when it is a file, else the shipped
    file it names (``scat_batch``), else ``name`` (which :func:`load_compact` refuses)."""
    if os.path.isfile(name):
        return name
    return shipped_path(name) or name


def load_compact_set(path: str, calls_of: str | None = None) -> CompactSet:
    """A compact set from its manifest (:class:`CompactSet`); one ``ValueError`` line for
    any problem, the manifest's or a member file's. ``calls_of``: the manifest whose calls
    this set makes, which refuses a ``calls`` of this set's own before loading it (two sets
    naming each other would never end)."""
    manifest = load_policy_set(path)
    if calls_of is not None and manifest.calls is not None:
        raise ValueError(f"compact set {calls_of!r}: its calls are made by {path!r}, a set "
                         "that has calls of its own; name that set's calls policy instead")
    members = {k: [_load_file(f) for f in files] for k, files in manifest.members.items()}
    default = None if manifest.default is None else [_load_file(f) for f in manifest.default]
    calls = None
    if manifest.calls is not None:
        calls = (load_compact_set(manifest.calls, calls_of=path)
                 if is_set_manifest(manifest.calls) else _load_file(manifest.calls))
    return CompactSet(members, default, f"compact set {path!r}", manifest.presets, calls)


def is_set_manifest(path: str) -> bool:
    """Whether ``path`` names a set manifest rather than a policy file (by its name)."""
    return path.endswith((".yaml", ".yml"))


@lru_cache(maxsize=16)
def _load_file(path: str) -> CompactPolicy:
    return CompactPolicy(*load_compact(path))


def load_compact_player(path: str) -> CompactPolicy | CompactSet:
    """What ``compact:PATH`` plays: a set manifest (``.yaml``) or a compact policy file."""
    return load_compact_set(path) if is_set_manifest(path) else _load_file(path)


class CompactAgent(Agent):
    """Plays a compact policy from the view: most likely legal move, or ``:sample``."""

    def __init__(self, policy: CompactPolicy | CompactSet, sample: bool = False,
                 seed: int | None = None, name: str = "compact") -> None:
        super().__init__(seed)
        self.policy = policy
        self.sample = sample
        self.name = name
        # The move the policy was trained to weigh: expert's, from the same view.
        self._expert = ExpertAgent() if policy.advice else None

    def check_table(self, num_players: int, rules: Rules) -> None:
        """Refuse rules whose actions or cards mean something else than in training (a
        policy plays the others through the table's own values), and observation pieces
        (calls, golf, points) it does not read: it never saw one."""
        from scat_env.batch import beyond_base_observation, uncovered

        trained = self.policy.meta.get("rules")
        why = uncovered(rules)
        if why is not None:
            raise ValueError(f"{self.name} does not play the {rules.name!r} rules: the "
                             f"batched engine does not play {why}")
        unread = [p for p in table_pieces(rules) if p not in self.policy.pieces]
        if unread:  # its observation has no word for them
            raise ValueError(f"{self.name} does not play the {rules.name!r} rules: it does "
                             f"not read their {', '.join(unread)} observation (they have "
                             f"{beyond_base_observation(rules)}); it was trained on "
                             f"{trained!r}")
        if ("rules" not in self.policy.pieces and trained in PRESETS
                and rules.knock_mode != Rules.preset(trained).knock_mode):
            raise ValueError(f"{self.name} was trained on {trained!r}, where a knock means "
                             "something else")
        if "rules" in self.policy.pieces:  # an option value it never read: refused now
            try:
                rules_vector(rules)
            except ValueError as exc:
                raise ValueError(f"{self.name} does not play the {rules.name!r} rules: "
                                 f"{exc}") from None
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"{self.name} plays {MIN_PLAYERS}..{MAX_PLAYERS} players")
        if isinstance(self.policy, CompactSet) and not self.policy.plays(num_players):
            raise ValueError(f"{self.name} has no default member and none for some table "
                             f"of {num_players} players or fewer")
        calls = getattr(self.policy, "calls", None)
        if calls is not None:  # the policy making the calls must play the table too
            CompactAgent(calls, name=f"{self.name}'s calls").check_table(num_players, rules)

    def trained_on(self, rules: Rules) -> bool:
        """Whether ``rules`` (by their options, not their name) are a preset this policy
        was trained on: one of its ``rules_mix``, or without a mix its ``rules`` (a mix's
        ``rules`` is only its in-training check's preset)."""
        meta = self.policy.meta
        names = meta.get("rules_mix") or [meta.get("rules")]
        return any(name in PRESETS and Rules.preset(name) == rules for name in names)

    def logits(self, view: PlayerView) -> np.ndarray:
        """The policy's masked logits [NUM_ACTIONS] for ``view`` (illegal moves at -1e9):
        what it plays, and what a hint ranks the legal moves by."""
        obs, feats = view_inputs(view)
        mask = np.zeros((1, NUM_ACTIONS), bool)
        mask[0, list(view.legal_actions)] = True
        advice = None
        if self._expert is not None:
            advice = np.array([self._expert.act(view)], np.int64)
        return self.policy.play_logits(obs, feats, view.num_players,
                                       view.rules.start_lives, mask, advice, view.rules)[0]

    def act(self, view: PlayerView) -> int:
        logits = self.logits(view)
        if self.sample:
            mask = np.zeros(NUM_ACTIONS, bool)
            mask[list(view.legal_actions)] = True
            z = logits - logits.max()
            p = np.exp(z) * mask
            p /= p.sum()
            return int(self.rng.choices(range(NUM_ACTIONS), weights=p.tolist())[0])
        return int(np.argmax(logits))

    def explain(self, view: PlayerView) -> str:
        """Its three likeliest legal moves with their probabilities, in words."""
        return likeliest_moves_text(self.name, view, self.logits(view))


def _make_compact(arg: str | None, seed: int | None) -> Agent:
    if not arg:
        raise ValueError("compact:PATH needs the path of a compact policy file "
                         "(compact:runs/default/policy.npz[:sample]) or a shipped name "
                         f"(compact:{SHIPPED_COMPACT})")
    path, _, option = arg.rpartition(":") if arg.endswith(":sample") else (arg, "", "")
    return CompactAgent(load_compact_player(policy_path(path)), sample=option == "sample",
                        seed=seed, name=f"compact:{arg.removesuffix(':sample')}")


register("compact", _make_compact,
         "a policy or set of the batched trainer: compact:PATH[.yaml][:sample]")
