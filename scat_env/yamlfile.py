"""Reading the project's YAML files (rules, training configs, policy-set manifests) safely.

These files come from users and from the internet, so reading one must cost little whatever
it holds. Three things could make it costly, and each is refused in one line:

- a large file: at most :data:`MAX_BYTES` (the largest file we ship is ~2 KB);
- an alias (``*name``): YAML's aliases let a 415-byte file stand for gigabytes of nested
  lists (the "billion laughs"), and nothing we read needs them;
- very deep nesting, which would exhaust Python's recursion limit in the parser.

Validation errors name the value they refuse; :func:`one_line` keeps such a message to one
bounded line, so an odd value cannot flood a terminal or a log either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: The largest YAML file read (bytes).
MAX_BYTES = 256 * 1024
#: The longest error message passed on (characters).
MAX_MESSAGE = 300


#: The deepest nesting a file may have (ours are three levels deep at most).
MAX_DEPTH = 64


class _TooDeep(Exception):
    """A file nested deeper than :data:`MAX_DEPTH`."""


class _NoAliases(yaml.SafeLoader):
    """PyYAML's safe loader, refusing aliases before they are expanded, and nesting deeper
    than :data:`MAX_DEPTH` as it composes (the composer recurses once per level: counting
    the levels, rather than waiting for Python's recursion limit, keeps a hostile file from
    ever reaching that limit, which another library may have raised in this process)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in this file", mark)
        if self._depth >= MAX_DEPTH:
            raise _TooDeep
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _flow_too_deep(text: str) -> bool:
    """Whether ``text`` opens more than :data:`MAX_DEPTH` flow collections (``[``, ``{``)
    inside one another, outside quotes and comments: checked before PyYAML sees the text, so
    that a hostile ``[[[[...`` never reaches its scanner and parser, whose work grows with
    every level before the composer could count them. A bracket inside a plain scalar counts
    too: a real file never has that many open."""
    depth, quote, comment, prev = 0, "", False, "\n"
    for ch in text:
        if comment:
            comment = ch != "\n"
        elif quote:
            if ch == quote and not (quote == '"' and prev == "\\"):
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev in " \t\n":
            comment = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in "]}":
            depth = max(depth - 1, 0)
        prev = ch if not (prev == "\\" and ch == "\\") else " "
    return False


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` on one line of at most ``limit`` characters (cut in the middle)."""
    text = " ".join(message.split())
    if len(text) <= limit:
        return text
    keep = (limit - 5) // 2
    return f"{text[:keep]} ... {text[-keep:]}"


def read_yaml(path: str | Path, what: str) -> Any:
    """The data of the YAML file ``path``; ``ValueError`` naming ``what`` and the problem."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{what} {str(p)!r} does not exist")
    size = p.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(f"{what} {str(p)!r} is {size:,} bytes; the limit is {MAX_BYTES:,}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{what} {str(p)!r} is not valid YAML: not UTF-8 text") from None
    except OSError as exc:
        raise ValueError(f"{what} {str(p)!r} cannot be read: {one_line(str(exc))}") from None
    if _flow_too_deep(text):
        raise ValueError(f"{what} {str(p)!r} is nested too deeply (more than {MAX_DEPTH} "
                         "levels)")
    loader = None
    try:
        # The reader checks the text for characters YAML forbids (a vertical tab, most
        # control characters) as it is built, so building it is inside the try too.
        loader = _NoAliases(text)
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()
        detail = " ".join(line.strip() for line in first[:2]) if first else type(exc).__name__
        raise ValueError(f"{what} {str(p)!r} is not valid YAML: {one_line(detail)}") from None
    except (_TooDeep, RecursionError):
        raise ValueError(f"{what} {str(p)!r} is nested too deeply (more than {MAX_DEPTH} "
                         "levels)") from None
    finally:
        if loader is not None:
            loader.dispose()
