"""The policy file format, read with numpy alone, and where the shipped policies live.

A policy file is a ``.npz`` archive (numpy's zip of ``.npy`` arrays), read with
``allow_pickle=False`` so loading one never runs code:

- one array per weight of :class:`training.policy_net.PolicyNet`, under its ``state_dict``
  name (``trunk.0.weight``, ``pi.bias``, ``card_gain``...), float32;
- ``metadata.json``: a uint8 array holding UTF-8 JSON: ``kind`` (``"scat-policy"``),
  ``format_version``, ``arch`` (``obs_size``, ``hidden``, ``layers``, ``max_players``, and
  ``advice: 1`` for a network reading the expert-advice inputs), ``max_players``,
  ``num_actions``, the ``rules`` it was trained on, the training ``config``, the run's
  ``metrics`` and ``sha256``, a hash of everything else (:func:`content_hash`).

Loading checks, in this order and each as one ``ValueError`` line naming the file: the file
exists, its zip directory is no larger than a policy's (:mod:`.archive`, read before the zip
module parses it), and it is a zip of this kind and version; the architecture lies within
sane bounds, holds at most :data:`~.archive.MAX_PARAMETERS` weights and matches this
scat-env's encoder; every array has the shape the architecture implies (read from its
``.npy`` header, before the array is allocated); and the hash matches (a flipped byte is
refused).

Files written by earlier versions (``.pt``, a torch zip restricted to tensors) and training
checkpoints are read by :func:`load_any` with ``torch.load(weights_only=True)`` where torch
is installed, after every member's stored CRC-32 is checked (:func:`check_torch_zip`);
without torch, one line says so. ``python -m training.policy_net convert OLD.pt
NEW.npz`` rewrites one in this format.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import warnings
import zipfile
import zlib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from scat_env.actions import CORE_ACTIONS, NUM_ACTIONS, PASS
from scat_env.yamlfile import one_line

from .archive import (
    MAX_POLICY_BYTES,
    MAX_POLICY_ENTRIES,
    MAX_TORCH_ENTRIES,
    check_parameters,
    check_zip_directory,
    open_policy_zip,
    parameters_text,
    read_npy,
)
from .encoding import EXTRA_PIECES, pieces_named, policy_observation_size
from .forward import NumpyPolicy

POLICY_KIND = "scat-policy"
#: 1: torch ``.pt`` files (read by :mod:`training.policy_net`); 2: this ``.npz`` format.
FORMAT_VERSION = 2
METADATA = "metadata.json"

#: The output widths a policy may have: the draw-and-discard game's actions, those plus the
#: calls of the variations (up to ``PASS``), or the whole action space. A network scores a
#: prefix of the action space; :func:`agents.policy.known_actions` refuses a preset that
#: offers actions past it.
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

#: The shipped policy set: ``ppo:scat_ppo_set`` (:func:`shipped_path`).
SHIPPED_SET = "scat_ppo_set"


class PolicyFile(NamedTuple):
    """A loaded policy file: its numpy weights and its metadata."""

    arrays: dict[str, np.ndarray]
    metadata: dict[str, Any]

    @property
    def max_players(self) -> int:
        return int(self.metadata["max_players"])

    def policy(self) -> NumpyPolicy:
        """The numpy network that plays this file."""
        arch = self.metadata["arch"]
        return NumpyPolicy(self.arrays, arch["layers"], self.max_players,
                           tuple(arch.get("extra", ())))


def expected_shapes(arch: Mapping[str, int], num_actions: int = NUM_ACTIONS
                    ) -> dict[str, tuple[int, ...]]:
    """Every weight of a network of architecture ``arch`` with ``num_actions`` outputs
    (:data:`~scat_env.actions.NUM_ACTIONS`, or the draw-and-discard game's
    :data:`~scat_env.actions.CORE_ACTIONS` for files written before the calls existed)."""
    obs, hidden, layers = arch["obs_size"], arch["hidden"], arch["layers"]
    shapes: dict[str, tuple[int, ...]] = {}
    for i in range(layers):
        shapes[f"trunk.{2 * i}.weight"] = (hidden, obs if i == 0 else hidden)
        shapes[f"trunk.{2 * i}.bias"] = (hidden,)
    shapes.update({"pi.weight": (num_actions, hidden), "pi.bias": (num_actions,),
                   "v.weight": (1, hidden), "v.bias": (1,)})
    for name in ("card_gain", "draw_gain", "knock_gain", "knock_at"):
        shapes[name] = ()
    if arch.get("advice"):
        shapes["advice_gain"] = ()
    return shapes


def content_hash(arrays: Mapping[str, np.ndarray], metadata: Mapping[str, Any]) -> str:
    """sha256 over the metadata (less its ``sha256``) and every array's name, dtype, shape
    and bytes, in name order."""
    digest = hashlib.sha256()
    meta = {k: v for k, v in metadata.items() if k != "sha256"}
    digest.update(json.dumps(meta, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.asarray(arrays[name], order="C")
        digest.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def check_arch(metadata: Mapping[str, Any], where: str) -> dict[str, int]:
    """The architecture of ``metadata``, checked against sane bounds and this scat-env's
    encoder (one ValueError line)."""
    arch = metadata.get("arch")
    maxp = metadata.get("max_players")
    if not isinstance(arch, dict):
        raise ValueError(f"{where}: no architecture in the metadata")
    lo, hi = PLAYERS_RANGE
    bounds = {"hidden": (1, MAX_HIDDEN), "layers": (1, MAX_LAYERS), "max_players": (lo, hi)}
    for key, (low, high) in bounds.items():
        value = arch.get(key)
        if not _is_int(value) or not low <= value <= high:
            raise ValueError(f"{where}: architecture field {key!r} is {value!r}, "
                             f"expected a whole number from {low} to {high}")
    if maxp != arch["max_players"]:
        raise ValueError(f"{where}: max_players {maxp!r} differs from the architecture's "
                         f"{arch['max_players']!r}")
    if metadata.get("num_actions") not in ACTION_WIDTHS:
        raise ValueError(f"{where} was trained for {metadata.get('num_actions')!r} actions, "
                         f"this scat-env has {NUM_ACTIONS} ({CORE_ACTIONS} without the calls "
                         f"of the variations)")
    extra = arch.get("extra", [])
    if (not isinstance(extra, list) or len(extra) > len(EXTRA_PIECES)
            or not all(isinstance(n, str) and n in EXTRA_PIECES for n in extra)):
        raise ValueError(f"{where}: architecture field 'extra' is {str(extra)[:80]!r}, "
                         f"expected a list of observation pieces from {sorted(EXTRA_PIECES)}")
    want = policy_observation_size(maxp, bool(arch.get("advice", 0)), pieces_named(extra))
    if arch.get("obs_size") != want:
        raise ValueError(f"{where}: observation size {arch.get('obs_size')!r} does not match "
                         f"this scat-env's encoder for {maxp} players ({want})")
    return arch


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_policy_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is in this format (a zip holding ``metadata.json``), whatever its
    name ends with: a torch ``.pt`` is a zip too, without that member. A zip with more
    entries than a policy has is not one (answered from its end record, unparsed)."""
    try:
        check_zip_directory(path, repr(str(path)), MAX_POLICY_ENTRIES)
        with zipfile.ZipFile(path) as zf:
            return METADATA + ".npy" in zf.namelist()
    except (OSError, ValueError, zipfile.BadZipFile):
        return False


