"""The browser's new-game form, where a person picks a rules preset: each preset says in
plain words what it changes (no source tags) and how long a game of it usually lasts.

Served and driven as tests/test_web_page.py does, with its fixtures (a change to how that
file starts the server covers this one too)."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="no playwright module")
from test_web_page import Server, browser, page, server  # noqa: E402,F401  (the fixtures)


def test_the_preset_list_says_how_long_a_game_lasts_and_carries_no_source_tag(  # noqa: F811
        page: Any, server: Server) -> None:  # noqa: F811
    page.goto(server.url + "#new")
    page.wait_for_selector("#f-rules option", state="attached")
    labels = page.eval_on_selector_all("#f-rules option", "els => els.map(e => e.textContent)")
    assert labels and all(re.search(r"\(\d+ min\)$", label) for label in labels), labels
    minutes = {label.split(" (")[0]: int(re.search(r"(\d+) min", label).group(1))
               for label in labels}
    assert minutes["french canadian"] > 5 * minutes["standard"]
    for preset in ("standard", "french_canadian", "golf"):
        page.select_option("#f-rules", preset)
        notes = page.inner_text("#f-rules-notes")
        assert re.search(r"A game usually takes \d+ min \(\d+-\d+\)", notes), notes
        assert not re.search(r"\[\d{3}", notes), notes
