"""``scat play`` in a real 80x24 terminal (tmux), played the way a person plays it: the
``?`` help is wholly on screen with the prompt under it, and a complaint about a typed line
takes one row, under several presets.

Each game runs on a tmux server of its own (its own socket), so tests running side by side,
and a person's own tmux, never see each other's windows.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hang_limits import hang_limit

REPO = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 80, 24
#: Seconds to wait for the screen to show something: generous, the machine may be busy.
PATIENCE = hang_limit(180)

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Screen:
    """One ``scat play`` in a detached tmux session of WIDTH x HEIGHT."""

    def __init__(self, tmp_path: Path, args: list[str]) -> None:
        self.socket = str(tmp_path / "tmux.sock")
        env = {"PYTHONPATH": str(REPO), "HOME": str(tmp_path), "SCAT_HOME": str(tmp_path / "s"),
               "SCAT_REPLAY_DIR": str(tmp_path / "replays"), "LANG": "C.UTF-8",
               "TERM": "xterm-256color", "PYTHONIOENCODING": "utf-8"}
        command = " ".join(["env", "-i", *(f"{k}={v}" for k, v in env.items()),
                            sys.executable, "-m", "scat_cli", "play", *args])
        self._tmux("new-session", "-d", "-s", "game", "-x", str(WIDTH), "-y", str(HEIGHT),
                   command)
        self._tmux("set-option", "-t", "game", "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.socket, *args], check=True,
                              capture_output=True, text=True, timeout=hang_limit(60)).stdout

    def rows(self) -> list[str]:
        """The visible screen, one string per row (exactly what a person sees)."""
        return self._tmux("capture-pane", "-p", "-t", "game").split("\n")[:HEIGHT]

    def lines(self) -> list[str]:
        """Everything printed so far, rows a long line wrapped onto joined back into it."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "game").split("\n")

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "game", "-l", text)
        self._tmux("send-keys", "-t", "game", "Enter")

    def wait_for_prompt(self, after: int = 0) -> list[str]:
        """The screen once the "> " prompt is the last thing on it and more than ``after``
        prompts have been shown since the start."""
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            lines = [line for line in self.lines() if line.strip()]
            prompts = sum(1 for line in lines if line.startswith(">"))
            if lines and lines[-1].rstrip() == ">" and prompts > after:
                return self.rows()
            time.sleep(0.2)
        raise AssertionError("no prompt came:\n" + "\n".join(self.rows()))

    def prompts(self) -> int:
        return sum(1 for line in self.lines() if line.startswith(">"))

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True,
                       timeout=30)


@pytest.mark.parametrize("preset", ["standard", "moyer", "italian", "undeclared_31",
                                    "french_canadian", "golf"])
def test_help_and_mistakes_fit_an_80x24_terminal(tmp_path, preset):
    save = tmp_path / "g.json"
    screen = Screen(tmp_path, ["--rules", preset, "--opponents", "random", "--fast",
                               "--seed", "5", "--save", str(save)])
    try:
        screen.wait_for_prompt()
        shown = screen.prompts()
        screen.type("?")
        rows = screen.wait_for_prompt(shown)
        top = next((i for i, row in enumerate(rows) if row.startswith("╭─ Help")), None)
        assert top is not None, "the help's top scrolled off:\n" + "\n".join(rows)
        bottom = next(i for i in range(top, len(rows)) if rows[i].startswith("╰"))
        assert rows[bottom + 1].rstrip() == ">", "\n".join(rows)
        assert preset in rows[top]

        for mistake in ("xyzzy-" * 30, "9" * 50, "e", "k" if preset != "golf" else "7c"):
            shown = screen.prompts()
            screen.type(mistake)
            screen.wait_for_prompt(shown)
            said = [line for line in screen.lines() if line.startswith("✗")][-1]
            assert len(said.rstrip()) <= WIDTH, said  # one row: nothing wrapped onto the next

        screen.type("q")
        time.sleep(0.5)
        screen.type("y")
        deadline = time.monotonic() + PATIENCE
        while "Resume it with" not in " ".join(screen.lines()):
            assert time.monotonic() < deadline, "\n".join(screen.rows())
            time.sleep(0.2)
        # What the person typed wraps as they type it; the paths stay whole, to be copied.
        wrapped = [line for line in screen.lines() if len(line.rstrip()) > WIDTH
                   and not line.startswith(">") and str(save) not in line]
        assert not wrapped, wrapped
    finally:
        screen.close()
