"""``pip install`` from a wheel works anywhere: the shipped policies are package data and a
game against the default opponent needs numpy, not torch.

Builds the wheel from a copy of the sources (so the checkout gets no ``build/`` folder),
installs it without dependencies and without the network into a fresh virtual environment
that sees this interpreter's packages (numpy, rich...), blocks torch with a
``sitecustomize`` that refuses to import it, then plays from an empty folder: a game through
the Python API, ``scat watch`` and ``scat play`` driven through a pipe. About 15 s.

"This interpreter's packages" are those of the environment running the tests, whatever it
is: the system's Python or a virtual environment (as the README's ``pip install -e
".[dev,train]"`` into a fresh venv makes it). ``venv --system-site-packages`` would see the
*base* interpreter's packages instead (no starlette, numba or rich in a fresh venv), so the
new environment is given this one's site-packages folders by a ``.pth`` file: plain folder
lines, so this environment's own ``.pth`` hooks (its editable install of the checkout among
them) are not run, and the wheel installed into the new environment is the one imported.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hang_limits import hang_limit

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scat_env", "agents", "training", "scat_session", "scat_cli", "scat_web")
#: What ``pip install scat-env`` brings: the environment's core (the engine, the batched
#: engine, the PettingZoo and Gymnasium APIs, the YAML configs) and rich for ``scat play``.
CORE = {"numpy", "gymnasium", "pettingzoo", "pyyaml", "numba", "rich"}
#: The extras installed by use, and a library each must bring.
EXTRAS = {"web": {"starlette", "uvicorn"}, "plots": {"matplotlib"}, "ratings": {"openskill"}}

BLOCK_TORCH = '''
import importlib.abc
import sys


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, _Refuse())
'''

#: As :data:`BLOCK_TORCH`, and Starlette too: an install without the ``web`` extra.
BLOCK_WEB = BLOCK_TORCH.replace('name == "torch" or name.startswith("torch.")',
                                'name.partition(".")[0] in ("torch", "starlette")')

API_GAME = '''
import sys
from pathlib import Path

import agents
from agents.match import play_game
from agents.registry import DEFAULT_POLICIES, make_agent
from scat_env import Rules

assert Path(agents.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), agents.__file__
players = [make_agent(DEFAULT_POLICIES[0], seed=0), make_agent("expert", seed=1),
           make_agent("compact:scat_batch", seed=2)]
record = play_game(players, Rules(), seed=3)
assert record.winner is not None and not record.truncated
assert "torch" not in sys.modules
try:
    import torch  # noqa: F401
except ModuleNotFoundError:
    print("game ok, torch blocked")
'''


SERVE_PAGE = '''
import sys
from pathlib import Path

import scat_web
from starlette.testclient import TestClient
from scat_web.app import STATIC_DIR, create_app

assert Path(scat_web.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
client = TestClient(create_app(Path.cwd() / "web", token=None), base_url="http://127.0.0.1")
page = client.get("/")
assert page.status_code == 200, page.status_code
index = STATIC_DIR / "index.html"
if index.is_file():
    assert page.content == index.read_bytes()
files = [f for f in STATIC_DIR.rglob("*") if f.is_file()]
for f in files:
    got = client.get("/static/" + f.relative_to(STATIC_DIR).as_posix())
    assert got.status_code == 200 and got.content == f.read_bytes(), f
game = client.post("/api/games", json={"players": 2, "opponents": "greedy"})
assert game.status_code == 201, game.text
print(f"page ok, {len(files)} static files")
'''


def _run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None,
         ) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                         timeout=hang_limit(600))
    assert out.returncode == 0, f"{cmd}: {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return out


def site_folders() -> list[str]:
    """The folders this interpreter imports installed packages from (its environment's
    site-packages, and the user's when it reads them), in its own order."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        folders.append(site.getusersitepackages())
    return [f for f in dict.fromkeys(folders) if os.path.isdir(f)]


def make_venv_seeing_these_packages(venv: Path, cwd: Path, env: dict[str, str]) -> Path:
    """A new virtual environment, its own site-packages first, then this interpreter's
    (:func:`site_folders`, through a ``.pth`` file): what ``pip install`` puts into it is
    what it imports, and every dependency comes from here. Returns its ``python``."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd, env)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                   cwd, env).stdout.strip()
    Path(purelib, "zz_scat_test_outer_site.pth").write_text("\n".join(site_folders()) + "\n")
    return python


def build_wheel(src: Path, dist: Path, cwd: Path, env: dict[str, str]) -> Path:
    """The wheel of ``src``, built by this interpreter's pip. Without build isolation when
    setuptools is here (no network); a Python without it (3.12 and later venvs) lets pip
    fetch the build backend ``pyproject.toml`` names, as any user's install does."""
    isolation = [] if importlib.util.find_spec("setuptools") is None else ["--no-build-isolation"]
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(dist),
          str(src)], cwd, env)
    return next(dist.glob("scat_env-*.whl"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in (*PACKAGES, "policies"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    wheel = build_wheel(src, base / "dist", base, env)
    python = make_venv_seeing_these_packages(base / "venv", base, env)
    _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)],
         base, env)
    block = base / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(BLOCK_TORCH)
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    env = {**env, "PYTHONPATH": str(block), "SCAT_REPLAY_DIR": str(elsewhere / "replays"),
           "SCAT_HOME": str(elsewhere / "home")}
    return python, env, wheel


