"""What the fuzz tests share: strange values, structured mutations of valid files, limits.

The fuzz tests (``tests/test_fuzz_loaders.py``, ``tests/test_fuzz_cli.py``) feed every
reader of outside input (rules and training YAML, policy files and policy-set manifests,
saves and replays, tournament logs, agent specs) with *valid files changed in one place*:
one field set to a strange value (a wrong type, a huge number, nan, deep nesting, control
characters, markup, a very long string), a field dropped or added, the text cut short, a
byte flipped. Random bytes alone would be refused by the first parser and test nothing
behind it; a valid file changed once reaches every check after the parser.

The property is always the same: the reader returns a result or raises its documented
error (``ValueError``) with one line of bounded length, and it does so within a time and
memory limit (:func:`bounded`), so a file that asks for gigabytes or never ends fails the
test instead of the machine.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import resource
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import yaml
from hang_limits import hang_limit
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: Longest error line accepted: the loaders keep messages to 300 characters
#: (scat_env.yamlfile.MAX_MESSAGE); a file path in front of it may add a little.
MAX_ERROR = 400
#: Time and memory one input may take. A real file of any kind loads in well under a second
#: on an idle machine; the time is a guard against a reader that never ends, generous so that
#: a loaded machine never trips it (``tests/hang_limits.py``).
SECONDS = 120.0
EXTRA_MEMORY = 1 << 30

T = TypeVar("T")

#: Inputs tried per reader in this run (printed at the end of the run by conftest).
TRIED: collections.Counter[str] = collections.Counter()
#: Of those, how many were accepted (the rest were refused with one clear line).
ACCEPTED: collections.Counter[str] = collections.Counter()


def fuzz_settings(examples: int, slow_examples: int, slow: bool = False) -> settings:
    """Reproducible settings: the same examples on every run (a landing must not depend
    on luck), ``slow`` for the long variant in the slow tier."""
    return settings(
        max_examples=slow_examples if slow else examples,
        derandomize=True,
        database=None,
        deadline=None,  # the hard limit is bounded(); hypothesis' deadline flakes under load
        suppress_health_check=list(HealthCheck),
    )


class Timeout(AssertionError):
    """An input took longer than :data:`SECONDS`: the property fails for it (and hypothesis
    names the input). Raised in the test's own thread, never inside the reader, so a
    reader's ``except Exception`` cannot turn it into an ordinary refusal."""


