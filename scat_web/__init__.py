"""Browser play: ``scat serve`` holds each game and sends the page only what the person's
seat may know.

- :mod:`scat_web.games`: the games of a data folder (``scat play`` saves), played in memory,
  saved at every move, reloaded by id after a restart;
- :mod:`scat_web.serialize`: the JSON the page gets, built from the person's
  :class:`~scat_env.PlayerView`;
- :mod:`scat_web.app`: the Starlette app (routes in ``docs/WEB_API.md``);
- :mod:`scat_web.command`: ``scat serve``, added to the ``scat`` command line through the
  ``scat.commands`` entry point (pyproject.toml);
- ``static/``: the page itself (plain ES modules and CSS, shipped as package data).

The package sits on :mod:`scat_session` (the save format, seats, agents' turns, hints and
words the terminal game shares) and never imports the terminal game, nor it this package.
Starlette and uvicorn are the ``web`` extra: ``pip install 'scat-env[web]'``.
"""

from __future__ import annotations

__all__ = ["create_app"]


def create_app(*args: object, **kwargs: object) -> object:
    """:func:`scat_web.app.create_app` (imported on first use: Starlette loads then)."""
    from .app import create_app as make

    return make(*args, **kwargs)  # type: ignore[arg-type]
