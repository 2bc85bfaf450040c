"""Playing a tournament's games as Ray tasks on a cluster (``backend="ray"``).

``ray_address``, else the ``RAY_ADDRESS`` environment variable, else a Ray instance started
here for the run. Only *where* a chunk of keys is played differs from the local pool: the
keys, the deal seeds, the log, resume, verification and the lock are one code path
(:func:`training.tournament.run.run_tournament`), so a Ray run writes the same bytes as a
local one (``tests/test_tournament_ray.py``). ``docs/SCALING.md`` shows a cluster and
measured speeds. Ray is an optional extra, imported only when a Ray run starts.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .runner import _WORKER, PlayChunks, _init_worker, _play_chunk
from .schedule import TournamentConfig

#: How to install Ray for scat-env: the package is not on an index, so its ``[ray]`` extra is
#: installed from a checkout (or ``pip install "scat-env[ray] @ file:///PATH/TO/scat-env"``).
RAY_INSTALL = 'pip install "ray>=2.40,<3", or pip install -e ".[ray]" in a scat-env checkout'

#: The one line a Ray run without Ray installed stops with.
RAY_MISSING = f"--backend ray needs Ray ({RAY_INSTALL})"


def _ray_play_chunk(fingerprint: str, config: TournamentConfig,
                    keys: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    """A chunk played as a Ray task. A Ray worker process runs many tasks, of this run and
    maybe of others, so it rebuilds its state (rules, seatings, cached agents) only when the
    configuration differs from the one it last played (``fingerprint``)."""
    if _WORKER.get("fingerprint") != fingerprint:
        _init_worker(config, ignore_sigint=False)  # Ray owns the worker's signals
        _WORKER["fingerprint"] = fingerprint
    return _play_chunk(keys)


def require_ray(what: str = "--backend ray") -> Any:
    """The ``ray`` module, or ValueError :data:`RAY_MISSING` (Ray is an optional extra;
    ``what``: the option that needs it)."""
    try:
        import ray
    except ImportError:
        raise ValueError(RAY_MISSING.replace("--backend ray", what, 1)) from None
    return ray


def missing_on_worker(exc: BaseException) -> ValueError | None:
    """One line for a Ray worker that could not import a module (Ray's own report is the
    worker's whole traceback, in colour): what is missing, on which node, how to install;
    None for any other failure (its traceback is the report)."""
    node, name = getattr(exc, "ip", None), None
    cause = getattr(exc, "cause", None)
    if isinstance(cause, ImportError):  # a task's error carries the worker's exception
        name = cause.name or (str(cause).strip().splitlines() or ["a module"])[0]
    else:  # an actor that died while built carries only the text of its traceback
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
        last = (text.strip().splitlines() or [""])[-1]
        found = re.match(r"(?:ModuleNotFoundError|ImportError): No module named '([^']+)'",
                         last)
        if found is None:
            return None
        name = found.group(1)
        where = re.search(r"\bip=([^,)\s]+)", text)
        node = where.group(1) if where else node
    if name is None:
        return None
    return ValueError(f"a Ray worker on node {node or '(unknown)'} cannot import {name!r}: "
                      "install scat-env and its dependencies there as on this machine, the "
                      f"same version on every node ({RAY_INSTALL})")


def check_ray_address(address: str | None) -> None:
    """Refuse, in one line and before anything is written to the run folder, a Ray address
    (``address``, else ``RAY_ADDRESS``) where no cluster answers; no address (or ``local``)
    starts a Ray instance here and needs no check. ``ValueError`` :data:`RAY_MISSING` when
    Ray is not installed."""
    require_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address not in (None, "local"):
        _check_reachable(address)


def _auto_address(address: str) -> str:
    """What ``auto`` stands for: the cluster ``ray start`` last ran on this machine, which
    Ray notes in its temp folder. A cluster that has since stopped leaves that note behind,
    and ``ray.init("auto")`` would then retry its dead address for minutes, so the address
    is looked up here and checked like any other. Ray's lookup is not a public API: where it
    is missing or fails otherwise, ``auto`` is left to Ray."""
    try:
        from ray._private.services import get_ray_address_from_environment

        found = get_ray_address_from_environment(address, None)
    except ConnectionError as exc:
        first = (str(exc).strip().splitlines() or ["none found"])[0].split(". ")[0]
        raise ValueError(f"no Ray cluster runs on this machine for --ray-address auto "
                         f"(start one with ray start --head): {first}") from None
    except Exception:  # another Ray version: its own start-up decides
        return address
    return found if isinstance(found, str) and found else address


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse, in one line, a Ray address where nothing listens: ``ray.init`` would keep
    retrying it for minutes. ``auto`` is first resolved to the address it stands for."""
    shown = address
    if address == "auto":
        address = _auto_address(address)
        if address == "auto":
            return
        shown = f"auto ({address})"
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"bad Ray address {address!r}: give the head node's HOST:PORT "
                         "(e.g. 10.0.0.5:6379), ray://HOST:PORT or auto")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ValueError(f"cannot reach a Ray cluster at {shown}: "
                         f"{exc.strerror or str(exc) or type(exc).__name__}") from None
    if not address.startswith("ray://"):  # Ray Client's port speaks another protocol
        _check_gcs(f"{host}:{port}", shown, timeout)


