"""Policy loaders refuse what no policy declares before they parse or allocate it.

Every spec that names a file (``compact:``, ``sb3:``, ``rllib:``) reads a zip: its
directory is bounded from the end record before the zip module parses it, every ``.npy``
header is checked (as Python integers) before an array exists, a network's parameter count
before a weight is read (:mod:`agents.neural.archive`); the refusal is one line, exit status
2 on the command line, within bounded time and memory, and torch's own warnings never reach
the user.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from fuzz_inputs import bounded, check_cli_refusal, check_error_line, run_cli

from agents.adapters.sb3 import MAX_WEIGHTS_BYTES, read_sb3_zip
from agents.compact import NUM_CODES, load_compact
from agents.compact import expected_shapes as compact_shapes
from agents.neural.archive import (
    MAX_PARAMETERS,
    MAX_POLICY_ENTRIES,
    check_zip_directory,
    read_npy,
)
from scat_env.actions import NUM_ACTIONS

ROOT = Path(__file__).resolve().parents[1]
PPO_FILE = ROOT / "policies" / "scat_batch_2p.npz"
COMPACT_FILE = ROOT / "policies" / "scat_batch_2p.npz"
BOUND = f"{MAX_PARAMETERS:,} parameters"
SPECS = ("compact", "sb3")


def npy_bytes(descr: str, shape: str, payload: bytes = b"") -> bytes:
    """A ``.npy`` member (version 1.0) claiming any dtype and shape, with little data."""
    head = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    head += b" " * ((64 - (10 + len(head) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + payload


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return path


def _refused_on_the_command_line(spec: str) -> str:
    """``scat watch`` with ``spec``: exit status 2 and one line, in bounded time and memory
    (a traceback would escape run_cli and fail the test)."""
    status, _, err = bounded(lambda: run_cli(["watch", "--agents", f"{spec},random", "--fast"]),
                             seconds=60, extra_memory=512 << 20)
    assert status == 2, err
    check_cli_refusal(status, err, spec)
    return err


# -- .npy headers ------------------------------------------------------------------------------
TWENTY_DIGITS = "(99999999999999999999,)"


@pytest.mark.parametrize("source", [COMPACT_FILE], ids=["compact_file"])
@pytest.mark.parametrize("member,descr,shape", [
    ("metadata.json.npy", "|u1", TWENTY_DIGITS),
    ("pi.weight.npy", "<f4", TWENTY_DIGITS),
    ("pi.weight.npy", "<f4", "(12345678901234567890, 10)"),
    ("card_gain.npy", "<f4", "(-5,)"),
])
@pytest.mark.parametrize("kind", SPECS)
def test_an_absurd_npy_shape_is_one_line_for_every_policy_spec(tmp_path, source, member, descr,
                                                                shape, kind):
    members = _members(source)
    members[member] = npy_bytes(descr, shape, b"{}")
    path = _write_zip(tmp_path / "absurd.npz", members)
    err = _refused_on_the_command_line(f"{kind}:{path}")
    assert str(path) in err


def test_a_twenty_digit_shape_is_a_number_to_refuse_not_an_overflow(tmp_path):
    path = _write_zip(tmp_path / "m.zip", {"a.npy": npy_bytes("<f4", TWENTY_DIGITS)})
    with zipfile.ZipFile(path) as zf, pytest.raises(ValueError, match="too large"):
        read_npy(zf, "a.npy", (None,), "'m.zip'", np.float32, 1 << 20)


# -- zip directories ---------------------------------------------------------------------------
def _zip_with_entries(path: Path, members: dict[str, bytes], extra: int,
                      declared: int | None = None) -> Path:
    """A zip holding ``members`` whose central directory has ``extra`` more entries (copies
    of the first, renamed), ended by zip64 records as the zip module writes past 65,535
    entries; ``declared`` overrides the count the end records state."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    data = buffer.getvalue()
    end = data.rfind(b"PK\x05\x06")
    _, _, _, _, count, cd_size, cd_offset, _ = struct.unpack_from("<4s4H2LH", data, end)
    first = data[cd_offset:cd_offset + 46 + struct.unpack_from("<H", data, cd_offset + 28)[0]]
    fixed = bytearray(first[:46])
    rows = []
    for i in range(extra):
        name = f"x{i}".encode()
        struct.pack_into("<H", fixed, 28, len(name))
        struct.pack_into("<HH", fixed, 30, 0, 0)
        rows.append(bytes(fixed) + name)
    directory = data[cd_offset:cd_offset + cd_size] + b"".join(rows)
    total = count + extra if declared is None else declared
    zip64_at = cd_offset + len(directory)
    tail = (struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, total, total,
                        len(directory), cd_offset)
            + struct.pack("<4sLQL", b"PK\x06\x07", 0, zip64_at, 1)
            + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, min(total, 0xFFFF),
                          min(total, 0xFFFF), len(directory), cd_offset, 0))
    path.write_bytes(data[:cd_offset] + directory + tail)
    return path


def test_the_hand_made_zip_is_a_zip_the_zip_module_reads(tmp_path):
    """Guard for the tests below: the zip module opens it and sees every entry."""
    path = _zip_with_entries(tmp_path / "few.zip", {"a.npy": b"x"}, 70_000)
    with zipfile.ZipFile(path) as zf:
        assert len(zf.infolist()) == 70_001


@pytest.fixture(scope="module")
def crowded(tmp_path_factory) -> Path:
    """A policy file's members and 300,000 more directory entries (15 MB)."""
    folder = tmp_path_factory.mktemp("crowded")
    return _zip_with_entries(folder / "crowded.npz", _members(PPO_FILE), 300_000)


