"""Agents for scat-env: one interface (:class:`Agent`), baselines, and a spec registry."""

from .base import Agent
from .registry import available, make_agent, register

__all__ = ["Agent", "available", "make_agent", "register"]
