"""What every policy file reader shares, and where the shipped policies live.

- the bounds a policy may have (:data:`MAX_HIDDEN`, :data:`MAX_LAYERS`, the output widths
  :data:`ACTION_WIDTHS`), checked before anything is allocated;
- the safe torch reader the library adapters use (``sb3:`` zips, ``rllib:`` exports,
  training checkpoints): :func:`safe_torch_load` runs ``torch.load(weights_only=True)`` only
  on a torch new enough for that to hold and after every member's CRC-32 is checked;
- :func:`retired_policy_file`: a file of the retired native trainer (a ``.pt`` or ``.npz``
  of kind ``scat-policy``) is named as such, with its replacement, in one line;
- :func:`shipped_path`: the shipped policies' folder, found from anywhere.

The policy file format itself (``.npz``, a content hash, numpy only) is
:mod:`agents.compact`'s.
"""

from __future__ import annotations

import io
import os
import warnings
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS, PASS

from .archive import MAX_POLICY_BYTES, MAX_TORCH_ENTRIES, check_zip_directory

#: The output widths a policy may have: the draw-and-discard game's actions, those plus the
#: calls of the variations (up to ``PASS``), or the whole action space. A network scores a
#: prefix of the action space; a player refuses a preset that offers actions past it.
ACTION_WIDTHS: tuple[int, ...] = tuple(sorted({CORE_ACTIONS, PASS + 1, NUM_ACTIONS}))
#: The oldest torch whose ``torch.load(weights_only=True)`` runs no code from a crafted file
#: (CVE-2025-32434 was fixed in 2.6, CVE-2026-24747 in 2.10): older torch is refused before
#: any file is read.
MIN_TORCH = (2, 10)

#: Sanity bounds checked before anything is allocated: a larger file is refused as corrupt.
MAX_HIDDEN = 4096
MAX_LAYERS = 16
MAX_FILE_BYTES = MAX_POLICY_BYTES
MAX_METADATA_BYTES = 4 * 2**20
#: Bounds of ``max_players`` (the engine's table sizes).
PLAYERS_RANGE = (2, 10)

#: The shipped policy set: ``compact:scat_batch_set`` (:func:`shipped_path`).
SHIPPED_SET = "scat_batch_set"
#: What a spec, file or config of the retired native trainer is told instead.
RETIRED = ("ppo: policies were retired; the shipped policy is compact:scat_batch_set "
           "(train one with trainer: batch)")
#: The kinds of the retired native trainer's files (policy files and checkpoints).
RETIRED_KINDS = ("scat-policy", "scat-ppo-checkpoint")


def retired_policy_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file of the retired native trainer: a torch save (``.pt``,
    a checkpoint) or an ``.npz`` whose metadata says ``kind: scat-policy``. Read from the
    zip's names and the metadata's first bytes only, never unpickled."""
    try:
        check_zip_directory(path, repr(str(path)), MAX_TORCH_ENTRIES)
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            if any(n.endswith("/data.pkl") for n in names):
                return True
            if "metadata.json.npy" in names:
                with zf.open("metadata.json.npy") as fh:
                    head = fh.read(1 << 16)
                return any(f'"kind": "{kind}"'.encode() in head for kind in RETIRED_KINDS)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, RuntimeError,
            NotImplementedError):
        return False
    return False


def torch_version_error() -> str | None:
    """Why the installed torch may not read files (too old to be safe), or ``None``."""
    import torch

    try:
        have = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return None  # a development build: its version says nothing of its age
    if have >= MIN_TORCH:
        return None
    need = ".".join(map(str, MIN_TORCH))
    return (f"torch {torch.__version__} is too old to read policy or checkpoint files safely "
            f"(its weights_only loader can run code from a crafted file); install torch>={need}")


def safe_torch_load(source: str | os.PathLike[str] | io.BytesIO, where: str) -> Any:
    """``torch.load(weights_only=True)`` behind every check that makes it safe to call: a
    torch new enough that ``weights_only`` holds (:data:`MIN_TORCH`), and every member's
    CRC-32 (:func:`check_torch_zip`). Every failure is one ``ValueError`` line naming
    ``where``; torch's own advice to load with ``weights_only=False`` is never shown."""
    import torch

    why = torch_version_error()
    if why is not None:
        raise ValueError(f"{where}: {why}")
    check_torch_zip(source, where)
    if isinstance(source, io.BytesIO):
        source.seek(0)
    try:
        with warnings.catch_warnings():
            # torch warns before it refuses (a TorchScript archive, a pickle protocol other
            # than 2), in lines that advise filing an issue: the refusal is the one line
            warnings.simplefilter("ignore")
            return torch.load(source, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, foreign pickle...
        raise torch_load_error(where, exc) from None


def check_state_dict(state: Any, where: str) -> dict[str, Any]:
    """``state`` as a network's weights: a dict of names to finite float32 tensors, or one
    ``ValueError`` line naming the first field that is not (a file with a list, a string or
    an int64 tensor where a weight belongs is refused here, not as a traceback later)."""
    import torch

    if not isinstance(state, dict) or not state:
        raise ValueError(f"{where}: state_dict is {type(state).__name__}, expected a table of "
                         "named tensors")
    for name, value in state.items():
        if not isinstance(name, str):
            raise ValueError(f"{where}: state_dict has a key {str(name)[:40]!r} that is not "
                             "a name")
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"{where}: state_dict[{name[:60]!r}] is "
                             f"{type(value).__name__}, expected a float32 tensor")
        if value.dtype != torch.float32:
            raise ValueError(f"{where}: state_dict[{name[:60]!r}] is {value.dtype}, "
                             "expected float32")
        if not bool(torch.isfinite(value).all()):
            raise ValueError(f"{where}: state_dict[{name[:60]!r}] holds a value that is "
                             "not finite")
    return state


