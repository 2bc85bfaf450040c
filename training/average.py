"""Average the weights of compact policies of one network into a new policy file.

Two runs continued from the same file (a leg at three players alone beside one at three and
six, two seeds of one leg) end near each other in weight space, and the mean of their
weights often plays better than either: the noise of each run's last updates averages out
(Wortsman et al., 2022, "Model soups"; Izmailov et al., 2018, stochastic weight averaging).
The result is one compact file, as fast to play as each of its parts, unlike a set whose
member is a list of files (:class:`agents.compact.CompactSet`), which runs every file at every
decision and averages their logits.

Averaging is only meaningful between networks of one lineage, so each file must have the
same architecture (hidden width, layers, observation pieces, expert advice, action space)
as the first; a file that differs is refused in one line. The result's metadata is the first
file's, with the presets and table sizes of all of them, and ``averaged_from``: each file's
name, hash and run name, so the result can be traced to the configs that made its parts.

    python -m training.average policies/scat_calls_c.npz runs/family_calls_3p/policy.npz \\
        --out policies/scat_calls_avg.npz
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents import compact

#: Fields a writer adds itself (:func:`agents.compact.save_compact`).
WRITTEN = ("kind", "format_version", "sha256")


def _other_network(arrays: dict[str, np.ndarray], meta: dict[str, Any],
                   first: dict[str, np.ndarray], first_meta: dict[str, Any]) -> str | None:
    """How a file's network differs from the first's, else ``None``: the observation pieces
    it reads, in order (absent in files written before the field: none, as
    :func:`agents.compact.load_compact` reads them), then its weights, whose names and shapes
    fix its width, layers, expert advice and action space (the loader checked them against
    those fields)."""
    pieces, first_pieces = meta.get("pieces", []), first_meta.get("pieces", [])
    if pieces != first_pieces:
        return f"pieces is {pieces!r}, {first_pieces!r}"
    for name in sorted(set(arrays) | set(first)):
        shape = arrays[name].shape if name in arrays else None
        first_shape = first[name].shape if name in first else None
        if shape != first_shape:
            return f"weight {name!r} is {shape or 'absent'}, {first_shape or 'absent'}"
    return None


def average(paths: Sequence[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The mean of the weights of the compact files ``paths`` (at least two, one network)
    and the metadata to write with it; a ``ValueError`` line naming the file and field that
    differ."""
    if len(paths) < 2:
        raise ValueError("averaging needs at least two policy files")
    loaded = [compact.load_compact(compact.policy_path(p)) for p in paths]
    first_arrays, first_meta = loaded[0]
    for path, (arrays, meta) in zip(paths[1:], loaded[1:], strict=True):
        why = _other_network(arrays, meta, first_arrays, first_meta)
        if why:
            raise ValueError(f"{path!r}: {why} in {paths[0]!r}: not one network")
    mean = {k: np.mean([a[k] for a, _ in loaded], axis=0, dtype=np.float64).astype(np.float32)
            for k in first_arrays}
    meta = {k: v for k, v in first_meta.items() if k not in WRITTEN}
    mixes = [r for _, m in loaded for r in (m.get("rules_mix") or [])]
    meta["rules_mix"] = list(dict.fromkeys(mixes))
    meta["player_counts"] = sorted({n for _, m in loaded for n in m.get("player_counts", [])})
    meta["averaged_from"] = [
        {"file": os.path.basename(compact.policy_path(p)), "sha256": m.get("sha256"),
         "run": (m.get("config") or {}).get("name")}
        for p, (_, m) in zip(paths, loaded, strict=True)]
    meta.pop("config", None)  # no single run made it: its parts' runs are named above
    meta["metrics"] = {}
    return mean, meta


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.average",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("policies", nargs="+", help="compact policy files (or shipped names) of "
                    "one network, two or more")
    ap.add_argument("--out", required=True, help="the averaged policy file to write")
    args = ap.parse_args(argv)
    if os.path.abspath(args.out) in {os.path.abspath(compact.policy_path(p))
                                     for p in args.policies}:
        print(f"average: --out {args.out!r} is one of the files averaged; write elsewhere",
              file=sys.stderr)
        return 2
    try:
        arrays, meta = average(args.policies)
        compact.save_compact(args.out, arrays, meta)
    except ValueError as e:
        print(f"average: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"average: cannot write {args.out!r}: {e.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: the mean of {len(args.policies)} policies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