def load_policy(path: str | os.PathLike[str]) -> PolicyFile:
    """Read and check a policy file (module docstring); any problem is one ValueError."""
    where = repr(str(path))
    if not os.path.isfile(path):
        raise ValueError(f"policy file {where} does not exist")
    if os.path.getsize(path) > MAX_FILE_BYTES:
        raise ValueError(f"{where} is larger than any policy ({os.path.getsize(path):,} "
                         f"bytes; {parameters_text()})")
    try:
        with open_policy_zip(path, where) as zf:
            return _read(zf, where)
    except ValueError as exc:  # ours, bounded here: values quoted from the file may be huge
        raise ValueError(one_line(str(exc))) from None
    except zipfile.BadZipFile:
        raise ValueError(f"{where} is not a scat policy file (not a zip: corrupt or "
                         "truncated?)") from None
    except (OSError, EOFError) as exc:
        raise ValueError(one_line(f"{where} cannot be read (corrupt or truncated?): {exc}")
                         ) from None
    except (NotImplementedError, RuntimeError, zlib.error, RecursionError) as exc:
        # an unsupported compression method, an encrypted member, a corrupt deflate stream,
        # metadata nested past reason: the zip module and json raise these, not ValueError
        raise ValueError(f"{where} is not a scat policy file (corrupt, encrypted or of an "
                         f"unsupported kind: {type(exc).__name__})") from None


def _read(zf: zipfile.ZipFile, where: str) -> PolicyFile:
    members = {n.removesuffix(".npy"): n for n in zf.namelist() if n.endswith(".npy")}
    if METADATA not in members:
        raise ValueError(f"{where} is not a scat policy file (no {METADATA}; a torch .pt "
                         "policy is read by training.policy_net, which needs torch)")
    raw = read_npy(zf, members.pop(METADATA), (None,), where, np.uint8, MAX_METADATA_BYTES)
    try:
        metadata = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{where}: metadata is not valid JSON ({exc})") from None
    if not isinstance(metadata, dict) or metadata.get("kind") != POLICY_KIND:
        found = metadata.get("kind") if isinstance(metadata, dict) else type(metadata).__name__
        raise ValueError(f"{where} is not a {POLICY_KIND} file (found {found!r})")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{where} has format version {metadata.get('format_version')!r}; "
                         f"this scat-env reads version {FORMAT_VERSION}")
    shapes = expected_shapes(check_arch(metadata, where), metadata["num_actions"])
    check_parameters(shapes, where)
    if set(members) != set(shapes):
        missing, extra = sorted(set(shapes) - set(members)), sorted(set(members) - set(shapes))
        raise ValueError(f"{where}: weights do not fit the architecture (missing "
                         f"{missing or 'none'}, unexpected {extra or 'none'})")
    arrays = {name: read_npy(zf, members[name], shapes[name], where, np.float32,
                             MAX_FILE_BYTES) for name in sorted(shapes)}
    if content_hash(arrays, metadata) != metadata.get("sha256"):
        raise ValueError(f"{where}: content hash mismatch (the file was changed or damaged "
                         "after it was written)")
    return PolicyFile(arrays, metadata)