@pytest.mark.parametrize("kind", SPECS)
def test_a_zip_of_300000_entries_is_refused_before_it_is_parsed(crowded, kind):
    err = _refused_on_the_command_line(f"{kind}:{crowded}")
    assert "entries" in err




def test_a_directory_that_understates_its_entries_is_refused_by_its_size(tmp_path):
    path = _zip_with_entries(tmp_path / "liar.npz", _members(PPO_FILE), 50_000, declared=14)
    with pytest.raises(ValueError, match="declares 14 entries in"):
        check_zip_directory(path, "'liar.npz'", MAX_POLICY_ENTRIES)




# -- what a policy may allocate ----------------------------------------------------------------
def _write_valid_huge(path: Path, shapes: dict[str, tuple[int, ...]], meta: dict) -> Path:
    """Every weight of ``shapes`` in full (zeros, deflated: a small file for a large
    network), under ``meta``; its hash is not the content's (a loader that reads the
    weights allocates them before it finds out)."""
    zero = bytes(1 << 22)
    text = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("metadata.json.npy", npy_bytes("|u1", f"({len(text)},)", text))
        for name, shape in shapes.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                fh.write(npy_bytes("<f4", repr(tuple(shape))))
                left = int(np.prod(shape)) * 4
                while left:
                    fh.write(zero[:min(left, len(zero))])
                    left -= min(left, len(zero))
    return path


COMPACT_META = {"kind": "scat-compact-policy", "format_version": 1, "hidden": 4096,
                "layers": 16, "num_codes": NUM_CODES, "num_actions": NUM_ACTIONS,
                "sha256": "0" * 64}
HUGE = {"compact": (compact_shapes(4096, 16), COMPACT_META, load_compact)}


@pytest.mark.parametrize("kind", sorted(HUGE))
def test_a_valid_network_past_the_parameter_bound_is_refused_before_it_is_allocated(
        tmp_path, kind):
    """16 layers of width 4,096 (a 4 MB file, about 1 GB of weights): refused in bounded
    memory, naming the bound."""
    shapes, meta, load = HUGE[kind]
    path = _write_valid_huge(tmp_path / "huge.npz", shapes, meta)
    with pytest.raises(ValueError) as err:
        bounded(lambda: load(path), seconds=30, extra_memory=256 << 20)
    check_error_line(str(err.value), kind)
    assert BOUND in str(err.value)


@pytest.mark.parametrize("kind", sorted(HUGE))
def test_an_architecture_past_the_parameter_bound_is_refused_naming_it(tmp_path, kind):
    """The metadata alone (no weights): the architecture's count is checked before the
    members are, and the error says what the bound is."""
    _, meta, load = HUGE[kind]
    meta = json.loads(json.dumps(meta))
    meta["layers"] = 3
    text = json.dumps(meta).encode()
    path = _write_zip(tmp_path / "big.npz",
                      {"metadata.json.npy": npy_bytes("|u1", f"({len(text)},)", text)})
    with pytest.raises(ValueError, match=f"has [0-9,]+ parameters; a policy may hold at most "
                                         f"{BOUND}"):
        load(path)


def test_the_shipped_policies_are_far_inside_the_bound():
    for path in sorted((ROOT / "policies").glob("*.npz")):
        with np.load(path) as data:
            count = sum(data[n].size for n in data.files if n != "metadata.json")
        assert count * 100 < MAX_PARAMETERS, path.name


def test_an_sb3_weights_member_past_the_bound_is_refused_unread(tmp_path):
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("policy.pth", "w", force_zip64=True) as fh:
            block = bytes(1 << 22)
            for _ in range(MAX_WEIGHTS_BYTES // len(block) + 1):
                fh.write(block)
    with pytest.raises(ValueError) as err:
        bounded(lambda: read_sb3_zip(path), seconds=30, extra_memory=64 << 20)
    assert "policy.pth is too large" in str(err.value) and BOUND in str(err.value)


# -- torch's own lines -------------------------------------------------------------------------
def _torch_file_that_warns(tmp_path: Path) -> Path:
    """A policy saved with pickle protocol 4: torch warns (advising to file an issue)
    before the loader refuses it."""
    torch = pytest.importorskip("torch")
    path = tmp_path / "proto4.pt"
    torch.save({"kind": "scat-policy", "format_version": 1, "w": torch.zeros(4)}, path,
               pickle_protocol=4)
    return path






@pytest.mark.parametrize("load", [load_compact, read_sb3_zip], ids=lambda f: f.__name__)
def test_every_reader_refuses_a_crowded_zip_in_little_time_and_memory(crowded, load):
    with pytest.raises(ValueError) as err:
        bounded(lambda: load(crowded), seconds=30, extra_memory=48 << 20)
    check_error_line(str(err.value), load.__name__)


def test_a_torch_file_is_bounded_before_torch_sees_it(crowded, tmp_path):
    from agents.neural.policy_file import safe_torch_load

    pt = tmp_path / "crowded.pt"
    pt.write_bytes(crowded.read_bytes())
    with pytest.raises(ValueError, match="entries"):
        bounded(lambda: safe_torch_load(pt, repr(str(pt))), seconds=30,
                extra_memory=48 << 20)


def test_torch_warnings_on_a_refused_file_never_reach_the_user(tmp_path):
    """A pickle protocol other than torch's makes torch warn (advising to file an issue)
    before it refuses: the refusal is the one line, the warning is not shown."""
    import warnings

    from agents.neural.policy_file import safe_torch_load

    path = _torch_file_that_warns(tmp_path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as err:
            safe_torch_load(path, repr(str(path)))
    check_error_line(str(err.value), "proto4.pt")
    assert [str(w.message)[:80] for w in seen] == []
