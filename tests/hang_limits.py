"""Time limits that guard the tests against a hang, never against a slow machine.

The suite runs on busy 2-core laptops and CI machines, beside other work (a ``scat train``, a
second test run), where a step that takes a second on an idle machine can take twenty. A
limit on a wait (a subprocess, a terminal prompt, a page, a fuzzed input) is there to turn a
hang into a failure instead of a stuck run, so it is minutes, not "a little more than it
usually takes"; what a test measures is checked apart from it, or in a benchmark
(``pytest -m slow``).

A wait inside the test process itself (a pool of workers, a thread) has no ``timeout=`` to
pass: :func:`hang_guard` puts one around the whole block.

``SCAT_TEST_TIMEOUT_SCALE`` multiplies every limit (e.g. ``3`` on an emulated or very slow
machine, ``0.5`` to find a hang faster); it must be a positive number.
"""

from __future__ import annotations

import faulthandler
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

SCALE_VARIABLE = "SCAT_TEST_TIMEOUT_SCALE"


def timeout_scale() -> float:
    """The factor of :data:`SCALE_VARIABLE` (1 when unset); a bad value fails loudly, since
    a mistyped scale would otherwise shorten or drop every guard unseen."""
    raw = os.environ.get(SCALE_VARIABLE, "").strip()
    if not raw:
        return 1.0
    try:
        scale = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_VARIABLE} must be a positive number, got {raw!r}") from None
    if not scale > 0 or scale == float("inf"):
        raise ValueError(f"{SCALE_VARIABLE} must be a positive number, got {raw!r}")
    return scale


def hang_limit(seconds: float) -> float:
    """``seconds`` (a generous limit for a wait that only a hang would reach) times the
    machine's scale."""
    return seconds * timeout_scale()


@contextmanager
def hang_guard(seconds: float, what: str) -> Iterator[None]:
    """Fail with ``TimeoutError`` (and every thread's stack on stderr, to show where it
    hung) when the block is still running after ``hang_limit(seconds)``, instead of leaving
    the test run stuck. For the main thread of a POSIX process (it uses ``SIGALRM``, which
    also interrupts a blocked join or lock); elsewhere the block runs unguarded."""
    if not hasattr(signal, "setitimer"):  # pragma: no cover - not POSIX
        yield
        return
    limit = hang_limit(seconds)

    def expired(signum: int, frame: object) -> None:
        faulthandler.dump_traceback(all_threads=True)
        raise TimeoutError(f"{what} still running after {limit:.0f} s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
