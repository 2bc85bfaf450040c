"""Golf's search, taught to its policy: label the policy's decisions with the search's move
values on the batched engine, then fit the policy to the better moves (expert iteration).

Why: golf's trained policy copies ``expert``, which values a hand by its expected points,
while a golf hand costs a life only to the lowest; PPO from that start stays level with
``expert`` (docs/EXPERIMENTS.md, entries 58, 84, 88). The search (``search:W``, golf's
``strongest`` level) plays each kind of move out in sampled worlds and scores the hand by
the win chance it leaves, and beats the policy by a wide margin; but it costs eight times
the policy's time. Its moves, learned, cost nothing at play.

How a label is made, all on the batched engine:

- A table of ``games`` golf games plays on, the learner (the policy's likeliest move) in one
  random seat of each game, ``expert`` (batched) in the others, as the policy is measured.
- At each learner decision with two kinds of move open (draw from the stock or take the
  discard; put the card in a slot or turn a slot up), each kind's move is the policy's
  likeliest of that kind, as ``search:W`` weighs them.
- Every such position of the table is copied ``2 W`` times (:meth:`BatchEnv.copy_games`);
  each pair of copies is one world (:meth:`BatchEnv.redeal_golf_unseen` deals the unseen
  cards again, exactly as a view allows) with one generator seed, so the two moves are
  compared on the same cards. The move is played, then the hand is played out: the
  learner's seat by the policy, the others by ``expert``; each playout is scored by the
  learner's win chance from the lives the hand leaves (:func:`scat_env.rewards.win_chance`,
  as the search scores it).
- The label is the other kind's move where it beats the policy's by more than ``switch_z``
  paired standard errors (the search's rule), the policy's own move otherwise.

:func:`fit` then trains the policy on the labels from its own weights, a cross-entropy on
the kind of move (the face-down slots are alike, so no slot is taught); its critic is kept
as it was. ``python -m training.search_labels --help``; what the labels have taught so far
is docs/EXPERIMENTS.md, entry 89 (not yet a stronger policy).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from agents.search import GOLF_KINDS, paired_gain
from scat_env import Rules
from scat_env.actions import NUM_ACTIONS
from scat_env.batch import BatchEnv
from scat_env.rewards import lives_win_chance

#: Golf's kinds of move, each a set of actions, as the search weighs them (one of each).
KINDS = tuple(GOLF_KINDS.values())
#: What a labels file holds (:func:`label`).
LABEL_KEYS = frozenset({"obs", "mask", "advice", "moves", "mean", "z", "num_players"})
#: The most steps a hand's playout takes (a golf hand is far shorter).
MAX_STEPS = 200


def kind_moves(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """[B, 2]: the policy's likeliest move, then its likeliest of the other kind open, in
    every row with exactly two kinds of move open; -1 in both where fewer (a card taken
    from the pile must be placed)."""
    B = len(mask)
    best = np.full((B, len(KINDS)), -1, np.int64)
    score = np.full((B, len(KINDS)), -np.inf)
    for k, acts in enumerate(KINDS):
        cols = np.asarray(acts)
        sub = np.where(mask[:, cols], logits[:, cols], -np.inf)
        j = sub.argmax(1)
        ok = mask[np.arange(B), cols[j]]
        best[ok, k] = cols[j[ok]]
        score[ok, k] = sub[ok, j[ok]]
    out = np.full((B, 2), -1, np.int64)
    two = (best >= 0).sum(1) == 2
    order = np.argsort(-score, axis=1)[:, :2]
    rows = np.flatnonzero(two)
    out[rows] = best[rows[:, None], order[rows]]
    return out


class Labeller:
    """Plays golf at one table size and labels the learner's decisions (module docstring).
    ``policy``: a compact policy (:func:`agents.compact.load_compact_player`)."""

    def __init__(self, policy, num_players: int, games: int, worlds: int,  # noqa: ANN001
                 seed: int, rules: str | Rules = "golf") -> None:
        from agents.batch_expert import BatchExpert

        self.rules = Rules.preset(rules) if isinstance(rules, str) else rules
        if self.rules.play != "golf":
            raise ValueError("the search labels golf's decisions; the rules are not golf")
        self.policy, self.n, self.worlds = policy, num_players, worlds
        self.rng = np.random.default_rng(seed)
        self.table = BatchEnv(games, num_players, self.rules, seed)
        self.table.reset()
        self.expert = BatchExpert(self.rules)
        self.learner = self.rng.integers(num_players, size=games)
        self.ro = BatchEnv(games * 2 * worlds, num_players, self.rules, seed + 1)
        self.ro.reset()
        self.ro_expert = BatchExpert(self.rules)
        self._stream = 0

    def _logits(self, env: BatchEnv, advice: np.ndarray) -> np.ndarray:
        out = env.current()
        obs = out["observation"]
        return self.policy.play_logits(obs, env.hand_features(obs), self.n,
                                       self.rules.start_lives, out["action_mask"], advice,
                                       self.rules)

    def step(self) -> dict[str, np.ndarray] | None:
        """One decision in every game of the table; the labelled learner decisions of it
        (observations, masks, advice, the two moves, their mean outcomes, the paired
        z-score of the second over the first), or None when none was labelled."""
        t = self.table
        cur = t.current()
        advice = self.expert.actions(t).copy()
        logits = self._logits(t, advice)
        moves = kind_moves(logits, cur["action_mask"])
        mine = cur["current_player"] == self.learner
        rows = np.flatnonzero(mine & (moves[:, 0] >= 0))
        labels = None
        if len(rows):
            outcomes = self.play_out(rows, moves[rows])
            # the search's own rule: the other kind's gain over the policy's, in paired
            # standard errors
            z = np.array([paired_gain(o[:, 1], o[:, 0])[1] for o in outcomes])
            labels = {"obs": cur["observation"][rows].copy(),
                      "mask": cur["action_mask"][rows].copy(), "advice": advice[rows],
                      "moves": moves[rows], "mean": outcomes.mean(1).astype(np.float32),
                      "z": z.astype(np.float32)}
        acts = np.where(mine, logits.argmax(1), advice)
        out = t.step(acts)
        done = np.flatnonzero(out["done"])
        self.learner[done] = self.rng.integers(self.n, size=len(done))
        return labels

    def play_out(self, rows: np.ndarray, moves: np.ndarray) -> np.ndarray:
        """Outcomes [len(rows), worlds, 2]: in world ``w`` of table game ``rows[i]``, move
        ``moves[i, k]`` played, then the hand played out (module docstring)."""
        D, W = len(rows), self.worlds
        ro = self.ro
        first = np.arange(D * W) * 2  # copy k of world (i, w) is row 2 (i W + w) + k
        streams = np.arange(self._stream, self._stream + D * W)
        self._stream += D * W
        ro.copy_games(self.table, np.repeat(rows, W), first, streams.tolist())
        ro.redeal_golf_unseen(first, self.rng)
        ro.copy_games(ro, first, first + 1)
        used = 2 * D * W
        finished = np.ones(ro.num_envs, np.bool_)
        finished[:used] = False
        me = np.repeat(self.learner[rows], 2 * W)
        score = np.zeros(used)
        lives = ro.state.lives[:used].copy()
        acts = np.zeros(ro.num_envs, np.int64)
        acts[:used] = np.repeat(moves, W, axis=0).reshape(-1)
        for _ in range(MAX_STEPS):
            out = ro.step(acts, skip=finished)
            ended = ((out["hands_ended"][:used] > 0) | out["done"][:used]) & ~finished[:used]
            for g in np.flatnonzero(ended).tolist():
                after = (lives[g] - out["lives_lost"][g]).tolist()
                score[g] = lives_win_chance(after, int(me[g]))
            finished[:used] |= ended
            if finished.all():
                break
            live = np.flatnonzero(~finished)
            self.ro_expert.actions(ro, acts, live)
            cur = ro.current()
            learner = live[cur["current_player"][live] == me[live]]
            if len(learner):
                obs = cur["observation"][learner]
                lg = self.policy.play_logits(obs, ro.hand_features(obs), self.n,
                                             self.rules.start_lives,
                                             cur["action_mask"][learner], acts[learner],
                                             self.rules)
                acts[learner] = lg.argmax(1)
        else:  # a playout cut at the cap scores the lives as they stand
            for g in np.flatnonzero(~finished[:used]).tolist():
                score[g] = lives_win_chance(ro.state.lives[g].tolist(), int(me[g]))
        return score.reshape(D, W, 2)


def label(policy: str, num_players: int, decisions: int, games: int, worlds: int,
          seed: int, log=print) -> dict[str, np.ndarray]:  # noqa: ANN001
    """About ``decisions`` labelled learner decisions of golf at ``num_players``."""
    from agents.compact import load_compact_player, policy_path

    lab = Labeller(load_compact_player(policy_path(policy)), num_players, games, worlds, seed)
    parts: list[dict[str, np.ndarray]] = []
    have, start = 0, time.time()
    while have < decisions:
        got = lab.step()
        if got is not None:
            parts.append(got)
            have += len(got["z"])
            if len(parts) % 20 == 0:
                log(f"[labels] {num_players} players: {have:,} decisions, "
                    f"{have / (time.time() - start):.0f} a second")
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    data["num_players"] = np.array(num_players)
    return data


def targets(data: dict[str, np.ndarray], switch_z: float) -> np.ndarray:
    """Each labelled decision's move to learn: the other kind's where it beat the
    policy's by more than ``switch_z`` paired standard errors, the policy's otherwise."""
    return np.where(data["z"] > switch_z, data["moves"][:, 1], data["moves"][:, 0])


def kind_of(actions: np.ndarray) -> np.ndarray:
    """[N, A] bool: the actions of the same kind as each of ``actions`` (:data:`KINDS`)."""
    out = np.zeros((len(actions), NUM_ACTIONS), np.bool_)
    for acts in KINDS:
        rows = np.isin(actions, acts)
        out[np.ix_(rows, acts)] = True
    return out


def fit(policy: str, datasets: list[dict[str, np.ndarray]], out: str | Path,
        switch_z: float = 1.5, epochs: int = 4, lr: float = 3e-4, batch: int = 1024,
        seed: int = 0, log=print) -> dict[str, float]:  # noqa: ANN001
    """Train the compact policy ``policy`` (a shipped name or a file) on the labels of
    ``datasets`` (one per table size) from its own weights, a cross-entropy on the kind of
    :func:`targets`' move, and write it to ``out``; a tenth of the decisions is held out to
    report how often the policy makes the labels' kind of move, before and after."""
    import torch

    from agents import compact
    from training.batch_ppo import CompactNet, export, warm_start
    from training.config import BatchPPOConfig

    _, meta = compact.load_compact(compact.policy_path(policy))
    net = CompactNet(int(meta["hidden"]), int(meta["layers"]),
                     advice=bool(meta.get("expert_advice", False)),
                     pieces=tuple(meta.get("pieces", ())))
    warm_start(net, policy)
    torch.manual_seed(seed)
    rules = Rules.preset("golf")
    tensors = []
    for data in datasets:
        n = int(data["num_players"])
        obs = data["obs"]
        env = BatchEnv(1, n, rules)
        feats = env.hand_features(obs)
        dense = compact.dense_inputs(obs, feats, n, rules.start_lives, rules, net.pieces)
        tensors.append([torch.from_numpy(x) for x in (
            obs[:, :52].copy(), feats, dense.astype(np.float32), data["mask"],
            data["advice"].astype(np.int64),
            data["mask"] & kind_of(targets(data, switch_z)))])
    cols = [torch.cat([t[i] for t in tensors]) for i in range(6)]
    N = len(cols[0])
    perm = torch.randperm(N)
    held, train = perm[: N // 10], perm[N // 10:]

    def agree(idx: torch.Tensor) -> float:
        with torch.no_grad():
            logits, _ = net(*(c[idx] for c in cols[:5]))
        return float(cols[5][idx].gather(1, logits.argmax(1, keepdim=True)).float().mean())

    before = agree(held)
    opt = torch.optim.Adam([p for name, p in net.named_parameters()
                            if not name.startswith("v.")], lr=lr)
    for epoch in range(epochs):
        order = train[torch.randperm(len(train))]
        total = 0.0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            logits, _ = net(*(c[idx] for c in cols[:5]))
            # the target kind's chance: its slots are alike (all face down), so the loss
            # does not pick one of them
            loss = (torch.logsumexp(logits, 1)
                    - torch.logsumexp(logits.masked_fill(~cols[5][idx], -1e9), 1)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        log(f"[fit] epoch {epoch + 1}: loss {total / len(order):.4f}, held-out agreement "
            f"{agree(held):.2%} (before {before:.2%})")
    cfg = BatchPPOConfig(**{k: v for k, v in meta["config"].items()
                            if k in BatchPPOConfig.__dataclass_fields__})
    metrics = {"search_labels": N, "switch_z": switch_z, "agreement_before": before,
               "agreement_after": agree(held)}
    export(net, out, cfg, metrics)
    return metrics


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.search_labels",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    a_label = sub.add_parser("label", help="label golf decisions with the search's values")
    a_label.add_argument("--policy", default="scat_golf",
                         help="the policy labelled (a shipped name or a file)")
    a_label.add_argument("--players", type=int, default=3)
    a_label.add_argument("--decisions", type=int, default=10000)
    a_label.add_argument("--games", type=int, default=256,
                         help="games of the table played at once")
    a_label.add_argument("--worlds", type=int, default=32, help="sampled worlds a decision")
    a_label.add_argument("--seed", type=int, default=0)
    a_label.add_argument("--out", required=True, help="the labels' .npz file")
    a_fit = sub.add_parser("fit", help="fit the policy to labels and write it")
    a_fit.add_argument("labels", nargs="+", help="label files (one per table size)")
    a_fit.add_argument("--policy", default="scat_golf")
    a_fit.add_argument("--switch-z", type=float, default=1.5)
    a_fit.add_argument("--epochs", type=int, default=4)
    a_fit.add_argument("--lr", type=float, default=3e-4)
    a_fit.add_argument("--seed", type=int, default=0)
    a_fit.add_argument("--out", required=True, help="the policy file written")
    a = ap.parse_args(argv)
    t0 = time.time()
    try:
        if a.command == "label":
            if not 2 <= a.players <= 10 or min(a.decisions, a.games, a.worlds) < 2:
                ap.error("--players must be 2 to 10; --decisions, --games and --worlds "
                         "at least 2")
            data = label(a.policy, a.players, a.decisions, a.games, a.worlds, a.seed)
            np.savez_compressed(a.out, **data)
            print(f"{len(data['z']):,} decisions in {time.time() - t0:.0f} s; the other "
                  f"kind better by z > 1.5 in {(data['z'] > 1.5).mean():.1%}: {a.out}")
        else:
            datasets = []
            for path in a.labels:
                with np.load(path) as f:
                    missing = sorted(LABEL_KEYS - set(f.files))
                    if missing:
                        raise ValueError(f"{path}: not a labels file of `label` (no "
                                         f"{', '.join(missing)})")
                    datasets.append({k: f[k] for k in f.files})
            metrics = fit(a.policy, datasets, a.out, a.switch_z, a.epochs, a.lr,
                          seed=a.seed)
            print(f"{metrics['search_labels']:,} decisions; held-out agreement "
                  f"{metrics['agreement_before']:.1%} -> {metrics['agreement_after']:.1%}: "
                  f"{a.out}")
    except (OSError, ValueError, KeyError) as exc:
        print(f"search_labels: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
