"""Fuzz every reader of outside input: a result or one clear line, in bounded time and memory.

Each test takes valid files of one kind (the shipped rules and training configs, the shipped
policy-set manifest, a small policy file, a finished and an unfinished saved game, a small
tournament's log) and changes them in one or two places (``tests/fuzz_inputs.py``: strange
values, dropped and added fields, text cut short, flipped bytes), then asks the reader for
it. The property: the reader returns, or raises ``ValueError`` with one line of at most
``MAX_ERROR`` characters, within ``SECONDS`` and ``EXTRA_MEMORY``; anything else (another
exception, a traceback-sized message, a memory or time overrun) is a failure that
hypothesis shrinks to the smallest such input.

The default run tries 100 to 300 inputs per reader (reproducible: ``derandomize``); the
``slow`` variants try about twenty times as many. ``pytest -q tests/test_fuzz_loaders.py``
prints how many inputs each reader was given and how many it accepted (tests/conftest.py).
"""

from __future__ import annotations

import json
import resource
import signal
import struct
import threading
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_inputs import (
    Timeout,
    bounded,
    check_error_line,
    damaged_bytes,
    fuzz_env,
    fuzz_settings,
    mutated_doc,
    result_or_one_line,
    run_cli,
    to_json,
    to_yaml,
)
from hang_limits import hang_limit
from hypothesis import given
from hypothesis import strategies as st

from agents.neural.policy_set import load_policy_set
from agents.registry import make_agent
from scat_cli.main import build_parser
from scat_cli.tournament import build_config
from scat_env import Rules
from scat_session.savegame import SavedGame
from training.config import load_config
from training.tournament import read_games

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore:Generating overly large repr")
RULES_FILES = sorted((ROOT / "configs" / "rules").glob("*.yaml"))
TRAIN_FILES = sorted((ROOT / "configs" / "train").glob("*.yaml"))


def test_the_limits_can_fail():
    """Guard for every test below: an input that takes too much memory or time fails."""
    with pytest.raises(MemoryError):
        bounded(lambda: bytearray(512 << 20), extra_memory=64 << 20)
    stop = threading.Event()
    try:
        with pytest.raises(Timeout):
            bounded(lambda: stop.wait(hang_limit(600)), seconds=0.2)
    finally:
        stop.set()


def test_the_time_limit_sends_no_signal_and_leaves_nothing_behind():
    """The time limit is a wait, not an alarm: an alarm's exception lands wherever the
    process happens to be (in the clean-up that lifts the memory limit, in the test runner)
    and can stop the test process with every test after it. No alarm is set while a load
    runs; after one that overran, the memory limit is lifted and the next load runs."""
    handler = signal.getsignal(signal.SIGALRM)
    during = bounded(lambda: (signal.getsignal(signal.SIGALRM),
                              signal.getitimer(signal.ITIMER_REAL)))
    assert during == (handler, (0.0, 0.0))
    before = resource.getrlimit(resource.RLIMIT_AS)
    stop = threading.Event()
    try:
        with pytest.raises(Timeout):
            bounded(lambda: stop.wait(hang_limit(600)), seconds=0.05)
    finally:
        stop.set()
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert isinstance(Timeout(), AssertionError)  # a failed property, its input reported
    assert bounded(lambda: 31) == 31
    with pytest.raises(ValueError, match="named"):
        bounded(lambda: int("named"))


def _yaml_docs(paths: list[Path]) -> list[Any]:
    return [yaml.safe_load(p.read_text()) for p in paths]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, fuzz_saves: dict[str, Path]) -> Any:
    """A scratch folder; the key of the shared saves and no colours for the whole module."""
    with pytest.MonkeyPatch.context() as mp:
        fuzz_env(mp, fuzz_saves["finished"].parent)
        yield tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def saves(folder: Path, fuzz_saves: dict[str, Path]) -> dict[str, Path]:
    return fuzz_saves


# -- YAML files: rules, training configs, policy-set manifests --------------------------------
RULES_DOCS = _yaml_docs(RULES_FILES) + [{"preset": "ride_the_bus", "pennies": 2},
                                         {"preset": "standard"}]
