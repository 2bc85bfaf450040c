"""One play session of Scat, under both front ends: the terminal game (``scat_cli``) and the
browser game (``scat_web``).

What a person's game is, whatever screen shows it, lives here once: who sits where and who
plays by default (:mod:`~scat_session.seating`), how strong the model card measured each
seated policy (:mod:`~scat_session.strength`), the agents' moves with a broken agent
replaced (:mod:`~scat_session.turns`), the save, its seal and the ledger
(:mod:`~scat_session.savegame`, :mod:`~scat_session.keystore`,
:mod:`~scat_session.gamelock`), the moves a person may type (:mod:`~scat_session.humanio`),
hints (:mod:`~scat_session.hints`), game lengths (:mod:`~scat_session.lengths`) and the
plain words of every event and rule (:mod:`~scat_session.words`,
:mod:`~scat_session.helptext`). The terminal adds colour on top, the page adds layout.

It sits above ``scat_env`` and ``agents`` and imports neither front end nor ``training``
(tests/test_architecture.py checks it). Importing the package loads nothing.
"""
