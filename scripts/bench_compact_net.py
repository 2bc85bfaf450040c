"""Time the card embedding of the batched trainer's network, forward and backward.

:class:`training.batch_ppo.CompactNet` sums one learned row per *seen* card (an unseen
card's rows are zero); this prints that against the sum over all 52 cards, on compact
observations of real positions (3 players, 30 random moves in), at the trainer's minibatch::

    python scripts/bench_compact_net.py --batch 8192 --hidden 128
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

from agents.compact import NUM_CODES
from scat_env.batch import BatchEnv
from scat_env.batch.kernels import C_UNSEEN


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, default=8192)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    torch.set_num_threads(2)
    env = BatchEnv(args.batch, args.players, "standard", seed=0)
    env.reset()
    for _ in range(30):
        out = env.step(env.random_actions())
    cards = torch.from_numpy(out["observation"][:, :52].copy())
    emb = nn.EmbeddingBag(52 * NUM_CODES, args.hidden, mode="sum")
    offsets = torch.arange(52) * NUM_CODES

    def every_card() -> None:
        emb(cards.to(torch.int64) + offsets).sum().backward()

    def seen_cards() -> None:
        seen = cards != C_UNSEEN
        counts = seen.sum(1)
        emb((cards.to(torch.int64) + offsets)[seen], torch.cumsum(counts, 0) - counts
            ).sum().backward()

    seen = (cards != C_UNSEEN).sum(1).float()
    print(f"{args.batch} observations, {args.players} players: {seen.mean():.1f} seen cards "
          f"on average (at most {seen.max():.0f})")
    for name, fn in (("all 52 cards", every_card), ("seen cards only", seen_cards)):
        fn()
        start = time.perf_counter()
        for _ in range(args.repeat):
            fn()
        ms = (time.perf_counter() - start) / args.repeat * 1e3
        print(f"{name:>16}: {ms:6.1f} ms forward + backward")


if __name__ == "__main__":
    main()