TRAIN_DOCS = _yaml_docs(TRAIN_FILES)
SET_DOCS = [yaml.safe_load((ROOT / "policies" / "scat_batch_set.yaml").read_text()),
            {"format": "scat-policy-set", "policies": {"default": "a.npz"}, "symmetry": 8}]


@st.composite
def yaml_text(draw: st.DrawFn, docs: list[Any]) -> bytes:
    """A valid document changed in one or two places, written as YAML (block or flow);
    sometimes damaged again as bytes."""
    text = to_yaml(draw(mutated_doc(docs)), block=draw(st.booleans())).encode("utf-8", "replace")
    if draw(st.integers(0, 3)) == 0:
        text = draw(damaged_bytes(text))
    return text


def _fuzz_yaml(folder: Path, docs: list[Any], what: str, load: Any, examples: int) -> None:
    path = folder / f"{what}.yaml"

    @fuzz_settings(examples, examples)
    @given(yaml_text(docs))
    def check(text: bytes) -> None:
        path.write_bytes(text)
        result_or_one_line(what, lambda: load(path))

    check()


def _rules(path: Path) -> Rules:
    return Rules.from_yaml(path)


def _train(path: Path) -> Any:
    return load_config(path)


def _policy_set(path: Path) -> Any:
    return load_policy_set(str(path))


@pytest.mark.parametrize("what, docs, load", [
    ("rules file", RULES_DOCS, _rules),
    ("training config", TRAIN_DOCS, _train),
    ("policy-set manifest", SET_DOCS, _policy_set),
], ids=["rules", "training_config", "policy_set"])
def test_yaml_readers_answer_any_file_with_a_result_or_one_line(folder, what, docs, load):
    _fuzz_yaml(folder, docs, what, load, 100)


@pytest.mark.slow
@pytest.mark.parametrize("what, docs, load", [
    ("rules file", RULES_DOCS, _rules),
    ("training config", TRAIN_DOCS, _train),
    ("policy-set manifest", SET_DOCS, _policy_set),
], ids=["rules", "training_config", "policy_set"])
def test_yaml_readers_fuzzed_long(folder, what, docs, load):
    _fuzz_yaml(folder, docs, what, load, 3000)


# Inputs the fuzzer found, kept as plain cases so they stay checked whatever it draws next.
@pytest.mark.parametrize("text", [
    "1: 2\nfoo: 3\n",                 # a number and a name among the unknown keys
    "null: 1\npennies: 2\n",          # a null key
    "pennies: .nan\n",
    "preset: [a, b]\n",
    "name: " + "x" * 20000 + "\npennies: 99\n",
])
def test_odd_keys_and_values_in_a_rules_file_are_one_line(tmp_path, text):
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    result_or_one_line("rules file (kept cases)", lambda: Rules.from_yaml(path))


@pytest.mark.parametrize("text, message", [
    ("1: 2\n", "unknown field(s)"),
    ("null: 1\nlr: 0.1\n", "unknown field(s)"),
    ("trainer: sb3\nopponents: {greedy: .nan}\n", "opponents needs finite weights"),
    ("trainer: sb3\nopponents: {greedy: .inf}\n", "opponents needs finite weights"),
    ("trainer: sb3\nopponents: {greedy: 1" + "0" * 400 + ", random: 0.5}\n",
     "opponents needs finite weights"),
    ("trainer: batch\nopponents: {greedy: 1" + "0" * 400 + ", random: 0.5}\n",
     "opponents needs finite weights"),
    ("trainer: sb3\nopponents: {1: 1.0}\n", "opponents must map agent specs"),
    ("hidden: 100000000\n", "hidden must be at most 4,096"),
    ("layers: 1000\n", "layers must be at most 16"),
    ("trainer: sb3\nmax_players: 1000000\n", "max_players must be a whole number"),
    ("rollout_steps: 100000000000\n", "rollout_steps must be at most"),
    ("envs_per_table: 100000000\n", "envs_per_table must be at most"),
    ("seed: -1\n", "seed must be a whole number from 0"),
    ("seed: 100000000000000000000000\n", "seed must be a whole number from 0"),
    ("trainer: sb3\neval_players: [2, 9]\n", "eval_players must be ints in 2..max_players"),
    ("eval_players: [2, 99]\n", "eval_players must be a non-empty list of ints in 2..10"),
    ("eval_opponents: ['']\n", "eval_opponents must be a list of agent specs"),
    ("eval_games: -1\n", "eval_games must be a whole number from 0"),
    ("final_eval_workers: 0\n", "final_eval_workers must be a positive int"),
    ("name: ../../elsewhere\n", "field 'name' must be a plain folder name"),
    ("name: \"\\e[2J\"\n", "field 'name' must be a plain folder name"),
    ("trainer: [native]\n", "unknown trainer"),
    ("trainer: native\n", "trainer 'native' was retired; use trainer: batch"),
    ("trainer: sb3\nhidden: 100000\n", "hidden must be at most 4,096"),
    ("hidden: 4096\nlayers: 3\n", "a policy holds at most 33,554,432 parameters"),
    ("trainer: batch\nhidden: 2048\nlayers: 9\n", "a policy holds at most"),
    ("trainer: sb3\nopponents: {greedy: -1}\n", "opponents needs finite weights"),
])
def test_training_config_values_no_run_could_use_are_refused(tmp_path, text, message):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        load_config(path)
    check_error_line(str(err.value), "training config")
    assert message in str(err.value)


