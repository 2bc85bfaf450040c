"""``scat train``: train a policy from a YAML config, then evaluate it against the baselines.

    scat train --config configs/train/default.yaml              # runs/default/ (batched)
    scat train --config configs/train/sb3.yaml --resume         # continue from the checkpoint
    scat train --config configs/train/default.yaml --overwrite  # start that run folder again
    scat train --config configs/train/sb3.yaml --out runs/x     # stable-baselines3 path
    scat train --config configs/train/rllib.yaml                # RLlib PPO (pip install -e '.[rllib]')

The config's ``trainer:`` is looked up in :mod:`training.trainers`. The run folder holds
``policy.npz`` (batch: the file ``compact:PATH`` plays), ``checkpoint.zip`` (SB3) or
``state.json`` and the ``policy/`` export for ``rllib:PATH`` (RLlib), ``tb/``
(TensorBoard), ``report.md`` / ``summary.json`` (final evaluation with 95% CIs) and
``learning_curve.png``. docs/TRAINING.md has the details.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from .errors import CliError, write_error

#: What a run writes into its folder: a folder holding any of these holds a run, and
#: ``--overwrite`` removes exactly these (never anything else the folder may hold).
#: ``policy.pt``: the policy file of runs written before policy files became ``.npz``.
RUN_FILES = ("checkpoint.pt", "checkpoint.zip", "checkpoint.tmp.zip", "policy.npz", "policy.pt",
             "config.json", "state.json", "summary.json", "report.md", "learning_curve.png")
RUN_FOLDERS = ("tb", "final_eval", "snapshots", "policy")
#: What ``scat train`` says when a config names the RLlib trainer and RLlib is missing.
RLLIB_MISSING = "RLlib is not installed: pip install -e '.[rllib]'"
#: What it says when another trainer's libraries are missing (torch, stable-baselines3...).
TRAIN_MISSING = "the {trainer} trainer needs {name}, which is not installed: {install}"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train", help="train a policy (batched PPO, stable-baselines3 or RLlib) from a YAML config",
        description=(__doc__ or "").split("\n\n")[0].replace("``", ""))
    p.add_argument("--config", required=True, help="training config YAML (configs/train/*.yaml)")
    p.add_argument("--out", default=None, help="run folder (default: runs/<config name>)")
    again = p.add_mutually_exclusive_group()
    again.add_argument("--resume", action="store_true",
                       help="continue the run in the run folder from its checkpoint")
    again.add_argument("--overwrite", action="store_true",
                       help="delete the run in the run folder and start again")
    p.add_argument("--samples", type=int, default=None,
                   help="override total_samples (learner decisions)")
    p.add_argument("--time-limit", type=float, default=None, help="override time_limit_s (seconds)")
    p.add_argument("--seed", type=int, default=None, help="override the seed")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def existing_run(out: Path) -> list[str]:
    """The run files and folders already in ``out`` (empty: no run there)."""
    return [name for name in RUN_FILES + RUN_FOLDERS if (out / name).exists()]


def prepare_run_folder(out: Path, resume: bool, overwrite: bool) -> None:
    """Refuse to mix two runs in one folder, as ``scat tournament`` does: a folder that holds
    a run needs ``--resume`` (continue it) or ``--overwrite`` (delete it first)."""
    found = existing_run(out)
    if resume and not found:
        raise CliError(f"--resume: {out} holds no run to continue")
    if found and not (resume or overwrite):
        raise CliError(f"{out} already holds a run ({', '.join(found[:3])}): pass --resume to "
                       "continue it, --overwrite to start again, or another --out")
    if overwrite:
        for name in found:
            path = out / name
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()


def run(args: argparse.Namespace) -> int:
    # One BLAS/OpenMP thread: scat_cli's __init__ sets it; torch threads come from the config
    from training.config import load_config

    overrides: dict[str, object] = {}
    if args.samples is not None:
        overrides["total_samples"] = args.samples
    if args.time_limit is not None:
        overrides["time_limit_s"] = args.time_limit
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.no_progress:
        overrides["progress"] = False
    trainer, cfg = load_config(args.config, overrides)
    if trainer == "rllib":
        require_rllib()
    out = Path(args.out or Path("runs") / cfg.name)
    try:
        summary = _train_in(out, trainer, cfg, args)
    except OSError as exc:  # a read-only folder, a full disk: one line, exit status 2
        raise write_error(exc) from None
    if "final_eval" in summary:
        from training.evaluate import format_report

        print(format_report(summary["final_eval"], "Final evaluation"))
    written = [out / "report.md", out / "summary.json", out / "learning_curve.png"]
    print("wrote " + ", ".join(str(p) for p in written if p.exists()))
    return 0


def require_rllib() -> None:
    """Refuse an RLlib config in one line where RLlib (or a library it needs) is missing."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError:
        raise CliError(RLLIB_MISSING) from None


def _train_in(out: Path, trainer: str, cfg: object, args: argparse.Namespace) -> dict[str, object]:
    """Hold ``out``, check it, train, write the report; returns the run's summary.

    The lock is held from the folder check to the report: a second run cannot pass the
    check, nor --overwrite delete a running run's files. Checkpoints are written atomically
    (a failed write keeps the previous one), so a run stopped here by a full disk resumes."""
    from training.runlock import exclusive_folder

    train = trainer_function(trainer)  # before the folder: a missing library leaves nothing
    with exclusive_folder(out, "training run"):
        prepare_run_folder(out, args.resume, args.overwrite)
        print(f"scat train: {trainer} trainer, run folder {out}", file=sys.stderr)
        summary = train(cfg, out, resume=args.resume, log=lambda m: print(m, file=sys.stderr))
        from training.evaluate import run_report

        (out / "report.md").write_text(run_report(trainer, cfg, out, summary))
    return summary


def trainer_function(trainer: str) -> Any:
    """The ``train`` function of ``trainer`` (:mod:`training.trainers`), imported; a library
    it needs that is not installed (torch without the ``train`` extra) is one line naming
    the extra to install."""
    from training.trainers import trainer as find_trainer

    found = find_trainer(trainer)
    try:
        return found.train_function()
    except ImportError as exc:
        name = (exc.name or "a library").partition(".")[0]
        if name in ("training", "agents", "scat_env", "scat_cli"):
            raise  # this package broken, not a library missing: the traceback says where
        if trainer == "rllib":
            raise CliError(RLLIB_MISSING) from None
        raise CliError(TRAIN_MISSING.format(trainer=trainer, name=name,
                                            install=found.install)) from None
