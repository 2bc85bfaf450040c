"""What a policy's zip archive and its ``.npy`` members may declare, checked before anything
is parsed or allocated.

Every file a policy spec names (``compact:``, ``sb3:``, ``rllib:``: policy files,
torch files and checkpoints, SB3 zips) is a zip archive, and a zip says how large it is
before it is read: its end-of-central-directory record gives the number of entries and the
size of the directory, each entry its uncompressed size, each ``.npy`` header its array's
shape. Python's :mod:`zipfile` builds an object for every entry of the directory as it
opens a file, and numpy's ``.npz`` reader multiplies a header's shape in C integers, so
these are read here first and a file that declares more than any policy holds is refused
in one ``ValueError`` line, in bounded time and memory:

- :func:`check_zip_directory`: the end record and the directory itself (walked with
  :mod:`struct`, no object per entry): at most ``max_entries`` entries
  (:data:`MAX_POLICY_ENTRIES` for a ``.npz`` policy, :data:`MAX_TORCH_ENTRIES` for a torch
  file or checkpoint, which holds one member per tensor), and at most
  :data:`MAX_ENTRY_BYTES` of directory per entry;
- :func:`open_policy_zip`: that, then the sum of the members' declared sizes;
- :func:`read_npy`: an array's header (dtype, shape; whole numbers multiplied as Python
  integers, so a 20-digit dimension is a number, not an overflow), then its data read
  straight into the one array it becomes;
- :func:`check_parameters`: a network's parameter count against :data:`MAX_PARAMETERS`,
  from the shapes its architecture implies, before a weight is read.
"""

from __future__ import annotations

import io
import math
import os
import struct
import tokenize
import zipfile
from collections.abc import Mapping
from typing import IO

import numpy as np

#: The most entries a ``.npz`` policy file may have: a network of the deepest architecture
#: (16 layers) has at most 42 weights besides the metadata.
MAX_POLICY_ENTRIES = 256
#: The most entries a torch file may have (one per tensor): far above any checkpoint a
#: shipped config writes, and small enough that opening a directory this large stays cheap.
MAX_TORCH_ENTRIES = 1 << 16
#: Directory bytes allowed per entry on average (a policy's are 60; torch's about 70).
MAX_ENTRY_BYTES = 512
#: The most parameters (float32 weights) a policy may hold: 128 MiB of weights, about 240
#: times the shipped ``compact:`` networks.
MAX_PARAMETERS = 1 << 25
#: The largest ``.npz`` policy file, and the most its members may declare in all: the
#: weights of :data:`MAX_PARAMETERS` and 8 MiB for the metadata and the arrays' headers.
MAX_POLICY_BYTES = 4 * MAX_PARAMETERS + (8 << 20)

_EOCD = struct.Struct("<4s4H2LH")  # end of central directory
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # one entry of the central directory
_MAX_COMMENT = 1 << 16

Source = str | os.PathLike[str] | IO[bytes]


def parameters_text() -> str:
    """The bound on a policy's size as errors state it."""
    return f"a policy may hold at most {MAX_PARAMETERS:,} parameters ({MAX_PARAMETERS >> 18} MiB)"


def check_parameters(shapes: Mapping[str, tuple[int, ...]], where: str) -> None:
    """Refuse a network whose weights (``shapes``, from its declared architecture) add up
    to more than :data:`MAX_PARAMETERS`, before any of them is read or allocated."""
    count = sum(math.prod(shape) for shape in shapes.values())
    if count > MAX_PARAMETERS:
        raise ValueError(f"{where}: its architecture has {count:,} parameters; "
                         f"{parameters_text()}")


