"""Time limits that guard the tests against a hang, never against a slow machine.

The suite runs on busy 2-core laptops and CI machines, beside other work (a ``scat train``, a
second test run), where a step that takes a second on an idle machine can take twenty. A
limit on a wait (a subprocess, a terminal prompt, a page, a fuzzed input) is there to turn a
hang into a failure instead of a stuck run, so it is minutes, not "a little more than it
usually takes"; what a test measures is checked apart from it, or in a benchmark
(``pytest -m slow``).

``SCAT_TEST_TIMEOUT_SCALE`` multiplies every limit (e.g. ``3`` on an emulated or very slow
machine, ``0.5`` to find a hang faster); it must be a positive number.
"""

from __future__ import annotations

import os

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
