"""ALAS on Argo: a transactional, disruption-aware multi-agent planner (see README.md and docs/)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
