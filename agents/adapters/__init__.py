"""The agents of the library adapters, in one place: ``sb3:PATH`` (:mod:`agents.adapters.sb3`,
a stable-baselines3 / sb3-contrib zip), ``rllib:PATH`` (:mod:`agents.adapters.rllib`, an
RLlib policy export) and the padded-observation player they share
(:mod:`agents.adapters.padded`). Their trainers are :mod:`training.adapters`.
"""
