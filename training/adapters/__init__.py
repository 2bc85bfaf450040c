"""The library adapters' trainers, one module each, all in this one place: stable-baselines3
(:mod:`training.adapters.sb3`, MaskablePPO on :class:`training.single_agent.ScatSingleAgentEnv`)
and RLlib (:mod:`training.adapters.rllib`, PPO on the PettingZoo env). TorchRL needs no
trainer here: it wraps :func:`scat_env.env` itself (``tests/test_torchrl.py``). The agents
that play what they train are in :mod:`agents.adapters`; :mod:`training.trainers` registers
both trainers (``trainer: sb3``, ``trainer: rllib``).
"""
