"""CLI commands (validating); filled in by the issue that owns them."""

from __future__ import annotations

from alas_argo.cli.app import Commands

__all__ = ["register"]


def register(commands: Commands) -> None:
    """Add this module's commands."""
