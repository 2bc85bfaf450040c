"""The layers of scat-env only point down, and no module imports itself in a loop.

The packages stack as ``scat_env`` (rules, engine, env) < ``agents`` (players, and trained
policy inference) < ``training`` (trainers, tournaments, reports) and, beside it,
``scat_session`` (one person's game: seats, agents' turns, saves, hints, words) < the two
front ends, ``scat_cli`` (the command line and the terminal game) and ``scat_web`` (the
browser game). A package may import only those :data:`BELOW` it, even inside a function: a
lazy import still makes the lower layer unusable without the upper one (playing a trained
policy must not need the trainer). Neither front end imports the other: ``scat serve``
reaches the command line through an entry point (pyproject.toml), not an import. The
imports are read from the source with :mod:`ast`, so the test needs none of the packages'
dependencies.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("scat_env", "agents", "training", "scat_session", "scat_cli", "scat_web")
FRONT_ENDS = ("scat_cli", "scat_web")


def house_map() -> dict[str, tuple[str, ...]]:
    """The README's house map, one line a package, top to bottom: ``name  what it is  -> the
    packages it may import``. The map a reader sees is the rule this test holds the code to."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("\n## The house\n", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    found = {}
    for line in block.splitlines():
        name, _, arrow = line.partition("->")
        found[name.split()[0]] = tuple(a.strip() for a in arrow.split(",") if a.strip())
    return found


#: The packages each package may import (besides itself): the README's house map.
BELOW = house_map()


def _modules() -> dict[str, Path]:
    """Every module of the layered packages, by dotted name."""
    found = {}
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, *, top_level_only: bool) -> set[str]:
    """Dotted names of the project modules that ``name`` imports (resolved relative imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            # ``from pkg import mod`` imports the submodule pkg.mod when there is one.
            out.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in out if m.split(".")[0] in LAYERS}


MODULES = _modules()


def _reached(package: str) -> dict[str, set[str]]:
    """The other layered packages each module of ``package`` imports, lazily or not."""
    return {module: {t.split(".")[0] for t in _imports(module, path, top_level_only=False)}
            - {package}
            for module, path in MODULES.items() if module.split(".")[0] == package}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_only_point_down_the_layers(module: str) -> None:
    package = module.split(".")[0]
    allowed = {package, *BELOW[package]}
    upward = sorted(target for target in _imports(module, MODULES[module], top_level_only=False)
                    if target.split(".")[0] not in allowed)
    assert not upward, f"{module} imports a layer above it: {', '.join(upward)}"


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_no_front_end_imports_the_other(front_end: str) -> None:
    """The terminal and the browser game share :mod:`scat_session`, never each other, not
    even lazily: a change to one screen cannot break the other."""
    (other,) = (f for f in FRONT_ENDS if f != front_end)
    crossing = sorted(m for m, reached in _reached(front_end).items() if other in reached)
    assert not crossing, f"{front_end} imports {other} in: {', '.join(crossing)}"


def test_the_session_imports_neither_front_end_nor_training() -> None:
    """:mod:`scat_session` is below both front ends and beside the trainers: a game in the
    browser or the terminal never loads a trainer."""
    reached = _reached("scat_session")
    assert reached, "scat_session has no modules"
    bad = sorted(f"{m} -> {', '.join(sorted(r & {'scat_cli', 'scat_web', 'training'}))}"
                 for m, r in reached.items() if r & {"scat_cli", "scat_web", "training"})
    assert not bad, "scat_session imports above it: " + "; ".join(bad)


def test_no_import_cycle_between_modules() -> None:
    """Module-level imports form no cycle (a lazy import inside a function is allowed to
    reach sideways, never up: that is the test above)."""
    graph = {
        name: {t for t in _imports(name, path, top_level_only=True) if t in MODULES and t != name}
        for name, path in MODULES.items()
    }
    # A package's __init__ importing its own submodules is how packages work, not a cycle.
    for name in graph:
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The parser resolves relative and lazy imports (so the tests above can fail)."""
    mod = tmp_path / "agents" / "x.py"
    mod.parent.mkdir()
    mod.write_text("def f():\n    from training.ppo import train\n    from . import base\n")
    found = _imports("agents.x", mod, top_level_only=False)
    assert {"training.ppo", "training.ppo.train", "agents.base"} <= found
    assert "training.ppo" not in _imports("agents.x", mod, top_level_only=True)


def test_no_function_over_cyclomatic_complexity_20_without_a_reason() -> None:
    """ruff's C901 (max 20, set in pyproject.toml) passes: a function past it carries a
    ``noqa: C901`` beside a comment saying why it stays that way."""
    import shutil
    import subprocess

    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    proc = subprocess.run(
        [ruff, "check", "--select", "C901", "--output-format", "concise", *LAYERS],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for path in sorted(MODULES.values()):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if line.rstrip().endswith("# noqa: C901"):
                assert i and lines[i - 1].strip().startswith("#"), (
                    f"{path.name}:{i + 1}: a noqa: C901 needs a comment above it saying why")


def test_the_house_map_names_every_package_once_and_its_arrows_point_down() -> None:
    """The README's map lists each package of the house, and a package's arrow names only
    packages listed below it: the layers are a stack, not a web."""
    order = list(BELOW)
    assert sorted(order) == sorted(LAYERS), f"the README's house map lists {order}"
    for i, package in enumerate(order):
        upward = [t for t in BELOW[package] if t not in order[i + 1:]]
        assert not upward, f"the house map has {package} point up or nowhere: {upward}"


def test_one_trained_policy_kind_in_the_registry_besides_the_library_adapters() -> None:
    """The house plays trained policies of one kind (``compact:``, the batched trainer's);
    the others are the rule-based and search players and the adapters of other libraries'
    policies (``agents/adapters/``). A second trained-policy stack would show here."""
    import json
    import os
    import subprocess
    import sys

    # A fresh process: other test files register kinds of their own in the one they share.
    code = ("import json; from agents import registry; registry.available(); "
            "print(json.dumps({n: f.__module__ for n, (f, _) in registry._FACTORIES.items()}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    by_module = json.loads(out.stdout)
    adapters = {n for n, m in by_module.items() if m.startswith("agents.adapters.")}
    played = {"random", "greedy", "threshold", "expert", "ismcts",
              "search"}  # search plays the compact: set; it trains nothing
    trained = set(by_module) - played - adapters
    assert trained == {"compact"}, by_module
    assert adapters == {"sb3", "rllib", "torchrl"}, by_module