# -- policy files (.npz) ----------------------------------------------------------------------


def npy_bytes(header: str, payload: bytes = b"") -> bytes:
    """A ``.npy`` member with any header text (version 1.0), so a test can claim any shape
    or dtype without allocating it."""
    head = header.encode("latin1")
    pad = (64 - (10 + len(head) + 1) % 64) % 64
    head += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + payload


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write_zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> None:
    with zipfile.ZipFile(path, "w", method) as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def _metadata_member(meta_text: bytes) -> bytes:
    return npy_bytes(f"{{'descr': '|u1', 'fortran_order': False, 'shape': ({len(meta_text)},), }}",
                     meta_text)


SHAPES = st.one_of(
    st.lists(st.integers(0, 70), max_size=3).map(tuple),
    st.sampled_from([(10**9,), (10**9, 10**9), (2**62,), (2**40, 2**40), (-1,), (0,)]),
)
DTYPES = st.sampled_from(["<f4", ">f4", "<f8", "|u1", "<i8", "|O", "<U3", "|b1", "<f2"])




class open_bytes:
    """The bytes of a zip holding ``members`` (a context manager for symmetry of use)."""

    def __init__(self, members: dict[str, bytes]) -> None:
        import io

        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            for name, blob in members.items():
                zf.writestr(name, blob)
        self.data = buffer.getvalue()

    def __enter__(self) -> bytes:
        return self.data

    def __exit__(self, *exc: Any) -> None:
        return None








