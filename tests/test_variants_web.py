"""The page's words and numbers come from the server: each preset of the new-game form
carries its rules in full (the families' description), and the action ids the page sends
come from ``GET /api/options``, built from :mod:`scat_env.actions`, not from a copy."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from scat_env import Rules, actions  # noqa: E402
from scat_env.rules import PRESETS  # noqa: E402
from scat_env.variants import describe  # noqa: E402
from scat_web.app import create_app  # noqa: E402

APP_JS = Path(__file__).resolve().parents[1] / "scat_web" / "static" / "app.js"


@pytest.fixture
def options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))
    with TestClient(create_app(tmp_path / "web", token=None),
                    base_url="http://127.0.0.1") as client:
        return client.get("/api/options").json()


def test_the_options_carry_the_action_ids_of_scat_env_actions(options):
    sent = options["actions"]
    for name, value in sent.items():
        assert getattr(actions, name) == value, name
    assert {"DRAW_STOCK", "DRAW_DISCARD", "KNOCK", "END_PLAY", "HAMMER", "PLACE_SLOT",
            "TURN_UP"} <= set(sent)


def test_each_preset_of_the_form_carries_its_rules_in_full(options):
    by_name = {p["name"]: p for p in options["presets"]}
    assert list(by_name) == list(PRESETS)
    for name, preset in by_name.items():
        assert preset["help"] == describe(Rules.preset(name)), name


def test_the_page_keeps_no_copy_of_the_action_ids():
    """app.js reads every id from the options: a number beside an action name would be a
    copy that could drift from scat_env.actions."""
    script = APP_JS.read_text("utf-8")
    copies = re.findall(r"\b(?:STOCK|TAKE|KNOCK|END_PLAY|HAMMER|PLACE|TURN_UP)\s*:\s*\d+", script)
    assert not copies, copies
    assert "o.actions" in script
