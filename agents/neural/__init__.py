"""What the policy players share, numpy only: file checks and the set manifest.

- :mod:`agents.neural.archive`: bounded reading of zip archives and ``.npy`` headers.
- :mod:`agents.neural.policy_file`: the bounds every policy file has, the safe torch
  reader of the library adapters, and the shipped policies' folder.
- :mod:`agents.neural.policy_set`: the policy-set manifest (one policy, or an averaged
  ensemble, per number of players still in), played by ``compact:SET.yaml``.
- :mod:`agents.neural.encoding`: the padded observation of the single-agent env that the
  stable-baselines3 adapter trains on and plays from.

The policy file format and its numpy forward pass are :mod:`agents.compact`'s; the torch
network that trains them is :class:`training.batch_ppo.CompactNet`.
"""