#: The head's Global Control Service call that :func:`_check_gcs` makes: the one ``ray.init``
#: makes first (an empty request is a valid one).
GCS_PROBE = "/ray.rpc.NodeInfoGcsService/GetClusterId"


def ray_token() -> str | None:
    """This machine's Ray token, where Ray 2.60 looks for it: ``RAY_AUTH_TOKEN``, the file
    ``RAY_AUTH_TOKEN_PATH``, else ``~/.ray/auth_token``; None when there is none."""
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    if token:
        return token
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _gcs_status(address: str, timeout: float, token: str | None) -> Any:
    """The gRPC status of :data:`GCS_PROBE` at ``address`` (with ``token`` when given)."""
    import grpc  # a dependency of Ray's

    metadata = [("authorization", f"Bearer {token}")] if token else []
    with grpc.insecure_channel(address) as channel:
        try:
            channel.unary_unary(GCS_PROBE)(b"", timeout=timeout, metadata=metadata)
        except grpc.RpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


def _check_gcs(address: str, shown: str, timeout: float) -> None:
    """Refuse, in one line, an address that accepts connections but is not a Ray head's
    port (a proxy, another service: ``ray.init`` then retried for 20 s to minutes), and a
    cluster whose token this machine lacks (``ray.init`` said only "failed to connect",
    after 20 s). Ray 2.60 sends a token only with ``RAY_AUTH_MODE=token``."""
    try:
        import grpc
    except ImportError:  # another Ray: its own start-up decides
        return
    code = _gcs_status(address, timeout, None)
    if code == grpc.StatusCode.OK:
        return
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        raise ValueError(f"cannot reach a Ray cluster at {shown}: no answer from its "
                         f"control service within {timeout:g} s ({code.name})")
    if code != grpc.StatusCode.UNAUTHENTICATED:
        raise ValueError(f"no Ray cluster at {shown}: the port answers, but not as a Ray "
                         f"head ({code.name}); give the address ray start --head printed")
    token = ray_token()
    if os.environ.get("RAY_AUTH_MODE") != "token":
        raise ValueError(f"the Ray cluster at {shown} uses token authentication: set "
                         "RAY_AUTH_MODE=token and give this machine the head's token "
                         "(~/.ray/auth_token or RAY_AUTH_TOKEN; docs/SCALING.md)")
    if token is None:
        raise ValueError(f"the Ray cluster at {shown} uses token authentication and this "
                         "machine has no token: copy the head's ~/.ray/auth_token here or "
                         "set RAY_AUTH_TOKEN (docs/SCALING.md)")
    if _gcs_status(address, timeout, token) == grpc.StatusCode.UNAUTHENTICATED:
        raise ValueError(f"the Ray cluster at {shown} refuses this machine's token: copy the "
                         "head's ~/.ray/auth_token here or set RAY_AUTH_TOKEN "
                         "(docs/SCALING.md)")


def _cancel(ray: Any, pending: set[Any]) -> None:
    """Cancel the chunks still queued or running (Ctrl-C, an error): their games are not in
    the log yet, so a resume plays them; the cluster stops spending time on them now."""
    for ref in pending:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
    pending.clear()


