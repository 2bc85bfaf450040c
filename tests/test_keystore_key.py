"""The player's key (scat_session.keystore): created once, whole, even by many games at once.

``scat serve`` starts games on many threads; the first save of each creates the key if there
is none. A second game must never read a key file that exists but is not yet written (that
was a 500, "SealError", for a game started at the same moment as the first one).
"""

from __future__ import annotations

import os
import threading

import pytest

from scat_session import keystore


@pytest.fixture(autouse=True)
def _scat_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCAT_HOME", str(tmp_path / "home"))


def test_the_key_file_never_exists_before_it_is_whole(monkeypatch):
    seen: list[str] = []
    real_fsync = os.fsync

    def look_then_fsync(fd: int) -> None:  # mid-write: what would another game see now?
        path = keystore.key_path()
        seen.append(path.read_text() if path.exists() else "<absent>")
        real_fsync(fd)

    monkeypatch.setattr(keystore.os, "fsync", look_then_fsync)
    key = keystore.load_key()
    assert seen == ["<absent>"]
    assert keystore.key_path().read_text().strip() == key.hex()
    assert keystore.key_path().stat().st_mode & 0o777 == 0o600
    assert list(keystore.scat_home().iterdir()) == [keystore.key_path()]  # no temp file left


def _first_saves_at_once(games: int) -> tuple[list[bytes], list[Exception]]:
    barrier = threading.Barrier(games)
    keys: list[bytes] = []
    errors: list[Exception] = []

    def first_save() -> None:
        barrier.wait()
        try:
            keys.append(keystore.load_key())
        except keystore.SealError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=first_save) for _ in range(games)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return keys, errors


def test_many_games_started_at_once_share_one_key():
    for _ in range(20):
        for f in keystore.scat_home().glob("*"):
            f.unlink()
        keys, errors = _first_saves_at_once(12)
        assert not errors, errors
        assert len(keys) == 12 and len(set(keys)) == 1
        assert keystore.load_key(create=False) == keys[0]


def test_a_damaged_key_file_is_refused_not_replaced():
    path = keystore.key_path()
    path.parent.mkdir(parents=True)
    path.write_text("not a key\n")
    with pytest.raises(keystore.SealError, match="is damaged"):
        keystore.load_key()
    assert path.read_text() == "not a key\n"


def test_a_save_to_a_device_or_pipe_writes_into_it_and_never_replaces_it(tmp_path):
    """``scat play --save /dev/null`` run as root once put a plain file where /dev/null was
    (the save is renamed over its target). A target that is neither a file nor a folder is
    written into: a pipe stays a pipe and its reader gets the save."""
    import stat

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        keystore.atomic_write(pipe, b'{"saved": true}')
        assert stat.S_ISFIFO(os.stat(pipe).st_mode)
        assert os.read(reader, 100) == b'{"saved": true}'
    finally:
        os.close(reader)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temp file left
