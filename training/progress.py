"""The ``scat train`` progress bar: it follows whichever budget ends the run.

A run stops at ``total_samples`` or ``time_limit_s``, whichever comes first. A bar over samples
alone shows a 3-hour ETA for a 13-minute time-limited run and stops at 6%; this one shows the
larger of the two fractions spent, so it fills to 100% when the run ends either way, and its
ETA is the time left on the budget that binds. Lines logged while it is shown (evaluations)
are written above it, not glued to it.

Where stderr is not a terminal (a log file, ``nohup``, CI) a bar redrawn in place is one
unreadable line; :func:`budget_progress` gives such a run :class:`ProgressLines` instead, a
plain line every half minute with the same counts and the time left.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

#: The bar counts thousandths of the budget (tqdm needs a fixed total).
_TICKS = 1000


def budget_fraction(samples: int, total_samples: int, elapsed_s: float,
                    time_limit_s: float | None) -> float:
    """The share of the run's budget spent: samples or seconds, whichever is further on."""
    frac = samples / total_samples
    if time_limit_s:
        frac = max(frac, elapsed_s / time_limit_s)
    return min(frac, 1.0)


class BudgetBar:
    """A tqdm bar over the budget of a run (or nothing when ``enabled`` is false)."""

    def __init__(self, total_samples: int, time_limit_s: float | None, *, samples: int = 0,
                 elapsed_s: float = 0.0, enabled: bool = True) -> None:
        self.total_samples = total_samples
        self.time_limit_s = time_limit_s
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            start = int(_TICKS * budget_fraction(samples, total_samples, elapsed_s, time_limit_s))
            self._bar = tqdm(total=_TICKS, initial=start, dynamic_ncols=True, file=sys.stderr,
                             bar_format="{percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}")
            self.update(samples, elapsed_s)

    def update(self, samples: int, elapsed_s: float, **postfix: str) -> None:
        """Move the bar to ``samples`` / ``elapsed_s``; ``postfix`` items follow the counts."""
        if self._bar is None:
            return
        ticks = int(_TICKS * budget_fraction(samples, self.total_samples, elapsed_s,
                                             self.time_limit_s))
        limit = f" of {self.time_limit_s:,.0f}" if self.time_limit_s else ""
        self._bar.set_postfix_str(", ".join(
            [f"{samples:,} of {self.total_samples:,} samples", f"{elapsed_s:,.0f}{limit} s"]
            + [f"{k} {v}" for k, v in postfix.items()]), refresh=False)
        self._bar.update(max(ticks - self._bar.n, 0))

    def above(self, log: Callable[[str], Any]) -> Callable[[str], None]:
        """``log`` wrapped so its lines appear above the bar (the bar is redrawn below)."""
        if self._bar is None:
            return log

        def write(message: str) -> None:
            with self._bar.external_write_mode(file=sys.stderr):
                log(message)
        return write

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def time_left(samples: int, total_samples: int, elapsed_s: float,
              time_limit_s: float | None) -> tuple[float, str]:
    """(seconds left, the budget that ends the run) at the pace so far: the sample budget
    or the time limit, whichever comes first; ``inf`` seconds before the first sample."""
    by_samples = ((total_samples - samples) * elapsed_s / samples if samples > 0
                  else math.inf)
    if time_limit_s and time_limit_s - elapsed_s < by_samples:
        return max(time_limit_s - elapsed_s, 0.0), f"the time limit, {time_limit_s:,.0f} s"
    return max(by_samples, 0.0), f"{total_samples:,} samples"


def _minutes(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


class ProgressLines:
    """The progress of a run as plain lines, for a log that is not a terminal: one after
    the first update, then one every ``every_s`` seconds of the run."""

    def __init__(self, total_samples: int, time_limit_s: float | None,
                 log: Callable[[str], Any], every_s: float = 30.0) -> None:
        self.total_samples = total_samples
        self.time_limit_s = time_limit_s
        self.every_s = every_s
        self._log = log
        self._last = -math.inf

    def update(self, samples: int, elapsed_s: float, **postfix: str) -> None:
        """Log a line if ``every_s`` seconds have passed since the last one. A ``speed``
        item is left out: the line gives the pace over the whole run itself."""
        if elapsed_s - self._last < self.every_s:
            return
        postfix.pop("speed", None)
        self._last = elapsed_s
        left, ends = time_left(samples, self.total_samples, elapsed_s, self.time_limit_s)
        share = budget_fraction(samples, self.total_samples, elapsed_s, self.time_limit_s)
        rate = samples / elapsed_s if elapsed_s > 0 else 0.0
        self._log(", ".join(
            [f"progress {share:.0%}: {samples:,} samples in {elapsed_s:,.0f} s",
             f"{rate:,.0f} samples/s"] + [f"{k} {v}" for k, v in postfix.items()]
            + [f"about {_minutes(left)} left (the run ends at {ends})"]))

    def above(self, log: Callable[[str], Any]) -> Callable[[str], Any]:
        return log

    def close(self) -> None:
        pass


def budget_progress(total_samples: int, time_limit_s: float | None,
                    log: Callable[[str], Any], *, enabled: bool = True,
                    tty: bool | None = None) -> BudgetBar | ProgressLines:
    """The progress a run shows: the bar on a terminal (``tty``: whether stderr is one,
    asked when None), plain lines to ``log`` elsewhere, nothing when not ``enabled``."""
    if enabled and not (sys.stderr.isatty() if tty is None else tty):
        return ProgressLines(total_samples, time_limit_s, log)
    return BudgetBar(total_samples, time_limit_s, enabled=enabled)