def check_torch_zip(file: str | os.PathLike[str] | io.BytesIO, where: str) -> None:
    """Refuse a torch zip whose bytes changed after it was written, before ``torch.load``.

    torch records a CRC-32 per member but does not check it on load: a flipped byte in
    tensor data loads silently. This reads every member once and compares (torch writes its
    members uncompressed, so a compressed member -- a possible zip bomb -- is refused
    unread), after its directory is bounded (at most :data:`MAX_TORCH_ENTRIES` entries). A
    file that is no zip is left to ``torch.load``'s own error."""
    check_zip_directory(file, where, MAX_TORCH_ENTRIES)
    try:
        zf = zipfile.ZipFile(file)
    except (OSError, zipfile.BadZipFile):
        return
    with zf:
        if any(info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1
               for info in zf.infolist()):
            raise ValueError(f"{where} is not a scat-env policy/checkpoint file (a torch file "
                             "holds no compressed or encrypted members)")
        try:
            bad = zf.testzip()
        except (OSError, zipfile.BadZipFile, EOFError, RuntimeError,
                NotImplementedError) as exc:
            raise ValueError(f"{where} is not a scat-env policy/checkpoint file (corrupt or "
                             f"truncated?): {str(exc)[:120]}") from None
    if bad is not None:
        raise ValueError(f"{where}: {bad[:80]} is damaged (its checksum does not match: the "
                         "file changed after it was written)")


def torch_load_error(where: str, exc: BaseException) -> ValueError:
    """The one line to show when ``torch.load(weights_only=True)`` refuses a file.

    Never torch's own text as it is: it advises re-running with ``weights_only=False``,
    which would run whatever code a crafted file holds. A file that asks for a Python object
    other than tensors and plain values is named as such; anything else (a truncated or
    foreign file) gets torch's one informative line (no line about ``weights_only``, cut
    to 160 characters)."""
    text = str(exc).strip()
    if "global" in text.lower():  # "Unsupported global: GLOBAL posix.system ..."
        return ValueError(f"{where} is not a scat-env policy/checkpoint file: it holds Python "
                          "objects other than tensors and plain values (refused, nothing of "
                          "it was run)")
    noise = ("weights_only", "weights only", "documentation", "file an issue")
    lines = [line.strip() for line in text.splitlines()
             if line.strip() and not any(word in line.lower() for word in noise)]
    detail = (lines or [type(exc).__name__])[0][:160]
    return ValueError(f"{where} is not a scat-env policy/checkpoint file (corrupt or "
                      f"truncated?): {detail}")


# -- shipped policies -------------------------------------------------------------------
@cache
def shipped_dir() -> Path | None:
    """The folder of the shipped policies: the installed package data ``scat_policies``
    (the repository's ``policies/`` folder, mapped in pyproject.toml), or ``policies/``
    beside the package in a checkout."""
    from importlib.util import find_spec

    spec = find_spec("scat_policies")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / f"{SHIPPED_SET}.yaml").is_file():
            return Path(folder)
    checkout = Path(__file__).resolve().parents[2] / "policies"
    return checkout if (checkout / f"{SHIPPED_SET}.yaml").is_file() else None


def shipped_path(name: str) -> str | None:
    """The shipped file ``name`` names (``scat_batch_set`` -> its manifest, ``scat_batch``
    -> ``scat_batch.npz``), or None when ``name`` is a path or names nothing shipped."""
    folder = shipped_dir()
    if folder is None or not name or os.sep in name or "/" in name:
        return None
    for candidate in (name, f"{name}.yaml", f"{name}.npz"):
        if (folder / candidate).is_file():
            return str(folder / candidate)
    return None