def _set_method(data: bytes, method: int) -> bytes:
    """``data`` (a zip) with every member's compression method field set to ``method``."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        i = out.find(signature)
        while i >= 0:
            out[i + offset:i + offset + 2] = struct.pack("<H", method)
            i = out.find(signature, i + 4)
    return bytes(out)


def _set_encrypted(data: bytes) -> bytes:
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = out.find(signature)
        while i >= 0:
            out[i + offset] |= 1
            i = out.find(signature, i + 4)
    return bytes(out)


def _corrupt_deflate(members: dict[str, bytes]) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    data = bytearray(buffer.getvalue())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).infolist()[0]
    start = info.header_offset + 30 + len(info.filename.encode()) + 5
    for k in range(24):
        data[start + k] ^= 0x55
    return bytes(data)










# -- agent specs ------------------------------------------------------------------------------
VALID_SPECS = ["random", "greedy", "threshold", "threshold:25", "threshold:never", "expert",
               "expert:beta=0.4", "expert:beta=0.4,risk=0.6", "ismcts:20",
               "compact:scat_batch_set", "compact:scat_batch_set:sample"]
SPEC_PARTS = ["", ":", "::", ",", "=", "nan", "inf", "-inf", "1e999", "0", "-1", "100001",
              "9" * 5000, "²", "１２", "\x00", "\x1b[2J", "[bold]", " ", "sym", "sym=0",
              "sym=577", "sample", "argmax", "full", "beta=", "=1", "/dev/zero", "/tmp",
              "../../etc/passwd", ".yaml", ".npz", ".zip", "x" * 3000, "é", "\n"]


@st.composite
def agent_specs(draw: st.DrawFn) -> str:
    """A valid spec with a part inserted, replaced or appended."""
    spec = draw(st.sampled_from(VALID_SPECS))
    part = draw(st.one_of(st.sampled_from(SPEC_PARTS), st.text(max_size=8)))
    how = draw(st.sampled_from(["append", "insert", "replace_arg", "replace_all"]))
    if how == "append":
        return spec + part
    if how == "insert":
        at = draw(st.integers(0, len(spec)))
        return spec[:at] + part + spec[at:]
    if how == "replace_arg":
        return spec.partition(":")[0] + ":" + part
    return part


def _fuzz_specs(examples: int) -> None:
    @fuzz_settings(examples, examples)
    @given(agent_specs(), st.one_of(st.none(), st.integers(0, 2**63)))
    def check(spec: str, seed: int | None) -> None:
        result_or_one_line("agent spec", lambda: make_agent(spec, seed=seed))

    check()


def test_agent_specs_answer_any_string_with_an_agent_or_one_line():
    _fuzz_specs(300)


@pytest.mark.slow
def test_agent_specs_fuzzed_long():
    _fuzz_specs(5000)




# -- saved games and replays --------------------------------------------------------------------
@st.composite
def save_text(draw: st.DrawFn, docs: list[Any]) -> bytes:
    """A saved game changed in one or two places (written back as JSON), or its bytes damaged."""
    if draw(st.integers(0, 3)) == 0:
        return draw(damaged_bytes(to_json(draw(st.sampled_from(docs))).encode()))
    return to_json(draw(mutated_doc(docs))).encode("utf-8", "replace")


def _load_save(path: Path) -> Any:
    game = SavedGame.load(path)
    return game.resimulate()


def _fuzz_saves(folder: Path, saves: dict[str, Path], examples: int) -> None:
    docs = [json.loads(p.read_text()) for p in saves.values()]
    path = folder / "fuzzed_save.json"

    @fuzz_settings(examples, examples)
    @given(save_text(docs))
    def check(text: bytes) -> None:
        path.write_bytes(text)
        result_or_one_line("saved game", lambda: _load_save(path))

    check()


def test_saved_games_answer_any_content_with_a_game_or_one_line(folder, saves):
    _fuzz_saves(folder, saves, 200)


@pytest.mark.slow
def test_saved_games_fuzzed_long(folder, saves):
    _fuzz_saves(folder, saves, 4000)


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"format": "scat-replay", "version": 3, "num_players": ' + "9" * 5000 + "}",
    '{"format": "scat-replay", "version": 3, "num_players": "' + "x" * 100_000 + '"}',
    '{"format": "scat-replay", "version": 2, "status": "' + "y" * 100_000 + '"}',
])
def test_hostile_saves_are_one_line(tmp_path, text):
    path = tmp_path / "hostile.json"
    path.write_text(text)
    assert result_or_one_line("saved game (kept cases)", lambda: _load_save(path)) is None


# -- tournament logs ------------------------------------------------------------------------------
TOURNAMENT = ["tournament", "--agents", "random,greedy", "--games", "8", "--workers", "1",
              "--quiet", "--no-plots"]


@pytest.fixture(scope="module")
def tournament(folder: Path) -> Path:
    """A finished small tournament's folder (``games.jsonl``, ``config.json``...)."""
    out = folder / "tournament"
    status, _, err = run_cli([*TOURNAMENT, "--out", str(out)])
    assert status == 0, err
    return out


@st.composite
def log_text(draw: st.DrawFn, lines: list[str]) -> bytes:
    """The log with one record changed in one or two places, one line dropped or doubled,
    or its bytes damaged."""
    how = draw(st.sampled_from(["record", "record", "record", "lines", "bytes"]))
    if how == "bytes":
        return draw(damaged_bytes("".join(lines).encode()))
    out = list(lines)
    i = draw(st.integers(0, len(out) - 1))
    if how == "record":
        out[i] = to_json(draw(mutated_doc([json.loads(out[i])]))) + "\n"
    elif draw(st.booleans()):
        del out[i]
    else:
        out.insert(draw(st.integers(0, len(out))), out[i])
    return "".join(out).encode("utf-8", "replace")


