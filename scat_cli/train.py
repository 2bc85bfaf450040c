"""``scat train``: train a policy from a YAML config, then evaluate it against the baselines.

    scat train --config configs/train/default.yaml            # runs/default/
    scat train --config configs/train/default.yaml --resume   # continue from the checkpoint
    scat train --config configs/train/sb3.yaml --out runs/x   # stable-baselines3 path

The run folder holds ``checkpoint.pt`` (or ``.zip`` for SB3), ``policy.pt`` (native: the
small file for ``ppo:PATH``), ``tb/`` (TensorBoard), ``report.md`` / ``summary.json``
(final evaluation with 95% CIs) and ``learning_curve.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train", help="train a PPO policy (native or stable-baselines3) from a YAML config",
        description=(__doc__ or "").split("\n\n")[0].replace("``", ""))
    p.add_argument("--config", required=True, help="training config YAML (configs/train/*.yaml)")
    p.add_argument("--out", default=None, help="run folder (default: runs/<config name>)")
    p.add_argument("--resume", action="store_true", help="continue from the run folder's checkpoint")
    p.add_argument("--steps", type=int, default=None, help="override total_steps")
    p.add_argument("--time-limit", type=float, default=None, help="override time_limit_s (seconds)")
    p.add_argument("--seed", type=int, default=None, help="override the seed")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # One BLAS/OpenMP thread: on a shared 2-core box, thread pools spinning against each
    # other made batched inference ~30x slower (measured); torch threads come from the config.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    from training.config import load_config

    overrides = {}
    if args.steps is not None:
        overrides["total_steps"] = args.steps
    if args.time_limit is not None:
        overrides["time_limit_s"] = args.time_limit
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.no_progress:
        overrides["progress"] = False
    trainer, cfg = load_config(args.config, overrides)
    out = Path(args.out or Path("runs") / cfg.name)
    print(f"scat train: {trainer} trainer, run folder {out}", file=sys.stderr)
    if trainer == "native":
        from training.ppo import train
    else:
        from training.sb3_train import train
    summary = train(cfg, out, resume=args.resume, log=lambda m: print(m, file=sys.stderr))
    report = _final_report(trainer, cfg, out, summary)
    (out / "report.md").write_text(report)
    print(report)
    print(f"wrote {out / 'report.md'}, {out / 'summary.json'}"
          + (f", {out / 'learning_curve.png'}" if (out / "learning_curve.png").exists() else ""))
    return 0


def _final_report(trainer: str, cfg: object, out: Path, summary: dict) -> str:
    from training.evaluate import format_report

    lines = [f"# Training report: {getattr(cfg, 'name', '?')} ({trainer})", ""]
    speed = summary.get("samples_per_s_this_session") or summary.get("env_steps_per_s_this_session")
    lines.append(f"- trained for {summary.get('elapsed_s', 0):.0f} s, "
                 f"{summary.get('env_steps', 0):,} env steps"
                 + (f", {summary['samples']:,} learner samples" if "samples" in summary else "")
                 + (f"; {speed:,.0f} per second this session" if speed else ""))
    lines.append(f"- config: `{json.dumps(getattr(cfg, '__dict__', {}), default=str)}`")
    lines.append("")
    if "final_eval" in summary:
        final = summary["final_eval"]
        from training.evaluate import FINAL_EVAL_SEED

        how = (f"duplicate deals from seed {FINAL_EVAL_SEED}, every deal in all seat rotations, "
               "95% CIs clustered by deal" if "harness" in final else "seats rotated, Wilson 95% CIs")
        lines.append(format_report(final, f"Final evaluation (policy in one seat vs a field of "
                                   f"one baseline; {how})"))
        if "seconds" in final:
            lines.append(f"{sum(final['games'].values())} games in {final['seconds']:.0f} s.")
    return "\n".join(lines)