def save_policy(path: str | os.PathLike[str], arrays: Mapping[str, Any],
                metadata: Mapping[str, Any]) -> None:
    """Write a policy file atomically (a temp file in the same folder, then
    ``os.replace``). ``arrays``: the network's weights (numpy arrays or torch tensors);
    ``metadata``: everything the module docstring lists except ``kind``,
    ``format_version`` and ``sha256``, which are set here. Checked by reading it back."""
    weights = {}
    for name, value in arrays.items():
        if hasattr(value, "detach"):
            value = value.detach().cpu().numpy()
        weights[name] = np.array(value, dtype=np.float32, order="C")  # keeps 0-d shapes
    meta = {**metadata, "kind": POLICY_KIND, "format_version": FORMAT_VERSION}
    meta.pop("sha256", None)
    meta = json.loads(json.dumps(meta))  # what load_policy will see (tuples become lists)
    meta["sha256"] = content_hash(weights, meta)
    buffer = io.BytesIO()
    blob = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    np.savez(buffer, **weights, **{METADATA: blob})
    path = Path(path)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(buffer.getvalue())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a policy file is for sharing
        load_policy(tmp)
        os.replace(tmp, path)
    except OSError as exc:  # a read-only folder, a full disk: one line, the old file kept
        raise ValueError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


#: Torch file kinds that carry a playable policy (version-1 policy files and checkpoints).
_LEGACY_KINDS = (POLICY_KIND, "scat-ppo-checkpoint")


def load_any(path: str | os.PathLike[str]) -> PolicyFile:
    """A policy to play from either format: this one, or a torch ``.pt`` policy file or
    training checkpoint (format 1), which needs torch. One ValueError line otherwise."""
    if not os.path.isfile(path) or is_policy_file(path) or not _is_torch_file(path):
        return load_policy(path)
    where = repr(str(path))
    try:
        import torch  # noqa: F401  (safe_torch_load needs it)
    except ImportError:
        raise ValueError(f"{where} is a torch policy file (format 1): reading it needs torch "
                         "(pip install 'scat-env[train]'); python -m training.policy_net "
                         "convert rewrites it as .npz") from None
    data = safe_torch_load(path, where)
    if not isinstance(data, dict) or data.get("kind") not in _LEGACY_KINDS:
        found = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"{where} is not a {POLICY_KIND} file (found {found!r})")
    if data.get("format_version") != 1:
        raise ValueError(f"{where} has torch format version {data.get('format_version')!r}; "
                         "this scat-env reads version 1")
    shapes = expected_shapes(check_arch(data, where), data["num_actions"])
    check_parameters(shapes, where)
    state = check_state_dict(data.get("state_dict"), where)
    arrays = {k: v.detach().cpu().numpy() for k, v in state.items() if k in shapes}
    if set(arrays) != set(shapes) or any(arrays[k].shape != shapes[k] for k in shapes):
        raise ValueError(f"{where}: weights do not fit the architecture")
    keep = ("kind", "format_version", "arch", "max_players", "num_actions", "rules", "config",
            "metrics")
    meta = {k: data[k] for k in keep if k in data}
    return PolicyFile(arrays, meta)


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


def _is_torch_file(path: str | os.PathLike[str]) -> bool:
    """A torch save: a zip whose members include ``<name>/data.pkl`` (and no more members
    than a torch file has: a larger one is left to :func:`load_policy` to refuse)."""
    try:
        check_zip_directory(path, repr(str(path)), MAX_TORCH_ENTRIES)
        with zipfile.ZipFile(path) as zf:
            return any(n.endswith("/data.pkl") for n in zf.namelist())
    except (OSError, ValueError, zipfile.BadZipFile):
        return False


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
    """The shipped file ``name`` names (``scat_ppo_set`` -> its manifest, ``scat_ppo`` ->
    ``scat_ppo.npz``), or None when ``name`` is a path or names nothing shipped."""
    folder = shipped_dir()
    if folder is None or not name or os.sep in name or "/" in name:
        return None
    for candidate in (name, f"{name}.yaml", f"{name}.npz"):
        if (folder / candidate).is_file():
            return str(folder / candidate)
    return None