def _directory(fh: IO[bytes]) -> tuple[int, int, int] | None:
    """(declared entries, directory size, directory start) from the end record, located as
    :mod:`zipfile` locates it; ``None`` when there is none (not a zip: left to zipfile)."""
    fh.seek(0, io.SEEK_END)
    size = fh.tell()
    if size < _EOCD.size:
        return None
    tail_start = max(0, size - _MAX_COMMENT - _EOCD.size)
    fh.seek(tail_start)
    tail = fh.read()
    at = len(tail) - _EOCD.size
    if not (tail[at:at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
        at = tail.rfind(b"PK\x05\x06")  # a record followed by a comment
        if at < 0 or len(tail) - at < _EOCD.size:
            return None
    _, _, _, _, entries, cd_size, _, _ = _EOCD.unpack_from(tail, at)
    start = tail_start + at - cd_size
    located = tail_start + at - _EOCD64_LOCATOR.size
    if located >= 0:
        fh.seek(located)
        locator = fh.read(_EOCD64_LOCATOR.size)
        if locator[:4] == b"PK\x06\x07" and located >= _EOCD64.size:
            fh.seek(located - _EOCD64.size)
            record = fh.read(_EOCD64.size)
            if record[:4] == b"PK\x06\x06":
                fields = _EOCD64.unpack(record)
                entries = max(entries, fields[7])
                cd_size = max(cd_size, fields[8])
                start = located - _EOCD64.size - fields[8]
    return entries, cd_size, start


def _count_entries(fh: IO[bytes], cd_size: int, start: int, limit: int) -> int:
    """The entries the directory holds, walked as :mod:`zipfile` walks it (until its
    declared size is consumed), stopping past ``limit``."""
    if start < 0:
        return 0  # zipfile refuses it as it opens
    fh.seek(start)
    data = memoryview(fh.read(cd_size))
    count = pos = 0
    while pos < cd_size and count <= limit:
        if len(data) - pos < _CENTRAL.size or data[pos:pos + 4] != b"PK\x01\x02":
            break  # damaged: zipfile says so as it opens
        fields = _CENTRAL.unpack_from(data, pos)
        pos += _CENTRAL.size + fields[12] + fields[13] + fields[14]
        count += 1
    return count


def check_zip_directory(source: Source, where: str, max_entries: int) -> None:
    """Refuse a zip whose directory is larger than any file of its kind has, before
    :mod:`zipfile` builds an object per entry (module docstring). A file that is no zip
    passes: the reader's own error follows."""
    fh, close = _open(source)
    try:
        found = _directory(fh)
        if found is None:
            return
        entries, cd_size, start = found
        limit = max_entries * MAX_ENTRY_BYTES
        if entries > max_entries or cd_size > limit:
            raise ValueError(f"{where}: its zip directory declares {entries:,} entries in "
                             f"{cd_size:,} bytes; a file of this kind has at most "
                             f"{max_entries:,} entries")
        counted = _count_entries(fh, cd_size, start, max_entries)
        if counted > max_entries:
            raise ValueError(f"{where}: its zip directory holds more than {max_entries:,} "
                             "entries; a file of this kind has fewer")
    finally:
        if close:
            fh.close()
        else:
            fh.seek(0)


def open_policy_zip(source: Source, where: str) -> zipfile.ZipFile:
    """The ``.npz`` policy file ``source``, its directory checked (:func:`check_zip_directory`
    with :data:`MAX_POLICY_ENTRIES`) and its members' declared sizes adding up to at most
    :data:`MAX_POLICY_BYTES`. ``ValueError`` for those; the zip module's own errors
    (``BadZipFile``, ``OSError``) for a damaged file."""
    check_zip_directory(source, where, MAX_POLICY_ENTRIES)
    zf = zipfile.ZipFile(source)
    declared = sum(info.file_size for info in zf.infolist())
    if declared > MAX_POLICY_BYTES:
        zf.close()
        raise ValueError(f"{where}: its members declare {declared:,} bytes in all, more than "
                         f"a policy holds: {parameters_text()}")
    return zf


def _open(source: Source) -> tuple[IO[bytes], bool]:
    if isinstance(source, (str, os.PathLike)):
        return open(source, "rb"), True
    return source, False


def read_npy(zf: zipfile.ZipFile, member: str, shape: tuple[int | None, ...], where: str,
             dtype: type, max_bytes: int) -> np.ndarray:
    """One ``.npy`` member of ``zf``: its header checked (version, dtype, C order, shape:
    ``None`` = any length up to ``max_bytes``) before one array of that size is allocated,
    and its data read straight into it. Any problem is one ``ValueError`` naming ``where``
    and ``member``."""
    want = np.dtype(dtype)
    with zf.open(member) as fh:
        got, fortran, got_dtype = _npy_header(fh, member, where)
        if (got_dtype != want or fortran or len(got) != len(shape)
                or any(w is not None and g != w for g, w in zip(got, shape, strict=True))):
            raise ValueError(f"{where}: {member} is {got_dtype}{list(got)}, expected "
                             f"{want}{list(shape)}")
        nbytes = math.prod(got) * want.itemsize
        if nbytes > max_bytes:
            raise ValueError(f"{where}: {member} is too large ({math.prod(got):,} entries)")
        out = np.empty(got, dtype=want)
        view = memoryview(out.reshape(-1).view(np.uint8))
        filled = 0
        while filled < nbytes:
            n = fh.readinto(view[filled:])
            if not n:
                raise ValueError(f"{where}: {member} is truncated")
            filled += n
    return out


def _npy_header(fh: IO[bytes], member: str, where: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of a ``.npy`` stream, every dimension a whole number
    from 0 up."""
    try:
        version = np.lib.format.read_magic(fh)
    except ValueError:
        raise ValueError(f"{where}: {member} is not a .npy array") from None
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"{where}: {member} has .npy version {version}")
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    try:
        shape, fortran, dtype = read_header(fh)
    except (ValueError, TypeError, SyntaxError, RecursionError, tokenize.TokenError):
        # numpy parses the header as Python literals (these are its errors); its own text
        # here would advise allow_pickle=True
        raise ValueError(f"{where}: {member} has a .npy header this reader does not accept "
                         "(oversized or malformed)") from None
    if not all(type(d) is int and d >= 0 for d in shape):
        raise ValueError(f"{where}: {member} has a .npy header this reader does not accept "
                         "(a dimension that is not a whole number)")
    return tuple(shape), bool(fortran), dtype