def _virtual_memory() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def bounded(load: Callable[[], T], seconds: float = SECONDS,
            extra_memory: int = EXTRA_MEMORY) -> T:
    """``load()`` with at most ``extra_memory`` more address space than now, waited for at
    most ``seconds`` (times ``SCAT_TEST_TIMEOUT_SCALE``): a reader that allocates past the
    limit gets ``MemoryError``, one that runs past the time :class:`Timeout`, and both fail
    the property. Whatever ``load`` raises is raised here.

    ``load`` runs in a thread the test waits for, not under an alarm signal: an exception
    raised by a signal lands wherever the process happens to be: between two lines of the
    clean-up that lifts the memory limit (leaving it in force for every later test) or
    inside the test runner, which then stops the whole test process (under pytest-xdist an
    INTERNALERROR, and the worker's remaining tests are never run). A load that never ends
    is left running in its daemon thread, and only its test fails.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _virtual_memory() + extra_memory
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = load()
        except BaseException as exc:  # handed to the test's thread, raised there
            outcome["error"] = exc

    worker = threading.Thread(target=run, name="bounded-load", daemon=True)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        worker.start()
        worker.join(hang_limit(seconds))
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    if worker.is_alive():
        raise Timeout(f"an input took more than {hang_limit(seconds):g} s")
    if "error" in outcome:
        raise outcome.pop("error")
    return outcome["result"]


def check_error_line(message: str, what: str) -> None:
    """The refusal is one clear line: not empty, no line break, bounded."""
    assert message.strip(), f"{what}: an empty error message"
    assert "\n" not in message and "\r" not in message, f"{what}: a multi-line error: {message[:500]!r}"
    assert len(message) <= MAX_ERROR, f"{what}: a {len(message)}-character error: {message[:500]!r}..."
    assert "Traceback" not in message, f"{what}: a traceback in the message: {message[:500]!r}"


def result_or_one_line(what: str, load: Callable[[], Any],
                       errors: tuple[type[BaseException], ...] = (ValueError,)) -> Any:
    """``load()`` within :func:`bounded`; its result, or None when it refused the input
    with one of ``errors`` in one clear line. Anything else (another exception, a memory
    or time overrun) propagates and fails the test."""
    TRIED[what] += 1
    try:
        result = bounded(load)
    except errors as exc:
        check_error_line(str(exc), what)
        return None
    ACCEPTED[what] += 1
    return result


# -- strange values ------------------------------------------------------------------------
class Deep:
    """A list nested ``depth`` deep, written out as text (a serializer would recurse)."""

    def __init__(self, depth: int) -> None:
        self.depth = depth

    @property
    def marker(self) -> str:
        return f"@@deep{self.depth}@@"

    @property
    def text(self) -> str:
        return "[" * self.depth + "]" * self.depth


ODD_TEXT = [
    "", " ", "\x00", "\x1b[2J\x1b[H", "\x1b]0;owned\x07", "[bold red]x[/]", "[/]", "\r\rX",
    "\u202eevil", "é", "🂡", "NaN", "null", "~", "../../../etc/passwd", "/dev/zero", "/tmp",
    "x" * 5000, "1e999", "-0", "0x1F", "²", "１２", "\t\n", "'\"", "%s%n", "{0}", "!!python/object",
]
ODD_NUMBERS = [
    0, -1, 1, 2, 10, 11, 31, 2**31, 2**63, 2**64 + 1, -(2**63), 10**30, -(10**30), 10**400,
    0.5, -0.0, 1e-300, 1e308, float("nan"), float("inf"), float("-inf"), True, False,
]


def strange_values() -> st.SearchStrategy[Any]:
    """Values a tampered or broken file may hold where a field is expected."""
    scalars = st.one_of(
        st.none(), st.sampled_from(ODD_NUMBERS), st.sampled_from(ODD_TEXT),
        st.integers(), st.floats(), st.text(max_size=20),
    )
    return st.one_of(
        scalars,
        st.lists(scalars, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.integers(-3, 12)), scalars, max_size=3),
        st.integers(1, 1500).map(Deep),  # past the parsers' recursion limit (1000)
        st.integers(0, 500).map(lambda n: list(range(n))),  # a long list
    )


# -- structured mutations ---------------------------------------------------------------------
def _paths(doc: Any, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    """Every place in ``doc`` a value sits (dict keys and list indices), the root first."""
    out = [prefix]
    if depth > 6:
        return out
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k), depth + 1)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:12]):
            out += _paths(v, (*prefix, i), depth + 1)
    return out


def _copy(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _copy(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_copy(v) for v in doc]
    return doc


def _set(doc: Any, path: tuple, value: Any, how: str) -> Any:
    """``doc`` with the value at ``path`` replaced (``how='set'``) or removed (``'drop'``),
    or a key added beside it (``'add'``)."""
    if not path:
        return value if how == "set" else doc
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "set":
        parent[last] = value
    elif how == "drop":
        del parent[last]
    elif isinstance(parent, dict):
        parent[value if isinstance(value, (str, int)) and not isinstance(value, bool)
               else "unexpected_field"] = value
    else:
        parent.append(value)
    return doc


@st.composite
def mutated_doc(draw: st.DrawFn, docs: list[Any]) -> Any:
    """One of ``docs`` (valid documents) with one or two places changed."""
    doc = _copy(draw(st.sampled_from(docs)))
    for _ in range(draw(st.integers(1, 2))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(["set", "set", "set", "drop", "add"]))
        doc = _set(doc, path, draw(strange_values()), how)
    return doc


def _default(obj: Any) -> Any:
    if isinstance(obj, Deep):
        return obj.marker
    raise TypeError(type(obj).__name__)


def _undeep(text: str, doc_text_markers: list[Deep]) -> str:
    for deep in doc_text_markers:
        for quoted in (json.dumps(deep.marker), f"'{deep.marker}'", deep.marker):
            text = text.replace(quoted, deep.text)
    return text


def _deeps(doc: Any) -> list[Deep]:
    if isinstance(doc, Deep):
        return [doc]
    if isinstance(doc, dict):
        return [d for v in doc.values() for d in _deeps(v)]
    if isinstance(doc, list):
        return [d for v in doc for d in _deeps(v)]
    return []


def to_json(doc: Any) -> str:
    """``doc`` as JSON (nan and inf as JSON's readers write them; :class:`Deep` as text)."""
    return _undeep(json.dumps(doc, default=_default, ensure_ascii=False), _deeps(doc))


def to_yaml(doc: Any, block: bool) -> str:
    """``doc`` as YAML, block style or flow style (JSON is YAML's flow style)."""
    deeps = _deeps(doc)
    if not block:
        return to_json(doc)
    clean = _replace_deep(doc)
    try:
        text = yaml.safe_dump(clean, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError, ValueError):
        return to_json(doc)
    return _undeep(text, deeps)


def _replace_deep(doc: Any) -> Any:
    if isinstance(doc, Deep):
        return doc.marker
    if isinstance(doc, dict):
        return {k: _replace_deep(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_replace_deep(v) for v in doc]
    return doc


@st.composite
def damaged_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` cut short, with a byte flipped, or with a few odd bytes inserted."""
    how = draw(st.sampled_from(["truncate", "flip", "insert", "flip_many"]))
    if not data:
        return draw(st.binary(max_size=64))
    at = draw(st.integers(0, len(data) - 1))
    if how == "truncate":
        return data[:at]
    if how == "flip":
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
    if how == "flip_many":
        out = bytearray(data)
        for _ in range(draw(st.integers(2, 16))):
            i = draw(st.integers(0, len(out) - 1))
            out[i] ^= draw(st.integers(1, 255))
        return bytes(out)
    odd = draw(st.sampled_from([b"\x00", b"\xff\xfe", b"\x1b[2J", b"[[[[[[", b"{", b"\n\n",
                                b"*a", b"&a ", b"!!python/object:os.system", b"\xe2\x80\xae"]))
    return data[:at] + odd + data[at:]


# -- the command line, in this process ---------------------------------------------------------
def run_cli(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    """``scat ARGV`` in this process (a subprocess costs ~0.5 s of start-up): its exit
    status, stdout and stderr, with ``stdin`` as its input (empty: input closed). An
    exception escaping :func:`scat_cli.main.main` propagates: that is the traceback a
    person would have seen."""
    import io
    import sys

    from scat_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:  # argparse's own errors exit 2
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = old_stdin
    return status, out.getvalue(), err.getvalue()


def check_cli_refusal(status: int, stderr: str, what: str) -> None:
    """A command that did not succeed ended as the CLI promises: exit status 2 and one
    bounded line on stderr."""
    assert status in (0, 2), f"{what}: exit status {status}; stderr {stderr[-500:]!r}"
    if status == 2:
        lines = stderr.strip("\n").split("\n")
        assert len(lines) == 1, f"{what}: {len(lines)} lines on stderr: {stderr[-800:]!r}"
        check_error_line(lines[0], what)


def fuzz_env(mp: Any, folder: Any) -> None:
    """Point the key of sealed saves and the replay folder into ``folder``; no colours."""
    mp.setenv("SCAT_HOME", str(folder / "home"))
    mp.setenv("SCAT_REPLAY_DIR", str(folder / "replays"))
    mp.setenv("NO_COLOR", "1")


def make_saves(folder: Any) -> dict[str, Any]:
    """Saves written by ``scat play`` itself (menu option 1 at every turn): a finished
    standard game, a finished Ride the Bus game, and a game in progress (sealed: its seeds
    hidden from the player, under the key in ``folder / "home"``, see :func:`fuzz_env`)."""
    import pytest

    saves = {}
    with pytest.MonkeyPatch.context() as mp:
        fuzz_env(mp, folder)
        for name, extra, turns in [("finished", [], 3000),
                                   ("finished_bus", ["--rules", "ride_the_bus"], 3000),
                                   ("in_progress", [], 6)]:
            path = folder / f"{name}.json"
            status, _, err = run_cli(["play", "--opponents", "random", "--seed", "5", "--fast",
                                      "--no-color", "--save", str(path), *extra], "1\n" * turns)
            assert status == 0 and path.is_file(), err
            saves[name] = path
    return saves