def test_the_wheel_holds_every_package_and_the_shipped_policies(installed):
    _, _, wheel = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for init in ROOT.glob("*/**/__init__.py"):
        rel = init.relative_to(ROOT).as_posix()
        if rel.split("/")[0] in PACKAGES:
            assert rel in names, f"{rel} is missing from the wheel (pyproject.toml packages)"
    shipped = {p.name for p in (ROOT / "policies").glob("*.npz")} | {"scat_batch_set.yaml"}
    assert {f"scat_policies/{n}" for n in shipped} <= names
    assert not any(n.endswith(".pt") for n in names)
    static = ROOT / "scat_web" / "static"
    for f in static.rglob("*") if static.is_dir() else ():
        if f.is_file() and "__pycache__" not in f.parts:
            rel = f.relative_to(ROOT).as_posix()
            assert rel in names, f"{rel} is missing from the wheel (package-data scat_web)"


def test_the_installed_server_serves_the_page_from_another_folder(installed):
    """``pip install .`` alone gives a working ``scat serve``: the page's files are package
    data, served from the installed package."""
    python, env, _ = installed
    elsewhere = Path(env["SCAT_REPLAY_DIR"]).parent
    out = _run([str(python), "-c", SERVE_PAGE], elsewhere, env)
    assert "page ok" in out.stdout


def test_a_game_against_the_default_opponent_needs_no_torch(installed):
    python, env, _ = installed
    elsewhere = Path(env["SCAT_REPLAY_DIR"]).parent
    out = _run([str(python), "-c", API_GAME], elsewhere, env)
    assert "game ok, torch blocked" in out.stdout
    scat = [str(python.with_name("scat"))]
    out = _run([*scat, "watch", "--agents", "compact:scat_batch_set,expert,greedy", "--fast",
                "--seed", "2"], elsewhere, env)
    assert "wins" in out.stdout.lower() or "winner" in out.stdout.lower(), out.stdout[-500:]
    # A human who always picks the first menu entry, through a pipe.
    out = _run([*scat, "play", "--players", "3", "--fast", "--seed", "3", "--no-color"],
               elsewhere, env, stdin="1\n" * 2000)
    assert "Replay saved" in out.stdout, out.stdout[-500:]


def test_a_retired_torch_policy_file_is_one_clear_line(installed, tmp_path):
    python, env, _ = installed
    legacy = tmp_path / "old.pt"
    with zipfile.ZipFile(legacy, "w") as zf:  # the layout of a torch save
        zf.writestr("old/data.pkl", b"\x80\x02}q\x00.")
    out = subprocess.run([str(python.with_name("scat")), "watch", "--agents",
                          f"compact:{legacy},expert", "--fast", "--seed", "1"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=hang_limit(300))
    assert out.returncode != 0
    assert "retired" in out.stderr and "Traceback" not in out.stderr, out.stderr


def _requirement_name(requirement: str) -> str:
    """``"numpy>=1.23"`` -> ``"numpy"``; ``"scat-env[web,plots]"`` -> ``"scat-env"``."""
    import re

    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower()  # type: ignore[union-attr]


def _project() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_core_dependencies_are_the_environment_core_and_rich():
    """A plain ``pip install scat-env`` plays ``scat play`` and nothing more: the browser
    game, the plots and the ratings are extras (``web``, ``plots``, ``ratings``)."""
    project = _project()
    assert {_requirement_name(r) for r in project["dependencies"]} == CORE


def test_each_extra_brings_its_libraries_and_dev_and_train_bring_them_all():
    """The README's two install commands (``.[dev,train]``) still set up everything."""
    extras = _project()["optional-dependencies"]
    for extra, libraries in EXTRAS.items():
        assert libraries <= {_requirement_name(r) for r in extras[extra]}, extra
    for bundle in ("dev", "train"):
        wanted = f"scat-env[{','.join(EXTRAS)}]"
        assert wanted in extras[bundle], f"{bundle} does not include {wanted}"


def test_scat_serve_without_the_web_extra_is_one_line(installed, tmp_path):
    """The installed ``scat`` finds ``serve`` through its entry point even without Starlette,
    lists it, and running it says in one line what to install (exit 2, no traceback)."""
    python, env, _ = installed
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(BLOCK_WEB)
    env = {**env, "PYTHONPATH": str(block)}
    scat = str(python.with_name("scat"))
    listed = _run([scat, "--help"], tmp_path, env)
    assert "serve" in listed.stdout, listed.stdout
    out = subprocess.run([scat, "serve", "--port", "0", "--data", str(tmp_path / "web")],
                         cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=hang_limit(300))
    assert out.returncode == 2, out.stderr
    assert out.stderr == ("scat serve: error: the browser game needs the web extra: "
                          "pip install 'scat-env[web]'\n"), out.stderr