def init_ray(address: str | None, local: dict[str, Any], cluster_logging: str) -> None:
    """``ray.init``, for every caller the same way: no address (or ``local``) starts a new
    Ray instance on this machine with ``local``'s settings (no dashboard, no usage report, no
    worker output on this terminal); an address is checked to answer first and joined with
    ``cluster_logging``. Whatever goes wrong while starting (Ctrl-C, no cluster, another
    Ray) shuts down the half that started; a failure to connect is one ``ValueError`` line,
    with the hint Ray leaves out when a cluster wants a token."""
    ray = require_ray()
    try:
        if address in (None, "local"):
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            ray.init(address="local", include_dashboard=False, log_to_driver=False,
                     logging_level="ERROR", **local)
        else:
            _check_reachable(address)
            ray.init(address=address, log_to_driver=False, logging_level=cluster_logging)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            ray.shutdown()  # whatever half of the start-up happened
        if type(exc).__name__ == "AuthenticationError":  # RAY_AUTH_MODE=token, no token
            raise ValueError(f"cannot use the Ray cluster at {address or 'this machine'}: "
                             "RAY_AUTH_MODE=token but this machine has no Ray token: copy the "
                             "head's ~/.ray/auth_token here or set RAY_AUTH_TOKEN "
                             "(docs/SCALING.md)") from None
        if not isinstance(exc, (ConnectionError, RuntimeError)):
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = ""
        if address is not None:
            # Ray says only "failed to connect" when the cluster wants another token.
            hint = ("; if the cluster uses token authentication, set RAY_AUTH_MODE=token "
                    "and give this machine the head's token (docs/SCALING.md)")
        raise ValueError(f"cannot use the Ray cluster at {address or 'this machine'}: "
                         f"{first}{hint}") from None


def start_training_ray(address: str | None, slots: int, what: str = "--backend ray") -> bool:
    """A trainer's Ray connection: ``address`` joined (checked to answer first), or a Ray
    instance of the run's own on this machine with a CPU slot for each of ``slots`` actors
    (an actor without one waits for ever) and the workers importing this checkout; True
    when this call connected, so the run disconnects at its end. A process already
    connected keeps its connection (an ``address`` then is refused in one line)."""
    ray = require_ray(what)
    if ray.is_initialized():
        if address is not None:
            raise ValueError("Ray is already initialised in this process: leave ray_address "
                             "out (null) to train on that connection")
        return False
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    init_ray(address, {"num_cpus": max(os.cpu_count() or 1, slots), "runtime_env": {
        "env_vars": {"PYTHONPATH": path, "OMP_NUM_THREADS": "1"}}}, "ERROR")
    return True


@contextmanager
def ray_player(
    config: TournamentConfig, workers: int | None, jobs: int, address: str | None
) -> Iterator[tuple[PlayChunks, int]]:
    """Chunks played as Ray tasks, at most two per worker in flight (a free CPU always has
    the next chunk, and Ctrl-C cancels little). Records come back whole per chunk, in the
    order chunks finish, exactly as the local pool gives them, so the caller's log, resume
    and checks are the same code.

    Where: the connection this process already holds; else ``address`` or ``RAY_ADDRESS``
    (checked to answer first); else a Ray instance started here for this run, with
    ``workers`` CPUs, no dashboard, no usage report and no worker output on this terminal.
    A connection or instance opened here is closed when the context ends."""
    ray = require_ray()
    opened = False
    if ray.is_initialized():
        if address is not None:
            raise ValueError("Ray is already initialised in this process: leave the Ray "
                             "address out to play on that connection")
    else:
        address = address or os.environ.get("RAY_ADDRESS") or None
        # "local": a new instance even where `ray start` runs one (that one is `auto`).
        # Nobody else uses it: its start-up notes would only be noise.
        init_ray(address, {"num_cpus": workers or os.cpu_count() or 1}, "WARNING")
        opened = True
    pending: set[Any] = set()
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        workers = max(1, min(workers or cpus or 1, max(1, jobs)))
        task = ray.remote(num_cpus=1)(_ray_play_chunk)
        config_ref = ray.put(config)  # sent to the cluster once, not with every chunk
        fingerprint = hashlib.sha256(
            json.dumps(config.to_dict(), sort_keys=True).encode()).hexdigest()

        def play(chunks: list[list[tuple[int, int, int]]]) -> Iterator[list[dict[str, Any]]]:
            queue = iter(chunks)
            try:
                for chunk in itertools.islice(queue, 2 * workers):
                    pending.add(task.remote(fingerprint, config_ref, chunk))
                while pending:
                    ready, _ = ray.wait(list(pending), num_returns=1)
                    pending.discard(ready[0])
                    try:
                        records = ray.get(ready[0])
                    except ray.exceptions.RayTaskError as exc:
                        missing = missing_on_worker(exc)
                        if missing is None:
                            raise
                        raise missing from None
                    for chunk in itertools.islice(queue, 1):  # keep the cluster busy
                        pending.add(task.remote(fingerprint, config_ref, chunk))
                    yield records
            finally:
                _cancel(ray, pending)

        yield play, workers
    except BaseException:
        _cancel(ray, pending)
        raise
    finally:
        if opened:
            ray.shutdown()
