"""Trained-policy inference, numpy only: what playing a trained policy needs and nothing more.

- :mod:`agents.neural.encoding`: the padded policy input (any table size in one layout,
  derived from :data:`scat_env.observation.PIECES`) and how a renaming of the cards moves it.
- :mod:`agents.neural.forward`: the network's forward pass in numpy.
- :mod:`agents.neural.policy_file`: the policy file format (``.npz`` + JSON metadata + a
  content hash) and the shipped policies' folder.
- :mod:`agents.neural.policy_set`: the policy-set manifest (one policy, or an averaged
  ensemble, per number of players still in).

The torch network that trains these weights lives in :mod:`training.policy_net`; it imports
this package, never the other way round, so play never imports torch.
"""