def _fuzz_logs(folder: Path, tournament: Path, examples: int) -> None:
    config = build_config(build_parser().parse_args([*TOURNAMENT, "--out", str(tournament)]))
    lines = (tournament / "games.jsonl").read_text().splitlines(keepends=True)
    path = folder / "games.jsonl"

    @fuzz_settings(examples, examples)
    @given(log_text(lines))
    def check(text: bytes) -> None:
        path.write_bytes(text)
        result_or_one_line("tournament log", lambda: read_games(path, config=config))

    check()


def test_tournament_logs_answer_any_content_with_games_or_one_line(folder, tournament):
    _fuzz_logs(folder, tournament, 200)


@pytest.mark.slow
def test_tournament_logs_fuzzed_long(folder, tournament):
    _fuzz_logs(folder, tournament, 4000)


def _drop_first_dealer(rec: dict[str, Any]) -> None:
    del rec["hands"][0]["dealer"]


def _first_hand_a_list(rec: dict[str, Any]) -> None:
    rec["hands"][0] = list(rec["hands"][0])


def _hands_of_strings(rec: dict[str, Any]) -> None:
    rec["hands"] = ["x"] * 3


# Records the fuzzer found (the slow tier first), kept as plain cases.
RECORD_CASES = {"first hand without a dealer": _drop_first_dealer,
                "first hand a list": _first_hand_a_list,
                "hands of strings": _hands_of_strings}


@pytest.mark.parametrize("case", sorted(RECORD_CASES))
def test_odd_tournament_records_are_one_line(folder, tournament, case):
    config = build_config(build_parser().parse_args([*TOURNAMENT, "--out", str(tournament)]))
    lines = (tournament / "games.jsonl").read_text().splitlines(keepends=True)
    rec = json.loads(lines[0])
    RECORD_CASES[case](rec)
    path = folder / "kept_games.jsonl"
    path.write_text(json.dumps(rec) + "\n" + "".join(lines[1:]))
    assert result_or_one_line("tournament log (kept cases)",
                              lambda: read_games(path, config=config)) is None




@pytest.mark.parametrize("spec", ["x" * 100_000, "threshold:" + "x" * 100_000,
                                  "expert:" + "beta=1," * 20_000, "ismcts:" + "9" * 5000,
                                  "compact:" + "a/" * 30_000 + "p.npz",
                                  "ppo:" + "a/" * 30_000 + "p.npz"])
def test_a_long_agent_spec_gives_a_short_error(spec):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    check_error_line(str(err.value), "agent spec")


@pytest.mark.parametrize("case", ["encrypted members", "unsupported compression method",
                                  "truncated", "a flipped byte"])
def test_damaged_torch_files_are_one_line(tmp_path, case):
    """Torch files (SB3's weights, RLlib's export) go through ``safe_torch_load``, and an
    old ``.pt`` policy given to ``compact:`` is named as retired: a damaged zip is one line
    either way."""
    torch = pytest.importorskip("torch")
    from agents.compact import load_compact
    from agents.neural.policy_file import safe_torch_load

    good = tmp_path / "old.pt"
    torch.save({"kind": "scat-policy", "format_version": 1, "w": torch.zeros(64)}, good)
    data = good.read_bytes()
    damaged = {"encrypted members": lambda: _set_encrypted(data),
               "unsupported compression method": lambda: _set_method(data, 99),
               "truncated": lambda: data[: len(data) // 2],
               "a flipped byte": lambda: data[:200] + bytes([data[200] ^ 0xFF]) + data[201:]}
    path = tmp_path / "bad.pt"
    path.write_bytes(damaged[case]())
    assert result_or_one_line(f"torch file ({case})",
                              lambda: safe_torch_load(path, "'bad.pt'")) is None
    assert result_or_one_line(f"compact: torch file ({case})",
                              lambda: load_compact(path)) is None
